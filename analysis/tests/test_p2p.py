"""Peer-to-peer analysis (sections/p2p.py) on synthetic result entries named and labelled as transfer_p2p.cu
writes them: every ordered pair per engine, form and direction; a weak pair flagged and no other; a
one-GPU result set yields no section; the report shows P2P once, in its own section."""
import json
import os
import re

import pytest

from gpuprobe_analysis import results
from gpuprobe_analysis.sections import p2p
from gpuprobe_analysis.report import SECTIONS, build_report
import synth


def load(tmp_path, dev, families=("transfer.p2p",), noise=0.01, seed=5, name="r.json"):
    doc = synth.synth_results(dev, noise=noise, seed=seed, families=list(families))
    return results.load([synth.write(str(tmp_path / name), doc)])


def test_every_ordered_pair_of_every_engine_form_and_direction(tmp_path):
    dev = synth.Device(gpus=3)
    an = p2p.analyze(load(tmp_path, dev))
    assert an.devices == [0, 1, 2]
    keys = [(m.key["engine"], m.key["form"], m.key["direction"]) for m in an.bandwidth]
    assert keys == [(e, f, d) for e in ("ce", "sm") for f in ("write", "read") for d in ("uni", "bidir")]
    pairs = {(s, d) for s in range(3) for d in range(3) if s != d}
    for m in an.bandwidth:
        assert set(m.cells) == pairs, m.name
        want = dev.p2p_gbps[(m.key["engine"], m.key["direction"])]
        assert all(c.value == pytest.approx(want, rel=0.05) for c in m.cells.values()), m.name
        assert m.weak == [], m.name  # a uniform fabric: nothing flagged
    assert [m.key["measure"] for m in an.latency] == ["chase", "memcpy"]
    chase = an.latency[0]
    assert set(chase.cells) == pairs
    assert all(c.value == pytest.approx(dev.p2p_chase_ns, rel=0.05) for c in chase.cells.values())
    assert all(c.cycles == pytest.approx(dev.p2p_chase_ns * dev.clock_mhz / 1e3, rel=0.01) for c in chase.cells.values())
    json.dumps(p2p.to_json(an))  # the device profile holds it


def test_a_weak_pair_is_flagged_in_every_matrix_it_is_in_and_no_other_pair(tmp_path):
    dev = synth.Device(gpus=4, p2p_slow_pairs={(1, 2): 0.7})
    an = p2p.analyze(load(tmp_path, dev))
    for m in an.bandwidth:
        flagged = {(c.src, c.dst) for c in m.weak}
        # Both ways, the pair's link carries a copy in either order of the pair.
        assert flagged == ({(1, 2)} if m.key["direction"] == "uni" else {(1, 2), (2, 1)}), m.name
        assert m.best.value == pytest.approx(dev.p2p_gbps[(m.key["engine"], m.key["direction"])], rel=0.05)
        for c in m.weak:
            assert m.fraction_of_best(c) == pytest.approx(0.7, abs=0.05)
    assert len(an.weak) == 4 * 1 + 4 * 2


def test_the_threshold_is_ninety_percent_of_the_best_pair():
    cells = {(0, 1): p2p.Cell(0, 1, 100.0, 0.01, ["a"]), (1, 0): p2p.Cell(1, 0, 91.0, 0.01, ["b"]),
             (0, 2): p2p.Cell(0, 2, 89.0, 0.01, ["c"]), (2, 0): p2p.Cell(2, 0, 40.0, 0.01, ["d"])}
    best, weak = p2p.weak_pairs(cells)
    assert (best.src, best.dst) == (0, 1)
    assert [(c.src, c.dst) for c in weak] == [(2, 0), (0, 2)]  # weakest first; 91 % is not weak
    assert p2p.weak_pairs({}) == (None, [])


def test_entries_without_a_form_still_make_matrices(tmp_path):
    """Files written before the form axis (engine and direction only) group without it."""
    doc = synth.synth_results(synth.Device(gpus=2), noise=0.0, families=["transfer.p2p"])
    for e in doc["benchmarks"]:
        e["name"] = re.sub(r"/form:\w+", "", e["name"])
        e["label"] = re.sub(r";form=\w+", "", e["label"])
    doc["benchmarks"] = [e for e in doc["benchmarks"] if e["name"].startswith("transfer.p2p/")]
    seen, unique = set(), []
    for e in doc["benchmarks"]:
        if e["name"] not in seen:
            seen.add(e["name"])
            unique.append(e)
    doc["benchmarks"] = unique
    an = p2p.analyze(results.load([synth.write(str(tmp_path / "old.json"), doc)]))
    assert [(m.key["engine"], m.key["form"], m.key["direction"]) for m in an.bandwidth] == [
        ("ce", None, "uni"), ("ce", None, "bidir"), ("sm", None, "uni"), ("sm", None, "bidir")]


def test_one_gpu_results_yield_no_peer_to_peer_section(tmp_path):
    rs = load(tmp_path, synth.Device(gpus=1), families=("transfer.host", "transfer.p2p"))
    assert not [e for e in rs.entries if e.family.startswith("transfer.p2p")]
    assert p2p.analyze(rs) is None
    out = build_report(rs, str(tmp_path / "rep"))
    html = open(out["html"], encoding="utf-8").read()
    md = open(out["markdown"], encoding="utf-8").read()
    assert f'id="{p2p.SECTION.id}"' not in html and p2p.SECTION.title not in html and p2p.SECTION.title not in md
    assert "p2p" not in json.load(open(out["profile"]))
    for sid, _ in SECTIONS:  # the usual sections are all there
        assert f'<h2 id="{sid}">' in html


def _section(md: str, title: str) -> str:
    start = md.index(f"\n## {title}\n")
    end = md.find("\n## ", start + 1)
    return md[start:end if end >= 0 else None]


def test_report_has_the_section_with_heatmaps_the_weak_pair_and_no_raw_rows(tmp_path):
    dev = synth.Device(gpus=2, p2p_slow_pairs={(0, 1): 0.75})
    rs = load(tmp_path, dev, families=("transfer.host", "transfer.p2p", "exec.launch"))
    out = build_report(rs, str(tmp_path / "rep"))
    html = open(out["html"], encoding="utf-8").read()
    md = open(out["markdown"], encoding="utf-8").read()
    sid, title = p2p.SECTION.id, p2p.SECTION.title
    assert f'<h2 id="{sid}">' in html
    # In the contents, right after the host transfers.
    nav = re.search(r'<nav class="toc">(.*?)</nav>', html).group(1)
    ids = re.findall(r'href="#([\w-]+)"', nav)
    assert ids[ids.index("transfers") + 1] == sid
    figs = set(os.listdir(tmp_path / "rep" / "figures"))
    assert {"p2p_bandwidth_uni.png", "p2p_bandwidth_bidir.png", "p2p_latency.png"} <= figs
    for fid in ("p2p_bandwidth_uni", "p2p_bandwidth_bidir", "p2p_latency"):
        assert f'<figure id="fig-{fid}">' in html and f'id="prov-{fid}"' in html
    section = _section(md, title)
    # The weak pair, listed once per one-way matrix. Both ways, the two cells of a 2-GPU matrix carry
    # the same slow link: neither is below the best of its matrix, and none is flagged.
    listed = [line for line in section.split("Pairs below", 1)[1].splitlines() if line.startswith("- GPU ")]
    assert len(listed) == 4
    assert all(line.startswith("- GPU 0 → GPU 1:") and "one way" in line and "of the best" in line for line in listed)
    profile = json.load(open(out["profile"]))["p2p"]
    uni_weak = {(c["src"], c["dst"]) for m in profile["bandwidth"] if m["key"]["direction"] == "uni" for c in m["weak"]}
    assert uni_weak == {(0, 1)}
    # Shown once: not as raw rows under "Other probe families" nor in the host-transfer section.
    assert "transfer.p2p" not in _section(md, "Other probe families")
    assert "transfer.p2p" not in _section(md, "Host-device transfers (α-β model)")
    assert "peer-to-peer" in _section(md, "Summary")
