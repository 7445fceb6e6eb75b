"""gpuprobe-analyze fleet: a simulated fleet of 1,024 GPUs of two models with a dozen injected faults
(fleet_sim.py): every injected GPU flagged with its fault's reasons, no other GPU flagged, exit 3;
reference floors; inputs it must refuse."""
import json
import os
import shutil

import pytest

from gpuprobe_analysis import cli, fleet
from fleet_sim import FAULTS, Fault, fleet_preset, make_fleet

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
H100_REFERENCE = os.path.join(REPO, "reports", "h100")


@pytest.fixture(scope="module")
def big_fleet(tmp_path_factory):
    root = tmp_path_factory.mktemp("fleet")
    sim = make_fleet(str(root / "results"), gpus=1024)
    out = root / "out"
    code = cli.main(["fleet", str(root / "results"), "-o", str(out)])
    with open(out / "fleet.json") as fh:
        doc = json.load(fh)
    return sim, code, doc, out


def test_simulated_fleet_is_large_with_two_models(big_fleet):
    sim, _, doc, _ = big_fleet
    assert len(sim.files) >= 1024
    assert len({g.model for g in sim.gpus}) == 2
    assert len(sim.injected) >= 12
    # Every GPU is listed, once, with its identity.
    assert len(doc["gpus"]) == len(sim.gpus)
    assert len({g["uuid"] for g in doc["gpus"]}) == len(sim.gpus)
    for g in doc["gpus"]:
        assert set(g) >= {"host", "uuid", "serial", "pci_bus_id", "model", "flagged", "reasons"}


def test_every_injected_gpu_flagged_with_its_reasons_and_no_other(big_fleet):
    sim, code, doc, _ = big_fleet
    assert code == 3
    by_uuid = {g["uuid"]: g for g in doc["gpus"]}
    for uuid, fault in sim.injected.items():
        g = by_uuid[uuid]
        assert g["flagged"], fault.kind
        got = {(r["kind"], r["figure"]) for r in g["reasons"]}
        if fault.partial:
            assert ("incomplete", None) in got, (fault.kind, got)
            assert all(k in ("incomplete", "missing") for k, _ in got), (fault.kind, got)
        else:
            assert got == fault.expected(), (fault.kind, got)
        for r in g["reasons"]:
            if r["kind"] == "fleet":
                # A reason names the figure, the value, the model's median and the robust z.
                assert r["value"] > 0 and r["model_median"] > 0 and r["robust_z"] > 3.5
                assert r["figure"] in r["text"] and g["model"] in r["text"]
    flagged = {g["uuid"] for g in doc["gpus"] if g["flagged"]}
    assert flagged == set(sim.injected), sorted(flagged - set(sim.injected))
    assert doc["flagged"] == len(sim.injected)


def test_worst_first_and_busy_gpu_noted_not_flagged(big_fleet):
    sim, _, doc, out = big_fleet
    flags = [g["flagged"] for g in doc["gpus"]]
    assert flags == sorted(flags, reverse=True)  # every flagged GPU before every other
    busy = [g for g in sim.gpus if g.busy]
    assert busy
    for b in busy:
        g = next(x for x in doc["gpus"] if x["uuid"] == b.uuid)
        assert not g["flagged"] and any("not idle" in n for n in g["notes"])
    table = (out / "fleet.md").read_text()
    assert table.index(next(g["uuid"] for g in doc["gpus"] if g["flagged"])) < table.index(
        next(g["uuid"] for g in doc["gpus"] if not g["flagged"]))
    assert (out / "fleet.png").stat().st_size > 1000


def test_directions_come_from_the_records(big_fleet):
    _, _, doc, _ = big_fleet
    better = {f["figure"]: f["better"] for f in doc["figures"]}
    assert better["Launch rate"] == "lower" and better["DRAM latency"] == "lower"
    assert better["DRAM read"] == "higher" and better["SM clock under load"] == "higher"
    # The figures are the preset's, as declared.
    assert [f["figure"] for f in doc["figures"]] == [f["figure"] for f in fleet_preset()["figures"]]


def test_healthy_fleet_exits_0(tmp_path):
    make_fleet(str(tmp_path / "r"), gpus=64, faults=[], busy=0)
    assert cli.main(["fleet", str(tmp_path / "r"), "-o", str(tmp_path / "o")]) == 0
    doc = json.loads((tmp_path / "o" / "fleet.json").read_text())
    assert doc["flagged"] == 0 and len(doc["gpus"]) == 64


def test_reference_floors_for_a_fleet_too_small_to_compare(tmp_path):
    """Four H100s: too few for a median; the committed H100 reference's floors (0.75 x) flag the slow one."""
    sim = make_fleet(str(tmp_path / "r"), gpus=4, faults=[Fault("slow HBM", {"DRAM read": 0.6})],
                     models=("NVIDIA H100 80GB HBM3",), busy=0)
    assert cli.main(["fleet", str(tmp_path / "r"), "-o", str(tmp_path / "no-ref")]) == 0  # nothing to compare
    code = cli.main(["fleet", str(tmp_path / "r"), "-o", str(tmp_path / "o"), "--reference", H100_REFERENCE])
    assert code == 3
    doc = json.loads((tmp_path / "o" / "fleet.json").read_text())
    (bad,) = sim.injected
    for g in doc["gpus"]:
        if g["uuid"] == bad:
            assert [(r["kind"], r["figure"]) for r in g["reasons"]] == [("floor", "DRAM read")]
            r = g["reasons"][0]
            # 0.75 x the reference's DRAM read (its largest footprint's read at 16-byte vectors).
            assert r["floor"] == pytest.approx(0.75 * r["reference"]) and 3000 < r["reference"] < 3400
        else:
            assert not g["flagged"], g["reasons"]
    assert doc["criteria"]["floor_fraction"] == 0.75 and doc["criteria"]["reference"]["model"] == "NVIDIA H100 80GB HBM3"


def test_unusable_inputs_and_usage_errors(tmp_path, capsys):
    make_fleet(str(tmp_path / "r"), gpus=16, faults=[], busy=0)
    (tmp_path / "r" / "node0000" / "broken.json").write_text("")
    assert cli.main(["fleet", str(tmp_path / "r"), "-o", str(tmp_path / "o")]) == 1
    assert not (tmp_path / "o" / "fleet.json").exists()
    assert "broken.json" in capsys.readouterr().err
    assert cli.main(["fleet", str(tmp_path / "missing.json"), "-o", str(tmp_path / "o")]) == 1
    # A result file not run with the preset declares no figures.
    plain = tmp_path / "plain.json"
    doc = json.loads(open(os.path.join(tmp_path, "r", "node0001", "fleet.rank8.json")).read())
    del doc["context"]["gpuprobe_preset"]
    plain.write_text(json.dumps(doc))
    assert cli.main(["fleet", str(plain), "-o", str(tmp_path / "o")]) == 1
    for bad in (["fleet", str(tmp_path / "r")], ["fleet", "-o", "x"], ["fleet", "x", "-o", "y", "--floor-fraction", "1.5"],
                ["fleet", "x", "-o", "y", "--z", "0"], ["fleet", "x", "-o", "y", "--min-gpus", "2"]):
        with pytest.raises(SystemExit) as exc:
            cli.main(bad)
        assert exc.value.code == 2


def test_a_rerun_of_one_gpu_counts_once(tmp_path):
    sim = make_fleet(str(tmp_path / "r"), gpus=16, faults=[], busy=0)
    src = sim.files[0]
    doc = json.loads(open(src).read())
    doc["context"]["date"] = "2026-11-30T12:00:00+00:00"
    with open(os.path.join(tmp_path, "r", "rerun.json"), "w") as fh:
        json.dump(doc, fh)
    assert cli.main(["fleet", str(tmp_path / "r"), "-o", str(tmp_path / "o")]) == 0
    out = json.loads((tmp_path / "o" / "fleet.json").read_text())
    assert len(out["gpus"]) == 16
    assert next(g for g in out["gpus"] if g["uuid"] == doc["context"]["gpu_uuid"])["file"].endswith("rerun.json")


def by_value(entries, family, footprint):
    return next(e.value for e in entries if e.family == family and e.num("footprint") == footprint)


def test_figure_selection_takes_the_declared_entry():
    """The pick rules on one file: the largest footprint's DRAM read (not the larger value at a small
    working set), the smallest L2 working set, the slowest P2P neighbour."""
    import numpy as np
    from fleet_sim import Gpu, _families, gpu_document
    from gpuprobe_analysis import results
    fams, records = _families()
    g = Gpu("h", 2, "NVIDIA H100 80GB HBM3", "GPU-x", fault=Fault("one link", p2p_one_link=0.5))
    doc, _ = gpu_document(g, np.random.default_rng(1), fams, records, fleet_preset(), 8)
    rs = results.ResultSet()
    import tempfile
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as fh:
        json.dump(doc, fh)
    results.read_one(fh.name, rs)
    os.unlink(fh.name)
    specs, why = fleet.parse_preset(doc["context"]["gpuprobe_preset"])
    assert not why
    by = {s.name: s for s in specs}
    v, e = fleet.figure_value(rs.entries, by["DRAM read"], "2")
    assert "footprint:4294967296" in e.name
    # L2 read: the report's ceiling rule over the walk's working sets (ceilings.py), never the small
    # working set whose loads the L2's request coalescer merged (no premise by construction there).
    v, e = fleet.figure_value(rs.entries, by["L2 read"], "2", doc["context"])
    assert "footprint:2097152" not in e.name
    assert v == pytest.approx(by_value(rs.entries, "memory.l2_bandwidth", 16777216))
    v, e = fleet.figure_value(rs.entries, by["P2P write, slowest neighbour"], "2")
    assert "src:2/" in e.name and v < 0.6 * 370
    v, e = fleet.figure_value(rs.entries, by["DRAM latency"], "2")
    assert 300 < v < 400 and "footprint:4294967296" in e.name


def test_reference_l2_read_is_the_reports_l2_ceiling():
    """The reference's L2 read comes from the report's ceiling code (premise rules included): on the H100
    reference the report's L2 read ceiling (8,186 GB/s), not walk:blocks/loads:32/footprint:2097152
    (9,301.8 GB/s), whose premise failed (0.854x)."""
    from gpuprobe_analysis import ceilings, results
    specs, _ = fleet.parse_preset(json.dumps(fleet_preset()))
    model, _, values, ref_rs = fleet.reference_figures([H100_REFERENCE], specs)
    report_rs = results.load(cli.result_paths(H100_REFERENCE))
    (l2,) = [c for c in ceilings.level_ceilings(report_rs, None, report_rs.context_number("gpu_l2_bytes"))
             if c.level == "L2" and c.kind == "read"]
    value, source, better = values["L2 read"]
    assert value == pytest.approx(l2.gbps) and 8100 < value < 8300
    assert "footprint:2097152" not in source and better == "higher"
    failed = {f["entry"] for f in ceilings.premise_report(report_rs)["failed_entries"]}
    for name, (v, src, _) in values.items():
        assert src not in failed, (name, src)


def test_fleet_l2_read_obeys_the_premise_rule_on_an_old_declaration(tmp_path):
    """A result file of the older declaration (L2 read = the smallest working set) has no L2 read that
    qualifies: the figure is left out rather than read from a working set the coalescer inflated."""
    from gpuprobe_analysis import results
    spec = fleet.FigureSpec("L2 read", "memory.l2_bandwidth", (("kernel", "read_cg"), ("walk", "blocks"),
                            ("loads", "32")), "footprint", "min", "value_median", "GB/s", "higher", 5, "together")
    fams, records = __import__("fleet_sim")._families()
    import numpy as np
    from fleet_sim import Gpu, gpu_document
    doc, _ = gpu_document(Gpu("h", 0, "NVIDIA H100 80GB HBM3", "GPU-y"), np.random.default_rng(2), fams, records,
                          fleet_preset(), 1)
    path = tmp_path / "r.json"
    path.write_text(json.dumps(doc))
    rs = results.ResultSet()
    results.read_one(str(path), rs)
    v, e = fleet.figure_value(rs.entries, spec, "0", doc["context"])
    # The smallest working set that qualifies (8 MiB on a 50 MiB L2: 256 KiB per row of 32), not 2 MiB.
    assert e is not None and e.num("footprint") >= 8 * 2**20, e.name


def test_an_empty_rank_file_flags_that_gpu_incomplete_and_judges_the_rest(tmp_path, capsys):
    """A rank killed before it wrote anything leaves fleet.rank<k>.json.partial of 0 bytes: that GPU is
    flagged incomplete, the 64 others are judged (exit 3 for the one flagged, not 1 for all)."""
    make_fleet(str(tmp_path / "r"), gpus=64, faults=[], busy=0)
    (tmp_path / "r" / "node0007" / "fleet.rank99.json.partial").write_text("")
    code = cli.main(["fleet", str(tmp_path / "r"), "-o", str(tmp_path / "o")])
    assert code == 3, capsys.readouterr().err
    doc = json.loads((tmp_path / "o" / "fleet.json").read_text())
    assert len(doc["gpus"]) == 65 and doc["flagged"] == 1
    bad = doc["gpus"][0]
    assert bad["file"].endswith("fleet.rank99.json.partial")
    assert [(r["kind"], r["figure"]) for r in bad["reasons"]] == [("incomplete", None)]
    assert "empty" in bad["reasons"][0]["text"]
    assert not any(g["flagged"] for g in doc["gpus"][1:])
    # The unreadable file's model is unknown: no model of its own in the statistics or the notes.
    assert all(fleet.UNAVAILABLE not in f["models"] for f in doc["figures"])
    assert not any(fleet.UNAVAILABLE in n for n in doc["notes"])


def test_two_empty_rank_files_are_two_gpus(tmp_path):
    make_fleet(str(tmp_path / "r"), gpus=16, faults=[], busy=0)
    for k in (98, 99):
        (tmp_path / "r" / f"fleet.rank{k}.json.partial").write_text("")
    assert cli.main(["fleet", str(tmp_path / "r"), "-o", str(tmp_path / "o")]) == 3
    doc = json.loads((tmp_path / "o" / "fleet.json").read_text())
    assert len(doc["gpus"]) == 18 and doc["flagged"] == 2


def test_a_lower_is_better_floor_reads_as_the_reference_over_the_fraction(tmp_path):
    """Launch rate (lower is better, tolerance 20 %): its ceiling is the reference's figure / 0.6, where
    0.6 = 1 - 2 x its tolerance (below --floor-fraction 0.75); the message says so, with the right operator."""
    sim = make_fleet(str(tmp_path / "r"), gpus=4, faults=[Fault("slow launches", {"Launch rate": 2.5})],
                     models=("NVIDIA H100 80GB HBM3",), busy=0)
    assert cli.main(["fleet", str(tmp_path / "r"), "-o", str(tmp_path / "o"), "--reference", H100_REFERENCE]) == 3
    doc = json.loads((tmp_path / "o" / "fleet.json").read_text())
    (bad,) = sim.injected
    (r,) = next(g for g in doc["gpus"] if g["uuid"] == bad)["reasons"]
    assert r["kind"] == "floor" and r["figure"] == "Launch rate"
    assert r["floor"] == pytest.approx(r["reference"] / 0.6)
    assert f"the reference's {fleet._fmt(r['reference'])} / 0.6" in r["text"], r["text"]
    assert "1 - 2 x its 20 % tolerance" in r["text"], r["text"]
    assert " x the reference" not in r["text"]


@pytest.mark.parametrize("order", ["folder first", "reference first"])
def test_reference_does_not_swallow_the_folder(tmp_path, order):
    sim = make_fleet(str(tmp_path / "r"), gpus=4, faults=[Fault("slow HBM", {"DRAM read": 0.6})],
                     models=("NVIDIA H100 80GB HBM3",), busy=0)
    ref = ["--reference", H100_REFERENCE]
    argv = ["fleet", str(tmp_path / "r")] + ref if order == "folder first" else ["fleet"] + ref + [str(tmp_path / "r")]
    assert cli.main(argv + ["-o", str(tmp_path / "o")]) == 3
    doc = json.loads((tmp_path / "o" / "fleet.json").read_text())
    assert len(doc["gpus"]) == 4 and doc["criteria"]["reference"]["model"] == "NVIDIA H100 80GB HBM3"
    assert [g["uuid"] for g in doc["gpus"] if g["flagged"]] == list(sim.injected)
