"""Ceilings from premises: an entry whose premise failed never becomes a ceiling and is listed; a run
without counters builds its ceilings but says they are unverified, in the summary itself."""
import json
import os

import pytest

import synth
from gpuprobe_analysis import ceilings, report, results
from gpuprobe_analysis.sections import device_profile

FAMILIES = ["memory.latency", "memory.bandwidth", "memory.l1_peak", "memory.l2_bandwidth",
            "memory.shared_bandwidth", "exec.throughput"]


def doc(counters=True):
    return synth.synth_results(synth.Device(), noise=0.002, seed=3, counters=counters, families=FAMILIES)


def hot_set_entry(value_gbps, ratio):
    """An L2 entry like the old read_cg 'hot set': counted 64 GB, only `ratio` of it reached L2."""
    tags, pc = synth.premise("L2", True, ratio=ratio, ok=False)
    label = "probe=memory.l2_bandwidth;unit=GB/s;method=hot set;kernel=read_cg" + "".join(
        f";{k}={v}" for k, v in tags.items())
    return {"name": "memory.l2_bandwidth/kernel:read_cg/footprint:32768", "run_name": "x", "run_type": "iteration",
            "iterations": 10, "real_time": 1.0, "time_unit": "us", "label": label, "value_median": value_gbps,
            "value_cv": 0.001, "footprint": 32768, **pc}


def profile_of(tmp_path, d):
    p = synth.write(str(tmp_path / "r.json"), d)
    return device_profile(results.load([p]))


def test_failed_premise_is_never_a_ceiling_and_is_listed(tmp_path):
    d = doc()
    truth = synth.Device().bw_gbps[1]
    d["benchmarks"].append(hot_set_entry(1.9 * truth, 0.40))
    prof = profile_of(tmp_path, d)
    l2 = prof["bandwidth"]["ceilings"]["L2"]
    assert l2["gbps"] == pytest.approx(truth, rel=0.02)  # the hot set's 1.9x is not the ceiling
    assert l2["premise"] == "ok" and l2["premise_ratio"] == pytest.approx(1.0)
    (failed,) = prof["premises"]["failed_entries"]
    assert failed["entry"].startswith("memory.l2_bandwidth/kernel:read_cg/footprint:32768")
    assert failed["ratio"] == pytest.approx(0.40)
    assert "0.400x" in failed["why"]
    assert prof["premises"]["failed"] == 1 and prof["premises"]["counters_checked"]


def test_ceilings_name_what_produced_them(tmp_path):
    c = profile_of(tmp_path, doc())["bandwidth"]["ceilings"]
    assert {"L1", "L2", "L2 write", "L2 copy", "DRAM", "DRAM copy", "shared"} <= set(c)
    assert c["L2"]["kind"] == "read" and c["L2 write"]["kind"] == "write"
    assert c["DRAM"]["source"]["probe"] == ["memory.bandwidth"]
    assert c["L2"]["source"]["probe"] == ["memory.l2_bandwidth"]
    # The partitioned L2's far part is its own row, below the near plateau.
    assert c["L2 far"]["gbps"] < c["L2"]["gbps"]


def test_without_counters_the_summary_says_unverified(tmp_path):
    d = doc(counters=False)
    p = synth.write(str(tmp_path / "r.json"), d)
    prof = device_profile(results.load([p]))
    assert prof["premises"]["counters_checked"] is False
    assert prof["premises"]["verdict"].startswith("ceilings UNVERIFIED")
    assert all(c["premise"] == "unverified" for c in prof["bandwidth"]["ceilings"].values())
    out = report.build_report(results.load([p]), str(tmp_path / "rep"))
    html = open(out["html"], encoding="utf-8").read()
    summary = html[html.index('id="summary"'):html.index('id="device"')]
    assert "ceilings UNVERIFIED" in summary


def test_a_build_without_the_cupti_backend_says_why_everything_is_timing_only(tmp_path):
    # A gpuprobe built against a CUPTI without the Range Profiling API records why in every result file; the
    # summary's verdict carries that line.
    d = doc(counters=False)
    why = ("this gpuprobe was built against a CUPTI without the Range Profiling API (CUPTI_API_VERSION 22; ...): "
           "no hardware counters, every figure is timing-only")
    d["context"]["counters_unavailable"] = why
    p = synth.write(str(tmp_path / "r.json"), d)
    prof = device_profile(results.load([p]))
    assert prof["premises"]["verdict"] == f"ceilings UNVERIFIED: no counter run checked the probes' premises ({why})"
    out = report.build_report(results.load([p]), str(tmp_path / "rep"))
    html = open(out["html"], encoding="utf-8").read()
    assert "every figure is timing-only" in html[html.index('id="summary"'):html.index('id="device"')]


def test_summary_labels_say_what_produced_each_ceiling(tmp_path):
    p = synth.write(str(tmp_path / "r.json"), doc())
    out = report.build_report(results.load([p]), str(tmp_path / "rep"))
    md = open(out["markdown"], encoding="utf-8").read()
    summary = md[md.index("Summary"):md.index("## Device") if "## Device" in md else None]
    assert "| L2 bandwidth |" in summary and "read (memory.l2_bandwidth)" in summary
    assert "| DRAM copy bandwidth |" in summary and "copy (memory.bandwidth)" in summary
    assert "ok, 1.000x counted" in summary
    assert "% of " in summary  # % of theoretical where a theoretical value exists


def test_usable_rejects_failed_and_nonpositive():
    e = results.Entry("memory.l1_peak/vector:16", "memory.l1_peak", {}, {"premise_level": "L1"}, "GB/s", "",
                      {"value_median": 100.0, "premise_ok": 0.0}, "x")
    assert not ceilings.usable(e)
    e.counters["premise_ok"] = 1.0
    assert ceilings.usable(e)
    e.counters["value_median"] = -5.0
    assert not ceilings.usable(e)


def test_compute_ceiling_needs_its_sass_premise(tmp_path):
    d = doc()
    for e in d["benchmarks"]:
        if e["name"].startswith("exec.throughput_peak/op:ffma"):
            e["premise_ok"], e["premise_ratio"] = 0.0, 0.5  # the counters saw half the FFMAs: not an FFMA peak
            e["label"] = e["label"].replace(";premise=ok", ";premise=failed: SASS operations 0.500x the counted")
    pipes = profile_of(tmp_path, d)["pipelines"]
    assert "FP32" not in pipes["compute_ceilings"]
    assert pipes["compute_ceilings"]["FP64"]["premise"] == "ok"
    assert "0.500x" in pipes["compute_ceilings_failed_premise"]["ffma"]["why"]


def strip_premise_checks(doc: dict) -> dict:
    """The file a run without counters writes: the premise declared (level, rule), never checked."""
    for e in doc["benchmarks"]:
        for k in ("premise_ok", "premise_ratio", "premise_measured", "premise_l1_hit_rate", "premise_dram_share"):
            e.pop(k, None)
        e["label"] = ";".join(t for t in e.get("label", "").split(";") if not t.startswith("premise="))
    return doc


def test_without_counters_the_ceilings_are_those_the_premises_check(tmp_path):
    """A real H100 subset, its premise checks stripped: every ceiling built without counters is within
    3 % of the premise-checked one, none comes from the read walk the request coalescer merges
    (walk=shared, 78-83 % of its loads at the L2 and ~20 % faster than the L2 serves), and all say
    unverified."""
    data = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "h100_subset.json")
    checked = device_profile(results.load([data]))["bandwidth"]["ceilings"]
    with open(data, encoding="utf-8") as fh:
        bare = synth.write(str(tmp_path / "bare.json"), strip_premise_checks(json.load(fh)))
    unchecked = device_profile(results.load([bare]))["bandwidth"]["ceilings"]
    assert "L2" in unchecked and "DRAM" in unchecked and "L1" in unchecked
    for name, c in unchecked.items():
        assert c["premise"] == "unverified" and "premise by construction" in c["how"], name
        assert "walk=shared" not in c["how"] or c["kind"] == "write", (name, c["how"])
        assert name in checked, name
        assert c["gbps"] == pytest.approx(checked[name]["gbps"], rel=0.03), name


def entry(kernel, walk, footprint, loads):
    return results.Entry(f"memory.l2_bandwidth/kernel:{kernel}/walk:{walk}", "memory.l2_bandwidth", {},
                         {"premise_level": "L2", "kernel": kernel, "walk": walk}, "GB/s", "",
                         {"value_median": 9000.0, "footprint": footprint, "loads": loads}, "x")


def test_by_construction_rules():
    mib = 2**20
    serves = 20 * mib
    assert ceilings.by_construction(entry("read_cg", "shared", 8 * mib, 8), serves) is None
    assert ceilings.by_construction(entry("read_cg", "own_slice", 8 * mib, 4), serves)
    assert ceilings.by_construction(entry("write", "shared", 8 * mib, 8), serves)
    # walk=blocks: 32 rows of 8 KiB pieces; 8 MiB read = 32 pieces per row (the window), 4 MiB = 16.
    assert ceilings.by_construction(entry("read_cg", "blocks", 8 * mib, 32), serves)
    assert ceilings.by_construction(entry("read_cg", "blocks", 4 * mib, 32), serves) is None
    # copy walks two arrays: 8 MiB is 16 pieces per row of each.
    assert ceilings.by_construction(entry("copy", "blocks", 8 * mib, 32), serves) is None
    assert ceilings.by_construction(entry("copy", "blocks", 16 * mib, 32), serves)
    # Beyond the capacity the hierarchy measured (with margin), nothing holds by construction.
    assert ceilings.by_construction(entry("write", "blocks", 24 * mib, 32), serves) is None
    assert ceilings.by_construction(entry("read_cg", "own_slice", 8 * mib, 4), None) is None
