"""Bad inputs to the analysis: each one ends with the exit code and the one-line message that say
what happened, and no figure, plot or ceiling is built on a value that cannot be a measurement."""
import copy
import gzip
import json
import math
import os

import pytest

from gpuprobe_analysis import results
from gpuprobe_analysis.cli import main
from gpuprobe_analysis.sections import device_profile
import synth

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CEILING_FAMILIES = ["memory.bandwidth", "memory.shared_bandwidth", "exec.throughput", "memory.stride",
                    "baseline.memcpy_d2d"]


@pytest.fixture
def doc():
    return synth.synth_results(noise=0.01, families=CEILING_FAMILIES)


def write_raw(path, doc):
    """As Google Benchmark writes NaN and infinities (bare NaN / Infinity), which json.dumps also does."""
    path.write_text(json.dumps(doc, indent=2))
    return str(path)


def ceilings(rs):
    """The bandwidth and compute ceilings, without the name of the file they came from."""
    d = device_profile(rs)
    found = ((d.get("bandwidth") or {}).get("ceilings") or {}, (d.get("pipelines") or {}).get("compute_ceilings") or {})
    return [{k: dict(v, source={s: w for s, w in v.get("source", {}).items() if s != "files"})
             for k, v in c.items()} for c in found]


def test_truncated_file_is_incomplete_everywhere(tmp_path, doc, capsys):
    path = synth.write(str(tmp_path / "results.json"), doc, truncate_after=len(doc["benchmarks"]) // 2)
    rs = results.load([path])
    assert not rs.files[0].complete and rs.files[0].incomplete_reason == "truncated JSON"
    assert main(["validate", path]) == 1
    captured = capsys.readouterr()
    assert "INCOMPLETE (truncated JSON)" in captured.out
    assert "gpuprobe-analyze: incomplete: " + path in captured.err
    # The report is written from what was recovered, and says in every output that it is incomplete.
    out = tmp_path / "rep"
    assert main(["report", path, "-o", str(out)]) == 0
    assert "| " + path + " | no (truncated JSON) |" in (out / "report.md").read_text()
    assert "no (truncated JSON)" in (out / "report.html").read_text()
    (inp,) = json.loads((out / "device-profile.json").read_text())["inputs"]
    assert inp["complete"] is False and inp["incomplete_reason"] == "truncated JSON"


def test_intact_file_is_complete(tmp_path, doc, capsys):
    """The counterpart of the test above: an intact file validates (so that test can fail)."""
    path = synth.write(str(tmp_path / "results.json"), doc)
    assert main(["validate", path]) == 0
    assert "INCOMPLETE" not in capsys.readouterr().out


def test_partial_file_fails_validate(tmp_path, doc, capsys):
    path = str(tmp_path / "results.json")
    synth.write(path + ".partial", doc)
    assert main(["validate", path]) == 1
    assert "INCOMPLETE (FILE.partial)" in capsys.readouterr().out


@pytest.mark.parametrize("bad,shown", [
    (math.nan, "value_median=NaN"),
    (math.inf, "value_median=inf"),
    (-math.inf, "value_median=-inf"),
    (-32610.0, "value_median=-32610 (negative)"),
    ("fast", 'value_median="fast" (not a number)'),
    (None, "value_median=null (not a number)"),
    ([1, 2], "value_median=[1, 2] (not a number)"),
])
def test_value_that_is_no_measurement_rejects_its_entry(tmp_path, doc, capsys, bad, shown):
    name = doc["benchmarks"][0]["name"]
    doc["benchmarks"][0]["value_median"] = bad
    path = write_raw(tmp_path / "r.json", doc)
    rs = results.load([path])
    assert name not in {e.name for e in rs.entries}
    assert len(rs.entries) == len(doc["benchmarks"]) - 1
    (issue,) = [i for i in rs.issues if name in i.message]
    assert issue.severity == "error" and issue.message == f"entry {name} rejected: {shown}"
    assert main(["validate", path]) == 1
    err = capsys.readouterr().err
    assert f"error: {path}: entry {name} rejected: {shown}\n" in err


@pytest.mark.parametrize("field", ["gbps", "real_time", "iterations", "flops_per_sample"])
def test_any_bad_field_rejects_the_entry(tmp_path, doc, field):
    doc["benchmarks"][3][field] = -1
    rs = results.load([write_raw(tmp_path / "r.json", doc)])
    assert doc["benchmarks"][3]["name"] not in {e.name for e in rs.entries}
    assert f"{field}=-1 (negative)" in "\n".join(str(i) for i in rs.issues)


def test_rejected_entries_never_reach_ceilings_or_plots(tmp_path, doc, capsys):
    """The issue's "shared -32,610 GB/s", "FP32 peak -261.1 GFLOP/s" and the traceback in the
    stride plot: bad values in the entries a ceiling or plot takes give the same ceilings as the
    file without those entries, and a report that ends normally."""
    clean = copy.deepcopy(doc)
    spoil = {"memory.shared_bandwidth": -32610.0, "exec.throughput": -261.1, "memory.stride": math.nan,
             "baseline.memcpy_d2d": math.inf}
    spoilt = []
    for fam, value in spoil.items():
        # The family's largest figure: the one a ceiling would take.
        i = max((i for i, e in enumerate(doc["benchmarks"]) if e["name"].startswith(fam + "/")),
                key=lambda i: doc["benchmarks"][i]["value_median"])
        doc["benchmarks"][i]["value_median"] = value
        spoilt.append(doc["benchmarks"][i]["name"])
    clean["benchmarks"] = [e for e in clean["benchmarks"] if e["name"] not in spoilt]
    bad_path = write_raw(tmp_path / "bad.json", doc)
    clean_path = write_raw(tmp_path / "clean.json", clean)
    bw, compute = ceilings(results.load([bad_path]))
    assert [bw, compute] == ceilings(results.load([clean_path]))
    assert bw and compute
    assert all(v["gbps"] > 0 for v in bw.values()) and all(v["gflops"] > 0 for v in compute.values())
    out = tmp_path / "rep"
    assert main(["report", bad_path, "-o", str(out)]) == 0
    err = capsys.readouterr().err
    for name in spoilt:
        assert f"entry {name} rejected: value_median=" in err
    figures = os.listdir(out / "figures")
    assert "stride_alignment.png" in figures
    html = (out / "report.html").read_text()
    assert "-32,610 GB/s" not in html and "-261.1 GFLOP/s" not in html
    assert "value_median=-32610 (negative)" in html  # listed among the problems, not as a figure


def test_bad_context_number_is_dropped_with_a_message(tmp_path, doc):
    doc["context"]["gpu_sm_clock_max_mhz"] = "nan"
    doc["context"]["gpu_sm_count"] = "-4"
    rs = results.load([write_raw(tmp_path / "r.json", doc)])
    assert "gpu_sm_clock_max_mhz" not in rs.context and "gpu_sm_count" not in rs.context
    text = "\n".join(str(i) for i in rs.issues)
    assert "context value not a positive number, ignored" in text
    assert "gpu_sm_count='-4'" in text and "gpu_sm_clock_max_mhz='nan'" in text


GOOGLE_BENCHMARK_FILE = {
    "context": {"date": "2024-01-01T00:00:00", "host_name": "h", "executable": "./bm", "num_cpus": 8,
                "mhz_per_cpu": 3000, "cpu_scaling_enabled": False, "library_build_type": "release"},
    "benchmarks": [{"name": "BM_memcpy/8", "family_index": 0, "per_family_instance_index": 0,
                    "run_name": "BM_memcpy/8", "run_type": "iteration", "repetitions": 1, "repetition_index": 0,
                    "threads": 1, "iterations": 1000, "real_time": 10.5, "cpu_time": 10.4, "time_unit": "ns",
                    "bytes_per_second": 7.6e8}],
}


@pytest.mark.parametrize("command", ["report", "profile", "validate", "compare"])
def test_google_benchmark_file_without_our_schema_exits_1(tmp_path, capsys, command):
    path = write_raw(tmp_path / "gbench.json", GOOGLE_BENCHMARK_FILE)
    out = tmp_path / "rep"
    argv = {"report": ["report", path, "-o", str(out)], "profile": ["profile", path],
            "validate": ["validate", path], "compare": ["compare", path, path]}[command]
    assert main(argv) == 1
    captured = capsys.readouterr()
    assert (f"error: {path}: not a gpuprobe result file: its context has no `gpuprobe_schema` "
            "(a plain Google Benchmark file? see docs/results-schema.md); not used") in captured.err
    assert "Device:" not in captured.out  # no "unknown GPU" profile of "(no data)"
    assert not out.exists()


def test_one_unusable_input_stops_the_report(tmp_path, doc, capsys):
    """A report from the other inputs would look complete while it left one out."""
    good = synth.write(str(tmp_path / "r.json"), doc)
    foreign = write_raw(tmp_path / "gbench.json", GOOGLE_BENCHMARK_FILE)
    out = tmp_path / "rep"
    assert main(["report", good, foreign, "-o", str(out)]) == 1
    assert f"gpuprobe-analyze: unusable input: {foreign} (see the messages above); nothing written" in \
        capsys.readouterr().err
    assert not out.exists()
    assert main(["report", good, str(tmp_path / "missing.json"), "-o", str(out)]) == 1
    assert "missing.json: file not found" in capsys.readouterr().err


@pytest.mark.parametrize("flag,message", [
    ("--sigmas=-3", "argument --sigmas: must be a finite number > 0, got '-3'"),
    ("--sigmas=0", "argument --sigmas: must be a finite number > 0, got '0'"),
    ("--sigmas=nan", "argument --sigmas: must be a finite number > 0, got 'nan'"),
    ("--sigmas=inf", "argument --sigmas: must be a finite number > 0, got 'inf'"),
    ("--sigmas=two", "argument --sigmas: not a number: 'two'"),
    ("--floor=-1", "argument --floor: must be a finite number >= 0, got '-1'"),
    ("--floor=nan", "argument --floor: must be a finite number >= 0, got 'nan'"),
])
def test_compare_rejects_bad_thresholds(tmp_path, doc, capsys, flag, message):
    path = synth.write(str(tmp_path / "r.json"), doc)
    with pytest.raises(SystemExit) as e:
        main(["compare", path, path, flag])
    assert e.value.code == 2
    assert message in capsys.readouterr().err


def test_compare_accepts_good_thresholds(tmp_path, doc):
    path = synth.write(str(tmp_path / "r.json"), doc)
    assert main(["compare", path, path, "--sigmas=0.5", "--floor=0"]) == 0


def test_gzip_files_are_read_directly(tmp_path, doc, capsys):
    plain = synth.write(str(tmp_path / "r.json"), doc)
    gz = tmp_path / "r.json.gz"
    gz.write_bytes(gzip.compress(open(plain, "rb").read()))
    rs = results.load([str(gz)])
    assert not [i for i in rs.issues if i.severity != "note"], [str(i) for i in rs.issues]
    assert [e.name for e in rs.entries] == [e["name"] for e in doc["benchmarks"]]
    assert main(["validate", str(gz)]) == 0
    # Cut short: the entries before the cut are recovered, and the file is incomplete.
    cut = tmp_path / "cut.json.gz"
    cut.write_bytes(gz.read_bytes()[: len(gz.read_bytes()) // 2])
    rs = results.load([str(cut)])
    assert rs.files[0].incomplete_reason == "truncated gzip" and 0 < len(rs.entries) < len(doc["benchmarks"])
    assert main(["validate", str(cut)]) == 1
    assert f"warning: {cut}: truncated gzip file: the compressed data ends early" in capsys.readouterr().err


@pytest.mark.skipif(not os.path.exists(os.path.join(REPO, "reports", "h200", "results.json.gz")),
                    reason="the committed H200 reference is not in this checkout")
def test_committed_h200_reference_validates(capsys):
    paths = [os.path.join(REPO, "reports", "h200", f) for f in ("results.json.gz", "counters.json.gz")]
    assert main(["validate"] + paths) == 0, capsys.readouterr().err
    assert "malformed" not in capsys.readouterr().err


def test_a_file_without_family_records_goes_on_without_what_needs_them(tmp_path, capsys):
    """The committed H100 results with their context's family records removed (a gpuprobe older than
    the records wrote such files): profile and report finish (exit 0), the one warning says what is
    left out, and nothing stops with a Python error (the bank-conflict step read `word:4` as text)."""
    with gzip.open(os.path.join(REPO, "reports", "h100", "results.json.gz"), "rt", encoding="utf-8") as fh:
        d = json.load(fh)
    assert d["context"].pop("gpuprobe_families")
    # The families whose steps ran into the TypeError, and some whose axes the records name.
    keep = ("memory.bank_conflicts", "memory.stride", "memory.latency", "memory.bandwidth", "transfer.host")
    d["benchmarks"] = [e for e in d["benchmarks"] if e["name"].split("/")[0] in keep]
    path = synth.write(str(tmp_path / "old.json"), d)
    assert main(["report", path, "-o", str(tmp_path / "rep")]) == 0
    err = capsys.readouterr().err
    assert err.count("no family records") == 1, err
    prof = json.load(open(tmp_path / "rep" / "device-profile.json", encoding="utf-8"))
    assert prof["banks"]["by_word_bytes"][0]["word_bytes"] == 4  # a number, as the name's parameter is
    assert any("family record" in n for n in prof["notes"])
