"""Structure (TLB page and reach, capacities, miss units, level names) of fictional GPUs unlike the
H100 on sweeps of 4, 2 and 1 footprints per octave and several noise seeds (issue 32 items 2 and 3).
Goals on every case, grid and seed: page exact, reach and capacities within 10 %, miss unit exact, no
invented level. `python3 analysis/tests/test_synth_structure.py` prints the pass table."""
import dataclasses
import sys

import pytest

from gpuprobe_analysis import results
from gpuprobe_analysis.sections import device_profile
import synth

KiB, MiB, GiB = 2**10, 2**20, 2**30
GRIDS = (4, 2, 1)
SEEDS = (0, 1, 2)
NOISE = 0.01

CASES = {
    # A small TLB reach (256 MiB): random chains pass it inside the sweep.
    "small reach": synth.Device(name="small reach", page_bytes=2 * MiB, tlb_reach=(256 * MiB,),
                                tlb_penalty_cycles=(90.0,), latency_tlb_misses=True),
    # A large reach (8 GiB), one level.
    "large reach": synth.Device(name="large reach", page_bytes=2 * MiB, tlb_reach=(8 * GiB,),
                                tlb_penalty_cycles=(150.0,), tlb_max_footprint=32 * GiB, latency_tlb_misses=True),
    # An unpartitioned L2 (near = whole L2), 64 KiB pages with two TLB levels.
    "unpartitioned L2": synth.Device(name="unpartitioned", l2_near_bytes=24e6, l2_bytes=24e6,
                                     lat_cycles=(30.0, 260.0, 260.0, 640.0), page_bytes=64 * KiB,
                                     tlb_reach=(32 * MiB, 1 * GiB), tlb_penalty_cycles=(40.0, 160.0),
                                     bw_caps=(192 * 1024, 24e6)),
    # 64-byte L2 sectors and a 128-byte DRAM unit (not the H100's 32 and 64), a small unpartitioned L2.
    "64 B sectors": synth.Device(name="64 B sectors", l2_near_bytes=16e6, l2_bytes=16e6,
                                 lat_cycles=(28.0, 200.0, 200.0, 560.0), sector_bytes=64.0, dram_unit_bytes=128.0,
                                 page_bytes=2 * MiB, tlb_reach=(512 * MiB,), tlb_penalty_cycles=(100.0,),
                                 latency_tlb_misses=True, bw_caps=(192 * 1024, 16e6)),
}


def checks(name, per_octave, seed, tmp_path):
    dev = dataclasses.replace(CASES[name], tlb_per_octave=per_octave, latency_per_octave=per_octave)
    doc = synth.synth_results(dev, noise=NOISE, seed=seed, families=["memory.latency", "memory.tlb"])
    prof = device_profile(results.load([synth.write(str(tmp_path / f"{name}-{per_octave}-{seed}.json"), doc)]))
    out = {}
    t = (prof.get("tlb") or {})
    out["page"] = t.get("page_bytes") == dev.page_bytes
    lv = t.get("levels") or []
    out["reach"] = len(lv) == len(dev.tlb_reach) and all(
        l.get("reach_bytes") and abs(l["reach_bytes"] / r - 1) <= 0.10 for l, r in zip(lv, dev.tlb_reach))
    caps = dict(prof["hierarchy"]["capacities"])
    caps["l2_bytes"] = caps.get("l2_bytes_fit") or caps.get("l2_bytes")  # the fit's, not the driver's figure
    want = {"l1_bytes": dev.l1_bytes, "l2_bytes": dev.l2_bytes}
    if dev.l2_near_bytes < dev.l2_bytes:
        want["l2_near_partition_bytes"] = dev.l2_near_bytes
    out["capacities"] = all(caps.get(k) and abs(caps[k] / v - 1) <= 0.10 for k, v in want.items()) and (
        dev.l2_near_bytes < dev.l2_bytes or not caps.get("l2_near_partition_bytes"))
    g = prof.get("granularity") or {}
    by = g.get("by_level") or {}
    l2_levels = [k for k in by if k.startswith("L2")]
    out["miss unit"] = bool(l2_levels) and all(by[k] == dev.sector_bytes for k in l2_levels) and (
        by.get("DRAM") in (None, dev.dram_unit_bytes))
    names = [lv["name"] for lv in prof["hierarchy"]["levels"]]
    # The memory levels are exactly the fictional GPU's; latency past DRAM's is named TLB misses.
    truth = ["L1", "L2 near partition", "L2", "DRAM"] if dev.l2_near_bytes < dev.l2_bytes else ["L1", "L2", "DRAM"]
    out["no invented level"] = [n for n in names if n != "shared" and not n.startswith("DRAM + TLB misses")] == truth
    return out, {"tlb": t.get("findings"), "caps": caps, "miss": by, "levels": names}


# Goals no analysis can meet (the bounds stay as stated): at one footprint per octave the L2's near partition
# and its capacity are not in the data. Its far level is never served alone (a gradual edge: at most
# 1 - near / L2 of the accesses), so its latency, the near capacity and the L2 capacity trade against each
# other, and the one footprint between the two edges cannot pin all three: a device with a 30 MB near
# partition, a 56 MB L2 and a 515-cycle far level gives curves within 1.2 % of these devices' 20 MB / 40 MB /
# 290 cycles at every footprint of that sweep (test_one_per_octave_cannot_tell_the_near_partition).
NOT_MET = {("large reach", 1): "near partition and L2 capacity not resolvable at 1 point per octave",
           ("small reach", 1): "near partition and L2 capacity not resolvable at 1 point per octave"}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("per_octave", GRIDS)
@pytest.mark.parametrize("seed", SEEDS)
def test_structure(name, per_octave, seed, tmp_path, request):
    if (name, per_octave) in NOT_MET:
        request.applymarker(pytest.mark.xfail(reason=f"issue 32 goal not met: {NOT_MET[name, per_octave]}",
                                              strict=False))
    out, why = checks(name, per_octave, seed, tmp_path)
    assert all(out.values()), (out, why)


def _random_chain_cycles(dev, per_octave):
    doc = synth.synth_results(dataclasses.replace(dev, latency_per_octave=per_octave), noise=0.0,
                              families=["memory.latency"])
    return {e["name"]: e["cycles_per_op"] for e in doc["benchmarks"]
            if "pattern:random" in e["name"] and "load:shared" not in e["name"]}


def test_one_per_octave_cannot_tell_the_near_partition():
    """Why NOT_MET holds: two devices whose near partitions differ by 50 % and L2s by 40 % give noise-free
    random chains (L1-allocating and L1-bypassing) within 1.5 % of each other at every footprint of a sweep
    of one footprint per octave, about the sweep's noise (1 %), so nothing fitted to them can tell them
    apart; at two per octave they differ by more than 5 % (five sigmas), and the fit tells them apart."""
    truth = CASES["large reach"]
    other = dataclasses.replace(truth, l2_near_bytes=30e6, l2_bytes=56e6, lat_cycles=(30.0, 220.0, 515.0, 620.5))
    assert (other.l2_near_bytes / truth.l2_near_bytes, other.l2_bytes / truth.l2_bytes) == (1.5, 1.4)
    for per_octave, lo, hi in ((1, 0.0, 0.015), (2, 0.05, 1.0)):
        a, b = _random_chain_cycles(truth, per_octave), _random_chain_cycles(other, per_octave)
        worst = max(abs(b[k] / a[k] - 1) for k in a)
        assert lo < worst < hi, (per_octave, worst)


@pytest.mark.parametrize("per_octave", (1, 4))
def test_a_coarse_sweep_says_what_it_cannot_resolve(per_octave, tmp_path):
    """Where NOT_MET holds, the profile says so (a note) instead of presenting one L2 level as the truth."""
    dev = dataclasses.replace(CASES["large reach"], latency_per_octave=per_octave)
    doc = synth.synth_results(dev, noise=NOISE, seed=SEEDS[0], families=["memory.latency"])
    prof = device_profile(results.load([synth.write(str(tmp_path / f"coarse-{per_octave}.json"), doc)]))
    coarse = [n for n in prof["notes"] if "cannot be told from one level" in n]
    assert bool(coarse) == (per_octave == 1), prof["notes"]


if __name__ == "__main__":
    import tempfile
    import pathlib
    goals = ("page", "reach", "capacities", "miss unit", "no invented level")
    print(f"{'case':<18}{'per octave':>11}{'seed':>6}  " + "  ".join(f"{g:>10}" for g in goals))
    fails = 0
    with tempfile.TemporaryDirectory() as d:
        for name in CASES:
            for po in GRIDS:
                for seed in SEEDS:
                    out, why = checks(name, po, seed, pathlib.Path(d))
                    fails += not all(out.values())
                    print(f"{name:<18}{po:>11}{seed:>6}  " + "  ".join(f"{'pass' if out[g] else 'FAIL':>10}" for g in goals),
                          flush=True)
                    if "-v" in sys.argv and not all(out.values()):
                        print("   ", why)
    sys.exit(1 if fails else 0)
