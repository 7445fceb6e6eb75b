"""Tensor cores (sections/tensor.py) on a synthetic file: one ceiling per type from the fastest form on
random operands, with its clock, power and zero-operand twin; an entry whose premise failed is never a
ceiling; the ceilings reach the roofline (measured and datasheet lines) and the summary."""
from __future__ import annotations

import json
import re

import synth
from gpuprobe_analysis import results
from gpuprobe_analysis.report import build_report
from gpuprobe_analysis.sections import AnalysisInputs, tensor

CLOCK = 1755.0


def _add(b, instr, precision, acc, a, m, n, k, data, gflops, premise_ok=1.0, power=650.0, peak_per_clk=4096.0):
    params = {"instr": instr, "precision": precision, "acc": acc, "a": a, "m": str(m), "n": str(n), "k": str(k),
              "data": data}
    per_clock = gflops * 1e3 / CLOCK / 132
    counters = {"m": float(m), "n": float(n), "k": float(k), "sm_clock_kernel_mhz": CLOCK, "power_w": power,
                "flops_per_clk_per_sm": per_clock, "theoretical_flops_per_clk_per_sm": peak_per_clk,
                "fraction_of_theoretical": per_clock / peak_per_clk,
                "theoretical_gflops_at_kernel_clock": peak_per_clk * 132 * CLOCK * 1e-3,
                "warps_per_sm": 8.0, "min_warps_per_sm": 8.0, "premise_ok": premise_ok}
    tags = {"instr": instr, "precision": precision, "acc": acc, "a": a, "data": data, "premise_level": "compute",
            "premise": "ok" if premise_ok == 1.0 else "failed: tensor instructions 0.5x the counted"}
    b.add(tensor.THROUGHPUT, params, "GFLOP/s", "synthetic", gflops, counters=counters, tags=tags)


def _results(tmp_path, with_family=True, gpu=("NVIDIA H100 80GB HBM3", "9.0", 132), bf16_gflops=700e3):
    """An H100 by default (gpu_specs knows its dense per-clock peaks); another `gpu` (name, compute
    capability, SMs) for a GPU the table does not have."""
    dev = synth.Device(name=gpu[0], sm_count=gpu[2], clock_mhz=1980.0)  # its maximum, above the entries' CLOCK
    doc = synth.synth_results(dev, noise=0.0, families=["exec.launch"])
    doc["context"]["gpu_compute_capability"] = gpu[1]
    if with_family:
        b = synth.Builder(dev, noise=0.0, seed=0)
        _add(b, "wgmma", "bf16", "f32", "smem", 64, 256, 16, "random", bf16_gflops)
        _add(b, "wgmma", "bf16", "f32", "smem", 64, 256, 16, "zero", 800e3, power=450.0)
        _add(b, "wgmma", "bf16", "f32", "smem", 64, 64, 16, "random", 650e3)
        _add(b, "mma", "bf16", "f32", "reg", 16, 8, 16, "random", 400e3)
        _add(b, "wgmma", "e4m3", "f32", "smem", 64, 256, 32, "random", 1500e3, premise_ok=0.0, peak_per_clk=8192.0)
        _add(b, "wgmma", "s8", "s32", "reg", 64, 256, 32, "random", 1400e3, peak_per_clk=8192.0)
        doc["benchmarks"] += b.entries
    return results.load([synth.write(str(tmp_path / "r.json"), doc)])


def test_one_ceiling_per_type_from_random_operands_and_never_a_failed_premise(tmp_path):
    an = tensor.analyze(AnalysisInputs(_results(tmp_path)))
    assert sorted(an.ceilings) == ["BF16 tensor", "INT8 tensor"]  # FP8's only entry failed its premise
    bf16 = an.ceilings["BF16 tensor"]
    assert bf16.gflops == 700e3 and bf16.row.form == "wgmma.m64n256k16 bf16->f32, A in smem"
    assert bf16.row.clock_mhz == CLOCK and bf16.row.power_w == 650.0
    assert bf16.zero is not None and bf16.zero.gflops == 800e3 and bf16.zero.power_w == 450.0
    assert [r.form for r in an.failed] == ["wgmma.m64n256k32 e4m3->f32, A in smem"]
    assert [F_n for F_n in (r.entry.num("n") for r in an.n_curves["bf16->f32, A in smem"])] == [64.0, 256.0]


def test_ceilings_reach_the_roofline_and_the_summary(tmp_path):
    out = build_report(_results(tmp_path), str(tmp_path / "rep"))
    prof = json.load(open(out["profile"]))
    roof = {(c["name"], c["measured"]): c["value"] for c in prof["roofline"]["ceilings"]}
    assert roof[("BF16 tensor", True)] == 700e3
    assert abs(roof[("BF16 tensor", False)] - 4096 * 132 * CLOCK * 1e-3) < 1e-6
    assert ("FP8 tensor", True) not in roof
    md = open(out["markdown"], encoding="utf-8").read()
    html = open(out["html"], encoding="utf-8").read()
    ids = re.findall(r'<h2 id="([\w-]+)">', html)
    assert ids[ids.index("execution") + 1] == "tensor"
    summary = md[md.index("\n## Summary"):md.index("\n## ", md.index("\n## Summary") + 5)]
    assert re.search(r"\| BF16 tensor \| 700\.0 TFLOP/s at 1,755 MHz, 650 W = 73\.8 % of the dense peak", summary), summary
    assert prof["tensor"]["ceilings"]["BF16 tensor"]["zero"]["gflops"] == 800e3
    # Integer rates are operations per second: INT8's row and the opening sentence say TOPS.
    assert re.search(r"\| INT8 tensor \| 1,400\.0 TOPS", summary), summary
    assert "INT8 tensor 1,400 TOPS" in md


def test_no_entries_no_section(tmp_path):
    rs = _results(tmp_path, with_family=False)
    assert tensor.analyze(AnalysisInputs(rs)) is None
    out = build_report(rs, str(tmp_path / "rep"))
    assert "tensor" not in json.load(open(out["profile"]))


def test_compare_leads_with_the_tensor_ceilings(tmp_path):
    from gpuprobe_analysis.compare import headline_figures
    ceilings, _ = headline_figures(_results(tmp_path))
    assert ceilings["BF16 tensor peak"] == (700e3, "GFLOP/s")
    assert ceilings["INT8 tensor peak"] == (1400e3, "GOP/s")  # integer operations, not flops


def test_a_gpu_not_in_the_table_gets_no_percent_of_theoretical_and_one_note_why(tmp_path):
    # The entries carry the binary's own fraction (by compute capability): for a board gpu_specs lacks it is
    # not used, since boards of one compute capability differ (an RTX 4090's FP32-accumulate rate is half an
    # L40S's).
    rs = _results(tmp_path, gpu=("NVIDIA RTX 6000 Ada Generation", "8.9", 142))
    an = tensor.analyze(AnalysisInputs(rs))
    assert an.ceilings["BF16 tensor"].gflops == 700e3
    assert all(r.fraction is None for r in an.rows)
    assert all(c.datasheet_gflops is None for c in an.ceilings.values())
    notes = [i.message for i in rs.issues if i.source == "gpu_specs"]
    assert len(notes) == 1 and "NVIDIA RTX 6000 Ada Generation (compute capability 8.9, 142 SMs) is not in" in notes[0]
    out = build_report(rs, str(tmp_path / "rep"))
    prof = json.load(open(out["profile"]))
    assert ("BF16 tensor", False) not in {(c["name"], c["measured"]) for c in prof["roofline"]["ceilings"]}
    md = open(out["markdown"], encoding="utf-8").read()
    assert "of the dense peak" not in md
    assert md.count("is not in gpu_specs' table") == 1


def test_fraction_comes_from_the_table_for_the_entry_accumulator(tmp_path):
    # An RTX 4090 runs f16 with FP32 accumulation at half the rate of FP16 accumulation (512 vs 1024 per SM
    # per clock): each form is held against its own accumulator's peak.
    rs = _results(tmp_path, with_family=False, gpu=("NVIDIA GeForce RTX 4090", "8.9", 128))
    b = synth.Builder(synth.Device(name="NVIDIA GeForce RTX 4090", sm_count=128), noise=0.0, seed=0)
    _add(b, "mma", "f16", "f32", "reg", 16, 8, 16, "random", 400 * 132 * CLOCK * 1e-3)
    _add(b, "mma", "f16", "f16", "reg", 16, 8, 16, "random", 800 * 132 * CLOCK * 1e-3)
    doc = json.load(open(rs.files[0].path))
    doc["benchmarks"] += b.entries
    an = tensor.analyze(AnalysisInputs(results.load([synth.write(str(tmp_path / "r2.json"), doc)])))
    fractions = {r.form: r.fraction for r in an.rows}
    assert abs(fractions["mma.m16n8k16 f16->f32"] - 400 / 512) < 1e-9
    assert abs(fractions["mma.m16n8k16 f16->f16"] - 800 / 1024) < 1e-9


def test_an_in_kernel_clock_above_the_gpus_maximum_is_no_clock(tmp_path):
    # As the H100 reference's f64 mma.sync entries (2,010-2,079 MHz on a 1,980 MHz GPU): the reading is a
    # failed measurement, the row gets no clock and no fraction at that clock, and a note says which.
    rs = _results(tmp_path)
    for e in rs.entries:
        if e.family == tensor.THROUGHPUT and F_text(e, "precision") == "s8":
            e.counters["sm_clock_kernel_mhz"] = 2078.5
    an = tensor.analyze(AnalysisInputs(rs))
    int8 = an.ceilings["INT8 tensor"]
    assert int8.row.clock_mhz is None and int8.row.peak_at_clock is None and int8.datasheet_gflops is None
    assert an.ceilings["BF16 tensor"].row.clock_mhz == CLOCK
    assert any("1 entries read their in-kernel SM clock at 2,078-2,078 MHz, above the GPU's maximum of 1,980 MHz"
               in n for n in an.notes), an.notes


def F_text(e, key):
    from gpuprobe_analysis import families
    return families.text(e, key)


def test_a_rate_above_the_peak_at_the_gpus_maximum_clock_is_called_suspect(tmp_path):
    # BF16 at 1.1 x the H100's dense peak at 1,980 MHz (4,096 FLOP/clk/SM x 132 SMs)
    rs = _results(tmp_path, bf16_gflops=1.1 * 4096 * 132 * 1980 * 1e-3)
    notes = tensor.analyze(AnalysisInputs(rs)).notes
    assert any(n.startswith("BF16 tensor 1,177.6 TFLOP/s is above the dense peak at the GPU's maximum clock "
                            "(1,070.5 TFLOP/s at 1,980 MHz") and n.endswith("the figure is suspect") for n in notes), notes
