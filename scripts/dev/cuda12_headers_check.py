#!/usr/bin/env python3
"""Compiles every host source of a configured build that includes a CUDA, CUPTI or cuBLAS header against the
CUDA 12 headers of NVIDIA's wheels (g++ -fsyntax-only, the build's own flags and macros), for the oldest CUDA 12
gpuprobe supports and the newest. No CUDA 12 nvcc exists on these machines, so .cu files are not checked.

    scripts/dev/cuda12_headers_check.py [BUILD_DIR]        (default: build; run after scripts/build.sh)

Which sources: those whose object depends on a header of the build's own toolkit (ninja's dependency log; with
another generator, every source whose flags name the toolkit's include folder).
The wheels are downloaded once (pip download, no dependencies) and only their include folders unpacked, under
$GPUPROBE_CUDA12_CACHE (default ~/.cache/gpuprobe/cuda12). A toolkit without the CUPTI Range Profiling API
(cupti_range_profiler.h) is checked as CMake would build it there: without GPUPROBE_HAVE_CUPTI_RANGE_PROFILER.
Exit 0 when every source compiles against every set; 1 with each failure's first errors otherwise."""
import concurrent.futures
import json
import os
import re
import shlex
import subprocess
import sys
import zipfile
from pathlib import Path

# (name, wheels): the oldest supported CUDA 12 (cmake/cuda_toolkit.cmake GPUPROBE_MIN_CUDA_VERSION) and the
# newest CUDA 12. Pinned, so that the check is the same on every run and the wheels are downloaded once.
HEADER_SETS = [
    ("12.4", ["nvidia-cuda-runtime-cu12==12.4.127", "nvidia-cuda-cupti-cu12==12.4.127", "nvidia-cublas-cu12==12.4.5.8"]),
    ("12.9", ["nvidia-cuda-runtime-cu12==12.9.79", "nvidia-cuda-cupti-cu12==12.9.79", "nvidia-cublas-cu12==12.9.1.4"]),
]
WHEEL_INCLUDES = ["nvidia/cuda_runtime/include", "nvidia/cuda_cupti/include", "nvidia/cublas/include"]
RANGE_PROFILER_MACRO = "GPUPROBE_HAVE_CUPTI_RANGE_PROFILER"


def fail(msg: str) -> None:
    print(f"cuda12_headers_check: {msg}", file=sys.stderr)
    sys.exit(1)


def header_set(cache: Path, name: str, wheels: list) -> list:
    """The include folders of one set, downloading and unpacking its wheels the first time."""
    root = cache / name
    dirs = [root / d for d in WHEEL_INCLUDES]
    if all(d.is_dir() for d in dirs):
        return dirs
    download = cache / "wheels"
    download.mkdir(parents=True, exist_ok=True)
    for spec in wheels:
        r = subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", str(download), spec],
                           capture_output=True, text=True)
        if r.returncode != 0:
            fail(f"pip download {spec} failed: {r.stderr.strip().splitlines()[-1:]}")
        dist, version = spec.split("==")
        prefix = dist.replace("-", "_") + "-" + version + "-"
        found = [w for w in download.glob("*.whl") if w.name.startswith(prefix)]
        if not found:
            fail(f"no wheel {prefix}*.whl in {download} after pip download")
        with zipfile.ZipFile(found[0]) as z:
            z.extractall(root, [m for m in z.namelist() if "/include/" in m])
    missing = [str(d) for d in dirs if not d.is_dir()]
    if missing:
        fail(f"the wheels of CUDA {name} have no {', '.join(missing)}")
    return dirs


def toolkit_include_dirs(args: list) -> set:
    """The -I/-isystem folders of a command that hold cuda_runtime.h: the toolkit's, to be replaced."""
    out, i = set(), 0
    while i < len(args):
        a = args[i]
        path = None
        if a in ("-I", "-isystem") and i + 1 < len(args):
            path, i = args[i + 1], i + 1
        elif a.startswith("-I"):
            path = a[2:]
        if path and (Path(path) / "cuda_runtime.h").is_file():
            out.add(path)
        i += 1
    return out


def sources_using_cuda(build: Path, commands: list) -> list:
    """The compile commands of .cpp files whose object depends on a header under the toolkit's include folders."""
    chosen = []
    for entry in commands:
        if not entry["file"].endswith(".cpp"):
            continue
        args = shlex.split(entry["command"])
        toolkit = toolkit_include_dirs(args)
        obj = args[args.index("-o") + 1] if "-o" in args else None
        if not toolkit or obj is None:
            continue
        if not (build / "build.ninja").is_file():  # another generator: every source the toolkit's folder reaches
            chosen.append(entry)
            continue
        deps = subprocess.run(["ninja", "-C", str(build), "-t", "deps", obj], capture_output=True, text=True).stdout
        if "deps not found" in deps or not deps.strip():
            fail(f"ninja has no dependency record for {obj}: build first (scripts/build.sh)")
        if any(line.strip().startswith(tuple(toolkit)) for line in deps.splitlines()[1:]):
            chosen.append(entry)
    return chosen


def check_command(entry: dict, includes: list, range_profiler: bool) -> list:
    """The command that compiles entry's source against `includes` only (syntax only)."""
    args = shlex.split(entry["command"])
    toolkit = toolkit_include_dirs(args)
    out, i = [], 0
    while i < len(args):
        a = args[i]
        if a in ("-I", "-isystem") and i + 1 < len(args) and args[i + 1] in toolkit:
            i += 2
            continue
        if (a.startswith("-I") and a[2:] in toolkit) or a.startswith(f"-D{RANGE_PROFILER_MACRO}"):
            i += 1
            continue
        if a == "-o":
            i += 2
            continue
        if a == "-c":
            i += 1
            continue
        out.append(a)
        i += 1
    out[1:1] = ["-fsyntax-only"] + [x for d in includes for x in ("-isystem", str(d))]
    if range_profiler:
        out.insert(1, f"-D{RANGE_PROFILER_MACRO}=1")
    return out


def main() -> int:
    build = Path(sys.argv[1] if len(sys.argv) > 1 else "build").resolve()
    db = build / "compile_commands.json"
    if not db.is_file():
        fail(f"{db} not found: configure and build first (scripts/build.sh)")
    try:
        commands = json.loads(db.read_text())
    except json.JSONDecodeError as e:
        fail(f"{db} is not JSON ({e})")
    chosen = sources_using_cuda(build, commands)
    if not chosen:
        fail(f"no host source in {db} includes a CUDA header: nothing to check (is this gpuprobe's build?)")
    cache = Path(os.environ.get("GPUPROBE_CUDA12_CACHE", Path.home() / ".cache/gpuprobe/cuda12"))
    failures = 0
    for name, wheels in HEADER_SETS:
        includes = header_set(cache, name, wheels)
        range_profiler = all((includes[1] / h).is_file() for h in ("cupti_range_profiler.h", "cupti_profiler_host.h"))
        jobs = [(e["file"], check_command(e, includes, range_profiler), e["directory"]) for e in chosen]
        with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
            results = list(pool.map(lambda j: (j[0], subprocess.run(j[1], cwd=j[2], capture_output=True, text=True)),
                                    jobs))
        bad = [(f, r) for f, r in results if r.returncode != 0]
        print(f"CUDA {name} headers ({'with' if range_profiler else 'without'} the CUPTI Range Profiling API): "
              f"{len(jobs) - len(bad)} of {len(jobs)} host sources compile")
        for f, r in bad:
            errors = [l for l in r.stderr.splitlines() if re.search(r"error", l)]
            print(f"  FAILED {os.path.relpath(f)}:\n    " + "\n    ".join(errors[:5]))
        failures += len(bad)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
