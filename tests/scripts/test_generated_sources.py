"""The committed wgmma wrappers are what their generator writes: a form added to gen_wgmma_forms.py and not
regenerated (or a hand edit of the header) fails here, not on the GPU."""
import io
import os
import runpy

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROBES = os.path.join(ROOT, "microbench", "probes")


def test_wgmma_forms_header_is_the_generator_output():
    gen = runpy.run_path(os.path.join(PROBES, "gen_wgmma_forms.py"))
    out = io.StringIO()
    gen["main"](out)
    with open(os.path.join(PROBES, "exec_tensor_wgmma_forms.cuh"), encoding="utf-8") as fh:
        committed = fh.read()
    assert out.getvalue() == committed, "run: python3 microbench/probes/gen_wgmma_forms.py > microbench/probes/exec_tensor_wgmma_forms.cuh"


def test_every_form_has_a_register_count_that_fits_its_tile():
    gen = runpy.run_path(os.path.join(PROBES, "gen_wgmma_forms.py"))
    for prec, acc, suffix, k, scaled, transposable in gen["KINDS"]:
        assert k * {"f16": 2, "bf16": 2, "tf32": 4, "e4m3": 1, "e5m2": 1, "s8": 1}[prec] == 32  # one 32-byte row
        for n in gen["NS"]:
            assert gen["acc_regs"](acc, n) * 128 * (2 if acc == "f16" else 1) == 64 * n
