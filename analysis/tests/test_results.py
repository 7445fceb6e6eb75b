"""The reader: schema checks, partial and malformed files, clear messages."""
import json
import os

import pytest

from gpuprobe_analysis import results
from gpuprobe_analysis.cli import main
import synth


def messages(rs):
    return "\n".join(str(i) for i in rs.issues)


@pytest.fixture
def small_doc():
    return synth.synth_results(noise=0.01, families=["exec.latency", "baseline.memcpy_d2d", "kernels"])


def test_complete_file_reads_clean(tmp_path, small_doc):
    p = synth.write(str(tmp_path / "r.json"), small_doc)
    rs = results.load([p])
    assert not rs.issues, messages(rs)
    assert len(rs.entries) == len(small_doc["benchmarks"])
    e = rs.by_family("kernels.symv")[0]
    assert e.unit == "GFLOP/s" and e.method == "one SYMV, events"
    assert e.tag("impl") in ("ours_v1", "cublas") and e.num("n") > 0
    assert rs.context["gpu_name"] == "Synthetic GPU A"


def test_missing_file_named(tmp_path):
    rs = results.load([str(tmp_path / "nope.json")])
    assert not rs.entries
    assert "nope.json" in messages(rs) and "not found" in messages(rs)


def test_partial_file_is_used_and_reported(tmp_path, small_doc):
    path = str(tmp_path / "r.json")
    synth.write(path + ".partial", small_doc, truncate_after=5)
    rs = results.load([path])  # FILE missing: FILE.partial is read instead
    text = messages(rs)
    assert "incomplete run" in text and "r.json.partial" in text
    assert "recovered 6 complete entries" in text
    assert len(rs.entries) == 6
    assert rs.files[0].partial


def test_truncated_json_without_partial_suffix(tmp_path, small_doc):
    path = synth.write(str(tmp_path / "r.json"), small_doc, truncate_after=2)
    rs = results.load([path])
    assert len(rs.entries) == 3
    assert "truncated JSON" in messages(rs) or "malformed JSON" in messages(rs)


@pytest.mark.parametrize("text,expect", [
    ("", "empty file"),
    ("this is not json", "missing `benchmarks` array"),
    ("[1, 2, 3]", "top level is a list"),
    ('{"benchmarks": []}', "missing `context`"),
    ('{"context": {"gpuprobe_schema": "1"}}', "missing `benchmarks` array"),
])
def test_malformed_files_get_clear_messages(tmp_path, text, expect):
    p = tmp_path / "bad.json"
    p.write_text(text)
    rs = results.load([str(p)])
    assert expect in messages(rs), messages(rs)
    assert "bad.json" in messages(rs)


def test_context_gaps_and_entry_gaps_are_named(tmp_path, small_doc):
    del small_doc["context"]["gpu_l2_bytes"]
    small_doc["context"]["gpuprobe_schema"] = "7"
    del small_doc["benchmarks"][0]["value_median"]
    small_doc["benchmarks"][1]["error_occurred"] = True
    small_doc["benchmarks"][1]["error_message"] = "cudaErrorIllegalAddress"
    small_doc["benchmarks"].append({"name": "x/y", "run_type": "aggregate", "aggregate_name": "mean"})
    small_doc["benchmarks"].append({"no_name": 1})
    p = synth.write(str(tmp_path / "r.json"), small_doc)
    rs = results.load([p])
    text = messages(rs)
    assert "gpu_l2_bytes" in text
    assert "schema version '7'" in text
    assert small_doc["benchmarks"][0]["name"] + " lacks value_median" in text
    assert "cudaErrorIllegalAddress" in text
    assert "aggregate" in text and "has no `name`" in text
    assert len(rs.entries) == len(small_doc["benchmarks"]) - 3


def test_label_with_semicolons_in_method():
    probe, unit, method, tags = results.parse_label(
        "probe=memory.latency;unit=cycles;method=one thread (unrolled); clock64 around loads;pattern=random;load=cg")
    assert (probe, unit) == ("memory.latency", "cycles")
    assert method == "one thread (unrolled); clock64 around loads"
    assert tags == {"pattern": "random", "load": "cg"}


def test_name_parsing():
    fam, params = results.parse_name("memory.latency/pattern:random/load:ca/footprint:1048576/stride:128")
    assert fam == "memory.latency"
    assert params == {"pattern": "random", "load": "ca", "footprint": "1048576", "stride": "128"}


def test_unknown_family_passes_through(tmp_path, small_doc, capsys):
    small_doc["benchmarks"].append(dict(small_doc["benchmarks"][0], name="future.probe/x:1",
                                        label="probe=future.probe;unit=widgets;method=new"))
    p = synth.write(str(tmp_path / "r.json"), small_doc)
    from gpuprobe_analysis.sections import device_profile
    assert device_profile(results.load([p]))["other_families"]["future.probe"][0]["unit"] == "widgets"


def test_cli_exit_codes(tmp_path, small_doc, capsys):
    good = synth.write(str(tmp_path / "r.json"), small_doc)
    assert main(["validate", good]) == 0
    assert main(["validate", str(tmp_path / "missing.json")]) == 1
    assert main(["report", str(tmp_path / "missing.json"), "-o", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert "missing.json: file not found" in err and "no usable entries" in err
    with pytest.raises(SystemExit) as e:
        main(["report"])
    assert e.value.code == 2


def test_merging_files_and_skipping_our_own_output(tmp_path, small_doc):
    import copy
    later = copy.deepcopy(small_doc)
    small_doc["benchmarks"][0]["dram__bytes.sum"] = 5.0  # only in the earlier file: carried over
    a = synth.write(str(tmp_path / "a.json"), small_doc)
    later["benchmarks"][0]["value_median"] = 123.0
    b = synth.write(str(tmp_path / "b.json"), later)
    prof = tmp_path / "device-profile.json"
    prof.write_text(json.dumps({"inputs": [], "hierarchy": {}, "roofline": {}}))
    rs = results.load([a, b, str(prof)])
    text = messages(rs)
    assert "appear in several files" in text and "device-profile.json" in text and "skipped" in text
    assert len(rs.entries) == len(small_doc["benchmarks"])
    (merged,) = [e for e in rs.entries if e.name == later["benchmarks"][0]["name"]]
    assert merged.value == 123.0 and merged.counters["dram__bytes.sum"] == 5.0
    assert any(i.severity == "warning" and "appear in several files" in i.message for i in rs.issues)
    # A later --counters run of the same entries (the main job's pair) is a note, not a warning.
    later["context"]["counters_backend"] = "cupti-range-profiler"
    c = synth.write(str(tmp_path / "c.json"), later)
    rs2 = results.load([a, c])
    dups = [i for i in rs2.issues if "appear in several files" in i.message]
    assert len(dups) == 1 and dups[0].severity == "note"
    # The timing run's copy is used whatever the order: a --counters run's samples are no figure of
    # the timing run (on the H100 reference the order of the same files moved the L2 ceiling by 0.15 %).
    later["benchmarks"][0]["value_median"] = 456.0
    c = synth.write(str(tmp_path / "c.json"), later)
    for order in ([a, c], [c, a]):
        (used,) = [e for e in results.load(order).entries if e.name == later["benchmarks"][0]["name"]]
        assert used.value == small_doc["benchmarks"][0]["value_median"] and used.source == a, order


def test_counters_run_merges_by_name_without_iterations(tmp_path):
    import json as _json

    from gpuprobe_analysis import results as _results
    ctx = {"gpuprobe_schema": "1", "gpu_name": "G"}
    timing = {"context": ctx, "benchmarks": [{"name": "k/n:64/iterations:10/manual_time", "run_type": "iteration",
                                               "value_median": 2.0, "value_cv": 0.01}]}
    counters = {"context": ctx, "benchmarks": [{"name": "k/n:64/iterations:5/manual_time", "run_type": "iteration",
                                                 "value_median": 2.1, "value_cv": 0.02, "dram__bytes_read.sum": 1e6}]}
    a, b = tmp_path / "a_counters.json", tmp_path / "b_timing.json"
    a.write_text(_json.dumps(counters)), b.write_text(_json.dumps(timing))
    rs = _results.load([str(a), str(b)])
    es = [e for f in rs.files for e in f.entries]
    assert len(es) == 1
    assert es[0].value == 2.0 and es[0].counters["dram__bytes_read.sum"] == 1e6


# ---------------------------------------------------------------- family records (context gpuprobe_families)

def test_entries_carry_their_family_record(tmp_path, small_doc):
    rs = results.load([synth.write(str(tmp_path / "r.json"), small_doc)])
    rec = rs.record("exec.latency")
    assert rec is not None and rec.title and rec.group == ("op",) and rec.x is None
    assert all(e.record is rs.files[0].records[e.family] for e in rs.entries)
    # The op table of the binary, one source for flops per op: the analysis guesses nothing.
    from gpuprobe_analysis import families as F
    e = rs.by_family("exec.latency")[0]
    assert F.compute_op(e, "ffma") == ("FP32", 2.0) and F.compute_op(e, "hfma2") == ("FP16 half2", 4.0)
    assert F.compute_op(e, "imad") is None and F.compute_op(e, "no_such_op") is None
    bw = rs.record("memory.bandwidth")
    assert bw.group == ("kernel", "vector", "blocks_per_sm") and bw.x == "footprint"
    assert bw.axis("footprint").unit == "bytes" and not bw.axis("blocks_per_sm").in_name
    assert rs.record("memory.bank_conflicts").better == "lower" and bw.better == "higher"


def test_a_file_without_records_is_read_with_a_warning(tmp_path):
    doc = synth.synth_results(noise=0.01, families=["memory.latency"])
    del doc["context"]["gpuprobe_families"]
    rs = results.load([synth.write(str(tmp_path / "r.json"), doc)])
    assert rs.entries and all(e.record is None for e in rs.entries)
    assert "no family records (gpuprobe_families absent)" in messages(rs)
    assert "migrate_results.py" in messages(rs)
    from gpuprobe_analysis.sections import device_profile, results_of
    assert results_of(rs)["hierarchy"].curves == [] and any("record" in n for n in device_profile(rs)["notes"])


def test_unreadable_records_and_a_family_without_one_are_named(tmp_path):
    doc = synth.synth_results(noise=0.01, families=["exec.latency"])
    doc["context"]["gpuprobe_families"] = "{not json"
    rs = results.load([synth.write(str(tmp_path / "a.json"), doc)])
    assert "gpuprobe_families unreadable" in messages(rs)
    doc = synth.synth_results(noise=0.01, families=["exec.latency"])
    doc["benchmarks"][0]["name"] = "exec.new_family/op:ffma"
    doc["benchmarks"][0]["label"] = doc["benchmarks"][0]["label"].replace("probe=exec.latency", "probe=exec.new_family")
    rs = results.load([synth.write(str(tmp_path / "b.json"), doc)])
    assert "no family record for exec.new_family" in messages(rs)


def test_parse_name_leaves_out_google_benchmarks_suffixes():
    fam, params = results.parse_name("memory.l1_peak/vector:8/iterations:10/manual_time")
    assert fam == "memory.l1_peak" and params == {"vector": "8"}
