"""Issue 31 (day one): the report never contradicts itself, says what is missing instead of picking
another bound, speaks in words, and `compare` answers "which GPU is faster at what"."""
import copy
import gzip
import json
import math
import os

import pytest

from gpuprobe_analysis import plots, results
from gpuprobe_analysis.cli import main
from gpuprobe_analysis.compare import MATERIAL_CHANGE, compare, entry_key, to_markdown
from gpuprobe_analysis.curves import edge_words, model_words
from gpuprobe_analysis.sections import device_profile, results_of
from gpuprobe_analysis.sections.execution import launch_figure
from gpuprobe_analysis.sections.transfers import transfers_figure
from gpuprobe_analysis.sections import device, roofline as roofline_section
from gpuprobe_analysis.sections.optimality import kernel_summary_rows, kernel_verdict
from gpuprobe_analysis.sections.optimality import opening as kernels_opening
from gpuprobe_analysis.roofline import Ceiling, ceilings_from, kernel_points, optimality
import synth
from test_roofline import entry, load

H100_SUBSET = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "h100_subset.json")


# ------------------------------------------------------------------ item 4: a missing ceiling
def test_missing_memory_ceiling_never_makes_the_compute_peak_the_limiter(tmp_path):
    """The H200 reference had no DRAM ceiling: GEMV at 97 % of the theoretical DRAM rate was called
    "FP64-bound, 3.48 %". Without the ceiling its bound needs, a row has no % of bound and names the
    missing ceiling; the limiter only where the data decide it anyway."""
    fp64 = Ceiling("FP64", 25000.0, True, "test")
    theo = Ceiling("DRAM", 3000.0, False, "datasheet")
    # AI 2 FLOP/B: FP64 would bound it only with a DRAM ceiling above 12,500 GB/s, beyond the theoretical 3,000
    rs = load(tmp_path, [entry("ours_v1", 0.004, precision="d")])
    (row,) = optimality(kernel_points(rs)[0], [fp64, theo])
    assert row["limiter"] == "DRAM" and row["pct_of_bound"] is None and row["bound_gflops"] is None
    assert row["missing_ceilings"] == ["DRAM"]
    text = kernel_verdict(row, {"DRAM": {"value": 3000.0}})
    assert text.startswith("DRAM-bound (FP64 would bound it only with a DRAM ceiling above 12,500 GB/s, beyond "
                           "the theoretical 3,000), no % of bound: no DRAM ceiling measured; 250 GB/s"), text
    # no theoretical figure and the kernel's own traffic (500 GB/s) below the threshold: undecided
    (row,) = optimality(kernel_points(rs)[0], [fp64])
    assert row["limiter"] is None and row["pct_of_bound"] is None and row["missing_ceilings"] == ["DRAM"]
    assert kernel_verdict(row, {}).startswith("no bound: no DRAM ceiling measured")
    # AI 2000 (an SGEMM-like kernel): DRAM delivered 20 GB/s to it (counters), above the 12.5 GB/s that
    # would make it the bound: FP64-bound with its %, and the reason said
    rs = load(tmp_path, [entry("ours_v1", 0.1, flops=2e12, precision="d")])
    (row,) = optimality(kernel_points(rs)[0], [fp64])
    assert row["limiter"] == "FP64" and row["pct_of_bound"] == pytest.approx(80.0) and not row["missing_ceilings"]
    assert "DRAM delivered 20 GB/s" in row["bound_note"]
    # no compute peak measured never makes a kernel DRAM-bound
    (row,) = optimality(kernel_points(rs)[0], [Ceiling("DRAM", 1000.0, True, "test")])
    assert row["limiter"] is None and row["missing_ceilings"] == ["FP64"]
    # everything measured: the usual bound
    (row,) = optimality(kernel_points(rs)[0], [fp64, theo, Ceiling("DRAM", 1000.0, True, "test")])
    assert row["limiter"] == "FP64" and not row["missing_ceilings"] and not row["bound_note"]


def _gemv_row(**kw):
    row = {"kernel": "gemv", "impl": "ours", "size": "m=8 n=8 precision=d", "flops": 128.0, "l2": "flushed",
           "gflops": 2328.0, "gbps": 4656.0, "limiter": None, "pct_of_bound": None, "missing_ceilings": ["DRAM"],
           "vs_cublas": 1.01, "excess_traffic": None}
    row.update(kw)
    return row


def _data(measured_memory: bool):
    ceilings = [{"name": "FP64", "value": 33406.0, "unit": "GFLOP/s", "measured": True, "how": "probe"},
                {"name": "DRAM", "value": 4800.0, "unit": "GB/s", "measured": False, "how": "context"}]
    if measured_memory:
        ceilings.append({"name": "DRAM", "value": 4566.0, "unit": "GB/s", "measured": True, "how": "probe"})
    return {"device": {"gpu_name": "GPU"}, "roofline": {"ceilings": ceilings}}


def headline(data: dict, opt: list) -> list:
    """The report's opening sentences of these sections (report.opening): device, ceilings, kernels."""
    return device.opening(data["device"], data) + roofline_section.opening(None, data) + kernels_opening(opt, data)


def test_headline_says_what_is_missing_and_never_unverified_without_memory_ceilings():
    lines = headline(_data(False), [_gemv_row()])
    text = "\n".join(lines)
    assert "UNVERIFIED" not in text
    assert "No memory ceilings measured" in text
    assert "DRAM not measured (theoretical 4,800 GB/s)" in text
    gemv = next(s for s in lines if s.startswith("gemv"))
    assert "-bound" not in gemv and "no bound: no DRAM ceiling measured" in gemv
    assert "4,656 GB/s on its minimal bytes = 97 % of the theoretical DRAM 4,800" in gemv
    (row,) = kernel_summary_rows([_gemv_row()], {"DRAM": {"value": 4800.0}})
    assert "FP64" not in row[1] and "no DRAM ceiling measured" in row[1]
    # with a memory ceiling that no counter checked, the word is right
    text = "\n".join(headline(_data(True), [_gemv_row(limiter="DRAM", pct_of_bound=97.0, missing_ceilings=[])]))
    assert "Memory ceilings UNVERIFIED" in text and "DRAM-bound, 97.0 % of its bound" in text


def test_bandwidth_section_without_ceilings_says_so_not_no_data(tmp_path):
    doc = synth.synth_results(noise=0.0, families=["memory.latency", "memory.bandwidth"])
    for e in doc["benchmarks"]:  # a result file from before the premise checks
        e["label"] = ";".join(p for p in e["label"].split(";") if not p.startswith("premise"))
        for k in [k for k in e if k.startswith("premise")]:
            del e[k]
    out = tmp_path / "rep"
    assert main(["report", synth.write(str(tmp_path / "r.json"), doc), "-o", str(out)]) == 0
    md = (out / "report.md").read_text()
    bw = md[md.index("## Bandwidth per level"):md.index("## Stride")]
    assert "(no data)" not in bw and "No bandwidth ceiling" in bw and "| curve |" in bw


# ------------------------------------------------------------------ item 5: one source per figure
def test_fp32_theoretical_figure_is_its_ceiling_ops_own(tmp_path):
    """Drop exec.throughput_peak/op:ffma: the FP32 ceiling comes from the ffma sweep, and must not be
    held against fadd's theoretical figure (1 flop per op: "197 % of 33,432")."""
    doc = synth.synth_results(noise=0.0, families=["exec.throughput"])
    peak = next(e for e in doc["benchmarks"] if e["name"].startswith("exec.throughput_peak/op:ffma"))
    fadd = copy.deepcopy(peak)
    fadd["name"] = fadd["name"].replace("op:ffma", "op:fadd")
    fadd["label"] = fadd["label"].replace("op=ffma", "op=fadd")
    fadd["theoretical_gflops_at_kernel_clock"] = peak["theoretical_gflops_at_kernel_clock"] / 2  # 1 flop per op
    fadd["value_median"] = peak["value_median"] * 0.999
    with_peak = copy.deepcopy(doc)
    with_peak["benchmarks"].append(fadd)
    doc["benchmarks"] = [e for e in doc["benchmarks"] if e is not peak] + [fadd]
    p = results_of(results.load([synth.write(str(tmp_path / "r.json"), doc)]))["execution"].pipelines
    assert p.compute_ceilings["FP32"].op == "ffma"
    assert "FP32" not in p.compute_theoretical  # ffma's own figure is not in the inputs: none, not fadd's
    p = results_of(results.load([synth.write(str(tmp_path / "full.json"), with_peak)]))["execution"].pipelines
    assert p.compute_theoretical["FP32"].gflops == pytest.approx(peak["theoretical_gflops_at_kernel_clock"])
    assert "op=ffma" in p.compute_theoretical["FP32"].how


def test_no_l1_theoretical_figure_from_the_tag_lookup_metric(tmp_path):
    e = entry("ours_v1", 0.004)
    e["l1tex__t_bytes.sum.peak_sustained"] = 512.0 * 132
    e["l1tex__cycles_elapsed.avg.per_second"] = 1.98e9
    names = {(c.name, c.measured) for c in ceilings_from({}, load(tmp_path, [e]))}
    assert ("L1", False) not in names and ("DRAM", False) in names


def test_inputs_count_the_entries_each_file_holds(tmp_path):
    doc = synth.synth_results(noise=0.0, families=["exec.latency", "baseline.memcpy_d2d"])
    counters = copy.deepcopy(doc)
    counters["context"]["counters_backend"] = "ncu"
    counters["benchmarks"] = counters["benchmarks"][:3]
    a = synth.write(str(tmp_path / "counters.json"), counters)
    b = synth.write(str(tmp_path / "results.json"), doc)
    inputs = {i.file: i for i in results_of(results.load([a, b]))["inputs"].inputs}
    assert inputs[a].entries_read == 3 and inputs[a].entries == 0  # all merged into results.json's copies
    assert inputs[b].entries_read == inputs[b].entries == len(doc["benchmarks"])


def test_quantised_shared_event_time_gives_way_to_the_clock_figure(tmp_path):
    """H100: 8,858,370,048 B / 270,336 ns = exactly 32,768 GB/s, the probe's clock64 figure 127.2
    B/clk/SM x 132 SMs x 1980 MHz = 33,249 GB/s."""
    doc = synth.synth_results(noise=0.0, families=["memory.shared_bandwidth"])
    (e,) = doc["benchmarks"]
    e.update({"bytes_per_clock_per_sm": 127.21143121443384, "sm_clock_mhz": 1980.0, "time_median_s": 270336e-9,
              "value_median": 8858370048 / 270336, "value_cv": 0.0003})
    doc["context"]["gpu_sm_count"] = "132"
    from gpuprobe_analysis.ceilings import shared_ceilings
    (c,) = shared_ceilings(results.load([synth.write(str(tmp_path / "r.json"), doc)]))
    assert c.gbps == pytest.approx(127.21143121443384 * 132 * 1980e6 / 1e9)
    assert "quantised" in c.how and "32,768" in c.how
    # a long sample (the timer's half microsecond well inside its spread): the event figure stays
    e.update({"time_median_s": 0.1, "value_cv": 0.01})
    (c,) = shared_ceilings(results.load([synth.write(str(tmp_path / "r2.json"), doc)]))
    assert c.gbps == pytest.approx(8858370048 / 270336) and "quantised" not in c.how


@pytest.fixture
def h100_subset(h100_subset_profile):
    return h100_subset_profile


def _plateaus_are_honest(bw):
    """No "L1" plateau below its curve's L2 one; a plateau above its level's ceiling says why it is none."""
    for c in bw["curves"]:
        lv = {x["name"]: x for x in c["levels"]}
        if "L1" in lv and "L2" in lv:
            assert lv["L1"]["gbps_plateau"] >= lv["L2"]["gbps_plateau"], c["key"]
        for x in c["levels"]:
            ceiling = bw["ceilings"].get(x["name"])
            if ceiling and x["gbps_plateau"] > ceiling["gbps"]:
                assert x["note"] and "no ceiling" in x["note"], (c["key"], x)


def test_small_working_sets_below_l2_are_not_called_l1(tmp_path):
    """H100: copy, write and triad read 2,239-3,873 GB/s at working sets within L1, below their own L2
    plateaus (copy 7,321): rows labelled "L1" that were no L1 figure."""
    doc = synth.synth_results(noise=0.0, families=["memory.latency", "memory.bandwidth", "memory.l2_bandwidth"])
    for e in doc["benchmarks"]:
        if e["name"].startswith("memory.bandwidth/kernel:copy") and e["footprint"] <= 190 * 1024:  # every working set within L1 (192 KiB)
            e["value_median"] = e["gbps"] = 2000.0
    bw = device_profile(results.load([synth.write(str(tmp_path / "r.json"), doc)]))["bandwidth"]
    copy_curve = next(c for c in bw["curves"] if c["key"].get("kernel") == "copy")
    small = next(x for x in copy_curve["levels"] if x["name"] == "working sets <= L1 capacity")
    assert "not L1 bandwidth" in small["note"] and "stores go to L2" in small["note"]
    read = next(c for c in bw["curves"] if c["key"].get("kernel") == "read")
    assert any(x["name"] == "L1" and not x["note"] for x in read["levels"])
    _plateaus_are_honest(bw)


def test_curve_plateaus_above_a_ceiling_say_why_they_are_none(h100_subset):
    """H100: the read curve's "L2" plateau (9,361) above the L2 ceiling (8,186), with no word why."""
    _plateaus_are_honest(h100_subset["bandwidth"])
    notes = [x["note"] for c in h100_subset["bandwidth"]["curves"] for x in c["levels"] if x.get("note")]
    assert any("above the L2 ceiling" in n for n in notes), notes


# ------------------------------------------------------------------ item 6: words
def test_hierarchy_speaks_in_words_without_associativity(h100_subset):
    h = h100_subset["hierarchy"]
    for lv in h["levels"]:
        assert "ways" not in lv["model"] and "merged" not in lv["model"], lv["model"]
    assert {lv["model"] for lv in h["levels"] if lv["name"] != "shared"} <= {
        "sharp", "gradual (keeps its capacity of a larger footprint)", "last level (no edge after it)"} | {
        lv["model"] for lv in h["levels"] if lv["model"].startswith("smeared (")}
    for c in h["curves"]:
        assert "ways" not in c["model"] and c["fit_model"]
    assert edge_words("ways1249.47") == "sharp" and edge_words("ways4").startswith("smeared (90 % to 10 % served over 3.8x")
    assert edge_words("step") == "sharp" and edge_words(None) == "last level (no edge after it)"


def test_byte_labels_carry_four_significant_figures():
    assert plots._bytes_formatter(254.038 * 1024) == "254 KiB"
    assert plots._bytes_formatter(26.9512 * 2**20) == "26.95 MiB"
    assert plots._fmt_key(3.14159) == "3.142"


def test_optimality_gives_the_share_moved_where_a_level_did_not_serve_the_problem(tmp_path, full_report):
    """H100: "DRAM 149,797 FLOP/B" for small SGEMMs whose operands stay in L2: DRAM moved ~0 bytes."""
    e = entry("ours_v1", 0.004)
    e.update({"dram__bytes_read.sum": 1.5e6, "dram__bytes_write.sum": 0.5e6})  # 0.2 % of the 1e9 minimal bytes
    (row,) = optimality(kernel_points(load(tmp_path, [e]))[0], [])
    assert row["served_share"]["DRAM"] == pytest.approx(0.002) and row["served_share"]["L2"] == pytest.approx(4.0)
    ctx = {"outdir": str(tmp_path), "opt": [row], "opt_main": [row], "read_dominated": 0.9, "served_share": 0.5}
    import gpuprobe_analysis.report as rep
    env = rep._environment("md")
    blocks = env.get_template("blocks.md.j2").module
    text = env.get_template("sections/optimality.j2").render(ctx, d=blocks, figs=rep.FigureRegistry(str(tmp_path)))
    assert "DRAM – (moved 0.2 % of the minimal bytes: not the level serving it)" in text
    assert "L2 0.5" in text  # a level that served it keeps its intensity
    md = open(os.path.join(full_report, "report.md"), encoding="utf-8").read()
    assert "did not hold the data" in md


# ------------------------------------------------------------------ item 7: compare two GPUs
def test_entry_key_ignores_google_benchmark_run_suffixes():
    assert entry_key("memory.latency/load:ca/footprint:1024/iterations:5/manual_time") == "memory.latency/load:ca/footprint:1024"
    assert entry_key("x/size:4/iterations:10/repeats:3/manual_time") == entry_key("x/size:4/iterations:7")
    assert entry_key("kernels.gemv/impl:ours/n:8/real_time") == "kernels.gemv/impl:ours/n:8"


def test_compare_of_two_gpus_says_so_matches_any_iteration_count_and_leads_with_a_summary(tmp_path):
    fams = ["exec.throughput", "baseline.memcpy_d2d", "memory.stride"]
    a = synth.synth_results(noise=0.0, families=fams)
    b = copy.deepcopy(a)
    b["context"]["gpu_name"] = "Other GPU"
    for e in a["benchmarks"] + b["benchmarks"]:
        e["value_cv"] = 0.001
    for e in b["benchmarks"]:
        e["name"] = e["name"].replace("iterations:10", "iterations:7") if "iterations:" in e["name"] \
            else e["name"] + "/iterations:7"
        if e["name"].startswith("baseline.memcpy_d2d"):
            e["value_median"] *= 1.5  # B 50 % faster
        elif e["name"].startswith("memory.stride"):
            e["value_median"] *= 1.005  # beyond the 0.3 % noise, under 1 %: counted, not listed
    pa = synth.write(str(tmp_path / "a.json"), a)
    pb = synth.write(str(tmp_path / "b.json"), b)
    res = compare(results.load([pa]), results.load([pb]))
    assert not res["only_in_a"] and not res["only_in_b"]  # matched whatever their iteration counts
    assert not res["same_gpu"]
    fam = {f["family"]: f for f in res["families"]}
    assert fam["baseline.memcpy_d2d"]["median_ratio"] == pytest.approx(1.5)
    assert res["families"][0]["family"] == "baseline.memcpy_d2d"  # the largest move first
    md = to_markdown(res, "a.json", "b.json")
    assert md.index("different GPUs") < md.index("## Ceilings") < md.index("## Per family") \
        < md.index("## Changes beyond noise")
    assert "FP32 peak" in md.split("## Per family")[0]
    listed = md[md.index("## Changes beyond noise"):]
    stride = [r for r in res["significant"] if r["family"] == "memory.stride"]
    assert stride and all(abs(r["change_pct"]) < 100 * MATERIAL_CHANGE for r in stride)
    assert "memory.stride/" not in listed  # sub-1 % changes are counted, never listed
    assert f"({len(stride)} of them under 1 %, counted only)" in listed
    assert "### baseline.memcpy_d2d" in listed


def test_compare_reads_result_folders(tmp_path, capsys):
    doc = synth.synth_results(noise=0.0, families=["exec.latency"])
    for side in ("a", "b"):
        os.makedirs(tmp_path / side)
        with gzip.open(tmp_path / side / "results.json.gz", "wt") as fh:
            json.dump(doc, fh)
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "b"), "--no-summary"]) == 0
    out = capsys.readouterr().out
    assert "Both on" in out and "Changes beyond noise: 0 of" in out


# ------------------------------------------------------------------ item 8: bad values, figures
def test_many_bad_values_make_one_counted_line_and_the_report_says_so(tmp_path, capsys):
    doc = synth.synth_results(noise=0.0, families=["exec.latency", "exec.throughput", "baseline.memcpy_d2d"])
    bad = [e["name"] for e in doc["benchmarks"] if e["name"].startswith("exec.throughput/")]
    assert len(bad) > 5
    for e in doc["benchmarks"]:
        if e["name"] in bad:
            e["value_median"] = math.nan
    path = str(tmp_path / "r.json")
    with open(path, "w") as fh:
        json.dump(doc, fh)  # NaN as Python's json writes it
    out = tmp_path / "rep"
    assert main(["report", path, "-o", str(out)]) == 0  # documented: the report is built from the rest
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if "rejected" in ln]
    assert len(lines) == 1 and f"{len(bad)} entries rejected" in lines[0], lines
    md = (out / "report.md").read_text()
    summary = md[md.index("## Summary"):md.index("## Inputs")]
    assert f"{len(bad)} entries rejected" in summary
    assert all(n in md for n in bad)  # every one listed in the inputs section
    assert main(["validate", path]) == 1


def test_a_rejected_main_latency_curve_promotes_no_other_curves_level(tmp_path):
    doc = synth.synth_results(noise=0.005, families=["memory.latency"])
    doc["benchmarks"] = [e for e in doc["benchmarks"] if "pattern:random" not in e["name"]]
    assert any("pattern:stride" in e["name"] for e in doc["benchmarks"])
    prof = device_profile(results.load([synth.write(str(tmp_path / "r.json"), doc)]))
    names = {lv["name"] for lv in prof["hierarchy"]["levels"]}
    assert not any(n.startswith("level ") for n in names), names
    assert any("no random pointer-chase curve" in n for n in prof["notes"])


def _captured(monkeypatch):
    figs = {}
    monkeypatch.setattr(plots, "_save", lambda fig, outdir, fid: figs.setdefault(fid, fig) and {})
    return figs


def test_transfers_figure_has_distinct_styles_and_one_column_per_direction(monkeypatch, tmp_path):
    figs = _captured(monkeypatch)
    doc = synth.synth_results(noise=0.01, families=["transfer.host"])
    curves = results_of(results.load([synth.write(str(tmp_path / "r.json"), doc)]))["transfers"].curves
    transfers_figure(curves, str(tmp_path))
    fig = figs["transfers"]
    axes = [ax for ax in fig.axes if ax.get_visible()]
    directions = {str(c.key.get("direction")) for c in curves}
    assert len(axes) == 2 * len(directions)
    for ax in axes:
        styles = [(ln.get_color(), ln.get_marker()) for ln in ax.get_lines() if ln.get_marker() not in ("None", None, "")]
        assert len(styles) == len(set(styles)), styles


def test_launch_figure_is_linear_per_panel(monkeypatch, tmp_path):
    figs = _captured(monkeypatch)
    doc = synth.synth_results(noise=0.0, families=["exec.launch"])
    lb = results_of(results.load([synth.write(str(tmp_path / "r.json"), doc)]))["execution"].launch_barrier
    launch_figure(lb.launch, [], str(tmp_path))
    axes = [ax for ax in figs["launch"].axes if ax.get_visible()]
    assert axes and all(ax.get_yscale() == "linear" and ax.get_ylim()[0] == 0 for ax in axes)
