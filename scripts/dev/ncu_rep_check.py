"""The .ncu-rep path checked against the raw-CSV path on one profile (development, needs NVIDIA's
ncu_report, i.e. a machine with Nsight Compute):
    python3 scripts/dev/ncu_rep_check.py OUTDIR_OF_PROFILE_APP...
For each folder written by scripts/profile_app.sh, reads profile.ncu-rep through ncu_report and profile.csv
through the raw-CSV reader, and compares launch by launch: kernel name, grid, block, NVTX stack, device and
every declared metric (ncu_metrics.py; relative 1e-6): the .ncu-rep reader reads those alone. Prints one line per folder and every difference; exit 1 on any difference or
when ncu_report is not found."""
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "analysis"))
from gpuprobe_analysis import ncu  # noqa: E402
from gpuprobe_analysis import ncu_metrics as M  # noqa: E402

DECLARED = {m.name for m in M.METRICS if m.role != M.LAUNCH}


def compare(folder: str) -> int:
    rep = ncu.read_profile(os.path.join(folder, "profile.ncu-rep"))
    csv = ncu.read_profile(os.path.join(folder, "profile.csv"))
    diffs = []
    if len(rep.launches) != len(csv.launches):
        diffs.append(f"launches: ncu-rep {len(rep.launches)}, csv {len(csv.launches)}")
    if rep.device != csv.device:
        diffs.append(f"device: ncu-rep {rep.device!r}, csv {csv.device!r}")
    compared = 0
    for a, b in zip(rep.launches, csv.launches):
        for what in ("kernel", "grid", "block", "nvtx", "device"):
            if getattr(a, what) != getattr(b, what):
                diffs.append(f"launch {b.index} {what}: ncu-rep {getattr(a, what)!r}, csv {getattr(b, what)!r}")
        for name in sorted((set(a.metrics) | set(b.metrics)) & DECLARED):
            x, y = a.metrics.get(name), b.metrics.get(name)
            compared += 1
            if x is None or y is None:
                diffs.append(f"launch {b.index} {name}: ncu-rep {x}, csv {y}")
            elif not math.isclose(x, y, rel_tol=1e-6, abs_tol=1e-9):
                diffs.append(f"launch {b.index} {name}: ncu-rep {x!r}, csv {y!r}")
    print(f"{folder}: {len(csv.launches)} launches, {compared} metric values compared, ncu-rep source "
          f"{rep.source!r}: {len(diffs)} differences")
    for d in diffs[:40]:
        print("  " + d)
    return 1 if diffs else 0


def main() -> int:
    if ncu.find_ncu_report() is None:
        print("ncu_rep_check: NVIDIA's ncu_report module not found")
        return 1
    rc = 0
    for folder in sys.argv[1:]:
        try:
            rc |= compare(folder)
        except ncu.ProfileError as e:
            print(f"{folder}: {e}")
            rc = 1
    return rc


if __name__ == "__main__":
    sys.exit(main())
