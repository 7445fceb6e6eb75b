"""Nsight Compute profiles of an application's kernels, read into one record per kernel launch.

Bottom layer: knows nothing of the report or of its sections. The metrics and what each counts come from
ncu_metrics.py (the one declaration); docs/app-profiling.md says how a profile is taken."""
from __future__ import annotations

import csv
import glob
import importlib
import math
import os
import re
import shutil
import sys
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

from . import ncu_metrics as M


class ProfileError(Exception):
    """A profile that cannot be read; str(exc) is ONE line naming the file and what is wrong."""


@dataclass(frozen=True)
class Launch:
    index: int                       # ncu's "ID": order of the launch in the profile
    kernel: str                      # ncu's demangled "Kernel Name", exactly as ncu prints it
    grid: Tuple[int, int, int]       # "Grid Size"
    block: Tuple[int, int, int]      # "Block Size"
    nvtx: Tuple[str, ...]            # NVTX push/pop range stack, outermost first; () when none
    device: str                      # GPU model as ncu names it ("NVIDIA H100 80GB HBM3")
    duration_s: float                # gpu__time_duration.sum, seconds (nan if missing)
    sm_clock_hz: float               # sm__cycles_elapsed.avg.per_second, Hz (nan if missing)
    flops: Dict[str, float]          # non-tensor FLOPs per compute-ceiling name; only nonzero ones
    tensor_ops: Dict[str, float]     # tensor-pipe operations per exec.tensor ceiling name; only nonzero ones
    bytes: Dict[str, float]          # bytes per level: "DRAM", "L2", "L1", "shared"; only levels measured
    dram_read_bytes: Optional[float] # for choosing the DRAM read vs copy ceiling
    missing: Tuple[str, ...]         # declared metrics this launch lacked (names)
    metrics: Dict[str, float] = field(default_factory=dict)  # every numeric metric, in base units

    @property
    def launch_shape(self) -> str:
        return "grid ({},{},{}) block ({},{},{})".format(*self.grid, *self.block)

    @property
    def total_flops(self) -> float:
        return sum(self.flops.values()) + sum(self.tensor_ops.values())


@dataclass
class Profile:
    path: str
    launches: List[Launch]
    device: str                      # the one GPU model in the profile (a profile mixing models: ProfileError)
    source: str                      # "ncu raw CSV" or "ncu-rep (ncu_report)"
    missing: Dict[str, int]          # metric -> launches lacking it (declared metrics only)
    notes: List[str]                 # e.g. clock control / replay mode / cache control where known


RAW_CSV = "ncu raw CSV"
NCU_REP = "ncu-rep (ncu_report)"

# The raw page's launch columns (ncu -i R --page raw --csv); every other column is a metric, or NVTX.
ID, KERNEL, BLOCK, GRID, DEVICE_ID, CC = "ID", "Kernel Name", "Block Size", "Grid Size", "Device", "CC"
IDENTITY_COLUMNS = ("ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream",
                    "Block Size", "Grid Size", "Device", "CC")
# With --nvtx the raw page adds one column per NVTX range kind, named after its fields: the push/pop stack
# of the launching thread ("thread Domain:Push/Pop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg") and
# the start/end ranges ("Id:Domain:Start/Stop_Range:..."). Only the push/pop stack is a nesting a launch
# belongs to; start/end ranges may overlap and are left out (docs/app-profiling.md).
NVTX_PUSH_POP_PREFIX = "thread Domain:Push/Pop_Range"
NVTX_START_END_PREFIX = "Id:Domain:Start/Stop_Range"
# An NVTX range entry of that cell ends in six attribute fields (PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg).
_NVTX_ATTRIBUTE_FIELDS = 6
DEFAULT_NVTX_DOMAINS = ("", "<default domain>", "<default>", "default")

# Units as ncu prints them, to the base unit of a dimension. ncu's prefixes are decimal (Kbyte = 1000 byte).
_PREFIX = {"": 1.0, "K": 1e3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "m": 1e-3, "u": 1e-6,
           "n": 1e-9, "p": 1e-12}
_SECOND_WORDS = ("second", "s")
_COUNT_WORDS = ("inst", "cycle", "sector", "request", "warp", "thread", "op", "ops", "flop")


def _unit_word(word: str, bases: Sequence[str]) -> Optional[float]:
    """The factor of a prefixed word (`Kbyte`, `nsecond`, `us`) to its base, when its base is one of bases."""
    for base in sorted(bases, key=len, reverse=True):
        if word.endswith(base) and word[:len(word) - len(base)] in _PREFIX:
            return _PREFIX[word[:len(word) - len(base)]]
    return None


def unit_factor(unit: str, dimension: str) -> Optional[float]:
    """The factor that turns a value in `unit` into the base unit of `dimension` ("second", "1/second",
    "byte", "count"); None when the unit is not one of that dimension."""
    u = unit.strip()
    if dimension == "second":
        return _unit_word(u, _SECOND_WORDS)
    if dimension == "byte":
        return _unit_word(u, ("byte", "B"))
    if dimension == "count":
        if u == "":
            return 1.0
        return _unit_word(u, _COUNT_WORDS)
    if dimension == "1/second":
        f = _unit_word(u, ("hz", "Hz"))
        if f is not None:
            return f
        if "/" in u:
            num, den = u.split("/", 1)
            fn = _unit_word(num, _COUNT_WORDS) if num else 1.0
            fd = _unit_word(den, _SECOND_WORDS)
            if fn is not None and fd:
                return fn / fd
        return None
    if dimension == "byte/cycle":
        if "/" not in u:
            return None
        num, den = u.split("/", 1)
        fn = _unit_word(num, ("byte", "B"))
        return fn if fn is not None and den in ("cycle", "cycles") else None
    raise ValueError(f"unknown dimension {dimension!r}")


def _any_factor(unit: str) -> Optional[float]:
    """An undeclared metric's factor to its base unit, whatever its dimension; None when unknown."""
    for dim in ("byte", "second", "1/second", "count", "byte/cycle"):
        f = unit_factor(unit, dim)
        if f is not None:
            return f
    # Counts of things ncu names by their own unit (launch__sm_count "SM", profiler__replayer_passes "pass").
    if unit.strip() in ("%", "register/thread", "byte/block", "block", "warp/cycle", "inst/cycle", "SM",
                        "cluster", "pass"):
        return 1.0
    return None


def _number(text: str) -> Optional[float]:
    """A cell as a number: thousands separators dropped; None for an empty or n/a cell; raises ValueError
    for anything else that is no number."""
    t = text.strip()
    if not t or t.lower() in ("n/a", "na", "nan"):
        return None
    return float(t.replace(",", ""))


_TRIPLE = re.compile(r"^\(?\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*\)?$")


def _triple(text: str) -> Optional[Tuple[int, int, int]]:
    m = _TRIPLE.match(text.strip())
    return (int(m.group(1)), int(m.group(2)), int(m.group(3))) if m else None


_QUOTED = re.compile(r'"([^"]*)"')


# The message-type field, fifth of the six attributes; the message after it may hold colons itself (CCCL's
# registered "cub::DeviceRadixSort"), so the attributes are found from it, not counted from the end.
_NVTX_MESSAGE_TYPES = ("none", "ASCII", "UNICODE", "REGISTERED")


def _nvtx_entry(entry: str) -> Tuple[str, str]:
    """(domain, range name) of one `domain:name:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg` entry. The name
    lies between the domain and the four attributes before the message type; the message type is the last
    field of those four kinds that has a message after it (a message that is itself "a:none:b" would be
    misread: ncu's export cannot tell it apart)."""
    parts = entry.split(":")
    for t in range(len(parts) - 2, 5, -1):
        if parts[t] in _NVTX_MESSAGE_TYPES:
            return parts[0].strip(), ":".join(parts[1:t - 4]).strip()
    if len(parts) >= _NVTX_ATTRIBUTE_FIELDS + 2:
        return parts[0].strip(), ":".join(parts[1:-_NVTX_ATTRIBUTE_FIELDS]).strip()
    return "", entry.strip()


def nvtx_stack(cell: str) -> Tuple[str, ...]:
    """The push/pop range stack of a raw-page NVTX cell, outermost first.

    The cell is the launching thread's id and one quoted entry per open range, outermost first, each
    `domain:range name:` and six attribute fields, e.g. `1  "<default domain>:step:none:none:none:none:none:none"
    "<default domain>:forward:none:none:none:none:none:none"`. A range name may itself hold colons, so the name
    is what lies between the domain and the six attribute fields. A range of another domain than the default
    is named `domain@range`, as ncu's --nvtx-include spells it."""
    cell = cell.strip()
    if not cell or cell.lower() in ("n/a", "none"):
        return ()
    entries = _QUOTED.findall(cell)
    if not entries:  # a launch outside any range (its thread's id alone), or a single unquoted entry
        rest = re.sub(r"^\d+(\s+|$)", "", cell)
        entries = [rest] if rest else []
    out = []
    for e in entries:
        domain, name = _nvtx_entry(e)
        if name:
            out.append(name if domain in DEFAULT_NVTX_DOMAINS else f"{domain}@{name}")
    return tuple(out)


def _reduce(values: Dict[str, float], absent: frozenset = frozenset()) -> Tuple[
        float, float, Dict[str, float], Dict[str, float], Dict[str, float], Optional[float], Tuple[str, ...]]:
    """Time, clock, FLOPs per precision, tensor ops per type, bytes per level, DRAM read bytes and the
    missing declared metrics of one launch's metric values (base units), from the declaration alone.
    `absent`: declared metrics the profiled GPU does not have (profile.cmd's absent_metrics), counted as none."""
    flops: Dict[str, float] = {}
    tensor: Dict[str, float] = {}
    level_parts: Dict[str, List[Optional[float]]] = {}
    missing = []
    incomplete = set()
    duration = clock = math.nan
    dram_read = None
    for m in M.COUNTED:
        v = values.get(m.name)
        if v is None and m.name in absent:
            v = 0.0
        if v is None:
            missing.append(m.name)
        if m.role == M.TIME:
            duration = math.nan if v is None else v
        elif m.role == M.CLOCK:
            clock = math.nan if v is None else v
        elif m.role == M.BYTES:
            level_parts.setdefault(m.target, []).append(v)
            if m.read:
                dram_read = v
        elif v is None:
            incomplete.add(m.target)
        elif v:
            into = flops if m.role == M.FLOPS else tensor
            into[m.target] = into.get(m.target, 0.0) + v * m.weight
    # A level, precision or tensor type with a counter missing is left out, not undercounted: the
    # missing counter is named instead.
    levels = {lvl: sum(parts) for lvl, parts in level_parts.items() if all(p is not None for p in parts)}
    flops = {k: v for k, v in flops.items() if k not in incomplete}
    tensor = {k: v for k, v in tensor.items() if k not in incomplete}
    return duration, clock, flops, tensor, levels, dram_read, tuple(missing)


def _sidecar(path: str) -> Tuple[List[str], frozenset]:
    """How the profile was taken, from the profile.cmd that scripts/profile_app.sh writes beside it: the
    notes, and the declared metrics this GPU does not have (its absent_metrics line)."""
    stem = os.path.splitext(path)[0]
    cmd = stem + ".cmd"
    if not os.path.isfile(cmd):
        return [f"how the profile was taken is not recorded (no {os.path.basename(cmd)} beside it): clock "
                f"control, replay mode and cache control unknown"], frozenset()
    fields: Dict[str, str] = {}
    try:
        with open(cmd, encoding="utf-8", errors="replace") as f:
            for line in f:
                k, sep, v = line.partition(":")
                if sep:
                    fields[k.strip()] = v.strip()
    except OSError as e:
        return [f"{cmd} unreadable ({e.strerror}): clock control, replay mode and cache control unknown"], frozenset()
    notes = []
    for key in ("ncu_version", "clock_control", "replay_mode", "cache_control", "nvtx_include", "kernel_filter",
                "launch_skip", "launch_count"):
        if fields.get(key):
            notes.append(f"{key.replace('_', ' ')}: {fields[key]}")
    if fields.get("clock_control") and fields["clock_control"] != "none":
        notes.append("profiled with clocks locked by ncu (--clock-control "
                     f"{fields['clock_control']}): kernels ran at another clock than the ceilings were measured at")
    absent = frozenset(n for n in fields.get("absent_metrics", "").split(",") if n.strip() in M.BY_NAME)
    if absent:
        notes.append("metrics this GPU does not have (ncu --query-metrics), counted as none: "
                     + ", ".join(sorted(absent)))
    return notes, absent


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _check_device(path: str, devices: Dict[str, str]) -> str:
    if len(devices) > 1:
        (a, where_a), (b, where_b) = list(devices.items())[:2]
        raise ProfileError(f"{path}: profile mixes GPU models: {a!r} ({where_a}) and {b!r} ({where_b}); "
                           f"profile one GPU model per file")
    return next(iter(devices), "")


def _profile(path: str, launches: List[Launch], devices: Dict[str, str], source: str,
             notes: List[str]) -> Profile:
    device = _check_device(path, devices)
    missing: Dict[str, int] = {}
    for launch in launches:
        for name in launch.missing:
            missing[name] = missing.get(name, 0) + 1
    if missing:
        notes = notes + ["declared metrics missing: " + ", ".join(
            f"{n} ({c} of {len(launches)} launches)" for n, c in sorted(missing.items()))]
    return Profile(path=path, launches=launches, device=device, source=source, missing=missing, notes=notes)


# ---- raw-page CSV ----------------------------------------------------------------------------------------

_TOOL_LINE = re.compile(r"^==[A-Z]+==")


def read_raw_csv(path: str) -> Profile:
    """`ncu -i R --page raw --csv --print-units base` output: tool lines (==PROF==, ==WARNING==) anywhere,
    the header, the units row, then one row per launch."""
    sidecar_notes, absent = _sidecar(path)
    try:
        with open(path, encoding="utf-8", errors="replace", newline="") as f:
            text = f.read()
    except OSError as e:
        raise ProfileError(f"{path}: cannot read ({e.strerror})") from None
    if not text.strip():
        raise ProfileError(f"{path}: empty file")
    lines = text.splitlines()
    # Physical line numbers of the lines the csv module sees (tool lines dropped), for the messages.
    kept = [(i + 1, ln) for i, ln in enumerate(lines) if ln.strip() and not _TOOL_LINE.match(ln)]
    header_at = next((k for k, (_, ln) in enumerate(kept) if ln.startswith('"ID",') or ln.startswith("ID,")), None)
    if header_at is None:
        raise ProfileError(f"{path}: no ncu raw-page header (a line starting \"ID\",); export with "
                           f"ncu -i REPORT --page raw --csv --print-units base")
    body = kept[header_at:]
    try:
        rows = list(csv.reader([ln for _, ln in body]))
    except csv.Error as e:
        raise ProfileError(f"{path}: not a CSV file ({_one_line(e)})") from None
    header = rows[0]
    col = {name: i for i, name in enumerate(header)}
    for need in (ID, KERNEL):
        if need not in col:
            raise ProfileError(f"{path}: line {body[0][0]}: header has no {need!r} column")
    if len(rows) < 2 or (rows[1] and rows[1][0].strip() != ""):
        raise ProfileError(f"{path}: line {body[0][0]}: no units row after this header; export with "
                           f"ncu -i REPORT --page raw --csv --print-units base")
    units = rows[1]
    if len(units) != len(header):
        raise ProfileError(f"{path}: line {body[1][0]}: units row has {len(units)} fields, the header "
                           f"{len(header)}")
    if len(rows) < 3:
        raise ProfileError(f"{path}: no kernel launches after the header and units rows")

    # Per column: how to read it. Declared metrics must have a unit of their dimension.
    nvtx_col = next((i for i, h in enumerate(header) if h.startswith(NVTX_PUSH_POP_PREFIX)), None)
    name_col = col.get(M.DEVICE_NAME)
    skip = set(IDENTITY_COLUMNS) | {M.DEVICE_NAME}
    notes: List[str] = []
    declared: List[Tuple[int, str, float]] = []
    others: List[Tuple[int, str, float]] = []
    unknown_units = []
    for i, h in enumerate(header):
        if h in skip or h.startswith(NVTX_PUSH_POP_PREFIX) or h.startswith(NVTX_START_END_PREFIX):
            continue
        m = M.BY_NAME.get(h)
        if m is not None and m.role != M.LAUNCH:
            f = unit_factor(units[i], m.dimension)
            if f is None:
                raise ProfileError(f"{path}: line {body[1][0]}: unit {units[i]!r} of {h} is not a unit of "
                                   f"{m.dimension} this reader knows")
            declared.append((i, h, f))
        else:
            f = _any_factor(units[i])
            if f is None:
                unknown_units.append(f"{h} ({units[i]})")
            else:
                others.append((i, h, f))
    if unknown_units:
        notes.append("columns of units this reader does not know, left out of the launches' metrics: "
                     + ", ".join(unknown_units))

    id_col, kernel_col = col[ID], col[KERNEL]
    block_col, grid_col, cc_col = col.get(BLOCK), col.get(GRID), col.get(CC)
    triples: Dict[str, Optional[Tuple[int, int, int]]] = {}
    stacks: Dict[str, Tuple[str, ...]] = {}
    devices: Dict[str, str] = {}
    launches: List[Launch] = []
    width = len(header)
    for k in range(2, len(rows)):
        row = rows[k]
        line = body[k][0]
        if len(row) != width:
            raise ProfileError(f"{path}: line {line}: {len(row)} fields where the header has {width} "
                               f"(a truncated or malformed row)")
        try:
            index = int(row[id_col].replace(",", ""))
        except ValueError:
            raise ProfileError(f"{path}: line {line}: column ID: {row[id_col]!r} is no launch number") from None
        values: Dict[str, float] = {}
        for i, h, f in declared:
            cell = row[i]
            try:
                v = _number(cell)
            except ValueError:
                raise ProfileError(f"{path}: line {line}: column {h}: {cell!r} is not a number") from None
            if v is not None:
                values[h] = v * f
        metrics = dict(values)
        for i, h, f in others:
            cell = row[i]
            try:
                v = _number(cell)
            except ValueError:
                continue  # a text metric (e.g. a launch attribute) of no use here
            if v is not None:
                metrics[h] = v * f
        shapes = []
        for c, what in ((grid_col, GRID), (block_col, BLOCK)):
            cell = row[c] if c is not None else ""
            if cell not in triples:
                triples[cell] = _triple(cell)
            t = triples[cell]
            if t is None:
                raise ProfileError(f"{path}: line {line}: column {what}: {cell!r} is no (x, y, z) size")
            shapes.append(t)
        if nvtx_col is not None:
            cell = row[nvtx_col]
            if cell not in stacks:
                stacks[cell] = nvtx_stack(cell)
            nvtx = stacks[cell]
        else:
            nvtx = ()
        device = row[name_col].strip() if name_col is not None else ""
        if not device:
            device = f"GPU of compute capability {row[cc_col].strip()}" if cc_col is not None else "unknown GPU"
        devices.setdefault(device, f"line {line}")
        duration, clock, flops, tensor, levels, dram_read, missing = _reduce(values, absent)
        launches.append(Launch(index=index, kernel=row[kernel_col], grid=shapes[0], block=shapes[1], nvtx=nvtx,
                               device=device, duration_s=duration, sm_clock_hz=clock, flops=flops,
                               tensor_ops=tensor, bytes=levels, dram_read_bytes=dram_read, missing=missing,
                               metrics=metrics))
    if name_col is None:
        notes.append(f"the profile does not name its GPU model ({M.DEVICE_NAME} missing): told apart by "
                     f"compute capability only")
    return _profile(path, launches, devices, RAW_CSV, sidecar_notes + notes)


# ---- .ncu-rep through NVIDIA's ncu_report ----------------------------------------------------------------

# Nsight Compute's standalone installs (NVIDIA's installer's default place): where the module is when the `ncu`
# on PATH is a wrapper in another folder, as on the H100 machines (/opt/nvidia/nsight-compute/2025.3.1).
NCU_INSTALL_GLOBS = ("/opt/nvidia/nsight-compute/*/extras/python",)


def find_ncu_report() -> Optional[object]:
    """NVIDIA's ncu_report module: importable as is, else from $NCU_PYTHON_PATH, else from the extras/python
    folder of the ncu on PATH (or $NCU), else from the newest standalone install (NCU_INSTALL_GLOBS). None when
    none of these has it."""
    try:
        return importlib.import_module("ncu_report")
    except ImportError:
        pass
    candidates = []
    if os.environ.get("NCU_PYTHON_PATH"):
        candidates.append(os.environ["NCU_PYTHON_PATH"])
    ncu = os.environ.get("NCU") or shutil.which("ncu")
    if ncu:
        candidates.append(os.path.join(os.path.dirname(os.path.realpath(ncu)), "extras", "python"))
    for pattern in NCU_INSTALL_GLOBS:
        candidates.extend(sorted(glob.glob(pattern), reverse=True))
    for folder in candidates:
        if os.path.isfile(os.path.join(folder, "ncu_report.py")):
            sys.path.insert(0, folder)
            try:
                return importlib.import_module("ncu_report")
            except ImportError:
                continue
            finally:
                sys.path.remove(folder)
    return None


def _rep_value(action, name: str):
    m = action.metric_by_name(name)
    if m is None:
        return None, None
    v = m.value()
    unit = m.unit() if hasattr(m, "unit") else None
    return v, unit


def _demangled_name(action) -> str:
    """The kernel's demangled name, as the raw page's "Kernel Name" gives it: ncu_report's IAction.name()
    alone is the bare function name ("regular_fft" for "void regular_fft<256, ...>(...)", ncu 2025.3.1)."""
    base = getattr(action, "NameBase_DEMANGLED", None)
    return action.name(base) if base is not None else action.name()


def read_ncu_rep(path: str, ncu_report=None) -> Profile:
    """A .ncu-rep through ncu_report (load_report, range_by_idx, action_by_idx, metric_by_name, nvtx_state)."""
    if not os.path.isfile(path):
        raise ProfileError(f"{path}: no such file")
    sidecar_notes, absent = _sidecar(path)
    module = ncu_report if ncu_report is not None else find_ncu_report()
    if module is None:
        raise ProfileError(f"{path}: reading a .ncu-rep needs NVIDIA's ncu_report module (Nsight Compute's "
                           f"extras/python; set NCU_PYTHON_PATH), not found here; export the raw CSV instead: "
                           f"ncu -i {path} --page raw --csv --print-units base > {os.path.splitext(path)[0]}.csv")
    try:
        ctx = module.load_report(path)
    except Exception as e:  # the module's own error types are not documented
        raise ProfileError(f"{path}: ncu_report cannot load it ({_one_line(e)})") from None
    if ctx is None:
        raise ProfileError(f"{path}: ncu_report cannot load it")
    launches: List[Launch] = []
    devices: Dict[str, str] = {}
    extra = [n for n in M.LAUNCH_SHAPE]
    for r in range(ctx.num_ranges()):
        rng = ctx.range_by_idx(r)
        for a in range(rng.num_actions()):
            action = rng.action_by_idx(a)
            where = f"range {r} launch {a}"
            values: Dict[str, float] = {}
            for m in M.METRICS:
                if m.role == M.LAUNCH:
                    continue
                v, unit = _rep_value(action, m.name)
                if v is None:
                    continue
                if unit is None:
                    raise ProfileError(f"{path}: {where}: this ncu_report gives no unit for {m.name}; export "
                                       f"the raw CSV instead (ncu -i {path} --page raw --csv --print-units base)")
                f = unit_factor(unit, m.dimension)
                if f is None:
                    raise ProfileError(f"{path}: {where}: unit {unit!r} of {m.name} is not a unit of "
                                       f"{m.dimension} this reader knows")
                try:
                    values[m.name] = float(v) * f
                except (TypeError, ValueError):
                    raise ProfileError(f"{path}: {where}: {m.name} = {v!r} is not a number") from None
            dims = {}
            for n in extra:
                v, _ = _rep_value(action, n)
                try:
                    dims[n] = int(v) if v is not None else 0
                except (TypeError, ValueError):
                    raise ProfileError(f"{path}: {where}: {n} = {v!r} is not a number") from None
            name, _ = _rep_value(action, M.DEVICE_NAME)
            device = str(name).strip() if name else "unknown GPU"
            devices.setdefault(device, where)
            nvtx: List[str] = []
            state = action.nvtx_state()
            if state is not None:
                for d in state.domains():
                    dom = state.domain_by_id(d)
                    dname = (dom.name() or "").strip()
                    for rname in dom.push_pop_ranges():
                        nvtx.append(rname if dname in DEFAULT_NVTX_DOMAINS else f"{dname}@{rname}")
            duration, clock, flops, tensor, levels, dram_read, missing = _reduce(values, absent)
            g = tuple(dims[f"launch__grid_dim_{x}"] for x in "xyz")
            b = tuple(dims[f"launch__block_dim_{x}"] for x in "xyz")
            launches.append(Launch(index=len(launches), kernel=_demangled_name(action), grid=g, block=b, nvtx=tuple(nvtx),
                                   device=device, duration_s=duration, sm_clock_hz=clock, flops=flops,
                                   tensor_ops=tensor, bytes=levels, dram_read_bytes=dram_read,
                                   missing=missing, metrics=values))
    if not launches:
        raise ProfileError(f"{path}: no kernel launches in the report")
    return _profile(path, launches, devices, NCU_REP, sidecar_notes)


def read_profile(path: str, ncu_report=None) -> Profile:
    """A .csv (ncu --page raw --csv --print-units base) or a .ncu-rep (through NVIDIA's ncu_report;
    `ncu_report` injects the module, for tests)."""
    if path.endswith(".ncu-rep"):
        return read_ncu_rep(path, ncu_report)
    return read_raw_csv(path)
