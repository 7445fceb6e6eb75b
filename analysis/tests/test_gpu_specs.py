"""gpu_specs: the datasheet table (per-GPU facts, data/gpu_peaks.csv), its lookup by a result file's context,
and the note for a GPU it does not have. The committed H200 reference's tensor fractions are the table's."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from gpuprobe_analysis import gpu_specs, results
from gpuprobe_analysis.sections import AnalysisInputs, tensor

REPO = Path(__file__).resolve().parents[2]


def _ctx(name, cc, sms):
    return {"gpu_name": name, "gpu_compute_capability": cc, "gpu_sm_count": str(sms)}


@pytest.mark.parametrize("name,cc,sms,model", [
    ("NVIDIA A100-SXM4-40GB", "8.0", 108, "A100 SXM"), ("NVIDIA A100-SXM4-80GB", "8.0", 108, "A100 SXM"),
    ("NVIDIA A10", "8.6", 72, "A10"), ("NVIDIA L40S", "8.9", 142, "L40S"),
    ("NVIDIA H100 PCIe", "9.0", 114, "H100 PCIe"), ("NVIDIA H100 80GB HBM3", "9.0", 132, "H100 SXM"),
    ("NVIDIA H200", "9.0", 132, "H200"), ("NVIDIA B200", "10.0", 148, "B200"),
    ("NVIDIA GeForce RTX 4090", "8.9", 128, "RTX 4090"), ("NVIDIA GeForce RTX 5090", "12.0", 170, "RTX 5090"),
])
def test_every_gpu_of_the_issue_is_found_by_its_context(name, cc, sms, model):
    spec = gpu_specs.find_gpu(_ctx(name, cc, sms))
    assert spec is not None and spec.model == model and spec.sm_count == sms


def test_the_a100_boards_differ_in_memory_only():
    a40 = gpu_specs.find_gpu(_ctx("NVIDIA A100-SXM4-40GB", "8.0", 108))
    a80 = gpu_specs.find_gpu(_ctx("NVIDIA A100-SXM4-80GB", "8.0", 108))
    assert (a40.dram_gbps.value, a80.dram_gbps.value) == (1555, 2039)
    assert a40.per_clock == a80.per_clock and a40.peak_per_clock("f16", "f32") == 2048


def test_a_name_with_other_sms_or_capability_is_not_that_gpu():
    assert gpu_specs.find_gpu(_ctx("NVIDIA H100 80GB HBM3", "9.0", 114)) is None  # e.g. a MIG slice or a variant
    assert gpu_specs.find_gpu(_ctx("NVIDIA H100 80GB HBM3", "8.0", 132)) is None
    assert gpu_specs.find_gpu(_ctx("NVIDIA H100 80GB HBM3 ", "9.0", 132)).model == "H100 SXM"  # blanks


def test_an_unknown_gpu_gets_none_and_a_one_line_note():
    ctx = _ctx("NVIDIA RTX A6000", "8.6", 84)
    assert gpu_specs.find_gpu(ctx) is None
    note = gpu_specs.not_in_table_note(ctx)
    assert note.startswith("no % of theoretical: NVIDIA RTX A6000 (compute capability 8.6, 84 SMs) is not in")
    assert "\n" not in note and "H100 SXM" in note
    assert gpu_specs.find_gpu({}) is None


def test_every_model_has_its_facts_and_every_peak_a_model():
    models = {s.model for s in gpu_specs.SPECS}
    assert models == {"A100 SXM", "A10", "L40S", "H100 PCIe", "H100 SXM", "H200", "B200", "RTX 4090", "RTX 5090"}
    assert set(gpu_specs._load_peaks()) <= models
    for s in gpu_specs.SPECS:
        assert s.per_clock, s.model
        assert s.peak_per_clock("fp32") == 256 or s.model == "A100 SXM"
        for fact in (s.memory_bus_bits, s.dram_gbps, s.boost_clock_mhz, s.l2_bytes):
            assert fact is None or (fact.value > 0 and fact.source), s.model


def test_each_per_clock_peak_reproduces_its_datasheet_figure():
    # Where a source quotes "X TFLOPS (or TOPS) ... / (N SMs x M MHz)", the per-clock figure times N x M gives
    # X within 2 % (the L40S's 362 TFLOPS is 1.2 % under 1024 per clock at its 2520 MHz boost).
    checked = 0
    for model, (_, peaks) in gpu_specs._load_peaks().items():
        for (kind, acc), fact in peaks.items():
            m = re.search(r"([\d.]+) T(?:FLOPS|OPS)[^/]*/ \((\d+) SMs x (\d+) MHz\)", fact.source)
            if not m:
                continue
            tera, sms, mhz = float(m.group(1)), int(m.group(2)), int(m.group(3))
            derived = fact.value * sms * mhz * 1e6 / 1e12
            assert abs(derived / tera - 1) < 0.02, (model, kind, acc, derived, tera)
            spec = next(s for s in gpu_specs.SPECS if s.model == model)
            assert sms == spec.sm_count, (model, kind)
            checked += 1
    assert checked >= 50


def test_the_h200_reference_fractions_are_the_tables():
    # The committed H200 reference's entries carry the binary's fraction (its per-compute-capability table);
    # the report now takes the datasheet peak from gpu_specs: the figures must not move.
    rs = results.load([str(REPO / "reports/h200/results.json.gz")])
    an = tensor.analyze(AnalysisInputs(rs))
    compared = 0
    for r in an.rows:
        recorded = r.entry.num("fraction_of_theoretical")
        if recorded == recorded and recorded is not None:
            assert r.fraction == pytest.approx(recorded, rel=1e-12), r.form
            compared += 1
    assert compared > 20
    for c in an.ceilings.values():  # the roofline's dashed tensor lines
        assert c.datasheet_gflops == pytest.approx(c.row.entry.num("theoretical_gflops_at_kernel_clock"), rel=1e-9)
    assert an.ceilings and not [i for i in rs.issues if i.source == "gpu_specs"]
