"""Shared-memory atomics (sections/shared_atomics.py) on a synthetic file with known curves: the curves
read through the family's record, and the report section the registration gives it."""
from __future__ import annotations

import json
import re

import synth
from gpuprobe_analysis import results
from gpuprobe_analysis.report import build_report
from gpuprobe_analysis.sections import AnalysisInputs, shared_atomics

# Atomics per clock per SM that the synthetic GPU completes: serialised by contention.
RATE = {"u32": 32.0, "f32": 16.0}
CONTENTIONS = (1, 2, 4, 8, 16, 32)


def _results(tmp_path, with_family=True):
    dev = synth.Device()
    doc = synth.synth_results(dev, noise=0.0, families=["exec.launch"])
    if with_family:
        b = synth.Builder(dev, noise=0.0, seed=0)
        for t, rate in RATE.items():
            for c in CONTENTIONS:
                b.add(shared_atomics.FAMILY, {"type": t, "contention": str(c)}, "atomics/clk/SM", "synthetic",
                      rate / c, counters={"contention": float(c), "atomics_per_thread": 256.0}, tags={"type": t})
        doc["benchmarks"] += b.entries
    return results.load([synth.write(str(tmp_path / "r.json"), doc)])


def test_curves_come_from_the_record_axes(tmp_path):
    rs = _results(tmp_path)
    an = shared_atomics.analyze(AnalysisInputs(rs))
    assert an.x_name == "contention" and an.unit == "atomics/clk/SM"
    assert an.title == rs.record(shared_atomics.FAMILY).title
    by_type = {c.key["type"]: c for c in an.curves}
    assert sorted(by_type) == ["f32", "u32"]
    for t, c in by_type.items():
        assert c.x == [float(x) for x in CONTENTIONS]
        assert c.y == [RATE[t] / x for x in CONTENTIONS]


def test_no_entries_no_section(tmp_path):
    rs = _results(tmp_path, with_family=False)
    assert shared_atomics.analyze(AnalysisInputs(rs)) is None
    out = build_report(rs, str(tmp_path / "rep"))
    assert shared_atomics.SECTION.title not in open(out["markdown"], encoding="utf-8").read()
    assert "shared_atomics" not in json.load(open(out["profile"]))


def test_report_section_placed_after_access_with_table_figure_and_summary(tmp_path):
    out = build_report(_results(tmp_path), str(tmp_path / "rep"))
    html = open(out["html"], encoding="utf-8").read()
    md = open(out["markdown"], encoding="utf-8").read()
    ids = re.findall(r'<h2 id="([\w-]+)">', html)
    assert ids[ids.index("access") + 1] == "shared_atomics"
    section = md[md.index("\n## Shared-memory atomics\n"):]
    section = section[:section.index("\n## ", 1)]
    assert "| type=u32 | 32 | 16 | 8 | 4 | 2 | 1 |" in section
    assert "| type=f32 | 16 | 8 | 4 | 2 | 1 | 0.5 |" in section
    assert "shared_atomics" in {f["png"].split("/")[-1].split(".")[0] for f in out["figures"]}
    # Its own section, so not also in the generic table; its summary row links here.
    assert "memory.shared_atomics" not in (json.load(open(out["profile"])).get("other_families") or {})
    assert "(#shared_atomics)" in md and "32 atomics/clk/SM at contention 1, 1 at 32" in md
    assert json.load(open(out["profile"]))["shared_atomics"]["curves"][0]["key"] == {"type": "f32"}
