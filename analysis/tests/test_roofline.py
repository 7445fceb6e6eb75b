"""Roofline and optimality arithmetic on hand-computed cases, through the reader."""
import json

import pytest

from gpuprobe_analysis import results
from gpuprobe_analysis.roofline import Ceiling, bound_of, ceilings_from, kernel_points, optimality
from synth import Device, context

CEILINGS = [Ceiling("DRAM", 1000.0, True, "test"), Ceiling("L2", 4000.0, True, "test"),
            Ceiling("L1", 20000.0, True, "test"), Ceiling("FP32", 50000.0, True, "test"),
            Ceiling("DRAM", 1200.0, False, "theoretical: must not bound")]


def entry(impl, seconds, counters=True, n=4096, flops=2e9, min_bytes=1e9):
    e = {"name": f"kernels.symv/impl:{impl}/n:{n}", "run_name": "x", "run_type": "iteration", "iterations": 10,
         "real_time": seconds * 1e6, "time_unit": "us",
         "label": f"probe=kernels.symv;unit=GFLOP/s;method=events;impl={impl};precision=fp32",
         "n": n, "flops_per_sample": flops, "bytes_per_sample": min_bytes, "time_median_s": seconds,
         "value_median": flops / seconds / 1e9, "value_cv": 0.01}
    if counters:
        e.update({"dram__bytes_read.sum": 1.5e9, "dram__bytes_write.sum": 0.5e9,  # 2e9 -> AI 1
                  "lts__t_bytes.sum": 4e9,  # AI 0.5
                  "l1tex__t_bytes.sum": 8e9})  # AI 0.25
    return e


def load(tmp_path, entries):
    p = tmp_path / "r.json"
    p.write_text(json.dumps({"context": context(Device()), "benchmarks": entries}))
    return results.load([str(p)])


def test_bound_limiter_percent_and_cublas_ratio(tmp_path):
    rs = load(tmp_path, [entry("ours_v1", 0.004), entry("cublas", 0.005)])
    pts, notes = kernel_points(rs)
    assert not notes
    rows = {r["impl"]: r for r in optimality(pts, CEILINGS)}
    ours = rows["ours_v1"]
    assert ours["gflops"] == pytest.approx(500.0)  # 2e9 / 4 ms
    assert ours["intensity"] == pytest.approx({"DRAM": 1.0, "L2": 0.5, "L1": 0.25})
    # DRAM 1 x 1000 = 1000; L2 0.5 x 4000 = 2000; L1 0.25 x 20000 = 5000; FP32 50000 -> DRAM bound.
    assert ours["bound_by_ceiling"] == pytest.approx({"DRAM": 1000.0, "L2": 2000.0, "L1": 5000.0, "FP32": 50000.0})
    assert ours["bound_gflops"] == pytest.approx(1000.0)
    assert ours["limiter"] == "DRAM"
    assert ours["pct_of_bound"] == pytest.approx(50.0)
    assert ours["vs_cublas"] == pytest.approx(500.0 / 400.0)
    assert rows["cublas"]["vs_cublas"] is None
    assert ours["intensity_source"] == "counters"


def test_compute_bound_kernel(tmp_path):
    # 2e12 flops in 0.1 s = 20000 GFLOP/s; DRAM AI 1000 -> 1e6; FP32 50000 is the bound.
    e = entry("ours_v1", 0.1, flops=2e12)
    rs = load(tmp_path, [e])
    (row,) = optimality(kernel_points(rs)[0], CEILINGS)
    assert row["limiter"] == "FP32"
    assert row["pct_of_bound"] == pytest.approx(40.0)


def test_without_counters_falls_back_to_minimal_bytes_and_says_so(tmp_path):
    rs = load(tmp_path, [entry("ours_v1", 0.004, counters=False)])
    pts, notes = kernel_points(rs)
    assert any("minimal bytes" in n for n in notes)
    (row,) = optimality(pts, CEILINGS)
    assert row["intensity"] == pytest.approx({"DRAM": 2.0})  # 2e9 flops / 1e9 bytes
    assert row["bound_gflops"] == pytest.approx(2000.0)
    assert row["pct_of_bound"] == pytest.approx(25.0)
    assert row["intensity_source"].startswith("minimal bytes")


def test_theoretical_ceilings_never_bound():
    class P:
        precision = "FP32"

        def intensity(self):
            return {"DRAM": 1.0}

    b = bound_of(P(), [Ceiling("DRAM", 1200.0, False, "datasheet"), Ceiling("DRAM", 1000.0, True, "probe")])
    assert b.bound_gflops == pytest.approx(1000.0)


def test_ceilings_from_context_and_peak_metrics(tmp_path):
    e = entry("ours_v1", 0.004)
    e["lts__t_bytes.sum.peak_sustained"] = 5000.0  # bytes per cycle
    e["lts__cycles_elapsed.avg.per_second"] = 2e9
    rs = load(tmp_path, [e])
    cs = {(c.name, c.measured): c for c in ceilings_from({}, rs)}
    assert cs[("DRAM", False)].value == pytest.approx(3000.0)  # context gpu_theoretical_dram_gbps
    assert cs[("L2", False)].value == pytest.approx(10000.0)  # 5000 B/cycle x 2 GHz
