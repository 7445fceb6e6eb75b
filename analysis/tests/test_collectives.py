"""transfer.collective: busbw factors, the α-β fit per (op, G), reduction_time and the Multi-GPU section."""
import json
import math
import os

import pytest

from gpuprobe_analysis.sections import collectives as C
from gpuprobe_analysis import results
from gpuprobe_analysis.report import build_report
import synth


def load(tmp_path, doc, name="r.json"):
    return results.load([synth.write(str(tmp_path / name), doc)])


def collective_doc(noise=0.01, seed=11, busbw_counter=True, sizes=None, dev=None):
    dev = dev or synth.Device(gpus=4)
    b = synth.Builder(dev, noise, seed)
    synth.collective_entries(b, dev, sizes=sizes, busbw_counter=busbw_counter)
    return {"context": synth.context(dev), "benchmarks": b.entries}


def test_busbw_factors_are_nccl_tests():
    for g in (1, 2, 3, 4, 8):
        assert C.busbw_factor("allreduce", g) == pytest.approx(2 * (g - 1) / g)
        assert C.busbw_factor("reducescatter", g) == pytest.approx((g - 1) / g)
        assert C.busbw_factor("allgather", g) == pytest.approx((g - 1) / g)
        assert C.busbw_factor("reduce", g) == 1.0
        assert C.busbw_factor("broadcast", g) == 1.0
    assert C.busbw_factor("all_reduce", 8) == pytest.approx(1.75)  # spellings of other tools
    assert C.busbw_factor("Reduce-Scatter", 4) == pytest.approx(0.75)
    with pytest.raises(ValueError):
        C.busbw_factor("alltoall", 2)
    with pytest.raises(ValueError):
        C.busbw_factor("allreduce", 0)


def test_fit_recovers_alpha_and_beta_within_2_percent(tmp_path):
    dev = synth.Device(gpus=4)
    fits = C.fit_collectives(load(tmp_path, collective_doc(noise=0.01, dev=dev)))
    assert set(fits.curves) == set(dev.collectives)
    for key, (alpha, beta) in dev.collectives.items():
        f = fits.curves[key].fit
        assert f is not None, key
        assert f.alpha_s == pytest.approx(alpha, rel=0.02), key
        assert f.beta_bps == pytest.approx(beta, rel=0.02), key
    assert fits.nccl_versions == ["2.30.7"]
    assert fits.nccl_env == ["NCCL_NVLS_ENABLE=0"]
    assert not fits.issues


def test_busbw_is_algbw_times_factor_recorded_or_derived(tmp_path):
    for recorded in (True, False):
        rs = load(tmp_path, collective_doc(noise=0.0, busbw_counter=recorded), name=f"b{recorded}.json")
        fits = C.fit_collectives(rs)
        for (op, g), c in fits.curves.items():
            assert c.busbw_factor == pytest.approx(synth.collective_factor(op, g))
            for p in c.points:
                assert p.busbw_gbps == pytest.approx(p.algbw_gbps * synth.collective_factor(op, g), rel=1e-9)
                assert p.algbw_gbps == pytest.approx(p.size_bytes / p.seconds / 1e9, rel=1e-9)
    # An entry whose recorded factor is not nccl-tests' is reported.
    doc = collective_doc(noise=0.0)
    for e in doc["benchmarks"]:
        if "/op:allreduce/ranks:4/" in e["name"]:
            e["busbw_factor"] = 1.0
    fits = C.fit_collectives(load(tmp_path, doc, name="bad.json"))
    assert any("allreduce over 4 GPUs" in i for i in fits.issues)


def test_peak_and_table_rows(tmp_path):
    fits = C.fit_collectives(load(tmp_path, collective_doc(noise=0.0)))
    rows = {(r["op"], r["ranks"]): r for r in C.table_rows(fits)}
    alpha, beta = synth.Device().collectives[("allreduce", 2)]
    r = rows[("allreduce", 2)]
    t = alpha + 2**30 / beta
    assert r["busbw_at_gbps"] == pytest.approx(2**30 / t / 1e9 * 1.0)  # factor 1 at G = 2
    assert r["peak_at_bytes"] == 2**30  # the bandwidth rises with the size in this model
    assert r["alpha_us"] == pytest.approx(alpha * 1e6, rel=1e-6)
    assert r["beta_gbps"] == pytest.approx(beta / 1e9, rel=1e-6)
    r4 = rows[("allreduce", 4)]
    assert r4["asymptotic_busbw_gbps"] == pytest.approx(r4["beta_gbps"] * 1.5)
    assert list(rows)[:5] == [(op, 2) for op in C.OPS]  # G, then the probe's op order


def test_reduction_time(tmp_path):
    fits = C.fit_collectives(load(tmp_path, collective_doc(noise=0.0)))
    alpha, beta = synth.Device().collectives[("allreduce", 2)]
    for n in (4.0, 1e5, 3e8):
        assert C.reduction_time(fits, "allreduce", 2, n) == pytest.approx(alpha + n / beta, rel=1e-6)
    # measured: a measured size gives its median; between sizes, a log-log interpolation (exact data:
    # within the model's curvature between two octaves).
    c = fits.curve("allreduce", 2)
    p = c.points[10]
    assert C.reduction_time(fits, "all_reduce", 2, p.size_bytes, how="measured") == pytest.approx(p.seconds)
    mid = 1.5 * p.size_bytes
    assert C.reduction_time(fits, "allreduce", 2, mid, how="measured") == pytest.approx(alpha + mid / beta, rel=0.05)
    with pytest.raises(LookupError):
        C.reduction_time(fits, "reduce", 4, 1e6)
    with pytest.raises(ValueError):
        C.reduction_time(fits, "allreduce", 2, 0)
    with pytest.raises(ValueError):
        C.reduction_time(fits, "allreduce", 2, 1e6, how="guess")


def test_too_few_sizes_give_no_fit_but_a_reason(tmp_path):
    fits = C.fit_collectives(load(tmp_path, collective_doc(noise=0.0, sizes=[2**20])))
    c = fits.curve("broadcast", 2)
    assert c.fit is None and "two distinct sizes" in c.fit_problem
    with pytest.raises(ValueError):
        C.reduction_time(fits, "broadcast", 2, 1e6)


def report_text(tmp_path, doc, name):
    out = tmp_path / name
    build_report(load(tmp_path, doc, name=name + ".json"), str(out))
    html = open(out / "report.html", encoding="utf-8").read()
    md = open(out / "report.md", encoding="utf-8").read()
    return out, html, md


def test_section_with_collective_entries(tmp_path):
    out, html, md = report_text(tmp_path, collective_doc(), "with")
    assert '<h2 id="collectives">Multi-GPU: collectives (NCCL)</h2>' in html
    assert "\n## Multi-GPU: collectives (NCCL)\n" in md
    # In the table of contents, after the host transfers (no peer-to-peer entries here).
    assert ('<a href="#transfers">Host-device transfers (α-β model)</a> · '
            '<a href="#collectives">Multi-GPU: collectives (NCCL)</a> · <a href="#roofline">') in html
    assert "(#transfers) · [Multi-GPU: collectives (NCCL)](#collectives) · [" in md
    assert "busbw at 1 GiB (GB/s)" in html and "NCCL 2.30.7" in html and "NCCL_NVLS_ENABLE=0" in html
    assert os.path.exists(out / "figures" / "collectives.png")
    assert 'id="prov-collectives"' in html
    # The family has its own section: not listed again among the other families.
    assert "<h3>transfer.collective</h3>" not in html
    assert html.index('id="transfers"') < html.index('id="collectives"') < html.index('id="roofline"')
    prof = json.load(open(out / "device-profile.json"))  # every number of the report, with provenance
    rows = {(r["op"], r["ranks"]): r for r in prof["collectives"]["fits"]}
    assert rows[("allreduce", 2)]["alpha_us"] == pytest.approx(12.0, rel=0.02)
    assert prof["collectives"]["curves"][0]["source"]["probe"] == ["transfer.collective"]
    # The summary: one sentence, and the allreduce of every group size with a link to the section.
    summary = md[md.index("\n## Summary\n"):md.index("\n## Inputs and data quality\n")]
    head = next(line for line in summary.splitlines() if line.startswith("- Collectives (NCCL 2.30.7): "))
    assert "allreduce over 4 GPUs " in head and " GB/s busbw at 1 GiB (α " in head and ", fit rms " in head
    assert "; allgather " in head and " GB/s at its largest size; over 2 GPUs " in head  # measured at G = 4 too
    assert head.endswith(" (section Multi-GPU: collectives).")
    for ranks in (2, 4):
        row = next(line for line in summary.splitlines() if line.startswith(f"| NCCL allreduce over {ranks} GPUs | "))
        assert "| busbw " in row and " GB/s at 1 GiB; α " in row and row.endswith("| [collectives](#collectives) |")
    assert "| NCCL broadcast over" not in summary  # the other ops stay in the section
    assert '<td><a href="#collectives">collectives</a></td>' in html


def test_no_section_without_collective_entries(tmp_path):
    doc = synth.synth_results(noise=0.01, seed=2, families=["transfer.host"])
    out, html, md = report_text(tmp_path, doc, "without")
    assert "collectives (NCCL)" not in html and 'id="collectives"' not in html and "collectives (NCCL)" not in md
    assert not os.path.exists(out / "figures" / "collectives.png")
    assert C.fit_collectives(load(tmp_path, doc, name="w2.json")).curves == {}
    prof = json.load(open(out / "device-profile.json"))
    assert "collectives" not in prof


def test_summary_without_allreduce_shows_every_op_and_says_why_a_fit_is_missing(tmp_path):
    fits = C.fit_collectives(load(tmp_path, collective_doc(noise=0.0, sizes=[2**20])))
    fits.curves = {k: c for k, c in fits.curves.items() if k[0] != "allreduce"}
    rows = C.summary(fits)
    assert {r["figure"] for r in rows} == ({f"NCCL {op} over 2 GPUs" for op in C.OPS[1:]}
                                           | {"NCCL allgather over 4 GPUs"})
    assert all(r["value"].endswith("; no α-β fit: alpha-beta fit needs at least two distinct sizes") for r in rows)
    assert C.headline(fits).startswith("Collectives (NCCL 2.30.7): allgather over 4 GPUs ")
    assert C.summary(None) == [] and C.headline(None) is None


def test_section_follows_peer_to_peer_when_both_are_present(tmp_path):
    doc = synth.synth_results(synth.Device(gpus=2), noise=0.01, seed=4,
                              families=["transfer.host", "transfer.p2p", "transfer.collective"])
    _, html, _ = report_text(tmp_path, doc, "both")
    assert html.index('id="transfers"') < html.index('id="p2p"') < html.index('id="collectives"') \
        < html.index('id="roofline"')
    nav = html[html.index('<nav class="toc">'):html.index("</nav>")]
    assert nav.index("#p2p") < nav.index("#collectives") < nav.index("#roofline")
