"""kernels.gemm_lt (cuBLASLt GEMMs) in the roofline and the optimality table: each entry is held to the
tensor ceiling its family record declares for its precision when the profile measured it, and gets no
bound, with the reason, when it did not. Synthetic entries with hand-computed answers; the record is the
binary's own (analysis/tests/data/families.json)."""
import json

import pytest

import synth
from gpuprobe_analysis import results
from gpuprobe_analysis.report import build_report
from gpuprobe_analysis.roofline import (Ceiling, ceilings_from, is_reference, kernel_points, optimality,
                                        unmeasured_ceiling_notes)

# bytes of one element of A/B and of D, per precision (gemm_lt.hpp's records)
ELEMENT_BYTES = {"bf16": (2, 2), "f16": (2, 2), "tf32": (4, 4), "e4m3": (1, 2), "s8": (1, 4), "f64": (8, 8)}
METHOD = "one D = A^T B per sample through cublasLtMatmul"


def gemm(b, precision, n, seconds, data="random"):
    inp, out = ELEMENT_BYTES[precision]
    counters = {"n": n, "flops_per_sample": 2.0 * n ** 3, "bytes_per_sample": 2.0 * n * n * inp + n * n * out}
    tags = {"precision": precision, "data": data, "impl": "cublaslt", "l2": "not flushed (compute-bound)"}
    return b.add("kernels.gemm_lt", {"precision": precision, "data": data, "n": str(n)}, "GFLOP/s", METHOD,
                 2.0 * n ** 3 / seconds / 1e9, counters, tags, seconds=seconds)


def load(tmp_path, add, families=()):
    dev = synth.Device()
    doc = synth.synth_results(dev, noise=0.0, seed=1, families=list(families))
    b = synth.Builder(dev, 0.0, 1)
    add(b)
    doc["benchmarks"] += b.entries
    p = tmp_path / "r.json"
    p.write_text(json.dumps(doc))
    return results.load([str(p)])


N = 8192
FLOPS = 2.0 * N ** 3  # 1.0995e12
DRAM = Ceiling("DRAM", 4000.0, True, "test")
BF16_TENSOR = Ceiling("BF16 tensor", 900000.0, True, "test")


def test_each_precision_is_held_to_its_tensor_ceiling(tmp_path):
    rs = load(tmp_path, lambda b: [gemm(b, "bf16", N, FLOPS / 750e12), gemm(b, "e4m3", N, FLOPS / 1300e12),
                                   gemm(b, "f64", N, FLOPS / 60e12)])
    pts, notes = kernel_points(rs)
    assert not [n for n in notes if "no compute ceiling" in n]  # every precision has a declared ceiling
    assert {p.size: p.precision for p in pts} == {"n=8192 precision=bf16 data=random": "BF16 tensor",
                                                   "n=8192 precision=e4m3 data=random": "FP8 tensor",
                                                   "n=8192 precision=f64 data=random": "FP64 tensor"}
    assert all(p.impl == "cublaslt" and is_reference(p.impl) for p in pts)
    rows = {r["size"]: r for r in optimality(pts, [DRAM, BF16_TENSOR])}
    bf16 = rows["n=8192 precision=bf16 data=random"]
    # Minimal bytes 3 x 8192^2 x 2 = 402,653,184: AI 2731 FLOP/B, DRAM bound 10.9 PFLOP/s; the tensor
    # ceiling (900 TFLOP/s) is the bound.
    assert bf16["minimal_bytes"] == pytest.approx(3 * N * N * 2)
    assert bf16["bound_by_ceiling"] == pytest.approx({"DRAM": FLOPS / (3 * N * N * 2) * 4000.0,
                                                      "BF16 tensor": 900000.0})
    assert bf16["limiter"] == "BF16 tensor" and bf16["missing_ceilings"] == []
    assert bf16["pct_of_bound"] == pytest.approx(100 * 750000.0 / 900000.0)
    # FP8 tensor not measured: no bound, no %, and the reason; the memory bound is kept for reference.
    fp8 = rows["n=8192 precision=e4m3 data=random"]
    assert fp8["bound_gflops"] is None and fp8["pct_of_bound"] is None and fp8["limiter"] is None
    assert fp8["missing_ceilings"] == ["FP8 tensor"]
    assert set(fp8["bound_by_ceiling"]) == {"DRAM"}
    assert fp8["minimal_bytes"] == pytest.approx(N * N * (1 + 1 + 2))
    assert unmeasured_ceiling_notes(pts, [DRAM, BF16_TENSOR]) == [
        "kernels.gemm_lt (1 entries): no compute bound (ceiling FP64 tensor not measured): no bound and no % of "
        "bound in the optimality table",
        "kernels.gemm_lt (1 entries): no compute bound (ceiling FP8 tensor not measured): no bound and no % of "
        "bound in the optimality table"]


def test_random_and_zero_operands_are_two_problems(tmp_path):
    # The same size on random and on zero operands: two rows the reader can tell apart, never compared.
    rs = load(tmp_path, lambda b: [gemm(b, "bf16", N, FLOPS / 700e12), gemm(b, "bf16", N, FLOPS / 820e12, "zero")])
    pts, _ = kernel_points(rs)
    assert sorted(p.size for p in pts) == ["n=8192 precision=bf16 data=random", "n=8192 precision=bf16 data=zero"]
    assert len({p.size_key for p in pts}) == 2


def test_the_roofline_takes_the_tensor_ceilings_its_kernels_declare(tmp_path):
    rs = load(tmp_path, lambda b: [gemm(b, "bf16", N, FLOPS / 750e12)])
    # With the DRAM ceiling measured too: a bound needs every ceiling it could be (test_dayone).
    profile = {"bandwidth": {"ceilings": {"DRAM": {"gbps": 4000.0, "how": "t"}}}, "pipelines": {"compute_ceilings": {
        "FP32": {"gflops": 60000.0, "how": "t"}, "BF16 tensor": {"gflops": 900000.0, "how": "t"},
        "FP16 half2": {"gflops": 120000.0, "how": "t"}, "INT8 tensor": {"gflops": 1.8e6, "how": "t"}}}}
    names = {c.name for c in ceilings_from(profile, rs) if c.measured and not c.is_memory}
    # FP32 always; BF16 tensor because kernels.gemm_lt precision=bf16 declares it; not the CUDA cores'
    # FP16 half2 nor INT8 tensor, which no kernel entry present declares.
    assert names == {"FP32", "BF16 tensor"}
    (row,) = optimality(kernel_points(rs)[0], ceilings_from(profile, rs))
    assert row["limiter"] == "BF16 tensor" and row["pct_of_bound"] == pytest.approx(100 * 750 / 900)


def test_report_says_which_tensor_ceiling_is_missing(tmp_path):
    rs = load(tmp_path, lambda b: [gemm(b, "bf16", N, FLOPS / 750e12), gemm(b, "bf16", N, FLOPS / 800e12, "zero")],
              families=["memory.bandwidth"])
    out = build_report(rs, str(tmp_path / "report"))
    md = open(out["markdown"], encoding="utf-8").read()
    assert "no compute bound (ceiling BF16 tensor not measured)" in md
    profile = json.load(open(out["profile"]))
    assert any("kernels.gemm_lt (2 entries): no compute bound (ceiling BF16 tensor not measured)" in n
               for n in profile["roofline"]["notes"])
    rows = [r for r in profile["optimality"] if r["kernel"] == "gemm_lt"]
    assert len(rows) == 2 and all(r["pct_of_bound"] is None and r["precision"] == "BF16 tensor" for r in rows)
