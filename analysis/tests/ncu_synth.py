"""SYNTHETIC Nsight Compute raw-page exports, in the layout of `ncu -i R --page raw --csv --print-units base`
(tool lines, header, units row, one row per launch, thousands separators, NVTX column). Written by this
module, never recorded on a GPU: tests and the reader benchmark use them; a recorded export is another
thing (docs/app-profiling.md).

`launch_values(i)` gives launch i's metric values in base units, so a test can compute what the reader must
return; the cells are written in the units `units` says (default: base units)."""
from __future__ import annotations

import csv
import io
from typing import Callable, Dict, Iterable, Mapping, Optional, Sequence

from gpuprobe_analysis import ncu_metrics as M

IDENTITY = ("ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream", "Block Size",
            "Grid Size", "Device", "CC")
NVTX_COLUMN = "thread Domain:Push/Pop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg"
H100 = "NVIDIA H100 80GB HBM3"
KERNELS = ("void gemm_kernel<128, 64>(float const*, float*, int)", "elementwise_add(float*, float const*, int)",
           "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_tn")
# Units of the synthetic cells, per dimension; a test may ask for others (units=...).
BASE_UNITS = {"second": "nsecond", "1/second": "hz", "byte": "byte", "count": "inst", "byte/cycle": "byte/cycle", "text": ""}
# The factor from a base-unit value to the value written in the default unit of its dimension.
_TO_DEFAULT = {"second": 1e9, "1/second": 1.0, "byte": 1.0, "count": 1.0, "byte/cycle": 1.0}


def launch_values(i: int) -> Dict[str, float]:
    """Launch i's declared counted metrics, in base units (seconds, Hz, bytes, counts): all nonzero, each
    distinct, so that a wrong weight or a wrong target shows."""
    out: Dict[str, float] = {}
    for k, m in enumerate(M.COUNTED):
        if m.role == M.TIME:
            out[m.name] = (10 + i % 7) * 1e-6
        elif m.role == M.CLOCK:
            out[m.name] = 1.755e9
        else:
            out[m.name] = float((k + 1) * 1000 + i)
    for k, (peak, clock) in enumerate(M.NCU_ROOF_OF.values()):
        out[peak], out[clock] = 256.0 * (k + 1), 1.5e9 + 1e8 * k
    return out


def nvtx_cell(stack: Sequence[str], thread: int = 1, domain: str = "<default domain>") -> str:
    """A raw-page push/pop cell: the thread, then one quoted entry per open range, outermost first."""
    return str(thread) + "".join(f'  "{domain}:{name}:none:none:none:none:none:none"' for name in stack)


def _thousands(v: float) -> str:
    """ncu's way of printing a number: thousands separators, a fraction only where there is one."""
    return f"{v:,.0f}" if float(v).is_integer() else f"{v:,.6g}" if abs(v) < 1 else f"{v:,.3f}"


def synthetic_raw_csv(n_launches: int = 3, *, device: str = H100, devices: Optional[Callable[[int], str]] = None,
                      nvtx: Optional[Callable[[int], Sequence[str]]] = None, tool_lines: bool = True,
                      units: Optional[Mapping[str, str]] = None, scale: Optional[Mapping[str, float]] = None,
                      drop: Iterable[str] = (), na: Iterable[str] = (), extra_columns: bool = True,
                      values: Callable[[int], Dict[str, float]] = launch_values) -> str:
    """The text of a SYNTHETIC raw-page export of n_launches launches.

    device / devices(i): the GPU model per launch; nvtx(i): the push/pop stack of launch i (None: ncu ran
    without --nvtx, no NVTX column); units: metric -> unit written in the units row, with scale: metric ->
    factor from the base-unit value to the written one; drop: declared metrics left out of the header; na:
    metrics whose cells read n/a."""
    units = dict(units or {})
    scale = dict(scale or {})
    drop, na = set(drop), set(na)
    metrics = [m for m in M.METRICS if m.name not in drop and m.name != M.DEVICE_NAME
               and m.name not in M.LAUNCH_SHAPE]
    header = list(IDENTITY)
    if nvtx is not None:
        header.insert(4, NVTX_COLUMN)   # ncu puts the NVTX columns before "Kernel Name"
    if M.DEVICE_NAME not in drop:
        header.append(M.DEVICE_NAME)
    header += [m.name for m in metrics]
    if extra_columns:   # columns the reader must pass over: a launch attribute and a text metric
        header += ["launch__registers_per_thread", "launch__func_cache_config"]
    unit_row = [""] * len(header)
    for m in metrics:
        unit_row[header.index(m.name)] = units.get(m.name, BASE_UNITS[m.dimension])
    if extra_columns:
        unit_row[-2] = "register/thread"
    buf = io.StringIO()
    if tool_lines:
        buf.write("==PROF== Connected to process 4242 (/usr/bin/python3.11)\n")
        buf.write("==WARNING== SYNTHETIC export written by analysis/tests/ncu_synth.py\n")
    w = csv.writer(buf, quoting=csv.QUOTE_ALL, lineterminator="\n")
    w.writerow(header)
    w.writerow(unit_row)
    for i in range(n_launches):
        vals = values(i)
        kernel = KERNELS[i % len(KERNELS)]
        row = [str(i), "4242", "python3.11", "127.0.0.1", kernel, "1", "7",
               f"({128 * (1 + i % 2)}, 1, 1)", f"({1000 + i % 3}, 2, 1)", "0", "9.0"]
        if nvtx is not None:
            row.insert(4, nvtx_cell(nvtx(i)))
        if M.DEVICE_NAME not in drop:
            row.append(devices(i) if devices is not None else device)
        for m in metrics:
            if m.name in na:
                row.append("n/a")
                continue
            if m.role in (M.NCU_PEAK, M.NCU_PEAK_CLOCK) and m.name not in vals:   # optional: ncu's own roofs
                row.append("n/a")
                continue
            f = scale.get(m.name, _TO_DEFAULT[m.dimension])
            row.append(_thousands(vals[m.name] * f))
        if extra_columns:
            row += ["128", "CachePreferNone"]
        w.writerow(row)
    if tool_lines:
        buf.write("==PROF== Disconnected from process 4242\n")
    return buf.getvalue()
