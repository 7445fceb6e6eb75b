"""scripts/dev/migrate_results.py on files a gpuprobe wrote with older records: the records are replaced
with today's (here the analysis tests' copy of gpuprobe --list-families), the entries stay as measured,
and an entry today's records refuse (a precision without a compute ceiling) keeps the file unwritten."""
import copy
import gzip
import json
import os
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOL = os.path.join(REPO, "scripts", "dev", "migrate_results.py")
RECORDS = os.path.join(REPO, "analysis", "tests", "data", "families.json")


def symv_entry(precision):
    name = f"kernels.symv/impl:ours/precision:{precision}/uplo:lower/n:4096"
    return {"name": name, "run_name": name, "run_type": "iteration", "iterations": 10, "real_time": 12.5,
            "time_unit": "us", "label": f"probe=kernels.symv;unit=GB/s;method=m;impl=ours;precision={precision};"
                                        "uplo=lower;l2=flushed",
            "n": 4096, "samples": 10, "value_median": 3000.0, "time_median_s": 1.25e-5,
            "bytes_per_sample": 3.4e7, "flops_per_sample": 3.4e7}


def old_file(tmp_path, entries):
    """A gzipped result file whose records are today's without the kernels' compute ceilings."""
    with open(RECORDS, encoding="utf-8") as fh:
        records = json.load(fh)
    old = [{k: v for k, v in r.items() if k != "compute"} for r in records]
    doc = {"context": {"gpu_name": "Test", "gpuprobe_families": json.dumps(old, separators=(",", ":"))},
           "benchmarks": entries}
    path = tmp_path / "results.json.gz"
    path.write_bytes(gzip.compress(json.dumps(doc).encode()))
    return path, doc


def migrate(path):
    return subprocess.run([sys.executable, TOOL, "--records", RECORDS, str(path)], capture_output=True, text=True,
                          timeout=60)


def read(path):
    return json.loads(gzip.decompress(path.read_bytes()))


def test_older_records_are_replaced_and_the_entries_kept(tmp_path):
    path, before = old_file(tmp_path, [symv_entry("s"), symv_entry("d")])
    run = migrate(path)
    assert run.returncode == 0, run.stderr
    after = read(path)
    records = {r["family"]: r for r in json.loads(after["context"]["gpuprobe_families"])}
    assert records["kernels.symv"]["compute"] == {"s": "FP32", "d": "FP64"}
    assert records["kernels.sgemm"]["compute"] == {"": "FP32"}
    assert after["benchmarks"] == before["benchmarks"]
    note = after["context"]["gpuprobe_families_migrated"]
    assert note.startswith("records replaced with gpuprobe --list-families"), note
    # Once more: nothing left to replace, the note stays as the first run wrote it.
    assert migrate(path).returncode == 0
    again = read(path)
    assert again["context"] == after["context"] and again["benchmarks"] == after["benchmarks"]


def test_a_precision_without_compute_ceiling_is_refused(tmp_path):
    path, _ = old_file(tmp_path, [symv_entry("s"), symv_entry("h")])
    original = path.read_bytes()
    run = migrate(path)
    assert run.returncode == 1
    assert "kernels.symv/impl:ours/precision:h/uplo:lower/n:4096: precision h has no compute ceiling" in run.stderr
    assert path.read_bytes() == original  # not written


def test_records_identical_to_todays_leave_no_note(tmp_path):
    path, _ = old_file(tmp_path, [symv_entry("s")])
    doc = read(path)
    with open(RECORDS, encoding="utf-8") as fh:
        doc["context"]["gpuprobe_families"] = json.dumps(json.load(fh), separators=(",", ":"), ensure_ascii=False)
    path.write_bytes(gzip.compress(json.dumps(copy.deepcopy(doc)).encode()))
    assert migrate(path).returncode == 0
    assert "gpuprobe_families_migrated" not in read(path)["context"]
