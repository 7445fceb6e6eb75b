"""The device profile on a small subset of a real H100 run (tests/data/h100_subset.json: random
pointer chases ca/cg at stride 128, memory.bandwidth read/read_cg/write, memory.occupancy read, and the
ceiling probes memory.l1_peak, memory.l2_bandwidth, memory.shared_bandwidth, their premise checks
merged in from the run's premises.json).
Bounds are physical (levels and capacities ordered, ceilings below their theoretical values,
cg chain without an L1 level), not constants tuned to the H100."""
import os

from gpuprobe_analysis import results

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "h100_subset.json")


def test_real_hierarchy_is_ordered_and_from_the_primary_curve(h100_subset_profile):
    d = h100_subset_profile
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
    assert 0.5 < (caps.get("l2_bytes_fit") or caps["l2_bytes"]) / caps["l2_bytes_reported_by_driver"] < 2.0  # the fit's knee
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


def test_real_bandwidth_ceilings_are_physical(h100_subset_profile):
    d = h100_subset_profile
    c = d["bandwidth"]["ceilings"]
    theo = float(d["device"]["gpu_theoretical_dram_gbps"])
    assert 0.5 * theo < c["DRAM"]["gbps"] <= theo
    assert c["DRAM"]["gbps"] < c["L2"]["gbps"] < c["L1"]["gbps"]
    assert not d["bandwidth"]["errors"]
    for name in ("L1", "L2", "DRAM"):
        assert c[name]["source"]["entries"] and c[name]["how"]
        assert c[name]["premise"] == "ok" and abs(c[name]["premise_ratio"] - 1) < 0.03, name


def test_real_l2_ceiling_is_below_the_counters_peak_and_from_unmerged_reads(h100_subset_profile):
    """The L2 read ceiling counts only bytes the L2 served: at or below its own peak (bytes per cycle x
    L2 clock, from the same run's counters), and from the walk whose reads no SM shares."""
    rs = results.load([DATA])
    d = h100_subset_profile
    l2 = d["bandwidth"]["ceilings"]["L2"]
    peaks = [e.counters["lts__t_bytes.sum.peak_sustained"] * e.counters["lts__cycles_elapsed.avg.per_second"] / 1e9
             for e in rs.entries if "lts__t_bytes.sum.peak_sustained" in e.counters]
    assert peaks and l2["gbps"] <= min(peaks)
    assert "walk=own_slice" in l2["how"]
    # The shared walk's reads merge in the L2 request coalescer: their premise fails, listed with ratio.
    failed = [f for f in d["premises"]["failed_entries"] if "walk:shared" in f["entry"]]
    assert failed and all(f["ratio"] < 0.97 for f in failed)


def test_real_report_builds_self_contained(tmp_path):
    import re

    from gpuprobe_analysis.report import build_report
    out = build_report(results.load([DATA]), str(tmp_path / "rep"))
    html = open(out["html"], encoding="utf-8").read()
    assert "L2 near partition" in html and "DRAM" in html
    assert "DRAM (beyond" not in html and "single level" not in html and "sub-level" not in html
    assert not re.search(r"https?://", html)
