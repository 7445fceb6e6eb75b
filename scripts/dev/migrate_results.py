#!/usr/bin/env python3
"""One-time migration of result files written by a gpuprobe without family records.

A gpuprobe of today writes every family's record into the result context (`gpuprobe_families`,
docs/results-schema.md) and spells each axis once: the counter or tag of an axis has the name of its
entry-name key. Files written before that lack the records, and some counters carry an older spelling
(`footprint_bytes` where the name says `footprint`). This tool rewrites such a file as today's binary
would have written it:

- the records are those `gpuprobe --list-families` prints (this machine's build; no GPU needed);
- each counter in OLD_SPELLINGS is renamed to the axis or field it measures, where the entry's record
  declares the new name and not the old one (a family whose record still declares the old name keeps
  it); a clash with a counter already there under the new name, holding another value, is an error;
- every counter and tag left must then be an axis or field of the entry's record or one of the
  harness's own fields (docs/results-schema.md, "Fields every entry may carry"), and the precision of
  an entry whose record declares compute ceilings by precision must be one of them (as gpuprobe
  refuses such an entry name): anything else is reported and the file is not written.

Nothing else changes: names, labels, values and the order of entries stay as measured. The context
records how the file was migrated (`gpuprobe_families_migrated`). Gzip in, gzip out (mtime 0).

    python3 scripts/dev/migrate_results.py --gpuprobe build/gpuprobe reports/h100/*.json.gz
    python3 scripts/dev/migrate_results.py --records families.json FILE ... --check   # report only

Running it again on a migrated file (or on one a gpuprobe wrote with records) renames nothing and
replaces the records with the binary's: how files of an older binary get what records learnt since
(e.g. a kernel family's `compute` ceilings), as long as their entries fit the new records.
"""
from __future__ import annotations

import argparse
import gzip
import io
import json
import re
import subprocess
import sys
from typing import Dict, List, Tuple

# The spellings gpuprobe used before the records, and the axis or field each one is (one table, here
# only: the analysis reads today's names from the records).
OLD_SPELLINGS = {
    "footprint_bytes": "footprint",
    "stride_bytes": "stride",
    "stride_elements": "stride",
    "offset_bytes": "offset",
    "word_stride": "stride",
    "word_bytes": "word",
    "vector_bytes": "vector",
    "loads_per_thread": "loads",
    "grid_blocks": "grid",
    "size_bytes": "size",
    "src_device": "src",
    "dst_device": "dst",
}

FAMILIES_KEY = "gpuprobe_families"
MIGRATED_KEY = "gpuprobe_families_migrated"

# Google Benchmark's own fields of an entry.
GBENCH_FIELDS = {
    "name", "family_index", "per_family_instance_index", "run_name", "run_type", "repetitions",
    "repetition_index", "threads", "iterations", "real_time", "cpu_time", "time_unit", "label",
    "error_occurred", "error_message", "aggregate_name", "aggregate_unit", "big_o", "rms", "complexity_n",
}
# What the harness adds to any entry (docs/results-schema.md, "Fields every entry may carry").
HARNESS_COUNTERS = {
    "samples", "value_median", "value_min", "value_max", "value_mean", "value_cv", "time_median_s", "time_cv",
    "bytes_per_sample", "gbps", "flops_per_sample", "gflops", "ops_per_sample", "ns_per_op", "cycles_per_op",
    "sm_clock_mhz", "sm_clock_mhz_min", "sm_clock_mhz_max", "sm_clock_kernel_mhz", "warmup_samples",
    "launch_gated", "launch_gate_timeouts", "entry_wall_seconds", "b_time_median_s", "b_time_cv",
    "ratio_of_medians", "value_median_a_first", "value_median_b_first", "premise_ok", "premise_ratio",
    "premise_measured",
}
HARNESS_COUNTER_PATTERNS = (
    re.compile(r"^premise_\w+$"),                                          # the premise check's details
    re.compile(r"^\w+_(settle_passes|settle_seconds|read_gbps_first|read_gbps_settled)$"),  # settle.hpp
    re.compile(r"[.]|__"),                                                 # hardware counters (CUPTI, PAPI)
)
HARNESS_TAGS = {"probe", "unit", "method", "premise", "premise_level", "premise_rule"}
HARNESS_TAG_PATTERNS = (re.compile(r"^\w+_settled$"),)


def records_from(args) -> List[dict]:
    if args.records:
        with open(args.records, encoding="utf-8") as fh:
            return json.load(fh)
    out = subprocess.run([args.gpuprobe, "--list-families"], check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def read(path: str) -> Tuple[dict, bool]:
    with open(path, "rb") as fh:
        raw = fh.read()
    zipped = raw[:2] == b"\x1f\x8b"
    return json.loads(gzip.decompress(raw) if zipped else raw), zipped


def write(path: str, doc: dict, zipped: bool) -> None:
    text = json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    if zipped:
        buf = io.BytesIO()
        with gzip.GzipFile(filename="", mode="wb", fileobj=buf, mtime=0) as gz:
            gz.write(text.encode("utf-8"))
        data = buf.getvalue()
    else:
        data = text.encode("utf-8")
    with open(path, "wb") as fh:
        fh.write(data)


def label_tags(label: str) -> List[str]:
    """The keys of a label's `key=value` pieces (a piece without one continues the previous value)."""
    return [m.group(1) for piece in (label or "").split(";")
            if (m := re.match(r"^\s*([A-Za-z_][\w.\-]*)=", piece))]


def declared(record: dict, name: str, kind: str) -> bool:
    for item in record.get("axes", []) + record.get("fields", []):
        if item["type"] != kind:
            continue
        pattern = "^" + re.escape(item["name"]).replace(re.escape("<i>"), r"\d+") + "$"
        if re.match(pattern, name):
            return True
    return False


def migrate(doc: dict, records: Dict[str, dict]):
    """Renames old spellings in place; returns ({old->new: count}, [problems])."""
    renamed: Dict[str, int] = {}
    problems: List[str] = []
    for e in doc.get("benchmarks", []):
        name = e.get("name", "")
        family = name.split("/")[0]
        record = records.get(family)
        if record is None:
            problems.append(f"{name}: no record for family {family} in this gpuprobe")
            continue
        for old, new in OLD_SPELLINGS.items():
            if old not in e or declared(record, old, "numeric") or not declared(record, new, "numeric"):
                continue
            value = e.pop(old)
            if new in e and e[new] != value:
                problems.append(f"{name}: {old}={value} and {new}={e[new]} both present")
            e[new] = value
            renamed[f"{old}->{new}"] = renamed.get(f"{old}->{new}", 0) + 1
        for k, v in e.items():
            if k in GBENCH_FIELDS or not isinstance(v, (int, float)) or isinstance(v, bool):
                continue
            if k in HARNESS_COUNTERS or any(p.search(k) for p in HARNESS_COUNTER_PATTERNS):
                continue
            if not declared(record, k, "numeric"):
                problems.append(f"{name}: counter {k} is not declared by the record of {family}")
        for k in label_tags(e.get("label", "")):
            if k in HARNESS_TAGS or any(p.search(k) for p in HARNESS_TAG_PATTERNS):
                continue
            if not declared(record, k, "text"):
                problems.append(f"{name}: tag {k} is not declared by the record of {family}")
        compute = record.get("compute") or {}
        if compute and "" not in compute:
            precision = entry_precision(e)
            if precision not in compute:
                problems.append(f"{name}: precision {precision} has no compute ceiling in the record of {family} "
                                f"(it names {', '.join(sorted(compute))})")
    return renamed, problems


def entry_precision(e: dict):
    """The entry's `precision`: from its name (key:value), else its label's tag; None if neither."""
    for part in e.get("name", "").split("/")[1:]:
        key, _, value = part.partition(":")
        if key == "precision":
            return value
    for piece in (e.get("label") or "").split(";"):
        key, _, value = piece.partition("=")
        if key.strip() == "precision":
            return value
    return None


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="+", help="result files (.json or .json.gz), rewritten in place")
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--gpuprobe", help="the gpuprobe binary whose --list-families gives the records")
    src.add_argument("--records", help="a file holding the output of gpuprobe --list-families")
    ap.add_argument("--check", action="store_true", help="report what would change and any problem; write nothing")
    args = ap.parse_args(argv)

    records_list = records_from(args)
    records = {r["family"]: r for r in records_list}
    compact = json.dumps(records_list, separators=(",", ":"), ensure_ascii=False)
    failed = False
    for path in args.files:
        doc, zipped = read(path)
        renamed, problems = migrate(doc, records)
        if problems:
            failed = True
            shown = problems[:20] + ([f"... {len(problems) - 20} more"] if len(problems) > 20 else [])
            print(f"{path}: NOT migrated, {len(problems)} problem(s):\n  " + "\n  ".join(shown), file=sys.stderr)
            continue
        what = ", ".join(f"{k} ({n} entries)" for k, n in sorted(renamed.items())) or "no counter renamed"
        print(f"{path}: {len(doc.get('benchmarks', []))} entries; {what}")
        if args.check:
            continue
        ctx = doc.setdefault("context", {})
        had_records = bool(ctx.get(FAMILIES_KEY))
        replaced = had_records and ctx[FAMILIES_KEY] != compact
        ctx[FAMILIES_KEY] = compact
        note = ("records " + ("replaced with" if had_records else "added from") + " gpuprobe --list-families "
                "by scripts/dev/migrate_results.py; counters renamed: " + what)
        # A second run renames nothing: keep what the first one did. A file whose own binary wrote the
        # records gets the note once they are replaced: they are no longer that binary's.
        if renamed or (MIGRATED_KEY not in ctx and (not had_records or replaced)):
            ctx[MIGRATED_KEY] = note
        write(path, doc, zipped)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
