"""Report lines that must not contradict themselves or their tables (issue 46): ratios that name their
baseline, each bandwidth kind judged against its own ceiling, one definition per tensor line, kernels above
their bound with the reason, capacities reconciled with the driver, every name defined, figures whose
reference lines are the tables' ceilings.

The checks on the committed references read only the families each needs (the whole H200 reference takes
minutes to analyse)."""
import os

import pytest

from gpuprobe_analysis import results
from gpuprobe_analysis.sections import results_of
from gpuprobe_analysis.sections.optimality import kernel_summary_rows
from gpuprobe_analysis.sections.optimality import opening as kernels_opening

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def reference(name: str, families) -> results.ResultSet:
    """A committed reference (reports/<name>), only the entries of `families` (prefixes)."""
    folder = os.path.join(ROOT, "reports", name)
    rs = results.load([os.path.join(folder, f"{base}.json.gz") for base in ("premises", "counters", "results")])
    for f in rs.files:
        f.entries = [e for e in f.entries if e.family.startswith(tuple(families))]
    return rs


def _row(**kw):
    row = {"kernel": "gemv", "impl": "ours", "size": "m=8 n=8 precision=d", "flops": 128.0, "l2": "flushed",
           "gflops": 1176.0, "gbps": 4706.0, "limiter": "DRAM", "pct_of_bound": 100.2, "missing_ceilings": [],
           "vs_cublas": 0.9998, "cublas_impl": "cublas", "excess_traffic": 1.0, "bound_note": ""}
    row.update(kw)
    return row


# ------------------------------------------------------------------ item 5: ratios name their baseline
def test_summary_ratio_names_the_cublas_impl_with_three_significant_digits():
    """"1x cuBLAS; fastest there: cublas" was shown for 0.9998; for SYMV "1x cuBLAS" meant cublas_atomics."""
    opt = [_row(), _row(impl="cublas", vs_cublas=None, gflops=1176.3)]
    (summary,) = kernel_summary_rows(opt)
    (line,) = kernels_opening(opt, {})
    for text in (summary[1], line):
        assert "1.00x cublas" in text and "1x cuBLAS" not in text, text
        assert "100.2 %" in text, text  # never rounded to "100 %"
    symv = [_row(kernel="symv", vs_cublas=1.0004, cublas_impl="cublas_atomics"),
            _row(kernel="symv", impl="cublas_atomics", vs_cublas=None, gflops=1175.0)]
    (line,) = kernels_opening(symv, {})
    assert "1.00x cublas_atomics" in line, line


# ------------------------------------------------------------------ item 3: each kind against its own ceiling
@pytest.fixture(scope="module")
def h100_bandwidth():
    return results_of(reference("h100", ["memory.bandwidth"]))["bandwidth"].bandwidth


def test_each_bandwidth_kind_is_judged_against_its_own_ceiling(h100_bandwidth):
    """The Summary gave DRAM write 3,280 GB/s ("ok"), the bandwidth section judged the same curve against the
    read ceiling: "above the DRAM ceiling (3,194) but no ceiling"."""
    bw = h100_bandwidth
    assert bw.ceilings["DRAM write"].gbps > bw.ceilings["DRAM"].gbps  # the case: write faster than read
    for row in bw.curves:
        kind = {"read": "", "read_cg": "", "read_nc": ""}.get(row.key["kernel"], " " + row.key["kernel"])
        for lv in row.levels:
            if (lv.note or "").startswith("above the"):
                own = f"{lv.name}{kind}"
                assert lv.note.startswith(f"above the {own} ceiling ({bw.ceilings[own].gbps:,.0f})"), (row.key, lv.note)
    write = [lv for row in bw.curves if row.key["kernel"] == "write" for lv in row.levels if lv.name == "DRAM"]
    assert write and all(lv.gbps_plateau <= bw.ceilings["DRAM write"].gbps * 1.001 for lv in write)
    assert not [lv.note for lv in write if "DRAM ceiling (3,194)" in (lv.note or "")]


# ------------------------------------------------------------------ item 2: one clock definition per line
def _tensor_results(tmp_path):
    import synth
    from gpuprobe_analysis.sections import tensor
    # a board of the datasheet table (gpu_specs), its maximum clock (1,980 MHz) above the entry's 1,693
    dev = synth.Device(name="NVIDIA H200", sm_count=132, clock_mhz=1980.0)
    doc = synth.synth_results(dev, noise=0.0, families=["exec.launch"])
    doc["context"]["gpu_compute_capability"] = "9.0"
    b = synth.Builder(dev, noise=0.0, seed=0)
    clock, sms, peak = 1693.0, 132, 4096.0
    # The H200's FP16 line: every SM at the dense peak per clock while busy (fraction_of_theoretical 1.0),
    # the whole chip over wall time 896.1 TFLOP/s, below 132 x 4,096 x 1.693 GHz = 915.4 TFLOP/s.
    counters = {"m": 64.0, "n": 64.0, "k": 16.0, "sm_clock_kernel_mhz": clock, "power_w": 389.0,
                "flops_per_clk_per_sm": peak, "theoretical_flops_per_clk_per_sm": peak,
                "fraction_of_theoretical": 1.0, "theoretical_gflops_at_kernel_clock": peak * sms * clock * 1e-3,
                "warps_per_sm": 8.0, "min_warps_per_sm": 8.0, "premise_ok": 1.0}
    tags = {"instr": "wgmma", "precision": "f16", "acc": "f32", "a": "smem", "data": "random",
            "premise_level": "compute", "premise": "ok"}
    params = {"instr": "wgmma", "precision": "f16", "acc": "f32", "a": "smem", "m": "64", "n": "64", "k": "16",
              "data": "random"}
    b.add(tensor.THROUGHPUT, params, "GFLOP/s", "synthetic", 896.1e3, counters=counters, tags=tags)
    doc["benchmarks"] += b.entries
    return results.load([synth.write(str(tmp_path / "r.json"), doc)])


def test_tensor_line_uses_one_definition_and_names_it(tmp_path):
    """"FP16 tensor 896.1 TFLOP/s at 1,693 MHz ... = 100.0 % of the dense peak at that clock": the 100 % was
    per SM while busy, the TFLOP/s the whole chip over wall time (97.9 % of 915.4)."""
    from gpuprobe_analysis.sections import AnalysisInputs, tensor
    an = tensor.analyze(AnalysisInputs(_tensor_results(tmp_path)))
    (row,) = tensor.summary(an)
    assert "896.1 TFLOP/s at 1,693 MHz" in row["value"] and "100.0 %" not in row["value"], row["value"]
    assert "= 97.9 % of the dense peak at that clock" in row["value"], row["value"]
    assert "915.4 TFLOP/s" in row["value"] and "whole chip over wall time" in row["value"], row["value"]
    prof = tensor.to_json(an)["ceilings"]["FP16 tensor"]["random"]
    assert prof["fraction_of_dense_peak_chip_wall_time"] == pytest.approx(896.1e3 / (4096 * 132 * 1693e-3), abs=1e-4)
    assert prof["fraction_of_dense_peak_per_sm_busy"] == 1.0
    assert "fraction_of_dense_peak" not in prof  # the ambiguous key is gone


# ------------------------------------------------------------------ figures: their reference lines are the tables' ceilings
def _gemm_lt_points(tmp_path):
    from test_gemm_lt import FLOPS, N, gemm, load
    from gpuprobe_analysis.roofline import kernel_points
    rs = load(tmp_path, lambda b: [gemm(b, "bf16", N, FLOPS / 750e12), gemm(b, "e4m3", N, FLOPS / 1300e12),
                                   gemm(b, "s8", N, FLOPS / 1400e12)])
    return kernel_points(rs)[0]


def _figure_ceilings():
    from gpuprobe_analysis.roofline import Ceiling
    return [Ceiling("DRAM", 4638.0, True, "t"), Ceiling("L2", 9527.0, True, "t"), Ceiling("FP32", 65535.0, True, "t"),
            Ceiling("FP64", 33400.0, True, "t"), Ceiling("BF16 tensor", 952900.0, True, "t"),
            Ceiling("BF16 tensor", 989000.0, False, "t"), Ceiling("FP8 tensor", 1810100.0, True, "t"),
            Ceiling("INT8 tensor", 1940500.0, True, "t"), Ceiling("DRAM copy", 4300.0, True, "t")]


def _drawn(lines, name: str, unit: str):
    """The figure a drawn line labelled "NAME <value> UNIT ..." gives (None: none drawn), from (label, value)
    pairs; a flat line's drawn height is that figure (a roofline's memory roof is a diagonal, its slope)."""
    import re
    pat = re.compile(rf"^{re.escape(name)} ([\d,.]+) {re.escape(unit)}\b")
    found = []
    for label, v in lines:
        m = pat.match(label)
        if m:
            figure = float(m.group(1).replace(",", ""))
            assert unit == "GB/s" or v == figure, (label, v)
            found.append(figure)
    assert len(found) <= 1, (name, unit, lines)
    return found[0] if found else None


def test_roofline_draws_each_tensor_roof_and_caps_diagonals_at_the_highest_measured_roof(tmp_path):
    """The H200 roofline drew L1, L2, DRAM, FP32 and FP64 only, and capped every diagonal at the highest
    point's rate (~1.3 PFLOP/s): a roof that does not exist."""
    from gpuprobe_analysis.sections.roofline import roof_top, roofline_figure
    ceilings = _figure_ceilings()
    fig = roofline_figure(_gemm_lt_points(tmp_path), ceilings, str(tmp_path))
    by_panel = {}
    for r in fig.references:  # what the figure drew (plots.reference_lines), not what the code meant to
        if r["label"]:
            by_panel.setdefault(r["panel"], set()).add((r["label"], r["value"]))
    assert len({frozenset(v) for v in by_panel.values()}) == 1  # every panel draws every roof
    drawn = next(iter(by_panel.values()))
    assert _drawn(drawn, "BF16 tensor", "GFLOP/s") == 952900.0 and _drawn(drawn, "FP8 tensor", "GFLOP/s") == 1810100.0
    assert _drawn(drawn, "INT8 tensor", "GOP/s") == 1940500.0  # an integer type's roof counts operations
    assert _drawn(drawn, "DRAM", "GB/s") == 4638.0 and _drawn(drawn, "DRAM copy", "GB/s") is None  # bound, not drawn
    assert roof_top(ceilings) == 1940500.0  # the highest measured roof, not the highest point


def test_gemm_lt_panels_hold_their_own_tensor_ceiling_and_an_honest_title(tmp_path):
    """The gemm_lt figure drew "FP32 peak 65,535 GFLOP/s" in every panel (BF16 and FP8 included), promised
    "ours (black: default)" with no ours, and gave INT8 in GFLOP/s."""
    from gpuprobe_analysis.sections.kernels import figure_heading, kernel_figures
    points = _gemm_lt_points(tmp_path)
    (fig,) = kernel_figures(points, str(tmp_path), None, _figure_ceilings())
    lines = {r["panel"]: {(r["label"], r["value"])} for r in fig.references if r["label"]}
    assert set(lines) == {"precision=bf16", "precision=e4m3", "precision=s8"}
    assert _drawn(lines["precision=bf16"], "BF16 tensor", "GFLOP/s") == 952900.0
    assert _drawn(lines["precision=e4m3"], "FP8 tensor", "GFLOP/s") == 1810100.0
    assert _drawn(lines["precision=s8"], "INT8 tensor", "GOP/s") == 1940500.0
    assert all(len(v) == 1 for v in lines.values())  # each panel its own type's ceiling, no FP32 peak
    heading = figure_heading("gemm_lt", {p.impl for p in points})
    assert "ours" not in heading and "cuBLAS" in heading, heading
    assert "ours (black: default)" in figure_heading("gemv", {"ours", "ours_v3", "cublas"})
    assert "GOP/s" in fig.caption and "tensor ceiling" in fig.caption, fig.caption


# ------------------------------------------------------------------ item 1: a kernel above its bound says why
@pytest.fixture(scope="module")
def h200_kernels():
    """The H200 reference's GEMV and SYMV entries with the ceilings their bounds need (DRAM, FP32, FP64)."""
    from gpuprobe_analysis.sections import analyze_all, profile_json
    rs = reference("h200", ["memory.bandwidth", "kernels.gemv", "kernels.symv", "exec.throughput"])
    present = analyze_all(rs)
    return {p.section.id: p.result for p in present}, profile_json(present), present, rs


def test_a_kernel_above_its_bound_carries_the_reason_and_the_summary_names_the_gap(h200_kernels):
    """The H200 optimality table showed gemv trans=t at 101.5 % of its bound and seven more rows at
    100.2-101.5 % with no word why, and the Summary rounded it to "100 %"."""
    from gpuprobe_analysis.roofline import ceilings_beaten
    from gpuprobe_analysis.sections import bandwidth, optimality
    res, data, _, _ = h200_kernels
    opt = res["optimality"]
    above = [r for r in opt if r["pct_of_bound"] and r["pct_of_bound"] > 100]
    assert len(above) >= 8
    for r in above:  # every row above 100 % carries its reason
        assert r["above_bound"] and ("within the noise" in r["above_bound"] or "beyond the noise" in r["above_bound"]), r
    t = next(r for r in opt if r["impl"] == "ours" and r["size"] == "m=32768 n=32768 precision=d trans=t")
    assert t["pct_of_bound"] == pytest.approx(101.5, abs=0.05) and "beyond the noise" in t["above_bound"]
    (gap,) = [g for g in ceilings_beaten(opt) if g["ceiling"] == "DRAM"]
    assert gap["ceiling_value"] == pytest.approx(4638, abs=1) and gap["value"] == pytest.approx(4706, abs=1)
    assert gap["excess"] > gap["noise"] > 0
    text = " ".join(optimality.opening(opt, data))
    assert "DRAM ceiling (4,638 GB/s" in text and "4,706 GB/s" in text and "higher by 1.5 %" in text, text
    row = next(r for r in bandwidth.summary_rows(res["bandwidth"], data) if r[0] == "DRAM bandwidth")
    assert "4,706" in row[1] and "1.5 %" in row[1], row


# ------------------------------------------------------------------ item 7: a capacity against the driver's
H100_SUBSET = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "h100_subset.json")


def test_l2_capacity_is_reconciled_with_the_driver_figure():
    """The H100 L2 read 51.9 MiB (bracket 45.25-53.82 MiB), above the driver's 50 MiB, unexplained."""
    from gpuprobe_analysis.sections import hierarchy
    rs = results.load([H100_SUBSET])
    for f in rs.files:
        f.entries = [e for e in f.entries if e.family == "memory.latency"]
    an = results_of(rs)["hierarchy"]
    l2 = next(lv for lv in an.hierarchy.levels if lv.name == "L2")
    lo, hi = l2.capacity_bracket_bytes
    assert lo <= 50 * 2**20 <= hi  # the case: the driver's figure inside the sweep's bracket
    assert l2.capacity_bytes == 50 * 2**20 and an.hierarchy.capacities.l2_bytes == 50 * 2**20
    assert "driver" in l2.capacity_how and "agrees" in l2.capacity_how and "MiB" in l2.capacity_how
    # outside the bracket: the sweep's figure, and the disagreement said
    cap, how = hierarchy.reconcile_with_driver(60 * 2**20, [58 * 2**20, 62 * 2**20], 50 * 2**20)
    assert cap == 60 * 2**20 and "outside" in how and "50 MiB" in how
    cap, how = hierarchy.reconcile_with_driver(60 * 2**20, [58 * 2**20, 62 * 2**20], None)
    assert cap == 60 * 2**20 and "no driver figure" in how


# ------------------------------------------------------------------ item 12: every name defined where used
def test_summary_names_are_defined(h200_kernels):
    """`ours_aware_v5` and `ours_v3` appeared in the Summary, never defined."""
    from gpuprobe_analysis.report import opening, summary_glossary, summary_rows
    _, data, present, rs = h200_kernels
    headline, rows = opening(present, data), summary_rows(present, data)
    text = "\n".join(headline)
    assert "ours_v3" in text and "ours_aware_v5" in text  # the case: both in the Summary's sentences
    terms = summary_glossary(rs, headline, rows)
    assert "single_pass" in terms["ours_v3"] and "aware_v5" in terms["ours_aware_v5"], terms
    assert "atomics allowed" in terms["cublas_atomics"] and "ours" in terms
    assert "ours_oblivious" not in terms  # only the names the Summary uses


def test_hot_set_and_n_half_are_in_the_glossary():
    from gpuprobe_analysis.glossary import GLOSSARY
    assert "read_cg" in GLOSSARY["L2 hot set"] and "α·β" in GLOSSARY["n½"]


def test_tensor_latency_is_labelled_by_the_full_shape(tmp_path):
    """`mma f64->f64 | N=8: 26.3, N=8: 34.3, N=8: 50.3, N=8: 82.4`: four shapes all labelled N=8 (and one
    key of device-profile.json kept only the last)."""
    import synth
    from gpuprobe_analysis.sections import AnalysisInputs, tensor
    rs = _tensor_results(tmp_path)
    doc = {"context": rs.files[0].context, "benchmarks": []}
    b = synth.Builder(synth.Device(), noise=0.0, seed=0)
    for (m, k), cycles in zip(((8, 4), (16, 4), (16, 8), (16, 16)), (26.3, 34.3, 50.3, 82.4)):
        b.add(tensor.LATENCY, {"instr": "mma", "precision": "f64", "acc": "f64", "a": "reg", "m": str(m), "n": "8",
                               "k": str(k)}, "cycles", "synthetic", cycles,
              counters={"m": float(m), "n": 8.0, "k": float(k)},
              tags={"instr": "mma", "precision": "f64", "acc": "f64", "a": "reg"})
    doc["benchmarks"] = b.entries
    rs2 = results.load([str(tmp_path / "r.json"), synth.write(str(tmp_path / "lat.json"), doc)])
    an = tensor.analyze(AnalysisInputs(rs2))
    (row,) = [r for r in tensor.latency_rows(an) if r[0] == "mma f64->f64"]
    assert row[1] == "m8n8k4: 26.3, m16n8k4: 34.3, m16n8k8: 50.3, m16n8k16: 82.4", row
    assert len(tensor.to_json(an)["latency_cycles"]["mma f64->f64"]) == 4
