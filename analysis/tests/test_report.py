"""End to end: a synthetic results file -> profile, roofline, report (HTML + Markdown)."""
import json
import os
import re

import pytest

from gpuprobe_analysis import results
from gpuprobe_analysis.sections import device_profile
from gpuprobe_analysis.report import SECTIONS, build_report
import synth

TRUTH = synth.Device()


def within(got, want, tol):
    return got is not None and abs(got / want - 1) < tol


def test_html_has_every_section_and_no_external_resource(full_report):
    html = open(os.path.join(full_report, "report.html"), encoding="utf-8").read()
    for sid, title in SECTIONS:
        assert f'<h2 id="{sid}">' in html, sid
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", html, re.I)
    assert not re.search(r"https?://", html)
    assert "<link" not in html and "@import" not in html and "<script" not in html
    imgs = re.findall(r'<img[^>]*src="([^"]*)"', html)
    assert len(imgs) >= 12
    assert all(s.startswith("data:image/png;base64,") for s in imgs)
    # Every figure has a provenance entry naming result entries and the probe.
    for fid in re.findall(r'<figure id="fig-([\w]+)"', html):
        assert f'id="prov-{fid}"' in html


def test_markdown_and_files(full_report):
    md = open(os.path.join(full_report, "report.md"), encoding="utf-8").read()
    for _, title in SECTIONS:
        assert f"## {title}" in md
    for name in re.findall(r"\]\((figures/[^)]+)\)", md):
        assert os.path.exists(os.path.join(full_report, name)), name
    figs = os.listdir(os.path.join(full_report, "figures"))
    assert {"roofline.png", "roofline.svg", "latency_random.svg", "transfers.png"} <= set(figs)


def test_device_profile_recovers_the_synthetic_device(full_report):
    d = json.load(open(os.path.join(full_report, "device-profile.json")))
    caps = d["hierarchy"]["capacities"]
    assert within(caps["l1_bytes"], TRUTH.l1_bytes, 0.10)
    assert within(caps["l2_near_partition_bytes"], TRUTH.l2_near_bytes, 0.10)
    assert within(caps.get("l2_bytes_fit") or caps["l2_bytes"], TRUTH.l2_bytes, 0.10)  # the fit, not the driver's
    levels = {lv["name"]: lv for lv in d["hierarchy"]["levels"]}
    for name, cycles in zip(("L1", "L2 near partition", "L2", "DRAM"), TRUTH.lat_cycles):
        assert within(levels[name]["latency_cycles"], cycles, 0.05), name
        assert within(levels[name]["latency_ns"], cycles / (TRUTH.clock_mhz / 1e3), 0.05), name
    assert d["granularity"]["by_level"]["L2 near partition"] == TRUTH.sector_bytes
    assert d["tlb"]["page"]["page_bytes"] == TRUTH.page_bytes
    # A TLB level's reach is a step between two footprints: the reach lies in its bracket, within half a
    # step of the 4-per-octave sweep.
    reach = d["tlb"]["reach"]
    assert len(reach) == len(TRUTH.tlb_reach)
    for r, want in zip(reach, TRUTH.tlb_reach):
        below, above = r["bracket_bytes"]
        assert below <= want < above and within(r["reach_bytes"], want, 0.10), (r, want)
    ceil = d["bandwidth"]["ceilings"]
    for name, gbps in zip(("L1", "L2", "DRAM"), TRUTH.bw_gbps):
        assert within(ceil[name]["gbps"], gbps, 0.05), name
    fp32 = TRUTH.fp32_ops_per_clk_sm * 2 * TRUTH.sm_count * TRUTH.clock_mhz / 1e3
    assert within(d["pipelines"]["compute_ceilings"]["FP32"]["gflops"], fp32, 0.03)
    fits = {(f["key"]["direction"], f["key"]["memory"]): f for f in d["transfers"]["fits"]}
    for key, (alpha, beta) in TRUTH.transfer.items():
        f = fits[tuple(key.split("/"))]
        assert within(f["alpha_us"], alpha * 1e6, 0.10) and within(f["beta_gbps"], beta / 1e9, 0.03)
    banks = d["banks"]["by_word_bytes"][0]["banks"]["banks"]
    assert banks == TRUTH.banks


def test_optimality_limiters(full_report):
    d = json.load(open(os.path.join(full_report, "device-profile.json")))
    rows = d["optimality"]
    symv = [r for r in rows if r["kernel"] == "symv"]
    sgemm = [r for r in rows if r["kernel"] == "sgemm"]
    assert symv and all(r["limiter"] == "DRAM" for r in symv)
    assert sgemm and all(r["limiter"] == "FP32" for r in sgemm)
    ours = [r for r in symv if r["impl"] == "ours_v1"]
    assert all(r["vs_cublas"] == pytest.approx(0.85 / 0.80, rel=0.05) for r in ours)
    theo = [c for c in d["roofline"]["ceilings"] if not c["measured"]]
    assert {"DRAM", "FP32"} <= {c["name"] for c in theo}


def test_partial_file_report_says_so(tmp_path):
    doc = synth.synth_results(noise=0.01, families=["exec.latency", "baseline.memcpy_d2d", "kernels"], counters=False)
    path = str(tmp_path / "r.json")
    n = len(doc["benchmarks"])
    synth.write(path + ".partial", doc, truncate_after=n - 4)
    out = build_report(results.load([path]), str(tmp_path / "rep"))
    html = open(out["html"], encoding="utf-8").read()
    assert "incomplete run" in html and "FILE.partial" in html
    assert "minimal bytes" in html  # no counters: the fallback is stated
    for sid, _ in SECTIONS:
        assert f'<h2 id="{sid}">' in html


def test_another_gpu_works_unchanged(tmp_path):
    other = synth.Device(name="Synthetic GPU B", sm_count=48, clock_mhz=1100.0, l1_bytes=96 * 1024,
                         l2_near_bytes=5e6, l2_bytes=12e6, lat_cycles=(24.0, 150.0, 200.0, 450.0),
                         bw_caps=(96 * 1024, 12e6), bw_gbps=(20000.0, 3000.0, 900.0))
    doc = synth.synth_results(other, noise=0.005, seed=11, families=["memory.latency", "memory.bandwidth",
                                                                         "memory.l1_peak", "memory.l2_bandwidth"])
    p = synth.write(str(tmp_path / "b.json"), doc)
    d = device_profile(results.load([p]))
    caps = d["hierarchy"]["capacities"]
    assert within(caps["l1_bytes"], other.l1_bytes, 0.10)
    assert within(caps["l2_near_partition_bytes"], other.l2_near_bytes, 0.10)
    assert within(caps.get("l2_bytes_fit") or caps["l2_bytes"], other.l2_bytes, 0.10)  # the fit, not the driver's
    for name, gbps in zip(("L1", "L2", "DRAM"), other.bw_gbps):
        assert within(d["bandwidth"]["ceilings"][name]["gbps"], gbps, 0.05), name


REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# In the main job's order: the counter runs (premises, kernel counters) first, the timed results last.
H100 = [p for p in (os.path.join(REPO, "reports", "h100", f"{n}.json.gz") for n in ("premises", "counters", "results"))
        if os.path.exists(p)]


def test_report_from_committed_h100_results(h100_reference_report):
    """The committed H100 results: the report builds, has every section, loads nothing external."""
    out, folder = h100_reference_report
    html = open(out["html"], encoding="utf-8").read()
    for sid, _ in SECTIONS:
        assert f'<h2 id="{sid}">' in html, sid
    assert not re.search(r"https?://", html)
    assert all(s.startswith("data:image/png;base64,") for s in re.findall(r'<img[^>]*src="([^"]*)"', html))
    # every kernel family in the inputs gets its comparison table, with ratios to cuBLAS filled in
    cmp = json.load(open(os.path.join(folder, "device-profile.json")))["kernels_vs_cublas"]
    families = {e.family[len("kernels."):] for e in results.load(H100).entries if e.family.startswith("kernels.")}
    assert set(cmp["kernels"]) == families
    for kernel, table in cmp["kernels"].items():
        # a family with no implementation of ours (gemm_lt: cuBLASLt alone) has no default and no ratio
        default = table["default"] if table["default"] is not None else "–"
        assert f"{kernel} ({table['metric']}; default: {default})" in html
        ratios = [r for row in table["rows"] for r in row["ratios"].values() if r]
        assert bool(ratios) == (table["default"] is not None), kernel
    assert "gemm_lt" in cmp["kernels"] and cmp["kernels"]["gemm_lt"]["default"] is None


def test_tool_time_sums_entry_wall_seconds_per_family(tmp_path):
    from gpuprobe_analysis.sections.inputs import tool_time
    base = {"run_name": "x", "run_type": "iteration", "iterations": 10, "real_time": 1.0, "time_unit": "us",
            "value_median": 1.0, "value_cv": 0.01}
    ents = [dict(base, name="memory.latency/footprint:1024", label="probe=memory.latency;unit=cycles",
                 entry_wall_seconds=0.25),
            dict(base, name="memory.latency/footprint:2048", label="probe=memory.latency;unit=cycles",
                 entry_wall_seconds=0.5),
            dict(base, name="exec.barrier/blocks:1", label="probe=exec.barrier;unit=us", entry_wall_seconds=2.0),
            dict(base, name="exec.barrier/blocks:2", label="probe=exec.barrier;unit=us")]  # older file: no field
    path = tmp_path / "r.json"
    path.write_text(json.dumps({"context": {"gpuprobe_schema": "1"}, "benchmarks": ents}))
    t = tool_time(results.load([str(path)]))
    assert t == {"memory.latency": {"entries": 2, "seconds": 0.75}, "exec.barrier": {"entries": 1, "seconds": 2.0}}


def test_unsettled_operands_are_listed(tmp_path):
    """Entries whose fresh operands ended their settle "capped" or "slowed" are named in the report."""
    from gpuprobe_analysis.sections.kernels import unsettled_operands
    base = {"run_name": "x", "run_type": "iteration", "iterations": 10, "real_time": 1.0, "time_unit": "us",
            "value_median": 2900.0, "value_cv": 0.01, "a_settle_passes": 293, "a_read_gbps_first": 2626.0}
    label = "probe=kernels.gemv;unit=GB/s;impl=ours;a_settled="
    ents = [dict(base, name="kernels.gemv/impl:ours/precision:s/trans:n/m:8192/n:8192", label=label + "slowed",
                 a_read_gbps_settled=2297.0),
            dict(base, name="kernels.gemv/impl:ours/precision:d/trans:n/m:8192/n:8192", label=label + "yes",
                 a_read_gbps_settled=2990.0),
            dict(base, name="kernels.gemv/impl:ours/precision:d/trans:t/m:8192/n:8192", label=label + "capped",
                 a_read_gbps_settled=2700.0)]
    path = tmp_path / "r.json"
    path.write_text(json.dumps({"context": {"gpuprobe_schema": "1"}, "benchmarks": ents}))
    rs = results.load([str(path)])
    rows = unsettled_operands(rs)
    assert [(r["entry"].split("/")[2], r["state"]) for r in rows] == [("precision:s", "slowed"), ("precision:d", "capped")]
    assert rows[0]["first_gbps"] == 2626.0 and rows[0]["settled_gbps"] == 2297.0 and rows[0]["passes"] == 293
    out = build_report(rs, str(tmp_path / "rep"))
    html = open(out["html"], encoding="utf-8").read()
    assert "2 entries were timed on fresh operands whose settle did not end stable" in html
    assert "kernels.gemv/impl:ours/precision:s/trans:n/m:8192/n:8192" in html
    prof = json.load(open(os.path.join(str(tmp_path / "rep"), "device-profile.json")))
    assert len(prof["unsettled_operands"]) == 2


def test_unsteady_warmups_are_listed(tmp_path):
    """Entries whose warm-up until steady stopped at its cap (warmup_steady=capped) are named in the
    report and the profile; settled ones are not, and without any the profile has no such key."""
    base = {"run_name": "x", "run_type": "iteration", "iterations": 10, "real_time": 1.0, "time_unit": "us",
            "value_median": 7.5e5, "value_cv": 0.01, "warmup_samples": 100, "warmup_seconds": 1.0}
    label = "probe=kernels.gemm_lt;unit=GFLOP/s;impl=cublaslt;warmup_steady="
    ents = [dict(base, name="kernels.gemm_lt/precision:bf16/data:random/n:8192", label=label + "capped"),
            dict(base, name="kernels.gemm_lt/precision:f16/data:random/n:8192", label=label + "yes")]
    path = tmp_path / "r.json"
    path.write_text(json.dumps({"context": {"gpuprobe_schema": "1"}, "benchmarks": ents}))
    rs = results.load([str(path)])
    out = build_report(rs, str(tmp_path / "rep"))
    html = open(out["html"], encoding="utf-8").read()
    assert "1 entries stopped warming up before their rate had settled" in html
    assert "kernels.gemm_lt/precision:bf16/data:random/n:8192" in html
    prof = json.load(open(os.path.join(str(tmp_path / "rep"), "device-profile.json")))
    assert [r["entry"] for r in prof["unsteady_warmups"]] == ["kernels.gemm_lt/precision:bf16/data:random/n:8192"]
    path.write_text(json.dumps({"context": {"gpuprobe_schema": "1"}, "benchmarks": ents[1:]}))
    out = build_report(results.load([str(path)]), str(tmp_path / "rep2"))
    assert "unsteady_warmups" not in json.load(open(os.path.join(str(tmp_path / "rep2"), "device-profile.json")))


def test_launch_gate_counts_and_time_outs_are_reported(tmp_path):
    """The report says how many event-timed entries ran behind the launch gate and names those whose
    gate timed out; entries without the field are not counted."""
    from gpuprobe_analysis.sections.kernels import launch_gate_summary
    base = {"run_name": "x", "run_type": "iteration", "iterations": 10, "real_time": 1.0, "time_unit": "us",
            "value_median": 100.0, "value_cv": 0.01, "label": "probe=kernels.gemv;unit=GB/s;impl=ours"}
    ents = [dict(base, name="kernels.gemv/a:1", launch_gated=1, launch_gate_timeouts=0),
            dict(base, name="kernels.gemv/a:2", launch_gated=1, launch_gate_timeouts=3),
            dict(base, name="exec.launch_rate/a:3", launch_gated=0),
            dict(base, name="memory.latency/a:4")]
    path = tmp_path / "r.json"
    path.write_text(json.dumps({"context": {"gpuprobe_schema": "1"}, "benchmarks": ents}))
    rs = results.load([str(path)])
    g = launch_gate_summary(rs)
    assert (g["gated"], g["ungated"]) == (2, 1)
    assert g["timed_out"] == [{"entry": "kernels.gemv/a:2", "timeouts": 3}]
    out = build_report(rs, str(tmp_path / "rep"))
    html = open(out["html"], encoding="utf-8").read()
    assert "2 timed behind the launch gate" in html and "1 entries had a launch gate time out" in html
    prof = json.load(open(os.path.join(str(tmp_path / "rep"), "device-profile.json")))
    assert prof["launch_gate"]["gated"] == 2


def test_paired_entries_get_their_own_table(tmp_path):
    """paired.* entries (A and B in the same samples) are tabled with both orders' medians, and a
    spread-out one is marked noisy; they are not kernels.* points nor "other" families."""
    base = {"run_name": "x", "run_type": "iteration", "iterations": 50, "real_time": 12.0, "time_unit": "us"}
    method = "probe=paired.gemv;unit=x;method=pairs;precision=s;trans=n;l2=resident;a_impl=ours;b_impl=cublas"
    ents = [dict(base, name="paired.gemv/a:ours/b:cublas/precision:s/trans:n/m:512/n:512", label=method
                 + ";a_impl_resolved=single_pass", value_median=1.104, value_cv=0.12, value_median_a_first=1.09,
                 value_median_b_first=1.12, time_median_s=11.7e-6, b_time_median_s=12.9e-6),
            dict(base, name="paired.gemv/a:ours/b:cublas/precision:d/trans:n/m:512/n:512", label=method,
                 value_median=0.731, value_cv=0.35, value_median_a_first=0.70, value_median_b_first=0.76,
                 time_median_s=70e-6, b_time_median_s=50e-6)]
    path = tmp_path / "r.json"
    path.write_text(json.dumps({"context": {"gpuprobe_schema": "1"}, "benchmarks": ents}))
    rs = results.load([str(path)])
    out = build_report(rs, str(tmp_path / "rep"))
    prof = json.load(open(os.path.join(str(tmp_path / "rep"), "device-profile.json")))
    rows = prof["paired"]
    assert [(r["problem"], r["speedup"], r["noisy"]) for r in rows] == [
        ("precision:s/trans:n/m:512/n:512", 1.104, False), ("precision:d/trans:n/m:512/n:512", 0.731, True)]
    assert rows[0]["a_ran"] == "single_pass" and rows[0]["b"] == "cublas" and abs(rows[0]["b_us"] - 12.9) < 1e-9
    assert "paired.gemv" not in (prof.get("other_families") or {})
    html = open(out["html"], encoding="utf-8").read()
    assert "paired comparisons" in html and "noisy" in html


def test_unified_l2_has_no_near_partition_text(tmp_path):
    # One L2 level (the near "partition" is the whole L2): the table has no near partition, and the
    # report does not explain one.
    uni = synth.Device(name="Synthetic GPU U", l2_near_bytes=40e6, l2_bytes=40e6, lat_cycles=(30.0, 290.0, 290.0, 620.0))
    doc = synth.synth_results(uni, noise=0.005, seed=5, families=["memory.latency"])
    out = build_report(results.load([synth.write(str(tmp_path / "u.json"), doc)]), str(tmp_path / "rep"))
    levels = {lv["name"] for lv in out["data"]["hierarchy"]["levels"]}
    assert "L2" in levels and "L2 near partition" not in levels
    assert "near partition" not in open(out["markdown"], encoding="utf-8").read()


def test_l2_too_small_for_a_full_capacity_plateau_is_said(tmp_path):
    # An L2 8x its L1: no footprint is clear of both edges (> 8x L1 and <= L2 / 2); a note says so.
    dev = synth.Device(name="Synthetic GPU S", l1_bytes=2**20, l2_near_bytes=4 * 2**20, l2_bytes=8 * 2**20,
                       bw_caps=(2**20, 8 * 2**20))
    doc = synth.synth_results(dev, noise=0.005, seed=6, families=["memory.latency", "memory.bandwidth"])
    d = device_profile(results.load([synth.write(str(tmp_path / "s.json"), doc)]))
    assert any("no full-capacity L2 plateau" in n for n in d["notes"]), d["notes"]


def _section(doc: str, sid: str) -> str:
    start = doc.index(f'<h2 id="{sid}">')
    nxt = doc.find("<h2 ", start + 1)
    return doc[start:nxt if nxt > 0 else None]


def test_summary_opens_the_report_with_headline_and_links(full_report):
    html = open(os.path.join(full_report, "report.html"), encoding="utf-8").read()
    h2 = re.findall(r'<h2 id="(\w+)"', html)
    assert h2[0] == "summary" and h2.index("inputs") == 1
    summary = _section(html, "summary")
    # the headline: what the GPU is, the datasheet ratios, the premise verdict, each kernel's limiter
    head = summary[:summary.index("<table")]
    assert TRUTH.name in head and "% of" in head and "Premises:" in head
    assert "symv (ours," in head and "DRAM-bound" in head and "sgemm (ours_tuned," in head and "FP32-bound" in head
    # "details in" cells are anchors to sections that exist
    targets = re.findall(r'<td><a href="#([\w-]+)">', summary)
    assert targets and set(targets) <= {sid for sid, _ in SECTIONS}
    md = open(os.path.join(full_report, "report.md"), encoding="utf-8").read()
    assert "[bandwidth per level](#bandwidth)" in md


def test_summary_shows_pinned_transfers_only(full_report):
    html = open(os.path.join(full_report, "report.html"), encoding="utf-8").read()
    summary = _section(html, "summary")
    assert "H2D pinned transfer" in summary and "D2H pinned transfer" in summary
    assert "pageable" not in summary  # the synthetic device has an h2d/pageable fit: it stays in its section
    assert "pageable" in _section(html, "transfers")


def test_fraction_of_datasheet_is_shown(full_report):
    md = open(os.path.join(full_report, "report.md"), encoding="utf-8").read()
    rows = [ln for ln in md.splitlines() if (ln.startswith("| ffma |") or ln.startswith("| dfma |")) and "ops/clk/SM" in ln]
    assert len(rows) == 2 and all("| 100.0 % |" in r for r in rows), rows


def test_optimality_body_has_default_and_cublas_the_rest_folded(full_report):
    html = open(os.path.join(full_report, "report.html"), encoding="utf-8").read()
    opt = _section(html, "optimality")
    body, appendix = opt.split('<details id="optimality-all">')
    body_impls = set(re.findall(r"<tr><td>\w+</td><td>(\w+)</td>", body))
    all_impls = set(re.findall(r"<tr><td>\w+</td><td>(\w+)</td>", appendix))
    assert body_impls and body_impls < all_impls
    assert body_impls == {"ours", "ours_tuned", "cublas"} and "ours_v1" in all_impls, (body_impls, all_impls)


def test_launch_table_states_each_method_once(full_report):
    html = open(os.path.join(full_report, "report.html"), encoding="utf-8").read()
    ex = _section(html, "execution")
    assert ex.count("back-to-back launches") == 2  # one line per measure (rate, sync), not one per row
    # one row per (measure, API), one column per grid size
    assert re.search(r"<tr><td>launch_rate</td><td>graph</td><td>1,\d\d\d</td></tr>", ex)


H100X2 = [os.path.join(REPO, "reports", "h100x2", f"{n}.json.gz") for n in ("ceiling_premises", "ceilings", "multigpu")]


@pytest.mark.skipif(not all(map(os.path.exists, H100X2)), reason="no committed 2 x H100 result files under reports/h100x2/")
def test_multi_gpu_summary_of_the_committed_2_gpu_results(tmp_path):
    """The summary of a multi-GPU run names the collectives and the multi-GPU kernels besides the P2P
    figures, each row linking to its section."""
    out = build_report(results.load(H100X2), str(tmp_path / "h100x2"))
    summary = _section(open(out["html"], encoding="utf-8").read(), "summary")
    for label, target in (("peer-to-peer latency: chase", "p2p"), ("NCCL allreduce over 2 GPUs", "collectives"),
                          ("symv (one call) on 2 GPUs", "mgpu"), ("gemv (one call) on 2 GPUs", "mgpu"),
                          ("SYTRD sequence on 2 GPUs", "mgpu")):
        assert re.search(rf'<tr><td>{re.escape(label)}</td>(?:(?!<tr>).)*<td><a href="#{target}">', summary), label
    head = summary[:summary.index("<table")]
    assert "<li>Collectives (NCCL 2." in head and "allreduce over 2 GPUs " in head and " GB/s busbw at 1 GiB" in head
    assert "<li>Multi-GPU kernels on 2 GPUs, the problem that scales best per kernel: " in head
    assert "SYTRD sequence scaling efficiency 0." in head


def test_html_escapes_what_the_inputs_say_and_markdown_cells_escape_pipes(tmp_path):
    """The templates autoescape the HTML: text from the inputs (here the GPU name and a unit) never
    becomes markup; in the Markdown a "|" in a cell does not split the table."""
    name = '<script>alert("x")</script> GPU | B & C'
    ent = {"name": "future.probe/x:1", "run_name": "x", "run_type": "iteration", "iterations": 10, "real_time": 1.0,
           "time_unit": "us", "value_median": 2.0, "value_cv": 0.01, "label": "probe=future.probe;unit=<i>w</i>"}
    path = tmp_path / "r.json"
    path.write_text(json.dumps({"context": {"gpuprobe_schema": "1", "gpu_name": name}, "benchmarks": [ent]}))
    out = build_report(results.load([str(path)]), str(tmp_path / "rep"))
    html = open(out["html"], encoding="utf-8").read()
    assert "<script" not in html and "<i>w</i>" not in html
    assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; GPU | B &amp; C" in html
    assert "<td>&lt;i&gt;w&lt;/i&gt;</td>" in html
    md = open(out["markdown"], encoding="utf-8").read()
    assert f"# gpuprobe report: {name}\n" in md
    assert '| gpu_name | <script>alert("x")</script> GPU \\| B & C |' in md


def test_summary_fastest_is_of_the_same_problem():
    """Problems of equal flops (GEMV N and T at one size) are different problems: the summary's
    "fastest there" is the fastest implementation of our default's problem."""
    from gpuprobe_analysis.sections.optimality import kernel_headlines
    row = lambda impl, trans, gflops: {"kernel": "gemv", "impl": impl, "size": f"m=8 n=8 trans={trans}",
                                       "flops": 128.0, "l2": "not resident", "gflops": gflops,
                                       "pct_of_bound": 90.0}
    opt = [row("ours", "n", 10.0), row("cublas", "n", 9.0), row("ours", "t", 11.0), row("ours_colblocks", "t", 12.0)]
    (h,) = kernel_headlines(opt)
    assert h["ours"]["size"] == h["fastest"]["size"]
    assert h["fastest"]["impl"] == ("ours" if h["ours"]["size"].endswith("n") else "ours_colblocks")
