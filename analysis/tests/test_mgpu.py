"""Multi-GPU section (sections/mgpu.py): the bound of each entry (largest GPU share at the read ceiling of its level
+ the reduction's time), % of bound, scaling efficiency, the SYTRD sequence, which reduction model is used,
and the report section, on synthetic entries with known answers."""
import json
import os

import pytest

import synth
from gpuprobe_analysis import results
from gpuprobe_analysis.sections import mgpu
from gpuprobe_analysis.report import build_report

DRAM, L2 = 2000.0, 8000.0  # GB/s, the ceilings the tests pass in
PROFILE = {"bandwidth": {"ceilings": {"DRAM": {"gbps": DRAM, "how": "test DRAM"}, "L2": {"gbps": L2, "how": "test L2"}}}}


def call(b, family, gpus, n, seconds, local_max, reduction="p2p", op="allreduce", red_bytes=0.0, l2="flushed",
         uplo="lower", trans=None, extra=None):
    params = {"gpus": str(gpus), "precision": "d"}
    tags = {"precision": "d", "reduction": reduction if gpus > 1 else "none", "l2": l2,
            "reduction_op": op if gpus > 1 else "none"}
    if trans:
        params["trans"] = tags["trans"] = trans
    else:
        params["uplo"] = tags["uplo"] = uplo
    params["reduction"] = tags["reduction"]
    params["n"] = str(n)
    params.update({k: str(v) for k, v in (extra or {}).items() if k == "size"})
    counters = {"gpus": gpus, "n": n, "element_bytes": 8, "local_min_bytes_max": local_max,
                "flops_per_sample": 2.0 * n * n, "bytes_per_sample": gpus * local_max,
                "reduction_bytes": red_bytes, **{k: v for k, v in (extra or {}).items()}}
    return b.add(family, params, "GB/s", "synthetic multi-GPU call", 1000.0, counters, tags, seconds=seconds)


def load(tmp_path, entries_fn, p2p=True, families=None):
    dev = synth.Device()
    doc = synth.synth_results(dev, noise=0.0, seed=1, families=families or [])
    b = synth.Builder(dev, 0.0, 1)
    if p2p:
        b.add("transfer.p2p_latency", {"src": "0", "dst": "1"}, "ns", "4-byte copy", 10000.0)  # alpha 10 us
        # The model takes the SM engine reading from the peer (the P2P reduction's way), not the fastest form.
        b.add("transfer.p2p", {"src": "0", "dst": "1", "engine": "sm", "form": "write", "direction": "uni"}, "GB/s",
              "256 MiB", 100.0, tags={"engine": "sm", "form": "write", "direction": "uni"})
        b.add("transfer.p2p", {"src": "0", "dst": "1", "engine": "sm", "form": "read", "direction": "uni"}, "GB/s",
              "256 MiB", 80.0, tags={"engine": "sm", "form": "read", "direction": "uni"})
        b.add("transfer.p2p", {"src": "0", "dst": "1", "engine": "ce", "direction": "uni"}, "GB/s", "256 MiB", 150.0,
              tags={"engine": "ce", "direction": "uni"})
    entries_fn(b)
    doc["benchmarks"] += b.entries
    return results.load([synth.write(str(tmp_path / "r.json"), doc)])


def by_gpus(rows):
    return {(r["kernel"], r["gpus"]): r for r in rows}


def test_bound_pct_and_scaling_with_the_p2p_model(tmp_path):
    rs = load(tmp_path, lambda b: (call(b, "kernels.symv_mgpu", 1, 8192, 60e-6, 100e6),
                                   call(b, "kernels.symv_mgpu", 2, 8192, 40e-6, 50e6, red_bytes=65536.0)))
    res = mgpu.analyze(rs, PROFILE)
    rows = by_gpus(res["calls"])
    one, two = rows[("symv", 1)], rows[("symv", 2)]
    assert one["bound_s"] == pytest.approx(100e6 / (DRAM * 1e9))  # 50 us, no reduction on one GPU
    assert one["reduction_time_s"] == 0.0
    assert one["pct_of_bound"] == pytest.approx(100 * 50 / 60)
    # Two GPUs: 25 us local + alpha 10 us + (G - 1) 65536 B / 80 GB/s (the SM engine's read rate).
    red = 10e-6 + 65536 / 80e9
    assert two["reduction_time_s"] == pytest.approx(red)
    assert two["bound_s"] == pytest.approx(25e-6 + red)
    assert two["pct_of_bound"] == pytest.approx(100 * (25e-6 + red) / 40e-6)
    assert two["scaling_efficiency"] == pytest.approx(60 / (2 * 40))
    assert one["scaling_efficiency"] == pytest.approx(1.0)
    assert "P2P" in res["reduction_model"] and "transfer.p2p" in res["reduction_model"]


def test_collective_fits_are_used_when_given(tmp_path):
    rs = load(tmp_path, lambda b: call(b, "kernels.gemv_mgpu", 2, 8192, 40e-6, 50e6, op="allgather", red_bytes=65536.0,
                                       trans="t"))
    seen = []

    def reduction_time(op, gpus, nbytes):
        seen.append((op, gpus, nbytes))
        return 3e-6

    res = mgpu.analyze(rs, PROFILE, reduction_time)
    row = res["calls"][0]
    assert seen == [("allgather", 2, 65536.0)]
    assert row["reduction_time_s"] == pytest.approx(3e-6)
    assert row["bound_s"] == pytest.approx(25e-6 + 3e-6)
    assert "collectives" in res["reduction_model"]


def test_p2p_allgather_moves_the_peers_share(tmp_path):
    rs = load(tmp_path, lambda b: call(b, "kernels.gemv_mgpu", 4, 8192, 40e-6, 50e6, op="allgather", red_bytes=1e6,
                                       trans="t"))
    row = mgpu.analyze(rs, PROFILE)["calls"][0]
    assert row["reduction_time_s"] == pytest.approx(10e-6 + 0.75 * 1e6 / 80e9)


def test_without_any_reduction_model_the_bound_is_the_local_bytes(tmp_path):
    rs = load(tmp_path, lambda b: call(b, "kernels.symv_mgpu", 2, 8192, 40e-6, 50e6, red_bytes=65536.0), p2p=False)
    res = mgpu.analyze(rs, PROFILE)
    assert res["calls"][0]["bound_s"] == pytest.approx(25e-6)
    assert res["reduction_model"].startswith("none")
    assert res["calls"][0]["reduction_time_s"] == 0.0


def test_l2_resident_entries_use_the_l2_ceiling(tmp_path):
    rs = load(tmp_path, lambda b: call(b, "kernels.symv_mgpu", 2, 4096, 10e-6, 16e6, red_bytes=32768.0, l2="resident"))
    row = mgpu.analyze(rs, PROFILE)["calls"][0]
    assert row["level"] == "L2"
    assert row["local_time_s"] == pytest.approx(16e6 / (L2 * 1e9))


def test_theoretical_dram_when_nothing_was_measured(tmp_path):
    rs = load(tmp_path, lambda b: call(b, "kernels.symv_mgpu", 1, 8192, 60e-6, 100e6))
    res = mgpu.analyze(rs, None)  # no profile, no memory.bandwidth entries: the context's theoretical rate
    assert res["ceilings"]["DRAM"]["measured"] is False
    assert res["calls"][0]["bound_s"] == pytest.approx(100e6 / (synth.Device().theoretical_dram_gbps * 1e9))
    assert any("theoretical" in n for n in res["notes"])


def test_sytrd_sequence_bound_sums_its_calls(tmp_path):
    def entries(b):
        for gpus, total in ((1, 2.0), (2, 1.25)):
            call(b, "kernels.symv_mgpu_sytrd", gpus, 101, total, 0.0,
                 extra={"calls": 100, "size_first": 100, "size_last": 1, "seq_local_min_bytes_max_sum_dram": 3e9 / gpus,
                        "seq_local_min_bytes_max_sum_l2": 8e8, "seq_local_min_bytes_max_sum": 3e9 / gpus + 8e8})

    rs = load(tmp_path, entries)
    res = mgpu.analyze(rs, PROFILE, lambda op, gpus, nbytes: 1e-6 + nbytes / 1e11)
    rows = {r["gpus"]: r for r in res["sytrd"]}
    assert rows[1]["bound_s"] == pytest.approx(3e9 / (DRAM * 1e9) + 8e8 / (L2 * 1e9))
    red = sum(1e-6 + 8 * s / 1e11 for s in range(1, 101))  # sizes 100 down to 1, doubles
    assert rows[2]["reduction_time_s"] == pytest.approx(red)
    assert rows[2]["bound_s"] == pytest.approx(1.5e9 / (DRAM * 1e9) + 8e8 / (L2 * 1e9) + red)
    assert rows[2]["pct_of_bound"] == pytest.approx(100 * rows[2]["bound_s"] / 1.25)
    assert rows[2]["scaling_efficiency"] == pytest.approx(2.0 / (2 * 1.25))
    assert rows[2]["calls"] == 100


def test_trailing_rows_are_sorted_by_size(tmp_path):
    def entries(b):
        for size in (4096, 1, 64):
            call(b, "kernels.symv_mgpu_trailing", 2, 16384, 1e-5 + size * 1e-9, size * 1e3, red_bytes=8.0 * size,
                 extra={"size": size, "offset": 16384 - size})

    res = mgpu.analyze(load(tmp_path, entries), PROFILE)
    assert [r["size"] for r in res["trailing"]] == [1, 64, 4096]
    assert all(r["bound_s"] > 0 for r in res["trailing"])


def test_report_has_the_multi_gpu_section(tmp_path):
    def entries(b):
        call(b, "kernels.symv_mgpu", 1, 8192, 60e-6, 100e6)
        call(b, "kernels.symv_mgpu", 2, 8192, 40e-6, 50e6, red_bytes=65536.0)

    rs = load(tmp_path, entries, families=["memory.bandwidth"])
    out = build_report(rs, str(tmp_path / "report"))
    md = open(out["markdown"], encoding="utf-8").read()
    assert "## Multi-GPU: SYMV and GEMV" in md and "One call (kernels.symv_mgpu, kernels.gemv_mgpu)" in md
    profile = json.load(open(out["profile"]))
    rows = profile["mgpu"]["calls"]
    assert {r["gpus"] for r in rows} == {1, 2}
    # The bound used the profile's measured DRAM read ceiling.
    dram = profile["bandwidth"]["ceilings"]["DRAM"]["gbps"]
    one = next(r for r in rows if r["gpus"] == 1)
    assert one["ceiling_gbps"] == pytest.approx(dram)
    assert one["bound_s"] == pytest.approx(100e6 / (dram * 1e9))
    # The summary: a sentence and a row per kernel and G > 1, linking to the section.
    summary = md[md.index("\n## Summary\n"):md.index("\n## Inputs and data quality\n")]
    assert ("- Multi-GPU kernels on 2 GPUs, the problem that scales best per kernel: symv (one call) scaling "
            "efficiency 0.750, ") in summary
    row = next(line for line in summary.splitlines() if line.startswith("| symv (one call) on 2 GPUs | "))
    two = next(r for r in rows if r["gpus"] == 2)
    assert f"| best scaling efficiency 0.750, {two['pct_of_bound']:.1f} % of its bound (n=8192 precision=d " in row
    assert row.endswith("| [multi-GPU kernels](#mgpu) |")
    html = open(out["html"], encoding="utf-8").read()
    assert '<td><a href="#mgpu">multi-GPU kernels</a></td>' in html
    # Multi-GPU entries are neither among the "other" families nor in the one-GPU roofline / optimality.
    assert "kernels.symv_mgpu" not in (profile.get("other_families") or {})
    assert not any("mgpu" in r["kernel"] for r in profile["optimality"])


def test_highlights_take_the_best_scaling_and_else_the_best_bound():
    def row(kernel, gpus, shape, eff, pct):
        return {"kernel": kernel, "gpus": gpus, "shape": shape, "reduction": "p2p", "scaling_efficiency": eff,
                "pct_of_bound": pct}
    res = {"calls": [row("symv", 1, "n=1", 1.0, 90.0), row("symv", 2, "n=1", 0.6, 80.0), row("symv", 2, "n=2", 0.9, 70.0),
                     row("gemv", 4, "n=1", None, 50.0), row("gemv", 4, "n=2", None, 60.0)],
           "sytrd": [row("symv", 4, "n=9", 0.3, 40.0)]}
    got = {(h["what"], h["gpus"]): h["row"]["shape"] for h in mgpu.highlights(res)}
    assert got == {("symv (one call)", 2): "n=2", ("gemv (one call)", 4): "n=2", ("SYTRD sequence", 4): "n=9"}
    values = {r["figure"]: r["value"] for r in mgpu.summary(res)}
    assert values["gemv (one call) on 4 GPUs"] == "best 60.0 % of its bound (n=2, reduction p2p), no one-GPU time to scale from"
    head = mgpu.headline(res)
    assert head.startswith("Multi-GPU kernels on 4 GPUs") and "symv" not in head and "SYTRD sequence scaling" in head
    assert mgpu.summary(None) == [] and mgpu.headline(None) is None


def test_one_gpu_inputs_have_no_such_section(tmp_path):
    rs = load(tmp_path, lambda b: None, p2p=False, families=["memory.bandwidth"])
    assert mgpu.analyze(rs) is None
    out = build_report(rs, str(tmp_path / "report"))
    md = open(out["markdown"], encoding="utf-8").read()
    assert "SYMV and GEMV" not in md and "mgpu" not in json.load(open(out["profile"]))


def test_collective_fits_missing_an_op_fall_back_to_p2p(tmp_path):
    def entries(b):
        call(b, "kernels.symv_mgpu", 2, 8192, 40e-6, 50e6, red_bytes=65536.0)
        call(b, "kernels.gemv_mgpu", 2, 8192, 40e-6, 50e6, op="allgather", red_bytes=65536.0, trans="t")

    def reduction_time(op, gpus, nbytes):  # as collectives.reduction_time for an op that was not measured
        if op != "allreduce":
            raise LookupError(f"no {op} over {gpus} GPUs")
        return 2e-6

    res = mgpu.analyze(load(tmp_path, entries), PROFILE, reduction_time)
    rows = {r["kernel"]: r for r in res["calls"]}
    assert rows["symv"]["reduction_time_s"] == pytest.approx(2e-6)
    assert rows["gemv"]["reduction_time_s"] == pytest.approx(10e-6 + 0.5 * 65536 / 80e9)
    assert "allgather over 2 GPUs not measured" in res["reduction_model"]
    assert "collectives 1" in res["reduction_model"] and "p2p 1" in res["reduction_model"]
