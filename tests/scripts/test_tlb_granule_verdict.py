"""scripts/dev/tlb_granule_verdict.py on synthetic tlb_granule CSVs: one world where 16 MiB is the page
(every mapping keeps the 16 MiB granule) and one where a TLB entry coalesces 8 physically contiguous 2 MiB
pages (the scrambled mapping falls to 2 MiB entries); each must get its own verdict, and missing or
contradictory data must be called inconclusive or unreadable, never given a verdict."""
import importlib.util
import os
import random
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOL = os.path.join(REPO, "scripts", "dev", "tlb_granule_verdict.py")
MIB = 1 << 20
HEADER = "mapping,stride_bytes,footprint_bytes,elements,cycles_per_load,placement_min,placement_max"
STRIDES = (2 * MIB, 4 * MIB, 16 * MIB, 32 * MIB)
# Near the H200's memory.tlb: ~275 cycles an L2-hit load, 16 entries, 14 cycles a miss.
BASE, ENTRIES, MISS = 275.0, 16, 14.0


def load_tool():
    spec = importlib.util.spec_from_file_location("tlb_granule_verdict", TOOL)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up while being defined
    spec.loader.exec_module(module)
    return module


def footprints(stride):
    """tlb_granule's grid: 4 per octave from max(8 MiB, 2 strides) to 1 GiB, multiples of the stride."""
    out, k, lo = [], 0, max(8 * MIB, 2 * stride)
    while lo * 2 ** (k / 4) <= (1 << 30) * (1 + 1e-12):
        size = max(stride, int(lo * 2 ** (k / 4) + 0.5) // stride * stride)
        if not out or size > out[-1]:
            out.append(size)
        k += 1
    return out


def cycles(stride, footprint, page, entries, rng):
    """The joint model of tlb.py, plus +-2 cycles of placement noise."""
    pages = footprint / max(stride, page)
    return BASE + MISS * min(1.0, stride / page) * (pages > entries) + rng.uniform(-2.0, 2.0)


def write_csv(path, pages, comments=(), entries=None):
    """pages: {mapping: the page size its TLB entries cover}; entries: {mapping: entry count} (default 16)."""
    rng = random.Random(7)
    lines = ["# tlb_granule: device 0 synthetic"] + list(comments) + [HEADER]
    for mapping, page in pages.items():
        count = (entries or {}).get(mapping, ENTRIES)
        for s in STRIDES:
            for f in footprints(s):
                c = cycles(s, f, page, count, rng)
                lines.append(f"{mapping},{s},{f},{f // s},{c:.3f},{c - 1:.3f},{c + 1:.3f}")
    path.write_text("\n".join(lines) + "\n")
    return path


def run(path):
    return subprocess.run([sys.executable, TOOL, str(path)], capture_output=True, text=True, timeout=60)


CONTIGUOUS = {"cudamalloc": 16 * MIB, "vmm_one_handle": 16 * MIB, "vmm_in_order": 16 * MIB}


def test_page_world_gets_the_page_verdict(tmp_path):
    r = run(write_csv(tmp_path / "page.csv", {**CONTIGUOUS, "vmm_scrambled": 16 * MIB}))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "verdict: 16 MiB is the page (or a VA-contiguous entry)" in r.stdout
    assert "entries: 16," in r.stdout
    # the diluted 16 MiB step at 2 MiB strides (1.75 cycles) is no knee
    assert "vmm_scrambled: no knee up to 1024 MiB -> granule" in r.stdout


def test_coalescing_world_gets_the_coalescing_verdict(tmp_path):
    r = run(write_csv(tmp_path / "coalesce.csv", {**CONTIGUOUS, "vmm_scrambled": 2 * MIB}))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "verdict: entries coalesce physically contiguous 2 MiB pages" in r.stdout
    # 16 entries of 2 MiB: covered up to 32 MiB at stride 2 MiB, 64 MiB at 4 MiB
    assert "vmm_scrambled: reach 32 MiB" in r.stdout
    assert "vmm_scrambled: reach 64 MiB" in r.stdout
    assert "vmm_in_order (the same chunks as vmm_scrambled, in creation order) behaves like vmm_one_handle" in r.stdout


def test_in_order_chunks_that_lose_coalescing_are_named(tmp_path):
    r = run(write_csv(tmp_path / "chunks.csv", {"cudamalloc": 16 * MIB, "vmm_one_handle": 16 * MIB,
                                                "vmm_in_order": 2 * MIB, "vmm_scrambled": 2 * MIB}))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "verdict: entries coalesce physically contiguous 2 MiB pages" in r.stdout
    assert "separately created chunks are not coalesced even in order" in r.stdout


def test_small_page_entries_of_another_count_are_seen_by_their_undiluted_step(tmp_path):
    # 2 MiB entries in a structure of 64: reach 128 MiB at stride 2 MiB, nearer the granule's 256 MiB
    # than the 32 MiB of 16 such entries, but every load beyond it misses on its own.
    r = run(write_csv(tmp_path / "other.csv", {**CONTIGUOUS, "vmm_scrambled": 2 * MIB},
                      entries={"vmm_scrambled": 64}))
    assert "verdict: entries coalesce physically contiguous 2 MiB pages" in r.stdout, r.stdout


def test_without_the_scrambled_mapping_there_is_no_verdict(tmp_path):
    r = run(write_csv(tmp_path / "skipped.csv", CONTIGUOUS,
                      comments=["# skipped vmm_scrambled: CUDA driver error 1 in cuMemMap"]))
    assert r.returncode == 1
    assert "no vmm_scrambled rows" in r.stdout
    assert "# skipped vmm_scrambled" in r.stdout  # the run's own explanation is passed on
    assert "verdict: inconclusive" in r.stdout


def test_a_reference_without_the_granule_gives_no_verdict(tmp_path):
    flat = {m: 16 * MIB for m in ("vmm_one_handle", "vmm_scrambled")}
    r = run(write_csv(tmp_path / "flat.csv", flat, entries={m: 10**6 for m in flat}))
    assert r.returncode == 1
    assert "granule is not reproduced" in r.stdout


def test_a_control_mismatch_gives_no_verdict(tmp_path):
    # vmm_scrambled with 8 entries: its knee at strides >= 16 MiB disagrees with the reference's
    r = run(write_csv(tmp_path / "control.csv", {**CONTIGUOUS, "vmm_scrambled": 16 * MIB},
                      entries={"vmm_scrambled": 8}))
    assert r.returncode == 1
    assert "control: vmm_scrambled at stride 16 MiB" in r.stdout


@pytest.mark.parametrize("text, message", [
    ("", "no CSV header or rows"),
    ("# skipped cudamalloc: out of memory\n", "no CSV header or rows"),
    (HEADER + "\n", "a header but no data rows"),
    ("mapping,stride_bytes\ncudamalloc,2\n", "header lacks"),
    (HEADER + "\ncudamalloc,2097152,8388608,4,nan,0,0\n", "must be positive"),
    (HEADER + "\ncudamalloc,two,8388608,4,280,0,0\n", "data row 2"),
])
def test_unreadable_input_is_refused(tmp_path, text, message):
    path = tmp_path / "bad.csv"
    path.write_text(text)
    r = run(path)
    assert r.returncode == 2
    assert message in r.stderr
    assert "verdict" not in r.stdout


def test_knee_survives_an_elevated_first_point():
    tool = load_tool()
    f = [(8 + 2 * k) * MIB for k in range(12)]
    y = [283.0] + [275.0] * 5 + [289.0] * 6  # one short chain in far L2 slices, then a 14-cycle step
    knee = tool.find_knee(list(zip(f, y)))
    assert knee.reach == 18 * MIB and knee.knee == 20 * MIB
    assert knee.step == pytest.approx(14.0)


def test_a_small_bump_is_no_knee():
    tool = load_tool()
    f = [(8 + 2 * k) * MIB for k in range(12)]
    y = [275.0] * 6 + [278.0] * 6  # 3 cycles: below 2 % of the base
    assert tool.find_knee(list(zip(f, y))).reach is None
