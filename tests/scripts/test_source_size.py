"""No product source file over MAX_LINES lines: a file that long holds parts that could be read, tested and
changed apart. Product sources: C++/CUDA and Python under the product's directories (PRODUCT_DIRS); tests,
lab/, reports/, docs and files generated into the build tree are not product sources."""
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MAX_LINES = 700
PRODUCT_DIRS = ("analysis/gpuprobe_analysis", "microbench", "kernels", "profilers", "common")
SOURCE_SUFFIXES = (".py", ".cu", ".cuh", ".cpp", ".hpp", ".h", ".cc")

def product_sources():
    out = []
    for top in PRODUCT_DIRS:
        for folder, dirs, files in os.walk(os.path.join(ROOT, top)):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            out += [os.path.relpath(os.path.join(folder, f), ROOT).replace(os.sep, "/")
                    for f in sorted(files) if f.endswith(SOURCE_SUFFIXES)]
    return out


def line_count(path):
    with open(os.path.join(ROOT, path), encoding="utf-8") as fh:
        return sum(1 for _ in fh)


def test_the_walk_finds_the_product_sources():
    # A walk that found nothing (a moved directory) would pass the size test vacuously.
    found = set(product_sources())
    for path in ("microbench/main.cpp", "microbench/probes/exec_tensor.cu", "kernels/src/gemv_kernels.cuh",
                 "analysis/gpuprobe_analysis/report.py", "common/include/gpuprobe/check.hpp"):
        assert path in found
    assert len(found) > 100


def test_no_product_source_is_over_the_limit():
    over = {p: n for p in product_sources() if (n := line_count(p)) > MAX_LINES}
    assert not over, f"over {MAX_LINES} lines (split where the parts are independent): {over}"
