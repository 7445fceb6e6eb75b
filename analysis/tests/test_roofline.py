"""Roofline and optimality arithmetic on hand-computed cases, through the reader."""
import json
import math

import pytest

from gpuprobe_analysis import results
from gpuprobe_analysis.roofline import Ceiling, bound_of, ceilings_from, kernel_points, optimality
from synth import Device, context

CEILINGS = [Ceiling("DRAM", 1000.0, True, "test"), Ceiling("L2", 4000.0, True, "test"),
            Ceiling("L1", 20000.0, True, "test"), Ceiling("FP32", 50000.0, True, "test"),
            Ceiling("DRAM", 1200.0, False, "theoretical: must not bound")]


def entry(impl, seconds, counters=True, n=4096, flops=2e9, min_bytes=1e9, precision="s"):
    e = {"name": f"kernels.symv/impl:{impl}/precision:{precision}/uplo:lower/n:{n}", "run_name": "x",
         "run_type": "iteration", "iterations": 10, "real_time": seconds * 1e6, "time_unit": "us",
         "label": f"probe=kernels.symv;unit=GFLOP/s;method=events;impl={impl};precision={precision};uplo=lower",
         "n": n, "flops_per_sample": flops, "bytes_per_sample": min_bytes, "time_median_s": seconds,
         "value_median": flops / seconds / 1e9, "value_cv": 0.01}
    if counters:
        e.update({"dram__bytes_read.sum": 1.5e9, "dram__bytes_write.sum": 0.5e9,  # 2e9 -> AI 1
                  "lts__t_bytes.sum": 4e9,  # AI 0.5
                  "l1tex__t_bytes.sum": 8e9})  # AI 0.25
    return e


def load(tmp_path, entries, records=True):
    p = tmp_path / "r.json"
    p.write_text(json.dumps({"context": context(Device(), records=records), "benchmarks": entries}))
    return results.load([str(p)])


def test_bound_limiter_percent_and_cublas_ratio(tmp_path):
    rs = load(tmp_path, [entry("ours_v1", 0.004), entry("cublas", 0.005)])
    pts, notes = kernel_points(rs)
    assert not notes
    rows = {r["impl"]: r for r in optimality(pts, CEILINGS)}
    ours = rows["ours_v1"]
    assert ours["gflops"] == pytest.approx(500.0)  # 2e9 / 4 ms
    # The roofline's points: counter intensity per level.
    assert ours["intensity"] == pytest.approx({"DRAM": 1.0, "L2": 0.5, "L1": 0.25})
    # The bound: minimal bytes (1e9: AI 2) at DRAM (not L2-resident) = 2 x 1000; FP32 50000.
    assert ours["bound_by_ceiling"] == pytest.approx({"DRAM": 2000.0, "FP32": 50000.0})
    assert ours["bound_gflops"] == pytest.approx(2000.0)
    assert ours["limiter"] == "DRAM"
    assert ours["pct_of_bound"] == pytest.approx(25.0)
    assert ours["excess_traffic"] == pytest.approx(2.0)  # counters: 2e9 DRAM bytes for 1e9 minimal
    assert ours["vs_cublas"] == pytest.approx(500.0 / 400.0)
    assert rows["cublas"]["vs_cublas"] is None
    assert ours["intensity_source"] == "counters"


def test_moving_more_bytes_never_raises_the_bound(tmp_path):
    # The same problem, one variant moving twice the DRAM bytes: same bound, twice the excess traffic.
    lean, fat = entry("ours_lean", 0.004), entry("ours_fat", 0.004)
    fat.update({"dram__bytes_read.sum": 3.0e9, "dram__bytes_write.sum": 1.0e9})
    rows = {r["impl"]: r for r in optimality(kernel_points(load(tmp_path, [lean, fat]))[0], CEILINGS)}
    assert rows["ours_fat"]["bound_gflops"] == pytest.approx(rows["ours_lean"]["bound_gflops"])
    assert rows["ours_fat"]["excess_traffic"] == pytest.approx(2 * rows["ours_lean"]["excess_traffic"])


def test_l2_resident_problems_are_bounded_by_the_l2(tmp_path):
    e = entry("ours_v1", 0.004)
    e["label"] += ";l2=resident"
    (row,) = optimality(kernel_points(load(tmp_path, [e]))[0], CEILINGS)
    assert row["minimal_level"] == "L2"
    assert row["bound_by_ceiling"] == pytest.approx({"L2": 8000.0, "FP32": 50000.0})


def test_write_heavy_kernels_are_held_to_the_copy_ceiling(tmp_path):
    copy = [Ceiling("DRAM copy", 800.0, True, "test")]
    reads = entry("ours_v1", 0.004)
    reads.update({"dram__bytes_read.sum": 1.9e9, "dram__bytes_write.sum": 0.1e9})  # 95 % reads
    (row,) = optimality(kernel_points(load(tmp_path, [reads]))[0], CEILINGS + copy)
    assert row["limiter"] == "DRAM" and row["bound_gflops"] == pytest.approx(2000.0)
    mixed = entry("ours_v1", 0.004)  # 75 % reads
    (row,) = optimality(kernel_points(load(tmp_path, [mixed]))[0], CEILINGS + copy)
    assert row["limiter"] == "DRAM copy" and row["bound_gflops"] == pytest.approx(1600.0)


def test_compute_bound_kernel(tmp_path):
    # 2e12 flops in 0.1 s = 20000 GFLOP/s; DRAM AI 1000 -> 1e6; FP32 50000 is the bound.
    e = entry("ours_v1", 0.1, flops=2e12)
    rs = load(tmp_path, [e])
    (row,) = optimality(kernel_points(rs)[0], CEILINGS)
    assert row["limiter"] == "FP32"
    assert row["pct_of_bound"] == pytest.approx(40.0)


def test_the_compute_ceiling_is_the_one_the_record_declares_for_the_precision(tmp_path):
    # kernels.symv declares {"s": "FP32", "d": "FP64"}; kernels.sgemm {"": "FP32"} (no precision axis).
    fp64 = [Ceiling("FP64", 25000.0, True, "test")]
    sgemm = entry("ours_tuned", 0.1, flops=2e12)
    sgemm.update({"name": "kernels.sgemm/impl:ours_tuned/trans:nn/m:4096/n:4096/k:4096",
                  "label": "probe=kernels.sgemm;unit=GFLOP/s;method=events;impl=ours_tuned;trans=nn"})
    rs = load(tmp_path, [entry("ours_v1", 0.1, flops=2e12, precision="s"),
                         entry("ours_v1", 0.1, flops=2e12, precision="d"), sgemm])
    pts, notes = kernel_points(rs)
    assert not notes
    assert sorted((p.kernel, p.precision) for p in pts) == [("sgemm", "FP32"), ("symv", "FP32"), ("symv", "FP64")]
    rows = {(r["kernel"], r["entry"].split("/")[2]): r for r in optimality(pts, CEILINGS + fp64)}
    assert rows[("symv", "precision:s")]["limiter"] == "FP32"
    assert rows[("symv", "precision:d")]["limiter"] == "FP64"
    assert rows[("symv", "precision:d")]["pct_of_bound"] == pytest.approx(80.0)  # 20000 of 25000
    assert "FP32" not in rows[("symv", "precision:d")]["bound_by_ceiling"]
    assert rows[("sgemm", "trans:nn")]["limiter"] == "FP32"


def test_no_declared_ceiling_means_no_compute_bound_and_a_note(tmp_path):
    # A precision the record leaves out: no guess from its name (the family is symv, the tag says fp64).
    e = entry("ours_v1", 0.1, flops=2e12, precision="fp64")
    pts, notes = kernel_points(load(tmp_path, [e]))
    assert pts[0].precision is None
    assert notes == ["kernels.symv precision=fp64 (1 entries): no compute ceiling (its family record declares "
                     "none for it): held to no compute peak, only to their bytes"]
    (row,) = optimality(pts, CEILINGS + [Ceiling("FP64", 25000.0, True, "test")])
    assert set(row["bound_by_ceiling"]) == {"DRAM"} and row["limiter"] == "DRAM"
    assert row["precision"] is None
    # A file without records: none either, and the note says why.
    pts, notes = kernel_points(load(tmp_path, [entry("ours_v1", 0.1, flops=2e12)], records=False))
    assert pts[0].precision is None
    assert any("no compute ceiling (no family record)" in n for n in notes), notes


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
        precision = None  # no compute ceiling declared: the memory levels alone bound it
        minimal_bytes = 0.0  # no descriptor bytes: the counters' intensity is used

        def intensity(self):
            return {"DRAM": 1.0}

    # (its FP32 peak measured too: a missing one leaves no bound at all, test_dayone)
    b = bound_of(P(), [Ceiling("DRAM", 1200.0, False, "datasheet"), Ceiling("DRAM", 1000.0, True, "probe"),
                       Ceiling("FP32", 1e6, True, "probe"), Ceiling("FP32", 2e6, False, "datasheet")])
    assert b.bound_gflops == pytest.approx(1000.0)
    # A declared compute ceiling known only from the datasheet is not measured: no bound, and why.
    P.precision = "FP32"
    b = bound_of(P(), [Ceiling("FP32", 60000.0, False, "datasheet"), Ceiling("DRAM", 1000.0, True, "probe")])
    assert b.bound_gflops is None and b.missing == ["FP32"]


def test_ceilings_from_context_and_peak_metrics(tmp_path):
    e = entry("ours_v1", 0.004)
    e["lts__t_bytes.sum.peak_sustained"] = 5000.0  # bytes per cycle
    e["lts__cycles_elapsed.avg.per_second"] = 2e9
    rs = load(tmp_path, [e])
    cs = {(c.name, c.measured): c for c in ceilings_from({}, rs)}
    assert cs[("DRAM", False)].value == pytest.approx(3000.0)  # context gpu_theoretical_dram_gbps
    assert cs[("L2", False)].value == pytest.approx(10000.0)  # 5000 B/cycle x 2 GHz


def gbps_entry(family, impl, n, seconds, min_bytes, precision="s", uplo="lower"):
    return {"name": f"kernels.{family}/impl:{impl}/precision:{precision}/uplo:{uplo}/n:{n}", "run_name": "x",
            "run_type": "iteration", "iterations": 10, "real_time": seconds * 1e6, "time_unit": "us",
            "label": f"probe=kernels.{family};unit=GB/s;method=events;impl={impl};precision={precision};"
                     f"uplo={uplo};l2=flushed",
            "n": n, "flops_per_sample": 2.0 * n * n, "bytes_per_sample": min_bytes, "time_median_s": seconds,
            "value_median": min_bytes / seconds / 1e9, "value_cv": 0.01}


def test_kernel_comparison_ratios_memcpy_and_order(tmp_path):
    memcpy = {"name": "baseline.memcpy_d2d/size:1073741824", "run_name": "x", "run_type": "iteration",
              "iterations": 10, "real_time": 1.0, "time_unit": "us", "label": "probe=baseline.memcpy_d2d;unit=GB/s",
              "size": 1073741824, "value_median": 3000.0, "value_cv": 0.01}
    small = {"name": "baseline.memcpy_d2d/size:1048576", "run_name": "x", "run_type": "iteration",
             "iterations": 10, "real_time": 1.0, "time_unit": "us", "label": "probe=baseline.memcpy_d2d;unit=GB/s",
             "size": 1048576, "value_median": 900.0, "value_cv": 0.01}
    # 1e9 minimal bytes: ours 0.5 ms -> 2000 GB/s, cuBLAS 1 ms -> 1000, cuBLAS atomics 0.4 ms -> 2500;
    # a second size listed first in the file must come out after the smaller one (numeric order).
    ents = [gbps_entry("symv", "ours_aware", 16384, 2e-3, 4e9), gbps_entry("symv", "cublas", 16384, 4e-3, 4e9),
            gbps_entry("symv", "ours_aware", 2048, 0.5e-3, 1e9), gbps_entry("symv", "cublas", 2048, 1e-3, 1e9),
            gbps_entry("symv", "cublas_atomics", 2048, 0.4e-3, 1e9),
            gbps_entry("symv", "ours_oblivious", 2048, 1e-3, 1e9), memcpy, small]
    rs = load(tmp_path, ents)
    from gpuprobe_analysis.roofline import kernel_comparison, memcpy_reference
    ref = memcpy_reference(rs)
    assert ref[0] == pytest.approx(3000.0)  # the largest size, not the best or the first
    cmp = kernel_comparison(kernel_points(rs)[0], ref[0])["symv"]
    assert cmp["metric"] == "GB/s"
    assert cmp["default"] == "ours_aware"
    assert cmp["impls"] == ["ours_aware", "ours_oblivious", "cublas", "cublas_atomics"]
    first, second = cmp["rows"]
    assert first["size"].startswith("n=2048") and second["size"].startswith("n=16384")
    assert first["values"]["ours_aware"] == pytest.approx(2000.0)
    assert first["ratios"]["cublas"] == pytest.approx(2.0)
    assert first["ratios"]["cublas_atomics"] == pytest.approx(0.8)
    assert first["vs_memcpy"] == pytest.approx(2000.0 / 3000.0)
    assert second["ratios"]["cublas_atomics"] is None  # not measured at that size: no ratio invented
    # With the newer default name present ("ours": SymvImpl::kAuto), it is the default, not ours_aware.
    rs2 = load(tmp_path, ents + [gbps_entry("symv", "ours", 2048, 0.4e-3, 1e9)])
    cmp2 = kernel_comparison(kernel_points(rs2)[0], ref[0])["symv"]
    assert cmp2["default"] == "ours"
    assert cmp2["impls"][0] == "ours" and cmp2["rows"][0]["ratios"]["cublas"] == pytest.approx(2.5)


def test_a_kernel_clock_above_the_gpus_maximum_is_not_used_for_its_bound():
    # The kernel's clock is read as a ceiling's is: a reading above the GPU's maximum falls back to the next
    # field (the run's clock), and the per-clock ceiling is scaled by that one.
    from types import SimpleNamespace
    from gpuprobe_analysis.roofline import Ceiling, KernelPoint, bound_of
    entry = SimpleNamespace(num=lambda f: {"sm_clock_kernel_mhz": 2078.5, "sm_clock_mhz": 1800.0}.get(f, math.nan))
    p = KernelPoint(entry=entry, kernel="k", impl="ours", precision="FP64", size="n=1", size_key=(), gflops=1.0,
                    gbps=math.nan, seconds=1.0, flops=1e9, bytes_by_level={}, minimal_bytes=0.0, counter_flops=None,
                    ai_source="counters", max_clock_mhz=1980.0)
    assert p.clock_mhz == 1800.0
    c = Ceiling("FP64", 60000.0, True, "probe", clock_mhz=2000.0)
    b = bound_of(p, [c])
    assert b.bound_gflops == pytest.approx(60000.0 * 1800.0 / 2000.0) and b.scaled == {"FP64": (2000.0, 1800.0)}


def test_a_dispatcher_row_names_the_kernel_it_ran():
    """SGEMM's ours_auto tags the kernel it chose ("small, split-k 4"); an entry that ran itself names none."""
    from gpuprobe_analysis.roofline import ran_kernel
    assert ran_kernel("ours_auto", "small, split-k 4") == "small, split-k 4"
    assert ran_kernel("ours_tuned", "tuned") is None
    assert ran_kernel("ours_auto", None) is None
    assert ran_kernel("cublas_default", "anything") is None


def test_the_glossary_lists_each_kernel_the_dispatcher_chose():
    from gpuprobe_analysis import results
    from gpuprobe_analysis.glossary import implementation_terms

    def sgemm(impl, kernel, n):
        return results.Entry(f"kernels.sgemm/impl:{impl}/trans:nn/m:{n}/n:{n}/k:{n}", "kernels.sgemm",
                             {"impl": impl}, {"impl": impl, "kernel": kernel}, "GFLOP/s", "", {}, "x")
    terms = implementation_terms([sgemm("ours_auto", "small, split-k 4", 512), sgemm("ours_auto", "tuned", 4096),
                                  sgemm("ours_tuned", "tuned", 4096)])
    assert terms["ours_auto"] == ("sgemm: our default, which chose the kernel record(s) small, split-k 4; tuned by "
                                  "shape (kernels/include/gpuprobe/kernels/sgemm.hpp)")
    assert "variant" in terms["ours_tuned"]
