"""The report audit (gpuprobe_analysis.audit) on every committed reference and on synthetic GPUs with varied
footprint grids, L2 sizes, TLB shapes and cut-short sweeps: each check of audit.CHECKS, each case, one test.

Each case's report is built once for the module (in memory, figures drawn and not written). The level fits
are cached for the module ($GPUPROBE_FIT_CACHE), so that compare's path, which analyses the same inputs
again, reuses them. A check that fails today on a defect issue 46 names is marked xfail(strict) with the
item: when the fix lands the test turns red, and the marker goes.

`python3 analysis/tests/test_report_audit.py [CASE ...]` prints the audit's own report of each case."""
import json
import os
import sys

import pytest

from gpuprobe_analysis import audit, fleet, results
from gpuprobe_analysis.cli import result_paths
import synth

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
MiB, GiB = 2**20, 2**30


def _reference(name):
    folder = os.path.join(REPO, "reports", name)
    files = sorted(os.listdir(folder)) if os.path.isdir(folder) else []
    if any(f.startswith("results.json") for f in files):
        return result_paths(folder)
    # A multi-GPU reference: its ceilings' premise run, its ceilings, its multi-GPU entries.
    return [os.path.join(folder, f"{n}.json.gz") for n in ("ceiling_premises", "ceilings", "multigpu")
            if f"{n}.json.gz" in files]


def _datasheet_above(doc, margin=0.98):
    """A synthetic GPU whose pipes reach `margin` of their datasheet rate (the generator's reach it exactly,
    so its noise alone would put a peak above the datasheet): the entries' theoretical rates and fractions as
    the probe writes them, from the same measurement."""
    for e in doc["benchmarks"]:
        if "theoretical_gflops_at_kernel_clock" in e:
            e["theoretical_gflops_at_kernel_clock"] /= margin
            e["theoretical_ops_per_clk_per_sm"] /= margin
            e["fraction_of_theoretical"] = e["value_median"] / e["theoretical_ops_per_clk_per_sm"]
    return doc


def _cut_latency(doc, last_bytes):
    """A latency sweep that stopped at `last_bytes` (a run cut short, or a --max-footprint below the L2)."""
    doc["benchmarks"] = [e for e in doc["benchmarks"] if not (e["name"].startswith("memory.latency/")
                                                              and e.get("footprint", 0) > last_bytes)]
    return doc


# name -> (device, what is done to its result file, noise seed). The default device's report is
# test_report.py's; these vary the grid (2 per octave), the page (64 KiB) and the TLB levels (one, two),
# the L2 (6 MB unpartitioned, 96 MB partitioned) and cut the latency sweep short.
SYNTHETIC = {
    "synthetic 2 per octave, 64 KiB pages, 2 TLB levels": (
        synth.Device(name="Synthetic 2/octave", latency_per_octave=2, tlb_per_octave=2, page_bytes=64 * 2**10,
                     tlb_reach=(32 * MiB, 1 * GiB), tlb_penalty_cycles=(40.0, 160.0)), None, 1),
    "synthetic small unpartitioned L2 (6 MB), one TLB level": (
        synth.Device(name="Synthetic small L2", l2_near_bytes=6e6, l2_bytes=6e6, lat_cycles=(28.0, 200.0, 200.0, 560.0),
                     bw_caps=(192 * 1024, 6e6), tlb_reach=(512 * MiB,), tlb_penalty_cycles=(100.0,)), None, 2),
    "synthetic large L2 (96 MB), latency sweep cut at 3.4 MiB": (
        synth.Device(name="Synthetic cut sweep", l2_near_bytes=48e6, l2_bytes=96e6, bw_caps=(192 * 1024, 96e6)),
        lambda doc: _cut_latency(doc, 3.4 * MiB), 4),
}

REFERENCES = [r for r in ("h100", "h200", "h100x2", "h100x4") if _reference(r)]
CASES = REFERENCES + list(SYNTHETIC)

# The checks that fail on a known defect, per case, each with its reason (xfail strict: the fix turns the test
# red, and the line goes). None today: every check passes on every case.
KNOWN: dict = {}


def fleet_figures():
    with open(os.path.join(HERE, "data", "presets.json"), encoding="utf-8") as fh:
        preset = next(p for p in json.load(fh) if p["preset"] == "fleet")
    return [fleet.FigureSpec.from_json(f) for f in preset["figures"]]


def load_case(case, folder):
    if case in SYNTHETIC:
        dev, change, seed = SYNTHETIC[case]
        doc = _datasheet_above(synth.synth_results(dev, noise=0.01, seed=seed))
        if change:
            doc = change(doc)
        return results.load([synth.write(os.path.join(folder, "results.json"), doc)])
    return results.load(_reference(case))


_BUILT = {}


@pytest.fixture(scope="module")
def audited(tmp_path_factory):
    """case -> the audit's findings per check, each case built and audited once."""
    def get(case):
        if case not in _BUILT:
            rs = load_case(case, str(tmp_path_factory.mktemp("case")))
            _BUILT[case] = audit.run(audit.build(rs), fleet_figures())
        return _BUILT[case]
    yield get
    _BUILT.clear()


@pytest.mark.parametrize("check", list(audit.CHECKS))
@pytest.mark.parametrize("case", CASES)
def test_report_audit(case, check, audited, request):
    if (case, check) in KNOWN:
        request.applymarker(pytest.mark.xfail(strict=True, reason=KNOWN[case, check]))
    findings = audited(case)[check]
    assert not findings, "\n".join(findings)


# ------------------------------------------------------------------------ the audit's own checks can fail
def test_number_agreement_reads_the_printed_digits():
    assert audit.agrees("3,194", 3193.8) and not audit.agrees("3,194", 3192.4)
    assert audit.agrees("95", 94.96) and audit.significant_digits("95") == 2
    assert audit.agrees("1.004", 1.0041) and audit.significant_digits("1.004") == 4
    assert audit.numbers("L2 8,186 GB/s = 62 % of 13,130; FP32 1.5x") == ["8,186", "62", "13,130", "1.5"]


def _built(markdown, data, figures=()):
    return audit.Built(rs=results.ResultSet(), data=data, markdown=markdown, figures=list(figures))


def test_a_summary_number_the_data_do_not_give_is_found():
    data = {"roofline": {"ceilings": [{"name": "DRAM", "value": 3000.0, "unit": "GB/s", "measured": True},
                                      {"name": "DRAM", "value": 3300.0, "unit": "GB/s", "measured": False}]}}
    good = "## Summary\n\n- Measured ceilings against the datasheet: DRAM 3,000 GB/s = 91 % of 3,300.\n"
    assert audit.check_summary(_built(good, data), {}) == []
    bad = good.replace("91 %", "95 %")
    assert audit.check_summary(_built(bad, data), {})


def test_a_kernel_line_with_an_unnamed_baseline_and_two_digits_is_found():
    row = {"kernel": "symv", "impl": "ours", "size": "n=8 precision=d", "pct_of_bound": 94.96, "limiter": "DRAM",
           "vs_cublas": 1.004, "cublas_impl": "cublas_atomics", "gflops": 1.0, "bound_note": ""}
    data = {"optimality": [row, dict(row, impl="cublas_atomics", gflops=0.9)]}
    line = "## Summary\n\n- symv (ours, n=8 precision=d): DRAM-bound, {p} % of its bound, {r}; fastest there: ours.\n"
    ok = line.format(p="94.96", r="1.004x cublas_atomics")
    assert audit.check_summary(_built(ok, data), {}) == []
    found = audit.check_summary(_built(line.format(p="95", r="1x cuBLAS"), data), {})
    assert len(found) == 3, found  # % digits, ratio digits, baseline unnamed


def test_above_bound_needs_a_reason_and_whole_counts_are_whole():
    row = {"kernel": "gemv", "impl": "ours", "size": "n=8", "pct_of_bound": 101.5, "limiter": "DRAM", "bound_note": ""}
    assert audit.check_above_bound(_built("", {"optimality": [row]}), {})
    assert not audit.check_above_bound(_built("", {"optimality": [dict(row, bound_note="above: L2 served part")]}), {})
    assert audit.check_whole_counts(_built("TLB level 1: 90.5 entries", {}), {})
    assert audit.check_whole_counts(_built("", {"tlb": {"levels": [{"entries": 2896.4}]}}), {})
    assert not audit.check_whole_counts(_built("16 entries", {"tlb": {"levels": [{"entries": 16.0}]}}), {})


def test_a_tensor_line_that_mixes_two_clocks_is_found():
    # 132 SMs x 4096 FLOP/clk/SM x 1.693 GHz = 915.4 TFLOP/s: 896.1 TFLOP/s at that clock is 97.9 %, not 100 %.
    peak = 132 * 4096 * 1.693
    form = {"form": "wgmma.m64n64k16 f16->f32, A in smem", "data": "random", "gflops": 896.1e3,
            "sm_clock_mhz": 1693.0, "fraction_of_dense_peak": 1.0}
    data = {"device": {"gpu_sm_count": "132"}, "tensor": {"ceilings": {"FP16 tensor": {
        "gflops": 896.1e3, "datasheet_gflops_at_clock": peak, "random": form}}, "forms": [form]}}
    (finding,) = audit.check_one_clock(_built("", data), {})
    assert "97.9 %" in finding
    form["fraction_of_dense_peak"] = 896.1e3 / peak
    assert audit.check_one_clock(_built("", data), {}) == []


def test_a_reference_line_that_is_not_the_panels_ceiling_is_found():
    data = {"roofline": {"ceilings": [{"name": "FP32", "value": 65535.0, "unit": "GFLOP/s", "measured": True},
                                      {"name": "BF16 tensor", "value": 953000.0, "unit": "GFLOP/s", "measured": True}]},
            "optimality": [{"kernel": "gemm_lt", "impl": "cublaslt", "size": "m=8 precision=bf16", "limiter": "BF16 tensor"}]}
    line = {"panel": "precision=bf16", "label": "FP32 peak 65,535 GFLOP/s", "color": "#d62728", "linestyle": ":",
            "texts": [], "orientation": "horizontal", "value": 65535.0}
    fig = audit.plots.Figure("kernel_gemm_lt", "t", "c", [], references=[line])
    (finding,) = audit.check_figure_references(_built("", data, [fig]), {})
    assert "BF16 tensor" in finding
    fig.references = [dict(line, label="BF16 tensor 953,000 GFLOP/s", value=953000.0)]
    assert audit.check_figure_references(_built("", data, [fig]), {}) == []


def test_reference_lines_are_recorded_from_what_a_figure_draws(tmp_path):
    from gpuprobe_analysis import plots
    fig, ax = plots.plt.subplots()
    ax.plot([1, 2, 4], [5, 6, 7], "-o", label="data")
    ax.axhline(3194.0, ls="--", label="DRAM 3,194 GB/s")
    ax.plot([0.1, 1.0, 10.0], [319.4, 3194.0, 5000.0], "-", label="DRAM roof")
    ax.set_title("gemv: ours")
    with plots.drawn_only():
        f = plots.Figure("probe_fig", "t", "c", [], plots._save(fig, str(tmp_path), "probe_fig"))
    assert not list(tmp_path.iterdir())  # drawn, not written
    refs = {r["label"]: r for r in f.references}
    assert set(refs) == {"DRAM 3,194 GB/s", "DRAM roof"}
    assert refs["DRAM 3,194 GB/s"]["orientation"] == "horizontal" and refs["DRAM 3,194 GB/s"]["value"] == 3194.0
    assert refs["DRAM roof"]["orientation"] == "diagonal" and abs(refs["DRAM roof"]["value"] - 3194.0) < 1e-6
    assert refs["DRAM roof"]["cap"] == 5000.0


def test_audit_command_refuses_unusable_inputs(tmp_path, capsys):
    from gpuprobe_analysis.cli import main
    assert main(["audit", str(tmp_path / "missing.json")]) == 1
    bad = tmp_path / "preset.json"
    bad.write_text("{not json")
    good = synth.write(str(tmp_path / "r.json"), synth.synth_results(families=["exec.latency"]))
    assert main(["audit", good, "--fleet-preset", str(bad)]) == 1
    assert "not JSON" in capsys.readouterr().err


if __name__ == "__main__":
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        os.environ.setdefault("GPUPROBE_FIT_CACHE", os.path.join(d, "fits"))
        for case in sys.argv[1:] or CASES:
            print(audit.to_text(audit.run(audit.build(load_case(case, d)), fleet_figures()), case), flush=True)
