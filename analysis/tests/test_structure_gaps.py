"""Structure the analysis must not invent, and gaps it must name (issue 46 items 9-11), on fictional GPUs
whose truth is set here: a latency sweep cut short inside the L2, coarse footprint grids, a small L2
without counters."""
import dataclasses

import pytest

from gpuprobe_analysis import results
from gpuprobe_analysis.sections import device_profile
import synth

KiB, MiB, GiB = 2**10, 2**20, 2**30


def profile(doc, tmp_path, name="r.json", truncate_after=None):
    return device_profile(results.load([synth.write(str(tmp_path / name), doc, truncate_after)]))


# ---------------------------------------------------------------- item 10: a latency sweep cut short
CUT = 3.4 * MiB


def _cut_short(dev):
    doc = synth.synth_results(dev, noise=0.005, seed=0, families=["memory.latency"])
    doc["benchmarks"] = [e for e in doc["benchmarks"] if e["footprint"] <= CUT or e["name"].find("pattern:random") < 0]
    return doc


def _check_cut_short(prof, dev):
    names = [lv["name"] for lv in prof["hierarchy"]["levels"]]
    assert not any(n.startswith("DRAM") for n in names), names
    last = prof["hierarchy"]["levels"][-1]
    assert last["name"].startswith("last level reached (sweep ended at 3.") and "inside the" in last["name"], names
    # Its latency is the L2 near partition's (the truth at 3.4 MiB), not DRAM's.
    assert abs(last["latency_cycles"] / dev.lat_cycles[1] - 1) < 0.05, last
    assert "l2_bytes" not in prof["hierarchy"]["capacities"]
    assert any("sweep ended at" in n and "inside the" in n for n in prof["notes"]), prof["notes"]


def test_a_sweep_ending_inside_the_l2_names_no_dram(tmp_path):
    dev = synth.Device()  # L1 192 KiB, near partition 20 MB, L2 40 MB
    _check_cut_short(profile(_cut_short(dev), tmp_path), dev)


def test_a_partial_file_cut_inside_the_l2_names_no_dram(tmp_path):
    # What a crashed run leaves: FILE.partial, cut in the middle of the L1-allocating random chain.
    dev = synth.Device()
    doc = synth.synth_results(dev, noise=0.005, seed=0, families=["memory.latency"])
    n = next(i for i, e in enumerate(doc["benchmarks"]) if e["footprint"] > CUT)
    prof = profile(doc, tmp_path, "r.json.partial", truncate_after=n - 1)
    _check_cut_short(prof, dev)


# ---------------------------------------------------------------- item 11: coarse footprint grids
def test_a_sharp_l2_edge_on_a_coarse_grid_takes_the_drivers_figure_inside_its_bracket(tmp_path):
    # A 48 MiB L2 with sharp edges on 2 footprints per octave: the edge lies between 45.25 and 64 MiB, and
    # the bracket's log middle (53.8 MiB, 12 % high) is no measurement; the driver's 48 MiB lies inside.
    dev = synth.Device(l2_near_bytes=24 * MiB, l2_bytes=48 * MiB, latency_edges="step", latency_per_octave=2)
    prof = profile(synth.synth_results(dev, noise=0.005, seed=0, families=["memory.latency"]), tmp_path)
    (l2,) = [lv for lv in prof["hierarchy"]["levels"] if lv["name"] == "L2"]
    lo, hi = l2["capacity_bracket_bytes"]
    assert lo <= dev.l2_bytes <= hi
    assert l2["capacity_bytes"] == dev.l2_bytes and "driver" in l2["capacity_how"], l2
    assert prof["hierarchy"]["capacities"]["l2_bytes"] == dev.l2_bytes
    assert any("claimed for a capacity" in n for n in prof["notes"]), prof["notes"]


@pytest.mark.parametrize("per_octave,coarse", [(2, True), (3, True), (4, False), (6, False)])
def test_the_coarse_grid_note_follows_the_accuracy_claimed(per_octave, coarse, tmp_path):
    # 10 % claimed: footprints at most 1.21x apart (4 per octave: 1.19x; 3 per octave: 1.26x).
    dev = dataclasses.replace(synth.Device(), latency_per_octave=per_octave)
    prof = profile(synth.synth_results(dev, noise=0.005, seed=0, families=["memory.latency"]), tmp_path)
    assert any("claimed for a capacity" in n for n in prof["notes"]) == coarse, prof["notes"]


# ---------------------------------------------------------------- item 9: a small L2 without counters
def test_a_small_l2_without_counters_says_why_it_has_no_l2_read_ceiling(tmp_path):
    # A 6 MB unpartitioned L2 and no counters: walk=blocks qualifies by construction only from
    # 32 loads x 256 KiB = 8 MiB per array, beyond what this L2 serves (80 % of 6 MB).
    dev = synth.Device(l2_near_bytes=6e6, l2_bytes=6e6, bw_caps=(192 * 1024, 6e6))
    doc = synth.synth_results(dev, noise=0.005, seed=0, counters=False,
                              families=["memory.latency", "memory.l2_bandwidth"])
    for e in doc["benchmarks"]:  # the probe's walk=blocks grid (loads 32) instead of synth's own_slice
        if e["name"].startswith("memory.l2_bandwidth"):
            e["name"] = e["name"].replace("walk:own_slice/loads:4", "walk:blocks/loads:32")
            e["label"] = e["label"].replace("walk=own_slice", "walk=blocks")
            e["loads"] = 32
    prof = profile(doc, tmp_path)
    ceil = (prof.get("bandwidth") or {}).get("ceilings") or {}
    assert "L2" not in ceil, ceil  # the read ceiling's key is the level alone (write, copy: "L2 write" ...)
    assert "L2 write" in ceil, ceil  # stores qualify by construction: the rule works, reads have no point
    why = [n for n in prof["notes"] if "no L2 read ceiling" in n]
    assert why and "256 KiB per row" in why[0] and "8 MiB at loads=32" in why[0], prof["notes"]
