"""The application kernels' verdict (app_verdict.py, sections/app_kernels.py, `gpuprobe-analyze app` and
`app-compare`) against the measured ceilings of the committed reference reports/h200,
with hand-built launches whose bound, % of bound and saving follow from those ceilings by hand.

The expected ceilings are read from the committed reports' device-profile.json (the report's own figures):
the verdict must hold the launches to exactly those. Building the ceilings analyses the hierarchy and
bandwidth sections (about 40 s of CPU per reference); their level fits are kept in pytest's cache folder
($GPUPROBE_FIT_CACHE), so a second run takes seconds."""
from __future__ import annotations

import json
import math
import os

import pytest

import ncu_synth
from gpuprobe_analysis import app_verdict as V
from gpuprobe_analysis import cli, ncu, results
from gpuprobe_analysis import ncu_metrics as M
from gpuprobe_analysis import sections as S
from gpuprobe_analysis.cli import main
from gpuprobe_analysis.sections import app_kernels as A

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
H200_DIR = os.path.join(REPO, "reports", "h200")
H200, H100 = "NVIDIA H200", "NVIDIA H100 80GB HBM3"


def _report(ref: str) -> dict:
    with open(os.path.join(ref, "report", "device-profile.json")) as fh:
        return json.load(fh)


@pytest.fixture(scope="module")
def h200_rs():
    return results.load(cli.result_paths(H200_DIR))


@pytest.fixture(scope="module")
def h200(h200_rs):
    return A.DeviceCeilings.of(h200_rs)


def _c(dev: A.DeviceCeilings, name: str) -> V.AppCeiling:
    return next(c for c in dev.ceilings if c.name == name)


def launch(index=0, kernel="k", grid=(1, 1, 1), block=(256, 1, 1), nvtx=(), device=H200, duration_s=1e-3,
           clock_mhz=1980.0, flops=None, tensor=None, nbytes=None, dram_read=None, missing=(), metrics=None):
    return ncu.Launch(index=index, kernel=kernel, grid=grid, block=block, nvtx=tuple(nvtx), device=device,
                      duration_s=duration_s, sm_clock_hz=clock_mhz * 1e6, flops=dict(flops or {}),
                      tensor_ops=dict(tensor or {}), bytes=dict(nbytes or {}), dram_read_bytes=dram_read,
                      missing=tuple(missing), metrics=dict(metrics or {}))


def profile(launches, device=H200, notes=("cache control: all",), path="app.csv"):
    return ncu.Profile(path=path, launches=list(launches), device=device, source=ncu.RAW_CSV, missing={},
                       notes=list(notes))


# ---- the ceilings: the report's own ------------------------------------------------------------------------

def test_ceilings_are_the_reports_measured_ones_with_shared_and_every_pipe(h200):
    data = _report(H200_DIR)
    got = {c.name: c.value for c in h200.ceilings}
    roofline = {c["name"]: c["value"] for c in data["roofline"]["ceilings"] if c["measured"]}
    assert roofline and all(got[n] == pytest.approx(v, rel=1e-12) for n, v in roofline.items())
    assert got["shared"] == pytest.approx(data["bandwidth"]["ceilings"]["shared"]["gbps"], rel=1e-12)
    assert got["FP16 half2"] == pytest.approx(data["pipelines"]["compute_ceilings"]["FP16 half2"]["gflops"], rel=1e-12)
    # only measured figures: no theoretical one, and none twice
    assert len(got) == len(h200.ceilings) and set(got) == set(roofline) | {"shared", "FP16 half2", "BF16 bf16x2"}
    assert h200.device == H200


def test_each_ceiling_carries_its_own_entrys_clock(h200, h200_rs):
    data = _report(H200_DIR)
    bf16 = _c(h200, "BF16 tensor")
    assert bf16.clock_mhz == pytest.approx(data["tensor"]["ceilings"]["BF16 tensor"]["random"]["sm_clock_mhz"], rel=1e-12)
    fp32 = _c(h200, "FP32")
    entry = next(e for e in h200_rs.entries if e.name == fp32.source["entries"])
    assert fp32.clock_mhz == entry.num("sm_clock_kernel_mhz") and 1900 < fp32.clock_mhz < 1980
    assert _c(h200, "shared").clock_mhz == 1980.0 and _c(h200, "shared").per_clock
    assert not _c(h200, "DRAM").per_clock and not _c(h200, "L2").per_clock and _c(h200, "L1").per_clock


def test_premise_failed_figures_are_no_ceilings(h200, h200_rs):
    # memory.l2_bandwidth walk=shared reads that the L2's request coalescer merged read up to 2.5x the L2
    # ceiling; their premise failed, so none of them is the L2 ceiling, nor is any other failed entry
    failed = [e for e in h200_rs.entries if e.premise == "failed"]
    l2_failed = max(e.value for e in failed if e.family == "memory.l2_bandwidth")
    assert l2_failed > 2 * _c(h200, "L2").value
    failed_names = {e.name for e in failed}
    assert {"exec.tensor"} <= {e.family for e in failed}
    assert not any(c.source.get("entries") in failed_names for c in h200.ceilings)


def test_only_the_roofline_and_what_it_depends_on_is_analysed(h200_rs):
    inputs = S.inputs_for(h200_rs, "roofline")
    assert set(inputs.results) == {"hierarchy", "bandwidth", "execution", "tensor"}


# ---- the bound ---------------------------------------------------------------------------------------------

def test_dram_bound_copy_kernel_at_a_known_fraction_of_the_copy_ceiling(h200):
    copy = _c(h200, "DRAM copy").value
    b = 2e9
    bound = b / (copy * 1e9)
    la = launch(duration_s=bound / 0.8, nbytes={"DRAM": b, "L2": b}, dram_read=b / 2)
    v = V.judge_launch(la, {c.name: c for c in h200.ceilings})
    assert v.binding.name == "DRAM copy" and v.bound_s == pytest.approx(bound, rel=1e-12)
    assert 100 * v.bound_s / v.actual_s == pytest.approx(80.0, rel=1e-12)
    assert v.saving_s == pytest.approx(bound / 0.8 - bound, rel=1e-12)
    assert v.binding.scaling.startswith("not scaled") and not v.binding.scaled and not v.at_least
    assert v.binding.metrics == ("dram__bytes_read.sum", "dram__bytes_write.sum")
    # read-dominated (>= 90 % reads): the read ceiling
    v = V.judge_launch(launch(duration_s=1.0, nbytes={"DRAM": b}, dram_read=0.95 * b), {c.name: c for c in h200.ceilings})
    assert v.binding.name == "DRAM" and v.bound_s == pytest.approx(b / (_c(h200, "DRAM").value * 1e9), rel=1e-12)


def test_fp32_fma_kernel_at_the_ceilings_own_clock(h200):
    fp32 = _c(h200, "FP32")
    f = 1e12
    bound = f / (fp32.value * 1e9)
    la = launch(duration_s=2 * bound, clock_mhz=fp32.clock_mhz, flops={"FP32": f}, nbytes={"DRAM": 1e6})
    v = V.judge_launch(la, {c.name: c for c in h200.ceilings})
    assert v.binding.name == "FP32" and v.bound_s == pytest.approx(bound, rel=1e-12)
    assert 100 * v.bound_s / v.actual_s == pytest.approx(50.0, rel=1e-12)
    assert v.binding.scaled and "the launch's SM clock" in v.binding.scaling


def test_bf16_tensor_kernel_is_held_to_the_bf16_tensor_ceiling(h200):
    bf16 = _c(h200, "BF16 tensor")
    ops = 1e13
    la = launch(duration_s=0.02, clock_mhz=bf16.clock_mhz, tensor={"BF16 tensor": ops}, flops={"FP32": 1e9},
                nbytes={"DRAM": 1e8})
    v = V.judge_launch(la, {c.name: c for c in h200.ceilings})
    assert v.binding.name == "BF16 tensor"
    assert v.binding.ceiling == pytest.approx(bf16.value, rel=1e-12)  # its own type's, at its own clock
    assert v.bound_s == pytest.approx(ops / (bf16.value * 1e9), rel=1e-12)
    # neither the FP32 pipe nor another tensor type's ceiling
    assert v.bound_s != pytest.approx(ops / (_c(h200, "FP32").value * 1e9), rel=1e-3)
    assert v.bound_s != pytest.approx(ops / (_c(h200, "FP16 tensor").value * 1e9), rel=1e-3)
    assert v.binding.metrics == tuple(m.name for m in M.METRICS if m.target == "BF16 tensor")


def test_shared_memory_bound_kernel(h200):
    shared = _c(h200, "shared")
    b = 1e10
    la = launch(duration_s=1e-3, clock_mhz=shared.clock_mhz, nbytes={"shared": b, "L1": 1e9, "DRAM": 1e7})
    v = V.judge_launch(la, {c.name: c for c in h200.ceilings})
    assert v.binding.name == "shared" and v.bound_s == pytest.approx(b / (shared.value * 1e9), rel=1e-12)
    assert v.binding.metrics == ("sm__sass_data_bytes_mem_shared.sum",)


def test_half_the_clock_gives_half_a_compute_ceiling(h200):
    fp32 = _c(h200, "FP32")
    ceilings = {c.name: c for c in h200.ceilings}
    full = V.judge_launch(launch(clock_mhz=fp32.clock_mhz, flops={"FP32": 1e12}), ceilings)
    half = V.judge_launch(launch(clock_mhz=fp32.clock_mhz / 2, flops={"FP32": 1e12}), ceilings)
    assert half.binding.ceiling == pytest.approx(fp32.value / 2, rel=1e-12)
    assert half.bound_s == pytest.approx(2 * full.bound_s, rel=1e-12)
    assert f"x {fp32.clock_mhz / 2:,.0f} / {fp32.clock_mhz:,.0f} MHz" in half.binding.scaling
    # DRAM is not scaled: the same bytes take the same bound at any SM clock
    d_full = V.judge_launch(launch(clock_mhz=1980.0, nbytes={"DRAM": 1e9}), ceilings)
    d_half = V.judge_launch(launch(clock_mhz=990.0, nbytes={"DRAM": 1e9}), ceilings)
    assert d_full.bound_s == d_half.bound_s


def test_unknown_launch_clock_is_said_and_not_scaled(h200):
    fp32 = _c(h200, "FP32")
    la = launch(clock_mhz=math.nan, flops={"FP32": 1e12})
    v = V.judge_launch(la, {c.name: c for c in h200.ceilings})
    assert v.binding.ceiling == fp32.value and "clock is unknown" in v.binding.scaling


# ---- points above a roof -----------------------------------------------------------------------------------

def test_above_the_roof_within_noise_is_not_flagged_beyond_it_is(h200):
    ceilings = {c.name: c for c in h200.ceilings}
    fp32 = _c(h200, "FP32")
    bound = 1e12 / (fp32.value * 1e9)
    within = V.judge_launch(launch(duration_s=bound / 1.02, clock_mhz=fp32.clock_mhz, flops={"FP32": 1e12}), ceilings)
    beyond = V.judge_launch(launch(duration_s=bound / 1.10, clock_mhz=fp32.clock_mhz, flops={"FP32": 1e12}), ceilings)
    assert not within.above_roof and within.saving_s == 0.0
    assert beyond.above_roof and beyond.causes[0].startswith("operations:") and beyond.saving_s == 0.0


def test_above_the_l2_roof_at_a_higher_clock_names_the_clock(h200):
    l2 = _c(h200, "L2")
    b = 1e10
    bound = b / (l2.value * 1e9)
    la = launch(duration_s=bound / 1.10, clock_mhz=2100.0, nbytes={"L2": b, "DRAM": 0.2 * b}, dram_read=0.2 * b)
    v = V.judge_launch(la, {c.name: c for c in h200.ceilings}, cache="all")
    assert v.binding.name == "L2" and v.above_roof
    assert v.causes == ["clock: the launch ran above the 1,980 MHz of the L2 ceiling's entry, and that ceiling is "
                        "not scaled: the profile does not relate the L2's clock to the SM's"]
    # at the entry's own clock the same point is no longer the clock's doing
    same = V.judge_launch(launch(duration_s=bound / 1.10, clock_mhz=1980.0, nbytes={"L2": b, "DRAM": 0.2 * b},
                                 dram_read=0.2 * b), {c.name: c for c in h200.ceilings}, cache="all")
    assert same.above_roof and same.causes[0].startswith("unexplained: above the measured L2 ceiling")


def test_above_the_dram_roof_with_cache_control_none_names_the_cache(h200):
    dram = _c(h200, "DRAM")
    b = 1e9
    la = launch(duration_s=b / (dram.value * 1e9) / 1.2, nbytes={"DRAM": b, "L2": 1.1 * b}, dram_read=b)
    v = V.judge(profile([la], notes=["cache control: none"]), H200, h200.ceilings).launches[0]
    assert v.above_roof and v.causes[0].startswith("cache-warm replay") and "--cache-control none" in v.causes[0]
    # flushed caches and nothing else off: said to be unexplained, never silently drawn
    v = V.judge(profile([la], notes=["cache control: all"]), H200, h200.ceilings).launches[0]
    assert v.above_roof and v.causes == ["unexplained: above the measured DRAM ceiling (not scaled: its clock is the "
                                         "memory's); check the ceiling's entry and the profile"]
    assert 100 * v.bound_s / v.actual_s == pytest.approx(120.0, rel=1e-12)
    twice = V.judge(profile([la, la]), H200, h200.ceilings)
    row = V.table_rows(twice, twice.kernels)[0]
    assert "ABOVE ROOF (2 of 2 launches, up to 120.0 % of bound): unexplained" in row[8] and row[8].count("unexplained") == 1


def test_l2_resident_data_are_named_as_a_warm_cache(h200):
    l2 = _c(h200, "L2")
    b = 1e10
    la = launch(duration_s=b / (l2.value * 1e9) / 1.5, nbytes={"L2": b, "DRAM": 1e6}, dram_read=1e6)
    v = V.judge_launch(la, {c.name: c for c in h200.ceilings}, cache=None)
    assert v.above_roof and v.causes == ["cache-warm replay: the bytes were counted in other replay passes than the "
                                         "one timed, with the caches in another state (cache control not recorded); "
                                         "DRAM moved under 5% of the L2's bytes: the data stayed in the L2"]
    # every pass flushed: the same bytes are no replay's doing
    v = V.judge_launch(la, {c.name: c for c in h200.ceilings}, cache="all")
    assert v.above_roof and v.causes[0].startswith("unexplained: above the measured L2 ceiling")


# ---- missing ceilings and metrics --------------------------------------------------------------------------

def test_a_resource_without_a_ceiling_is_named_and_the_bound_is_at_least(h200):
    dram = _c(h200, "DRAM")
    la = launch(duration_s=1e-3, tensor={"BF16 tensor (sparse)": 1e12}, nbytes={"DRAM": 1e9}, dram_read=1e9)
    v = V.judge(profile([la]), H200, h200.ceilings)
    lv = v.launches[0]
    assert lv.missing_ceilings == ["BF16 tensor (sparse)"] and lv.at_least
    assert lv.binding.name == "DRAM" and lv.bound_s == pytest.approx(1e9 / (dram.value * 1e9), rel=1e-12)
    row = V.table_rows(v, v.kernels)[0]
    assert row[5].startswith("≥ ") and "no ceiling: BF16 tensor (sparse)" in row[8]
    assert any("BF16 tensor (sparse)" in n for n in v.notes)


def test_a_gpu_without_tensor_ceilings_gives_a_bf16_gemm_an_at_least_bound(h200):
    """As the H100 reference (measured before the tensor probes): the H200's ceilings without their tensor ones.
    (The H100 reference's own ceilings are built by the report audit's tests; building them here again cost
    35 s of the test command.)"""
    no_tensor = [c for c in h200.ceilings if "tensor" not in c.name]
    fp32 = _c(h200, "FP32")
    la = launch(duration_s=1e-3, clock_mhz=fp32.clock_mhz, tensor={"BF16 tensor": 5e11}, flops={"FP32": 1e9})
    v = V.judge(profile([la]), H200, no_tensor)
    lv = v.launches[0]
    assert lv.missing_ceilings == ["BF16 tensor"] and lv.at_least
    assert lv.binding.name == "FP32" and lv.bound_s == pytest.approx(1e9 / (fp32.value * 1e9), rel=1e-12)


def test_a_missing_declared_metric_makes_the_bound_a_lower_bound(h200):
    la = launch(nbytes={"DRAM": 1e9}, dram_read=1e9, missing=("lts__t_bytes.sum",))
    g = V.judge(profile([la]), H200, h200.ceilings).kernels[0]
    assert g.at_least and g.missing_metrics == ["lts__t_bytes.sum"]
    # a missing clock hides no resource: the bound stands (its ceilings unscaled, said in the scaling)
    la = launch(clock_mhz=math.nan, flops={"FP32": 1e9}, missing=("sm__cycles_elapsed.avg.per_second",))
    g = V.judge(profile([la]), H200, h200.ceilings).kernels[0]
    assert not g.at_least and g.missing_metrics == ["sm__cycles_elapsed.avg.per_second"]


def test_a_profile_of_another_gpu_model_is_refused(h200):
    with pytest.raises(V.AppVerdictError, match="a profile of 'NVIDIA H100 80GB HBM3', but the device results are "
                                                "of 'NVIDIA H200'"):
        V.judge(profile([launch(device=H100)], device=H100), H200, h200.ceilings)


# ---- grouping, order, headroom -----------------------------------------------------------------------------

def _app(h200):
    """Kernel A (two shapes), kernel B; NVTX step > fwd / step > bwd. Every launch DRAM-bound, read-only."""
    dram = _c(h200, "DRAM").value * 1e9
    rows = [  # kernel, grid, nvtx, bytes, duration
        ("A", (10, 1, 1), ("step", "fwd"), 1e9, 4e9 / dram),       # 25 % of bound
        ("A", (10, 1, 1), ("step", "bwd"), 1e9, 2e9 / dram),       # 50 %
        ("A", (20, 1, 1), ("step", "fwd"), 3e9, 4e9 / dram),       # 75 %
        ("B", (10, 1, 1), (), 1e9, 1e9 / dram),                    # 100 %: no saving
    ]
    return [launch(index=i, kernel=k, grid=g, nvtx=n, duration_s=t, nbytes={"DRAM": b}, dram_read=b)
            for i, (k, g, n, b, t) in enumerate(rows)], dram


def test_grouping_by_kernel_and_shape_and_by_nvtx_range(h200):
    launches, dram = _app(h200)
    v = V.judge(profile(launches), H200, h200.ceilings)
    total = 11e9 / dram
    assert v.total_s == pytest.approx(total, rel=1e-12)
    by = {g.key: g for g in v.kernels}
    a1 = by[("A", "grid (10,1,1) block (256,1,1)")]
    assert a1.count == 2 and a1.time_s == pytest.approx(6e9 / dram, rel=1e-12)
    assert a1.share == pytest.approx(6 / 11, rel=1e-12)
    assert a1.pct_of_bound == pytest.approx(100 * 2 / 6, rel=1e-12) and a1.binding == "DRAM"
    assert a1.bytes == {"DRAM": 2e9}
    ranges = {g.label: g for g in v.ranges}
    assert set(ranges) == {"step", "step > fwd", "step > bwd"}   # B has no range: in none
    assert ranges["step"].count == 3 and ranges["step"].time_s == pytest.approx(10e9 / dram, rel=1e-12)
    assert ranges["step > fwd"].count == 2 and ranges["step > fwd"].saving_s == pytest.approx(4e9 / dram, rel=1e-12)


def test_ordered_by_saving_with_the_applications_headroom(h200):
    launches, dram = _app(h200)
    v = V.judge(profile(launches), H200, h200.ceilings)
    # savings: A(10) (4-1)+(2-1) = 4, A(20) 4-3 = 1, B 0 (x 1e9/dram s)
    assert [g.key[0] + str(g.key[1][6:8]) for g in v.kernels] == ["A10", "A20", "B10"]
    assert [g.saving_s * dram / 1e9 for g in v.kernels] == pytest.approx([4.0, 1.0, 0.0], rel=1e-12)
    assert v.headroom == pytest.approx(5 / 11, rel=1e-12)


# ---- compare -----------------------------------------------------------------------------------------------

def test_compare_two_profiles_kernel_by_kernel(h200):
    launches, dram = _app(h200)
    before = V.judge(profile(launches, path="before.csv"), H200, h200.ceilings)
    faster = [launch(index=0, kernel="A", grid=(10, 1, 1), duration_s=1.25e9 / dram, nbytes={"DRAM": 1e9}, dram_read=1e9),
              launch(index=1, kernel="A", grid=(20, 1, 1), duration_s=4e9 / dram, nbytes={"DRAM": 3e9}, dram_read=3e9),
              launch(index=2, kernel="C", grid=(10, 1, 1), duration_s=1e9 / dram, nbytes={"DRAM": 5e8}, dram_read=5e8)]
    after = V.judge(profile(faster, path="after.csv"), H200, h200.ceilings)
    changes = V.compare(before, after)
    by = {c.key[0] + c.key[1][6:8]: c for c in changes}
    assert set(by) == {"A10", "A20", "B10", "C10"}
    a = by["A10"]
    assert a.before.count == 2 and a.after.count == 1
    assert a.delta_s == pytest.approx((1.25e9 - 6e9) / dram, rel=1e-12)
    assert a.after.pct_of_bound == pytest.approx(80.0, rel=1e-12) and a.before.binding == a.after.binding == "DRAM"
    assert by["B10"].after is None and by["C10"].before is None
    assert by["A20"].delta_s == 0.0
    assert changes[0].key[0] == "A" and changes[0].key[1].startswith("grid (10,")  # largest change first
    text = V.compare_markdown(before, after, changes)
    assert "only before" in text and "only after" in text and "80.0 %" in text
    data = V.compare_json(before, after, changes)
    assert [k["kernel"] for k in data["kernels"]][0] == "A" and data["kernels"][0]["after"]["launches"] == 1


# ---- the command -------------------------------------------------------------------------------------------

def _csv(path, device=H200, scale=1.0):
    """A SYNTHETIC raw-page export: two launches, a DRAM-bound one and a FP32 one (ncu_synth's layout)."""
    def values(i):
        out = {m.name: 0.0 for m in M.COUNTED}
        out["gpu__time_duration.sum"] = 1e-3 * scale
        out["sm__cycles_elapsed.avg.per_second"] = 1.98e9
        if i == 0:
            out["dram__bytes_read.sum"] = 2e9
            out["dram__bytes_write.sum"] = 1e8
        else:
            out["sm__sass_thread_inst_executed_op_ffma_pred_on.sum"] = 1e10
        return out
    with open(path, "w") as fh:
        fh.write(ncu_synth.synthetic_raw_csv(2, device=device, values=values, nvtx=lambda i: ("step",)))
    return str(path)


def test_app_command_writes_the_page_json_and_markdown(h200, tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["app", _csv(tmp_path / "app.csv"), "--device", H200_DIR, "-o", str(out), "--top", "5"]) == 0
    data = json.loads((out / "app-kernels.json").read_text())
    dram = _c(h200, "DRAM").value
    first = next(k for k in data["kernels"] if k["binding"] == "DRAM")
    assert first["pct_of_bound"] == pytest.approx(100 * 2.1e9 / (dram * 1e9) / 1e-3,
                                                                                  rel=1e-9)
    assert first["binding_ceiling"]["source"] == _c(h200, "DRAM").source["entries"]
    fp32 = next(k for k in data["kernels"] if k["binding"] == "FP32")
    assert fp32["pct_of_bound"] == pytest.approx(100 * 2e10 / (_c(h200, "FP32").value * 1980 /
                                                               _c(h200, "FP32").clock_mhz * 1e9) / 1e-3, rel=1e-9)
    assert fp32["binding_metrics"] == ["sm__sass_thread_inst_executed_op_ffma_pred_on.sum",
                                       "sm__sass_thread_inst_executed_op_fadd_pred_on.sum",
                                       "sm__sass_thread_inst_executed_op_fmul_pred_on.sum"]
    assert data["nvtx_ranges"][0]["label"] == "step" and data["nvtx_ranges"][0]["launches"] == 2
    html = (out / "app-kernels.html").read_text()
    assert "Application kernels" in html and "data:image/png;base64," in html and "DRAM copy" in html
    md = (out / "app-kernels.md").read_text()
    assert "| kernel [launch shape] |" in md and "figures/app_roofline.png" in md
    assert (out / "figures" / "app_roofline.svg").exists()
    assert "headroom" in capsys.readouterr().out


def test_app_compare_command(h200, tmp_path, capsys):
    before, after = _csv(tmp_path / "before.csv"), _csv(tmp_path / "after.csv", scale=0.5)
    out = tmp_path / "cmp.md"
    assert main(["app-compare", before, after, "--device", H200_DIR, "-o", str(out)]) == 0
    text = out.read_text()
    assert text.count("-50.0 %") == 2
    assert json.loads((tmp_path / "cmp.json").read_text())["kernels"][0]["delta_s"] == pytest.approx(-5e-4, rel=1e-9)


def test_a_profile_of_another_model_exits_1_with_one_line(tmp_path, capsys):
    assert main(["app", _csv(tmp_path / "app.csv", device=H100), "--device", H200_DIR, "-o", str(tmp_path / "o")]) == 1
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and "'NVIDIA H100 80GB HBM3'" in err[0] and "'NVIDIA H200'" in err[0]
    assert not (tmp_path / "o").exists()


def test_a_malformed_profile_exits_1_with_one_line(tmp_path, capsys):
    bad = tmp_path / "bad.csv"
    bad.write_text('"ID","Kernel Name"\n"not","a profile"\n')
    assert main(["app", str(bad), "--device", H200_DIR, "-o", str(tmp_path / "o")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("gpuprobe-analyze: ") and "bad.csv" in err[0]
    assert main(["app-compare", str(bad), str(bad), "--device", H200_DIR]) == 1


def test_refuses_to_write_into_a_folder_of_tracked_files(tmp_path, capsys):
    """The one rule of outputs.py (test_outputs.py tests the rule itself): exit 2, one line, nothing written."""
    target = os.path.join(H200_DIR, "report")
    before = sorted(os.listdir(target))
    assert main(["app", _csv(tmp_path / "app.csv"), "--device", H200_DIR, "-o", target]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "holds files tracked by git" in err[0]
    assert sorted(os.listdir(target)) == before
    assert main(["app-compare", _csv(tmp_path / "a.csv"), _csv(tmp_path / "b.csv"), "--device", H200_DIR,
                 "-o", os.path.join(target, "cmp.md")]) == 2


def test_the_figure_draws_every_measured_roof_and_flags_a_point_above(h200, tmp_path):
    from gpuprobe_analysis.report import build_app_report
    l2 = _c(h200, "L2")
    # a copy (no operations: no intensity, not drawn) saves most: number 1 in the table and in the figure's legend
    ok = launch(index=0, kernel="copy", duration_s=1e-3, nbytes={"DRAM": 1e9}, dram_read=5e8)
    above = launch(index=1, kernel="above", duration_s=1e10 / (l2.value * 1e9) / 1.5, flops={"FP32": 1e9},
                   nbytes={"L2": 1e10, "DRAM": 1e6}, dram_read=1e6)
    v = V.judge(profile([ok, above]), H200, h200.ceilings)
    out = build_app_report(v, str(tmp_path / "page"), top=5)
    svg = open(out["figures"][0]["svg"]).read()
    assert "2!" in svg and "1!" not in svg   # "above" saves nothing: second in the table, numbered 2, flagged
    md = open(out["md"]).read()
    assert "| 1 | copy [grid (1,1,1) block (256,1,1)] |" in md and "| 2 | above [" in md
    for c in h200.ceilings:
        if c.name in ("DRAM", "L2", "L1", "shared") or not c.is_memory:
            assert f"{c.name} {c.value:,.0f} " in svg   # every measured roof with its value in the legend
    assert "above a measured roof (flagged" in svg
    data = json.loads(open(out["json"]).read())
    flagged = next(k for k in data["kernels"] if k["above_roof_launches"])
    assert flagged["label"].startswith("above") and flagged["above_roof_causes"][0].startswith("unexplained")



def test_ncu_roof_beside_ours_for_the_binding_level(h200):
    # ncu's own L2 roof: peak bytes per cycle x the L2's cycles per second (H100: 7,680 B x 1.71 GHz), beside
    # the measured ceiling's verdict; none where the profile lacks those metrics.
    l2 = _c(h200, "L2")
    b = 1e10
    peak, clock = M.NCU_ROOF_OF["L2"]
    la = launch(duration_s=b / (l2.value * 1e9) / 0.8, nbytes={"L2": b, "DRAM": 1e6}, dram_read=1e6,
                metrics={peak: 7680.0, clock: 1.71e9})
    v = V.judge(profile([la, la]), H200, h200.ceilings)
    g = v.kernels[0]
    assert g.binding == "L2" and g.pct_of_bound == pytest.approx(80.0, rel=1e-9)
    roof = 7680.0 * 1.71e9 / 1e9
    assert g.ncu_roof == ("L2", pytest.approx(roof), pytest.approx(100 * 0.8 * l2.value / roof))
    row = V.table_rows(v, v.kernels)[0]
    assert row[6] == f"{100 * 0.8 * l2.value / roof:.1f} % of L2 {roof:,.0f} GB/s"
    assert V.judge(profile([launch(duration_s=1e-3, nbytes={"L2": b})]), H200, h200.ceilings).kernels[0].ncu_roof is None
