"""Reader of gpuprobe result files (Google Benchmark JSON, docs/results-schema.md).

The reader never fails on bad input: every problem becomes an `Issue` naming the file and what is
missing, and whatever can be used is kept. A `FILE.partial` (a run that did not finish) and a
truncated file are read up to their last complete entry and marked incomplete. What is not
gpuprobe's is rejected whole: a file without `gpuprobe_schema` in its context (e.g. a plain Google
Benchmark file), and an entry with a value that cannot be a measurement (NaN, infinite, negative,
not a number), so that no figure, plot or ceiling is ever built on one. `FILE.gz` is read as gzip.

Each entry carries its family's record from its file's context (records.py): the axes, units, title
and flops per op the binary declared. A file without records (written before they existed) is read,
with a warning; what needs a family's axes is then left out.
"""
from __future__ import annotations

import json
import math
import os
import re
import zlib
from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Optional

from . import records as R
from .records import FamilyRecord

SCHEMA_VERSION = "1"

# Context keys the schema promises; a missing one is reported (once per file), never fatal.
EXPECTED_CONTEXT = (
    "gpuprobe_schema", "gpuprobe_version", "gpu_name", "gpu_compute_capability", "gpu_sm_count",
    "gpu_sm_clock_max_mhz", "gpu_mem_clock_max_mhz", "gpu_bus_width_bits", "gpu_theoretical_dram_gbps",
    "gpu_l2_bytes", "gpu_smem_per_sm_bytes", "cuda_driver_version", "cuda_runtime_version",
)

# Google Benchmark's own per-entry fields: everything else numeric in an entry is a counter.
GBENCH_FIELDS = {
    "name", "family_index", "per_family_instance_index", "run_name", "run_type", "repetitions",
    "repetition_index", "threads", "iterations", "real_time", "cpu_time", "time_unit", "label",
    "error_occurred", "error_message", "aggregate_name", "aggregate_unit", "big_o", "rms",
    "complexity_n",
}


@dataclass
class Issue:
    severity: str  # "error" (a file or entry could not be used), "warning" (used, but incomplete) or
    # "note" (nothing wrong: how the inputs were combined)
    source: str
    message: str

    def __str__(self) -> str:
        return f"{self.severity}: {self.source}: {self.message}"


@dataclass
class Entry:
    """One measured point: the parsed name, label and counters of a result entry."""

    name: str
    family: str
    params: Dict[str, str]  # from the name: family/key:value/...
    tags: Dict[str, str]  # from the label, besides probe/unit/method
    unit: str
    method: str
    counters: Dict[str, float]
    source: str  # file it came from
    real_time: float = math.nan
    time_unit: str = ""
    record: Optional[FamilyRecord] = None  # its family's record, from its file's context

    def tag(self, key: str, default: Optional[str] = None) -> Optional[str]:
        """A textual parameter: the label's tag, else the name's parameter."""
        if key in self.tags:
            return self.tags[key]
        return self.params.get(key, default)

    def num(self, *keys: str, default: float = math.nan) -> float:
        """The first of `keys` found as a counter, else as a numeric name parameter."""
        for k in keys:
            v = self.counters.get(k)
            if v is not None and math.isfinite(v):
                return v
        for k in keys:
            p = self.params.get(k)
            if p is not None:
                try:
                    return float(p)
                except ValueError:
                    pass
        return default

    @property
    def value(self) -> float:
        return self.counters.get("value_median", math.nan)

    @property
    def cv(self) -> float:
        return self.counters.get("value_cv", math.nan)

    @property
    def premise_level(self) -> Optional[str]:
        """The level the probe declares must serve what it counts (L1, L2, DRAM, shared, compute), or
        None for an entry that claims no ceiling."""
        return self.tags.get("premise_level")

    @property
    def premise(self) -> Optional[str]:
        """'ok' / 'failed' / 'unverified' for an entry that declares a premise (None otherwise).
        'unverified': no counter run checked it (counters refused, or not asked for)."""
        if self.premise_level is None:
            return None
        ok = self.counters.get("premise_ok")
        if ok is None or not math.isfinite(ok):
            return "unverified"
        return "ok" if ok == 1 else "failed"

    @property
    def premise_why(self) -> str:
        """The check's own sentence (label tag premise), e.g. 'failed: L2 bytes 0.392x the counted ...'."""
        return self.tags.get("premise", "")


@dataclass
class ResultFile:
    path: str
    context: Dict[str, str]
    partial: bool  # a FILE.partial: the run that wrote it did not finish
    entries: List[Entry]
    damaged: str = ""  # why the text ends early or breaks ("truncated JSON", ...); "" when intact
    records: Dict[str, FamilyRecord] = field(default_factory=dict)  # by family, from the context
    # Entries read from the file; `entries` keeps those not superseded by a later file's copy (load()).
    entries_read: int = 0
    rejected: List[str] = field(default_factory=list)  # "NAME: why" of each entry with a value that is no measurement

    @property
    def complete(self) -> bool:
        return not self.partial and not self.damaged

    @property
    def incomplete_reason(self) -> str:
        return "FILE.partial" if self.partial else self.damaged


@dataclass
class ResultSet:
    files: List[ResultFile] = field(default_factory=list)
    issues: List[Issue] = field(default_factory=list)
    # Inputs that gave nothing usable (not found, unreadable, not gpuprobe's, no usable entry): the
    # CLI refuses to present a result built from the remaining inputs as if it covered these.
    rejected: List[str] = field(default_factory=list)

    @property
    def entries(self) -> List[Entry]:
        return [e for f in self.files for e in f.entries]

    @property
    def context(self) -> Dict[str, str]:
        """Context of the first timing run's file (a file without counters_backend; the first file if
        all are counters runs), completed by the other files' keys (files are one device): the same
        whatever order the files came in."""
        timing = [f for f in self.files if not f.context.get("counters_backend")]
        first = (timing or self.files)[:1]
        merged: Dict[str, str] = {}
        for f in reversed([f for f in self.files if f not in first] + first):
            merged.update(f.context)
        return merged

    def families(self) -> List[str]:
        return sorted({e.family for e in self.entries})

    def by_family(self, family: str) -> List[Entry]:
        return [e for e in self.entries if e.family == family]

    def record(self, family: str) -> Optional[FamilyRecord]:
        """The family's record from the first file that has one (files of one binary agree)."""
        return next((f.records[family] for f in self.files if family in f.records), None)

    def context_number(self, key: str) -> float:
        return to_number(self.context.get(key))

    def warn(self, source: str, message: str) -> None:
        self.issues.append(Issue("warning", source, message))

    def note(self, source: str, message: str) -> None:
        self.issues.append(Issue("note", source, message))

    def error(self, source: str, message: str) -> None:
        self.issues.append(Issue("error", source, message))


def finite(v) -> Optional[float]:
    """v as a float if it is a finite number, else None."""
    try:
        v = float(v)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def to_number(text) -> float:
    if text is None:
        return math.nan
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        return float(text)
    try:
        return float(str(text).strip())
    except ValueError:
        return math.nan


_PARAM = re.compile(r"^([^:/]+):(.*)$")


# What Google Benchmark appends to an entry's name (how it was run, not what it measures).
_RUNNER_KEYS = {"iterations", "repeats", "threads", "min_time", "min_warmup_time"}
_RUNNER_FLAGS = {"manual_time", "real_time", "process_time"}


def parse_name(name: str):
    """`family/key:value/...` -> (family, {key: value}). Parts without a colon are kept by position;
    Google Benchmark's own suffixes (iterations:N, manual_time ...) are left out."""
    parts = name.split("/")
    family = parts[0]
    params: Dict[str, str] = {}
    for i, part in enumerate(parts[1:]):
        m = _PARAM.match(part)
        if m:
            if m.group(1) not in _RUNNER_KEYS:
                params[m.group(1)] = m.group(2)
        elif part and part not in _RUNNER_FLAGS:
            params[f"arg{i}"] = part
    return family, params


def parse_label(label: str):
    """`probe=F;unit=U;method=M;k=v...` -> (probe, unit, method, tags). A piece that does not start
    with `key=` continues the previous value (methods may contain '; ')."""
    fields: Dict[str, str] = {}
    last = None
    for piece in label.split(";") if label else []:
        m = re.match(r"^\s*([A-Za-z_][\w.\-]*)=(.*)$", piece)
        if m:
            last = m.group(1)
            fields[last] = m.group(2)
        elif last is not None:
            fields[last] += ";" + piece
    probe = fields.pop("probe", "")
    unit = fields.pop("unit", "")
    method = fields.pop("method", "")
    return probe, unit, method, fields


def _recover_json(text: str):
    """Best-effort read of a truncated or broken Google Benchmark JSON file: the context object and
    every complete entry of the benchmarks array before the break."""
    decoder = json.JSONDecoder()
    context = None
    entries = []
    m = re.search(r'"context"\s*:\s*', text)
    if m:
        try:
            context, _ = decoder.raw_decode(text, m.end())
        except json.JSONDecodeError:
            context = None
    m = re.search(r'"benchmarks"\s*:\s*\[', text)
    if m:
        pos = m.end()
        while True:
            while pos < len(text) and text[pos] in " \t\r\n,":
                pos += 1
            if pos >= len(text) or text[pos] == "]":
                break
            try:
                obj, pos = decoder.raw_decode(text, pos)
            except json.JSONDecodeError:
                break
            entries.append(obj)
    return context, entries, m is not None


def _resolve(path: str, rs: ResultSet):
    """The file to read for `path`, and whether it is a partial run."""
    if path.endswith(".partial"):
        if os.path.exists(path):
            return path, True
    elif os.path.exists(path):
        if os.path.exists(path + ".partial"):
            rs.warn(path, f"{path}.partial also exists (a later run did not finish); using the complete {path}")
        return path, False
    elif os.path.exists(path + ".partial"):
        return path + ".partial", True
    rs.error(path, "file not found" + ("" if path.endswith(".partial") else " (nor FILE.partial)"))
    return None, False


def merge_key(name: str) -> str:
    """The identity of an entry across files: its name without /iterations:N."""
    return re.sub(r"/iterations:\d+", "", name)


# A folder of results (a main job's OUTDIR, reports/h100): its files in the order main_job.sh
# --report-only reads them (the counter runs first; the last file's entry is used).
FOLDER_FILES = ("premises", "counters", "results")


def folder_result_files(path: str) -> List[str]:
    """A folder's result files (FOLDER_FILES, .json or .json.gz, or the .partial of an interrupted run,
    named without .partial: the reader falls back to it with a warning); [] when it has none."""
    found = []
    for base in FOLDER_FILES:
        for name in (f"{base}.json", f"{base}.json.gz", f"{base}.json.partial"):
            if os.path.isfile(os.path.join(path, name)):
                found.append(os.path.join(path, name[: -len(".partial")] if name.endswith(".partial") else name))
                break
    return found


def load(paths: Iterable[str]) -> ResultSet:
    rs = ResultSet()
    for path in paths:
        read_one(path, rs)
    # The same entry in several files (a re-run, or a counter sweep beside the timing run). The copy
    # used is the last one from a timing run (a file without counters_backend), whatever the order the
    # files came in: a --counters run times its samples too, in its own process and beside the counter
    # collection, and on the H100 reference letting the last file win made the L2 ceiling 8,198 or
    # 8,186 GB/s depending on the order of the same three files. Only where every copy comes from a
    # counters run is the last one used. The copy used is completed by the counters and tags only the
    # others have (hardware metrics, premise checks). Keyed by the name without Google Benchmark's
    # /iterations:N (a --counters run may use another count).
    counter_files = {f.path for f in rs.files if f.context.get("counters_backend")}
    seen: Dict[str, List[Entry]] = {}
    for f in rs.files:
        for e in f.entries:
            seen.setdefault(merge_key(e.name), []).append(e)
    dup = {n: es for n, es in seen.items() if len(es) > 1}
    if dup:
        keep = set()
        for es in dup.values():
            timed = [e for e in es if e.source not in counter_files]
            used = (timed or es)[-1]
            keep.add(id(used))
            for other in reversed([e for e in es if e is not used]):
                for k, v in other.counters.items():
                    used.counters.setdefault(k, v)
                for k, v in other.tags.items():  # e.g. the premise check of a counter run
                    used.tags.setdefault(k, v)
        for f in rs.files:
            f.entries = [e for e in f.entries if merge_key(e.name) not in dup or id(e) in keep]
        example = next(iter(dup))
        # The main job's files: a timing run beside --counters runs of some of its entries (the kernels'
        # roofline counters, the ceiling probes' premises): every duplicated entry has a counters copy.
        counter_runs = all(any(e.source in counter_files for e in es) for es in dup.values())
        message = (f"{len(dup)} entries appear in several files (e.g. {example}); the timing run's copy is used "
                   "(the last file's among several), with counters only the other copies have added")
        if counter_runs:
            rs.note("inputs", message + " (one of each pair is a --counters run of the same entry)")
        else:
            rs.warn("inputs", message)
    gpus = sorted({f.context.get("gpu_name", "?") for f in rs.files})
    if len(gpus) > 1:
        rs.warn("inputs", "files come from different GPUs (" + ", ".join(gpus) + "): they are merged as one "
                "device; use `compare` to compare devices")
    return rs


def _read_text(path: str, rs: ResultSet):
    """The file's text, gunzipped when it is gzip (by its magic bytes, so `.json.gz` and a gzip file
    with any name both work), and why it ends early ("" when intact). None when unreadable."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except OSError as exc:
        rs.error(path, f"cannot read: {exc.strerror or exc}")
        return None, ""
    damaged = ""
    if raw[:2] == b"\x1f\x8b":
        # A decompressor object, not gzip.decompress: a cut-off .gz still yields the text before the
        # cut, which the JSON recovery below reads like any other truncated file.
        d = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
        try:
            raw = d.decompress(raw)
        except zlib.error as exc:
            rs.error(path, f"corrupt gzip data ({exc})")
            return None, ""
        if not d.eof:
            damaged = "truncated gzip"
            rs.warn(path, "truncated gzip file: the compressed data ends early")
    return raw.decode("utf-8", errors="replace"), damaged


def read_one(path: str, rs: ResultSet) -> Optional[ResultFile]:
    actual, partial = _resolve(path, rs)
    if actual is None:
        rs.rejected.append(path)
        return None
    text, damaged = _read_text(actual, rs)
    if text is None:
        rs.rejected.append(actual)
        return None
    if partial:
        rs.warn(actual, "incomplete run (FILE.partial: the benchmark process did not finish); "
                "using the entries it completed")
    if not text.strip():
        rs.error(actual, "empty file: no context, no entries")
        rs.rejected.append(actual)
        return None
    try:
        doc = json.loads(text)
        if not isinstance(doc, dict):
            rs.error(actual, f"not a Google Benchmark JSON object (top level is a {type(doc).__name__})")
            rs.rejected.append(actual)
            return None
        if "benchmarks" not in doc and ("hierarchy" in doc or "roofline" in doc) and "inputs" in doc:
            rs.warn(actual, "skipped: an output of gpuprobe-analyze (device-profile.json), not a result file")
            return None
        context = doc.get("context")
        raw_entries = doc.get("benchmarks")
        has_array = "benchmarks" in doc
    except json.JSONDecodeError as exc:
        context, raw_entries, has_array = _recover_json(text)
        # Cut off: the break is on the last line (a cut inside a string is reported at the string's
        # start, so "at the very end" would miss it). Google Benchmark writes one field per line.
        what = "malformed" if "\n" in text[exc.pos:].rstrip() else "truncated"
        damaged = damaged or f"{what} JSON"
        rs.warn(actual, f"{what} JSON ({exc.msg} at line {exc.lineno} column {exc.colno}); "
                f"recovered {len(raw_entries)} complete entries before the break; the file is incomplete")
    if not has_array or not isinstance(raw_entries, list):
        rs.error(actual, "missing `benchmarks` array: no entries")
        raw_entries = []
    if not isinstance(context, dict):
        rs.error(actual, "missing `context` object: not a gpuprobe result file (docs/results-schema.md); "
                 "not used")
        rs.rejected.append(actual)
        return None
    if "gpuprobe_schema" not in context:
        rs.error(actual, "not a gpuprobe result file: its context has no `gpuprobe_schema` (a plain Google "
                 "Benchmark file? see docs/results-schema.md); not used")
        rs.rejected.append(actual)
        return None
    context = {str(k): ("" if v is None else str(v)) for k, v in context.items()}
    _check_context(actual, context, rs)
    records, why = R.parse(context.get(R.CONTEXT_KEY))
    if why:
        rs.warn(actual, f"no family records ({R.CONTEXT_KEY} {why}): the file comes from a gpuprobe before "
                "records, so the axes of its families are unknown and what needs them is left out "
                "(scripts/dev/migrate_results.py adds them)")
    entries = []
    failed = []
    rejected: List[tuple] = []
    aggregates = 0
    for i, raw in enumerate(raw_entries):
        e = _entry(actual, i, raw, rs, failed, rejected)
        if e == "aggregate":
            aggregates += 1
        elif e is not None:
            e.record = records.get(e.family)
            entries.append(e)
    unrecorded = sorted({e.family for e in entries if e.record is None}) if records else []
    if unrecorded:
        rs.warn(actual, "no family record for " + ", ".join(unrecorded) + f" in its {R.CONTEXT_KEY}: their axes "
                "are unknown and what needs them is left out")
    # An error, not a warning: a rejected entry is not used at all (no plot, fit or ceiling sees it).
    # A few are named one per line; many (a broken run: 201 NaN entries) make one line with a count.
    if len(rejected) <= REJECTED_NAMED:
        for name, shown in rejected:
            rs.error(actual, f"entry {name} rejected: {shown}")
    else:
        named = "; ".join(f"{name} ({shown})" for name, shown in rejected[:REJECTED_NAMED])
        rs.error(actual, f"{len(rejected)} entries rejected for values that cannot be measurements (NaN, infinite, "
                 f"negative or not a number), e.g. {named}; … {len(rejected) - REJECTED_NAMED} more (every one is "
                 "listed in the report's Inputs section)")
    if failed:
        shown = "; ".join(failed[:5]) + (f"; … {len(failed) - 5} more" if len(failed) > 5 else "")
        rs.warn(actual, f"{len(failed)} entries reported an error and are skipped: {shown}")
    if aggregates:
        rs.warn(actual, f"{aggregates} aggregate entries (repetitions) ignored; per-run entries used")
    if not entries:
        rs.error(actual, "no usable entries")
        rs.rejected.append(actual)
    rf = ResultFile(actual, context, partial, entries, damaged, records, len(entries),
                    [f"{name}: {shown}" for name, shown in rejected])
    rs.files.append(rf)
    return rf


# Context facts the analysis computes with (ceilings, cycles <-> ns): a value that is not a positive
# number is dropped, so that figures needing it are left out rather than built on it.
NUMERIC_CONTEXT = (
    "gpu_sm_count", "gpu_sm_clock_max_mhz", "gpu_mem_clock_max_mhz", "gpu_bus_width_bits",
    "gpu_theoretical_dram_gbps", "gpu_l2_bytes", "gpu_smem_per_sm_bytes",
)


def _check_context(path: str, context: Dict[str, str], rs: ResultSet) -> None:
    schema = context.get("gpuprobe_schema")
    if schema != SCHEMA_VERSION:
        rs.warn(path, f"schema version {schema!r}, this reader knows {SCHEMA_VERSION!r}: fields may be misread")
    missing = [k for k in EXPECTED_CONTEXT if k not in context and k != "gpuprobe_schema"]
    if missing:
        rs.warn(path, "context lacks " + ", ".join(missing) + " (figures needing them are left out)")
    bad = [k for k in NUMERIC_CONTEXT if k in context and not 0 < to_number(context[k]) < math.inf]
    if bad:
        rs.error(path, "context value not a positive number, ignored (figures needing it are left out): " +
                 ", ".join(f"{k}={context[k]!r}" for k in bad))
        for k in bad:
            del context[k]


# Google Benchmark's own fields that hold a measurement: checked like the counters.
GBENCH_NUMBERS = ("real_time", "cpu_time", "iterations")


def _bad_values(raw: dict) -> List[str]:
    """`key=value` of every field that cannot be a measurement: NaN, infinite, negative, or (for a
    counter) not a number at all. No gpuprobe counter is negative (docs/results-schema.md)."""
    bad = []
    if raw.get("label") is not None and not isinstance(raw["label"], str):
        bad.append(f"label={json.dumps(raw['label'])[:40]} (not text)")
    for k, v in raw.items():
        if k in GBENCH_FIELDS and k not in GBENCH_NUMBERS:
            continue
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            bad.append(f"{k}={json.dumps(v)[:40]} (not a number)")
        elif math.isnan(v):
            bad.append(f"{k}=NaN")
        elif math.isinf(v):
            bad.append(f"{k}={'-' if v < 0 else ''}inf")
        elif v < 0:
            bad.append(f"{k}={v:g} (negative)")
    return bad


# Rejected entries named one per line up to this many per file; beyond, one line counts them.
REJECTED_NAMED = 5


def _entry(path: str, index: int, raw, rs: ResultSet, failed: List[str], rejected: List[tuple]):
    where = f"{path} entry #{index}"
    if not isinstance(raw, dict):
        rs.warn(where, f"not an object ({type(raw).__name__}); skipped")
        return None
    name = raw.get("name")
    if not isinstance(name, str) or not name:
        rs.warn(where, "has no `name`; skipped")
        return None
    if raw.get("run_type") == "aggregate":
        return "aggregate"
    if raw.get("error_occurred"):
        failed.append(f"{name} ({raw.get('error_message', 'no message')})")
        return None
    bad = _bad_values(raw)
    if bad:
        rejected.append((name, ", ".join(bad[:3]) + (f" and {len(bad) - 3} more" if len(bad) > 3 else "")))
        return None
    family, params = parse_name(name)
    probe, unit, method, tags = parse_label(raw.get("label") or "")
    if probe and probe != family:
        rs.warn(path, f"entry {name}: label says probe={probe}, name says {family}; using the label")
        family = probe
    counters: Dict[str, float] = {}
    for k, v in raw.items():
        if k in GBENCH_FIELDS:
            continue
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            counters[k] = float(v)
    missing = [k for k in ("value_median",) if k not in counters]
    if not raw.get("label"):
        missing.append("label (unit, method)")
    if missing:
        rs.warn(path, f"entry {name} lacks {', '.join(missing)}")
    return Entry(name=name, family=family, params=params, tags=tags, unit=unit, method=method,
                 counters=counters, source=path, real_time=to_number(raw.get("real_time")),
                 time_unit=str(raw.get("time_unit", "")))
