"""The device profile on a small subset of a real H100 run (tests/data/h100_subset.json: random
pointer chases ca/cg at stride 128, memory.bandwidth read/read_cg/write, memory.occupancy read).
Bounds are physical (levels and capacities ordered, ceilings below their theoretical values,
cg chain without an L1 level), not constants tuned to the H100."""
import os

from gpuprobe_analysis import results
from gpuprobe_analysis.profile import Profile

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "h100_subset.json")


def profile():
    return Profile(results.load([DATA])).to_json()


def test_real_hierarchy_is_ordered_and_from_the_primary_curve():
    d = profile()
    h = d["hierarchy"]
    assert h["primary_curve"] == {"pattern": "random", "load": "ca", "stride": 128.0}
    levels = {lv["name"]: lv for lv in h["levels"]}
    # exactly the four device levels, nothing from other curves
    assert set(levels) == {"L1", "L2 near partition", "L2", "DRAM"}
    cyc = [levels[n]["latency_cycles"] for n in ("L1", "L2 near partition", "L2", "DRAM")]
    assert all(a < b for a, b in zip(cyc, cyc[1:])), cyc
    # a miss costs much more than a hit: L2 at least a few times L1
    assert cyc[1] > 3 * cyc[0]
    caps = h["capacities"]
    assert caps["l1_bytes"] < caps["l2_near_partition_bytes"] < caps["l2_bytes"]
    # the near partition is a fraction of the L2; the L2 knee agrees with the driver's L2 size
    assert 0.25 < caps["l2_near_partition_bytes"] / caps["l2_bytes"] < 0.75
    assert 0.5 < caps["l2_bytes"] / caps["l2_bytes_reported_by_driver"] < 2.0
    # L1 is at most the unified L1/shared SRAM per SM (shared memory max + L1 share)
    assert caps["l1_bytes"] < 2 * caps["shared_per_sm_bytes_reported_by_driver"]
    # ns and cycles agree with the recorded SM clock within 10 %
    mhz = float(d["device"]["gpu_sm_clock_max_mhz"])
    for n in levels:
        assert abs(levels[n]["latency_ns"] * mhz / 1e3 / levels[n]["latency_cycles"] - 1) < 0.10, n
    # cg chain: no L1 level; its first level is the L2 near partition of the primary curve
    x = h["cross_check_cg"]
    assert x["l1_absent"]
    assert abs(x["levels_cycles"][0] / levels["L2 near partition"]["latency_cycles"] - 1) < 0.15
    assert abs(x["levels_cycles"][-1] / levels["DRAM"]["latency_cycles"] - 1) < 0.15


def test_real_bandwidth_ceilings_are_physical():
    d = profile()
    c = d["bandwidth"]["ceilings"]
    theo = float(d["device"]["gpu_theoretical_dram_gbps"])
    assert 0.5 * theo < c["DRAM"]["gbps"] <= theo
    assert c["DRAM"]["gbps"] < c["L2"]["gbps"] < c["L1"]["gbps"]
    assert not d["bandwidth"]["errors"]
    for name in ("L1", "L2", "DRAM"):
        assert c[name]["source"]["entries"] and c[name]["how"]


def test_l1_ceiling_takes_the_peak_probe_when_higher(tmp_path):
    import json
    d = json.load(open(DATA))
    plateau = Profile(results.load([DATA])).to_json()["bandwidth"]["ceilings"]["L1"]["gbps"]
    def with_peak(gbps):
        e = {"name": "memory.l1_peak/vector:8/iterations:10/manual_time", "run_name": "x", "run_type": "iteration",
             "iterations": 10, "real_time": 1.0, "time_unit": "us", "value_median": gbps, "value_cv": 0.001,
             "vector_bytes": 8.0, "label": "probe=memory.l1_peak;unit=GB/s;method=per-block arrays"}
        path = tmp_path / f"peak{gbps:.0f}.json"
        path.write_text(json.dumps(dict(d, benchmarks=d["benchmarks"] + [e])))
        return Profile(results.load([str(path)])).to_json()["bandwidth"]["ceilings"]["L1"]
    higher = with_peak(plateau * 1.02)
    assert higher["gbps"] == plateau * 1.02 and "memory.l1_peak" in higher["how"]
    lower = with_peak(plateau * 0.9)
    assert lower["gbps"] == plateau and "memory.l1_peak" not in lower["how"]


def test_real_report_builds_self_contained(tmp_path):
    import re

    from gpuprobe_analysis.report import build_report
    out = build_report(results.load([DATA]), str(tmp_path / "rep"))
    html = open(out["html"], encoding="utf-8").read()
    assert "L2 near partition" in html and "DRAM" in html
    assert "DRAM (beyond" not in html and "single level" not in html and "sub-level" not in html
    assert not re.search(r"https?://", html)
