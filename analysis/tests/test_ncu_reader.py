"""The Nsight Compute reader (gpuprobe_analysis/ncu.py) and its metric declaration (ncu_metrics.py).

Every export here is SYNTHETIC (ncu_synth.py writes it in the raw-page layout); none was recorded on a GPU.
The expected values are spelled out in the tests (NVIDIA's weights: FMA 2, add/mul 1, half2 add/mul 2,
half2 FMA 4; tensor ops 1), not read back from the declaration, so that a wrong weight or target fails."""
from __future__ import annotations

import math
import os
import re

import pytest

from gpuprobe_analysis import families as F
from gpuprobe_analysis import ncu
from gpuprobe_analysis import ncu_metrics as M
from ncu_synth import H100, launch_values, nvtx_cell, synthetic_raw_csv

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SASS = "sm__sass_thread_inst_executed_op_{}_pred_on.sum"
OPS = "sm__ops_path_tensor_{}.sum"


def _write(tmp_path, text, name="profile.csv"):
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def _only(**counts):
    """Launch values with every counted metric zero except those given (name -> base-unit value)."""
    def values(i):
        v = {m.name: 0.0 for m in M.COUNTED}
        v["gpu__time_duration.sum"] = 2e-6
        v["sm__cycles_elapsed.avg.per_second"] = 1.98e9
        v.update(counts)
        return v
    return values


def _error(path):
    with pytest.raises(ncu.ProfileError) as e:
        ncu.read_profile(path)
    msg = str(e.value)
    assert "\n" not in msg and path in msg
    return msg


# ---- what a launch is read as ----------------------------------------------------------------------------

def test_every_value_of_a_launch(tmp_path):
    path = _write(tmp_path, synthetic_raw_csv(3, nvtx=lambda i: ("train_step", f"layer{i}")))
    p = ncu.read_profile(path)
    assert (p.device, p.source, p.missing) == (H100, "ncu raw CSV", {})
    assert [l.index for l in p.launches] == [0, 1, 2]
    l1 = p.launches[1]
    v = launch_values(1)
    assert l1.kernel == "elementwise_add(float*, float const*, int)"
    assert (l1.grid, l1.block) == ((1001, 2, 1), (256, 1, 1))
    assert l1.launch_shape == "grid (1001,2,1) block (256,1,1)"
    assert l1.nvtx == ("train_step", "layer1")
    assert l1.duration_s == pytest.approx(11e-6, rel=1e-12)
    assert l1.sm_clock_hz == 1.755e9
    assert l1.dram_read_bytes == v["dram__bytes_read.sum"]
    assert l1.bytes == {"DRAM": v["dram__bytes_read.sum"] + v["dram__bytes_write.sum"], "L2": v["lts__t_bytes.sum"],
                        "L1": v["l1tex__t_bytes.sum"], "shared": v["sm__sass_data_bytes_mem_shared.sum"]}
    assert l1.flops["FP32"] == 2 * v[SASS.format("ffma")] + v[SASS.format("fadd")] + v[SASS.format("fmul")]
    assert l1.flops["FP64"] == 2 * v[SASS.format("dfma")] + v[SASS.format("dadd")] + v[SASS.format("dmul")]
    assert l1.flops["FP16 half2"] == 4 * v[SASS.format("hfma")] + 2 * v[SASS.format("hadd")] + 2 * v[SASS.format("hmul")]
    assert l1.tensor_ops["BF16 tensor"] == (v[OPS.format("op_hgmma_src_bf16_dst_fp32_sparsity_off")]
                                           + v[OPS.format("op_hmma_src_bf16_dst_fp32_sparsity_off")])
    assert l1.tensor_ops["FP8 tensor"] == v[OPS.format("src_fp8_sparsity_off")]
    assert l1.metrics["launch__registers_per_thread"] == 128   # an undeclared numeric column is kept
    assert "launch__func_cache_config" not in l1.metrics      # a text one is not
    assert l1.missing == ()
    assert l1.total_flops == pytest.approx(sum(l1.flops.values()) + sum(l1.tensor_ops.values()))


def test_nvidia_flop_weights(tmp_path):
    path = _write(tmp_path, synthetic_raw_csv(1, values=_only(**{
        SASS.format("hfma"): 10, SASS.format("hadd"): 3, SASS.format("hmul"): 5,
        SASS.format("ffma"): 7, SASS.format("fadd"): 1, SASS.format("fmul"): 2,
        SASS.format("dfma"): 100})))
    l = ncu.read_profile(path).launches[0]
    assert l.flops == {"FP16 half2": 40 + 6 + 10, "FP32": 14 + 1 + 2, "FP64": 200}
    assert l.tensor_ops == {}


def test_tensor_ops_per_type_never_per_instruction(tmp_path):
    path = _write(tmp_path, synthetic_raw_csv(1, values=_only(**{
        OPS.format("op_hgmma_src_bf16_dst_fp32_sparsity_off"): 1_000_000,
        OPS.format("op_hmma_src_bf16_dst_fp32_sparsity_off"): 24,
        OPS.format("op_hgmma_src_fp16_sparsity_off"): 5,
        OPS.format("op_hmma_src_fp16_dst_fp16_sparsity_off"): 6,
        OPS.format("op_igmma_src_int8_sparsity_off"): 7,
        OPS.format("src_fp64"): 8,
        OPS.format("src_fp8_sparsity_on"): 9})))
    l = ncu.read_profile(path).launches[0]
    assert l.tensor_ops == {"BF16 tensor": 1_000_024, "FP16 tensor": 11, "INT8 tensor": 7, "FP64 tensor": 8,
                            "FP8 tensor (sparse)": 9}
    assert l.flops == {}


def test_tensor_targets_are_the_exec_tensor_ceiling_names():
    # The names exec.tensor gives its ceilings (microbench/probes/exec_tensor.cu), read from the source.
    src = open(os.path.join(REPO, "microbench", "probes", "exec_tensor.cu")).read()
    ceilings = set(re.findall(r'"([A-Z0-9]+ tensor)"', src))
    assert ceilings == {"FP16 tensor", "BF16 tensor", "TF32 tensor", "FP8 tensor", "INT8 tensor", "FP64 tensor"}
    dense = {t for t in M.TENSOR_TYPES if not t.endswith(M.SPARSE_SUFFIX)}
    assert dense == ceilings
    assert {t[:-len(M.SPARSE_SUFFIX)] for t in M.TENSOR_TYPES if t.endswith(M.SPARSE_SUFFIX)} <= ceilings


def test_half2_target_is_the_pipelines_ceiling_name():
    # The pipelines section's half2 ceiling is named after exec.throughput's op precision (records).
    src = open(os.path.join(REPO, "analysis", "gpuprobe_analysis", "sections", "execution.py")).read()
    assert '"FP16 half2"' in src
    assert set(M.PRECISIONS) == {"FP32", "FP64", "FP16 half2"}


@pytest.mark.parametrize("metric, unit, scale, expect", [
    ("gpu__time_duration.sum", "usecond", 1e6, 3e-6),
    ("gpu__time_duration.sum", "msecond", 1e3, 3e-6),
    ("gpu__time_duration.sum", "second", 1.0, 3e-6),
    ("gpu__time_duration.sum", "ns", 1e9, 3e-6),
    ("sm__cycles_elapsed.avg.per_second", "cycle/usecond", 1e-6, 1.5e9),
    ("sm__cycles_elapsed.avg.per_second", "cycle/nsecond", 1e-9, 1.5e9),
    ("sm__cycles_elapsed.avg.per_second", "Ghz", 1e-9, 1.5e9),
    ("sm__cycles_elapsed.avg.per_second", "Mhz", 1e-6, 1.5e9),
    ("lts__t_bytes.sum", "Kbyte", 1e-3, 123_456_000.0),
    ("lts__t_bytes.sum", "Mbyte", 1e-6, 123_456_000.0),
    ("lts__t_bytes.sum", "Gbyte", 1e-9, 123_456_000.0),
    (SASS.format("ffma"), "Minst", 1e-6, 2e6),
])
def test_units_row_to_base_units(tmp_path, metric, unit, scale, expect):
    path = _write(tmp_path, synthetic_raw_csv(1, values=_only(**{metric: expect}), units={metric: unit},
                                              scale={metric: scale}))
    l = ncu.read_profile(path).launches[0]
    assert l.metrics[metric] == pytest.approx(expect, rel=1e-9)


def test_unknown_unit_of_a_used_metric_is_named(tmp_path):
    path = _write(tmp_path, synthetic_raw_csv(1, units={"dram__bytes_read.sum": "furlong"}))
    msg = _error(path)
    assert "furlong" in msg and "dram__bytes_read.sum" in msg and "line 4" in msg


def test_a_unit_of_another_dimension_is_refused(tmp_path):
    path = _write(tmp_path, synthetic_raw_csv(1, units={"gpu__time_duration.sum": "byte"}))
    assert "gpu__time_duration.sum" in _error(path)


def test_a_byte_unit_on_an_instruction_count_is_refused(tmp_path):
    path = _write(tmp_path, synthetic_raw_csv(1, units={SASS.format("ffma"): "Kbyte"}))
    assert SASS.format("ffma") in _error(path)


def test_thousands_separators_and_quoted_fields(tmp_path):
    text = synthetic_raw_csv(1, values=_only(**{"lts__t_bytes.sum": 1_234_567_890.0}))
    assert '"1,234,567,890"' in text
    l = ncu.read_profile(_write(tmp_path, text)).launches[0]
    assert l.bytes["L2"] == 1_234_567_890.0
    assert l.kernel == "void gemm_kernel<128, 64>(float const*, float*, int)"   # commas inside quotes


# ---- missing metrics --------------------------------------------------------------------------------------

def test_missing_and_na_metrics_are_named(tmp_path):
    path = _write(tmp_path, synthetic_raw_csv(4, drop=["l1tex__t_bytes.sum"],
                                              na=["dram__bytes_write.sum", "gpu__time_duration.sum"]))
    p = ncu.read_profile(path)
    assert p.missing == {"l1tex__t_bytes.sum": 4, "dram__bytes_write.sum": 4, "gpu__time_duration.sum": 4}
    l = p.launches[0]
    assert set(l.missing) == {"l1tex__t_bytes.sum", "dram__bytes_write.sum", "gpu__time_duration.sum"}
    assert "L1" not in l.bytes and "DRAM" not in l.bytes     # half of DRAM is no DRAM figure
    assert l.dram_read_bytes == launch_values(0)["dram__bytes_read.sum"]
    assert math.isnan(l.duration_s)
    assert any("l1tex__t_bytes.sum (4 of 4 launches)" in n for n in p.notes)


def test_a_precision_with_a_counter_missing_is_left_out(tmp_path):
    path = _write(tmp_path, synthetic_raw_csv(1, na=[SASS.format("fadd"), OPS.format("op_hmma_src_bf16_dst_fp32_sparsity_off")]))
    l = ncu.read_profile(path).launches[0]
    assert "FP32" not in l.flops and "FP64" in l.flops
    assert "BF16 tensor" not in l.tensor_ops and "FP16 tensor" in l.tensor_ops
    assert SASS.format("fadd") in l.missing


def test_a_profile_without_the_gpu_model_says_so(tmp_path):
    p = ncu.read_profile(_write(tmp_path, synthetic_raw_csv(2, drop=[M.DEVICE_NAME])))
    assert p.device == "GPU of compute capability 9.0"
    assert any(M.DEVICE_NAME in n for n in p.notes)


# ---- NVTX ---------------------------------------------------------------------------------------------------

def test_nvtx_stack_of_a_cell():
    assert ncu.nvtx_stack("") == ()
    assert ncu.nvtx_stack(nvtx_cell(["step", "forward", "aten::linear"])) == ("step", "forward", "aten::linear")
    # A range name holding colons stays whole; another domain is named domain@range.
    assert ncu.nvtx_stack(nvtx_cell(["mod:layers.0.attn"])) == ("mod:layers.0.attn",)
    assert ncu.nvtx_stack(nvtx_cell(["fwd"], domain="myapp")) == ("myapp@fwd",)
    # A registered message holding colons (CCCL's ranges, H100 export of 2026-12-05, ncu 2025.3.1).
    cell = ('3329  "<default domain>:sort:none:none:none:none:none:none"  '
            '"CCCL:cub::DeviceRadixSort:none:none:none:none:REGISTERED:cub::DeviceRadixSort" ')
    assert ncu.nvtx_stack(cell) == ("sort", "CCCL@cub::DeviceRadixSort")


def test_no_nvtx_column_gives_empty_stacks(tmp_path):
    p = ncu.read_profile(_write(tmp_path, synthetic_raw_csv(2, nvtx=None)))
    assert all(l.nvtx == () for l in p.launches)


def test_launches_outside_any_range(tmp_path):
    p = ncu.read_profile(_write(tmp_path, synthetic_raw_csv(2, nvtx=lambda i: ("step",) if i else ())))
    assert [l.nvtx for l in p.launches] == [(), ("step",)]


# ---- how the profile was taken ----------------------------------------------------------------------------

def test_notes_from_the_recorded_command(tmp_path):
    path = _write(tmp_path, synthetic_raw_csv(1))
    (tmp_path / "profile.cmd").write_text("ncu_version: NVIDIA (R) Nsight Compute 2025.3\nclock_control: none\n"
                                          "replay_mode: kernel\ncache_control: all\n")
    notes = ncu.read_profile(path).notes
    assert "clock control: none" in notes and "replay mode: kernel" in notes and "cache control: all" in notes


def test_notes_say_when_nothing_was_recorded(tmp_path):
    notes = ncu.read_profile(_write(tmp_path, synthetic_raw_csv(1))).notes
    assert any("not recorded" in n for n in notes)


def test_locked_clocks_are_flagged(tmp_path):
    path = _write(tmp_path, synthetic_raw_csv(1))
    (tmp_path / "profile.cmd").write_text("clock_control: base\n")
    assert any("another clock" in n for n in ncu.read_profile(path).notes)


# ---- malformed files: one line, the file and the place ----------------------------------------------------

def test_mixed_gpu_models(tmp_path):
    path = _write(tmp_path, synthetic_raw_csv(3, devices=lambda i: "NVIDIA H200" if i == 2 else H100))
    msg = _error(path)
    assert "NVIDIA H200" in msg and H100 in msg and "line 7" in msg


def test_empty_file(tmp_path):
    assert "empty" in _error(_write(tmp_path, ""))
    assert "empty" in _error(_write(tmp_path, "\n  \n", "blank.csv"))


def test_header_only(tmp_path):
    text = "\n".join(synthetic_raw_csv(1, tool_lines=False).splitlines()[:2]) + "\n"
    assert "no kernel launches" in _error(_write(tmp_path, text))


def test_no_header(tmp_path):
    assert "no ncu raw-page header" in _error(_write(tmp_path, "==PROF== Disconnected\nhello,world\n1,2\n"))


def test_no_units_row(tmp_path):
    lines = synthetic_raw_csv(2, tool_lines=False).splitlines()
    assert "no units row" in _error(_write(tmp_path, "\n".join([lines[0]] + lines[2:]) + "\n"))


def test_truncated_row(tmp_path):
    lines = synthetic_raw_csv(3).splitlines()
    lines[5] = lines[5][:len(lines[5]) // 2] + '"'
    msg = _error(_write(tmp_path, "\n".join(lines) + "\n"))
    assert "line 6" in msg and "truncated" in msg


def test_garbage_value(tmp_path):
    text = synthetic_raw_csv(2).replace('"1,755,000,000"', '"fast"', 1)
    msg = _error(_write(tmp_path, text))
    assert "sm__cycles_elapsed.avg.per_second" in msg and "'fast'" in msg and "line 5" in msg


def test_binary_garbage(tmp_path):
    p = tmp_path / "garbage.csv"
    p.write_bytes(bytes(range(256)) * 8)
    _error(str(p))


def test_missing_file(tmp_path):
    assert "cannot read" in _error(str(tmp_path / "nope.csv"))


# ---- .ncu-rep through ncu_report (a fake module: no ncu on this machine) ----------------------------------

class _Metric:
    def __init__(self, value, unit):
        self._v, self._u = value, unit

    def value(self):
        return self._v

    def unit(self):
        return self._u


class _Domain:
    def __init__(self, name, ranges):
        self._n, self._r = name, ranges

    def name(self):
        return self._n

    def push_pop_ranges(self):
        return list(self._r)


class _Nvtx:
    def __init__(self, domains):
        self._d = domains

    def domains(self):
        return list(range(len(self._d)))

    def domain_by_id(self, i):
        return self._d[i]


class _Action:
    """As ncu_report's IAction: name() is the bare function name, name(NameBase_DEMANGLED) the raw page's."""
    NameBase_FUNCTION, NameBase_DEMANGLED = 0, 1

    def __init__(self, name, metrics, nvtx):
        self._n, self._m, self._nvtx = name, metrics, nvtx

    def name(self, base=NameBase_FUNCTION):
        return self._n if base == self.NameBase_DEMANGLED else self._n.split("<")[0].split("(")[0].split()[-1]

    def metric_by_name(self, name):
        return self._m.get(name)

    def nvtx_state(self):
        return self._nvtx


class _Range:
    def __init__(self, actions):
        self._a = actions

    def num_actions(self):
        return len(self._a)

    def action_by_idx(self, i):
        return self._a[i]


class FakeNcuReport:
    """Stands in for NVIDIA's ncu_report: load_report -> context of ranges of actions."""

    def __init__(self, actions):
        self.actions = actions

    def load_report(self, path):
        ctx = self

        class _Ctx:
            def num_ranges(self):
                return 1

            def range_by_idx(self, i):
                return _Range(ctx.actions)
        return _Ctx()


_BASE = {"second": "second", "1/second": "hz", "byte": "byte", "count": ""}


def _rep_action(name="gemm", device=H100, time_ns=2500.0, nvtx=None, **extra):
    # Every counted metric present (zero) but L2's, so that a launch lacks one; then the values under test.
    metrics = {m.name: _Metric(0, _BASE[m.dimension]) for m in M.COUNTED if m.name != "lts__t_bytes.sum"}
    metrics |= {"gpu__time_duration.sum": _Metric(time_ns, "nsecond"),
               "sm__cycles_elapsed.avg.per_second": _Metric(1.98, "cycle/nsecond"),
               "dram__bytes_read.sum": _Metric(3.0, "Kbyte"), "dram__bytes_write.sum": _Metric(1000, "byte"),
               SASS.format("hfma"): _Metric(10, "inst"),
               OPS.format("op_hgmma_src_bf16_dst_fp32_sparsity_off"): _Metric(4096, ""),
               M.DEVICE_NAME: _Metric(device, ""),
               **{n: _Metric(v, "") for n, v in zip(M.LAUNCH_SHAPE, (132, 1, 1, 384, 1, 1))}}
    metrics.update(extra)
    return _Action(name, metrics, nvtx)


def test_ncu_rep_through_the_module(tmp_path):
    rep = tmp_path / "profile.ncu-rep"
    rep.write_bytes(b"synthetic")
    fake = FakeNcuReport([_rep_action(name="void gemm<128, float>(Params)",
                                      nvtx=_Nvtx([_Domain("", ["step", "forward"]), _Domain("nccl", ["ar"])])),
                          _rep_action(name="add", nvtx=None)])
    p = ncu.read_profile(str(rep), ncu_report=fake)
    assert p.source == "ncu-rep (ncu_report)" and p.device == H100
    a = p.launches[0]
    # The demangled name, as the raw CSV's "Kernel Name" (the bare "gemm" would group apart from a CSV's).
    assert (a.kernel, a.grid, a.block) == ("void gemm<128, float>(Params)", (132, 1, 1), (384, 1, 1))
    assert a.nvtx == ("step", "forward", "nccl@ar")
    assert a.duration_s == pytest.approx(2.5e-6)
    assert a.sm_clock_hz == pytest.approx(1.98e9)
    assert a.dram_read_bytes == 3000.0 and a.bytes == {"DRAM": 4000.0, "L1": 0.0, "shared": 0.0}
    assert a.flops == {"FP16 half2": 40.0}
    assert a.tensor_ops == {"BF16 tensor": 4096.0}
    assert a.missing == ("lts__t_bytes.sum",) and p.missing == {"lts__t_bytes.sum": 2}
    assert p.launches[1].nvtx == () and p.launches[1].index == 1


def test_ncu_rep_mixed_models(tmp_path):
    rep = tmp_path / "profile.ncu-rep"
    rep.write_bytes(b"synthetic")
    fake = FakeNcuReport([_rep_action(), _rep_action(device="NVIDIA A100-SXM4-80GB")])
    with pytest.raises(ncu.ProfileError, match="mixes GPU models"):
        ncu.read_profile(str(rep), ncu_report=fake)


def test_ncu_rep_unknown_unit(tmp_path):
    rep = tmp_path / "profile.ncu-rep"
    rep.write_bytes(b"synthetic")
    fake = FakeNcuReport([_rep_action(**{"lts__t_bytes.sum": _Metric(5, "parsec")})])
    with pytest.raises(ncu.ProfileError, match="parsec"):
        ncu.read_profile(str(rep), ncu_report=fake)


def test_ncu_rep_without_the_module_says_how_to_export(tmp_path, monkeypatch):
    rep = tmp_path / "profile.ncu-rep"
    rep.write_bytes(b"synthetic")
    monkeypatch.setattr(ncu, "find_ncu_report", lambda: None)
    msg = _error(str(rep))
    assert "ncu_report" in msg and "--page raw --csv --print-units base" in msg


def test_ncu_rep_that_does_not_exist(tmp_path):
    msg = _error(str(tmp_path / "nope.ncu-rep"))
    assert "no such file" in msg


def _found_mark(monkeypatch, ncu_bin):
    """find_ncu_report() with $NCU = ncu_bin, no $NCU_PYTHON_PATH and no ncu_report imported yet: its MARK."""
    import sys
    monkeypatch.setenv("NCU", str(ncu_bin))
    monkeypatch.delenv("NCU_PYTHON_PATH", raising=False)
    monkeypatch.delitem(sys.modules, "ncu_report", raising=False)
    try:
        mod = ncu.find_ncu_report()
        return mod.MARK if mod is not None else None
    finally:
        sys.modules.pop("ncu_report", None)


def test_find_ncu_report_next_to_ncu(tmp_path, monkeypatch):
    extras = tmp_path / "nsight" / "extras" / "python"
    extras.mkdir(parents=True)
    (extras / "ncu_report.py").write_text("MARK = 'found next to ncu'\n")
    ncu_bin = tmp_path / "nsight" / "ncu"
    ncu_bin.write_text("#!/bin/sh\n")
    assert _found_mark(monkeypatch, ncu_bin) == "found next to ncu"


def test_find_ncu_report_in_a_standalone_install(tmp_path, monkeypatch):
    """Where the ncu on PATH is a wrapper elsewhere: the newest /opt/nvidia/nsight-compute/VERSION."""
    for version, mark in (("2025.1.0", "old"), ("2025.3.1", "new")):
        extras = tmp_path / "nsight-compute" / version / "extras" / "python"
        extras.mkdir(parents=True)
        (extras / "ncu_report.py").write_text(f"MARK = {mark!r}\n")
    monkeypatch.setattr(ncu, "NCU_INSTALL_GLOBS", (str(tmp_path / "nsight-compute" / "*" / "extras" / "python"),))
    assert _found_mark(monkeypatch, tmp_path / "bin" / "ncu") == "new"  # no extras/python beside this ncu


# ---- the one declaration: no fact spelled twice unchecked -------------------------------------------------

def test_metric_list_is_the_declaration():
    names = M.metric_list().split(",")
    assert names == [m.name for m in M.METRICS] and len(set(names)) == len(names)


def test_families_counter_metrics_spelled_as_declared():
    # families.py keeps its own tables for the report's kernel roofline; where they name the same facts
    # (a metric at a level, a metric's FLOP weight and precision) they must agree with the declaration.
    for metric, weight, precision in F.FLOP_METRICS:
        m = M.BY_NAME[metric]
        assert (m.role, m.weight, m.target) == (M.FLOPS, weight, precision)
    for level, alternatives in F.LEVEL_BYTES.items():
        assert any(all(n in M.BY_NAME and M.BY_NAME[n].target == level for n in alt) for alt in alternatives), level


def _hpp_names():
    text = open(os.path.join(REPO, "profilers", "include", "gpuprobe", "metric_names.hpp")).read()
    return dict(re.findall(r'constexpr const char\* (k\w+) = "([^"]+)";', text))


def test_metric_names_hpp_spelled_as_declared():
    hpp = _hpp_names()
    by_role = lambda role, **kw: [m.name for m in M.METRICS if m.role == role
                                  and all(getattr(m, k) == v for k, v in kw.items())]
    assert hpp["kGpuTime"] in by_role(M.TIME)
    assert hpp["kSmClock"] in by_role(M.CLOCK)
    assert [hpp["kDramRead"]] == by_role(M.BYTES, target="DRAM", read=True)
    assert [hpp["kDramWrite"]] == by_role(M.BYTES, target="DRAM", read=False)
    sass = {k: v for k, v in hpp.items() if k.startswith("kSass")}
    assert len(sass) >= 7
    for const, name in sass.items():
        op = const[len("kSass"):].lower()
        assert [name] == [n for n in by_role(M.FLOPS) if f"_op_{op}_" in n], const
    # The peaks are <declared metric>.peak_sustained; the shared-load bytes a sub-metric of the declared one.
    assert hpp["kL2PeakBytesPerCycle"].rsplit(".peak_sustained", 1)[0] in by_role(M.BYTES, target="L2")
    assert hpp["kL1PeakBytesPerCycle"].rsplit(".peak_sustained", 1)[0] in by_role(M.BYTES, target="L1")
    shared = by_role(M.BYTES, target="shared")
    assert len(shared) == 1 and hpp["kSharedLoadBytes"].startswith(shared[0][:-len(".sum")] + "_op_")


def test_declaration_is_well_formed():
    for m in M.METRICS:
        assert m.role in (M.TIME, M.CLOCK, M.BYTES, M.FLOPS, M.TENSOR, M.NCU_PEAK, M.NCU_PEAK_CLOCK, M.LAUNCH), m
        assert m.source in (M.COUNTERS_MD, M.METRIC_NAMES, M.NCU_SECTION, M.NCU_GH100, M.UNVERIFIED), m
        assert (m.weight > 0) and (bool(m.target) == (m.role in (M.BYTES, M.FLOPS, M.TENSOR, M.NCU_PEAK,
                                                                 M.NCU_PEAK_CLOCK))), m
    # ncu's roof of the very bytes the verdict counts at that level (DRAM: their sum, dram__bytes).
    for level, (peak, _) in M.NCU_ROOF_OF.items():
        assert peak.split(".peak_sustained")[0] in {m.name for m in M.METRICS if m.role == M.BYTES
                                                    and m.target == level} or level == "DRAM", peak
    assert set(M.LEVELS) == {"DRAM", "L2", "L1", "shared"}


def test_docs_table_is_the_declaration():
    # docs/app-profiling.md lists every declared metric with its role, target, weight and where its name was
    # checked; the page must not drift from the declaration.
    label = {M.COUNTERS_MD: "counters.md", M.METRIC_NAMES: "metric_names.hpp", M.NCU_SECTION: "ncu section (copy)",
             M.NCU_GH100: "ncu --query-metrics (GH100)", M.UNVERIFIED: "unverified"}
    text = open(os.path.join(REPO, "docs", "app-profiling.md")).read()
    rows = re.findall(r"^\| `([a-z0-9_.]+)` \| (\w+)( \(read\))? \| ([^|]+) \| ([^|]*) \| ([^|]+) \|$", text, re.M)
    got = [(n, role, bool(read), tgt.strip(), w.strip(), src.strip()) for n, role, read, tgt, w, src in rows]
    want = [(m.name, m.role, m.read, m.target or "—", f"{m.weight:g}" if m.role in (M.FLOPS, M.TENSOR) else "",
             label[m.source]) for m in M.METRICS]
    assert got == want


def test_metric_list_by_the_gpus_query():
    # ncu --query-metrics lists base names; a declared metric whose base is not there is left out, the
    # launch attributes never; an output listing nothing (ncu failed) drops nothing.
    listing = "Device NVIDIA A100 (GA100)\nMetric Name   Metric Description\n" + "\n".join(
        f"{m.name.split('.')[0]}   # of something" for m in M.METRICS
        if m.role != M.LAUNCH and "gmma" not in m.name)
    kept, absent = M.split_available(listing)
    assert absent and all("gmma" in n for n in absent)
    assert set(kept) | set(absent) == {m.name for m in M.METRICS} and M.DEVICE_NAME in kept
    assert M.split_available("==ERROR== no device\n") == ([m.name for m in M.METRICS], [])

