"""gpuprobe-analyze: report, profile, compare, validate and fleet-check gpuprobe result files; judge an
application's Nsight Compute profile against them (app, app-compare).

Exit status: 0 done (warnings printed), 1 an input file is unusable (missing, not gpuprobe's, no
usable entry) or, for validate, any error or incomplete file, 2 usage error (also an output folder
holding files tracked by git: outputs.py, the rule scripts/main_job.sh applies); fleet: 3 when a GPU is
flagged (docs/fleet.md); audit: 3 when a check of the report fails.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
from typing import List

from . import results
from .outputs import refuse_tracked_output


def _refused(option: str, path: str) -> bool:
    """Whether `path` (a folder to write into) holds files tracked by git: then says so (outputs.py's
    rule, the one scripts/main_job.sh applies) and the command writes nothing."""
    why = refuse_tracked_output(path)
    if why:
        print(f"gpuprobe-analyze: {option} {why}; nothing written", file=sys.stderr)
    return bool(why)


def _load(paths: List[str], quiet: bool = False) -> results.ResultSet:
    rs = results.load(paths)
    if not quiet:
        for issue in rs.issues:
            print(f"gpuprobe-analyze: {issue}", file=sys.stderr)
    return rs


def _usable(rs: results.ResultSet) -> bool:
    """Whether every input gave something. A report built from the other inputs would look complete
    while it silently left one out, so one unusable input stops the command."""
    if not rs.entries:
        print("gpuprobe-analyze: no usable entries in the inputs (see the messages above)", file=sys.stderr)
        return False
    if rs.rejected:
        print(f"gpuprobe-analyze: unusable input: {', '.join(rs.rejected)} (see the messages above); "
              "nothing written", file=sys.stderr)
        return False
    return True


def cmd_report(args) -> int:
    from .report import build_report
    if _refused("-o", args.output):
        return 2
    rs = _load(args.results)
    if not _usable(rs):
        return 1
    out = build_report(rs, args.output, args.title)
    _print_profile(out["data"])
    print(f"\nwrote {out['html']}\n      {out['markdown']}\n      {out['profile']}\n      "
          f"{len(out['figures'])} figures (PNG + SVG) in {os.path.join(args.output, 'figures')}")
    return 0


def cmd_profile(args) -> int:
    from .sections import device_profile
    if args.output and _refused("-o", args.output):
        return 2
    rs = _load(args.results)
    if not _usable(rs):
        return 1
    data = device_profile(rs)
    _print_profile(data)
    if args.output:
        os.makedirs(args.output, exist_ok=True)
        path = os.path.join(args.output, "device-profile.json")
        with open(path, "w") as fh:
            json.dump(data, fh, indent=1)
        print(f"\nwrote {path}")
    return 0


def result_paths(path: str) -> List[str]:
    """A result file as given, or a folder's result files (FOLDER_FILES, .json or .json.gz, or the
    .partial of an interrupted run); [path] when the folder has none (the reader then says so)."""
    if not os.path.isdir(path):
        return [path]
    found = results.folder_result_files(path)
    if not found:
        print(f"gpuprobe-analyze: {path}: a folder without {', '.join(b + '.json[.gz]' for b in results.FOLDER_FILES)}",
              file=sys.stderr)
        return [os.path.join(path, "results.json")]
    return found


def cmd_compare(args) -> int:
    from .compare import compare, to_markdown
    if args.output and _refused(f"-o {args.output}: its folder", os.path.dirname(args.output) or "."):
        return 2
    def progress(message: str) -> None:  # stderr: the table on stdout stays the command's output
        print(f"gpuprobe-analyze: compare: {message} ...", file=sys.stderr, flush=True)
    progress(f"reading A ({args.a}) and B ({args.b})")
    a, b = _load(result_paths(args.a)), _load(result_paths(args.b))
    if not (_usable(a) and _usable(b)):
        return 1
    progress(f"matching {len(a.entries):,} entries of A with {len(b.entries):,} of B")
    res = compare(a, b, args.sigmas, args.floor / 100.0, summary=not args.no_summary, progress=progress)
    text = to_markdown(res, args.a, args.b)
    print(text)
    if args.output:
        with open(args.output, "w") as fh:
            fh.write(text)
        print(f"wrote {args.output}")
    return 0


def cmd_validate(args) -> int:
    rs = _load(args.results)
    for f in rs.files:
        fams = sorted({e.family for e in f.entries})
        state = "" if f.complete else f"INCOMPLETE ({f.incomplete_reason}), "
        print(f"{f.path}: {state}{len(f.entries)} entries, families: {', '.join(fams) or 'none'}")
    errors = [i for i in rs.issues if i.severity == "error"]
    incomplete = [f.path for f in rs.files if not f.complete]
    if incomplete:
        print(f"gpuprobe-analyze: incomplete: {', '.join(incomplete)}", file=sys.stderr)
    return 1 if errors or incomplete or rs.rejected or not rs.entries else 0


def cmd_fleet(args) -> int:
    from .fleet import Criteria, run
    if _refused("-o", args.output):
        return 2
    return run(args.results, args.output, Criteria(z=args.z, floor_fraction=args.floor_fraction,
                                                   min_within=args.min_gpus), args.reference)


def _device_ceilings(paths: List[str], profiles):
    """The device results' measured ceilings (sections/app_kernels.py), or None (said) when unusable.
    AppVerdictError for a profile of another GPU model, before the ceilings' analysis (seconds)."""
    from . import app_verdict as V
    from .sections.app_kernels import DeviceCeilings, device_name
    rs = _load([p for path in paths for p in result_paths(path)], quiet=True)
    for profile in profiles:  # first: a profile of another GPU is one line, not the results' notes and then it
        if rs.entries:
            V.check_model(profile, device_name(rs))
    for issue in rs.issues:
        print(f"gpuprobe-analyze: {issue}", file=sys.stderr)
    if not _usable(rs):
        return None
    return DeviceCeilings.of(rs)


def cmd_app(args) -> int:
    from . import app_verdict as V
    from . import ncu
    from .report import build_app_report
    if _refused("-o", args.output):
        return 2
    try:
        profile = ncu.read_profile(args.profile)
        device = _device_ceilings(args.device, [profile])
        if device is None:
            return 1
        verdict = device.judge(profile)
    except (ncu.ProfileError, V.AppVerdictError) as exc:
        print(f"gpuprobe-analyze: {exc}", file=sys.stderr)
        return 1
    out = build_app_report(verdict, args.output, args.top)
    print(V.markdown(verdict, args.top), end="")
    print(f"\nwrote {out['html']}\n      {out['md']}\n      {out['json']}")
    return 0


def cmd_app_compare(args) -> int:
    from . import app_verdict as V
    from . import ncu
    if args.output and _refused(f"-o {args.output}: its folder", os.path.dirname(args.output) or "."):
        return 2
    try:
        before, after = ncu.read_profile(args.before), ncu.read_profile(args.after)
        device = _device_ceilings(args.device, [before, after])
        if device is None:
            return 1
        vb, va = device.judge(before), device.judge(after)
    except (ncu.ProfileError, V.AppVerdictError) as exc:
        print(f"gpuprobe-analyze: {exc}", file=sys.stderr)
        return 1
    changes = V.compare(vb, va)
    text = V.compare_markdown(vb, va, changes)
    print(text, end="")
    if args.output:
        data_path = os.path.splitext(args.output)[0] + ".json"
        if data_path == args.output:  # -o X.json: the table must not be overwritten by the data
            data_path = os.path.splitext(args.output)[0] + ".data.json"
        with open(args.output, "w", encoding="utf-8") as fh:
            fh.write(text)
        with open(data_path, "w", encoding="utf-8") as fh:
            json.dump(V.compare_json(vb, va, changes), fh, indent=1, allow_nan=False)
        print(f"wrote {args.output} and {data_path}")
    return 0


def cmd_audit(args) -> int:
    from . import audit
    from .fleet import parse_preset
    rs = _load([p for path in args.results for p in result_paths(path)])
    if not _usable(rs):
        return 1
    figures = []
    if args.fleet_preset:
        with open(args.fleet_preset, encoding="utf-8") as fh:
            text = fh.read()
        try:  # gpuprobe --list-presets (a list of presets) or one preset's declaration
            doc = json.loads(text)
        except ValueError as exc:
            print(f"gpuprobe-analyze: {args.fleet_preset}: not JSON ({exc})", file=sys.stderr)
            return 1
        preset = next((p for p in doc if p.get("preset") == "fleet"), None) if isinstance(doc, list) else doc
        figures, why = parse_preset(json.dumps(preset) if preset is not None else None)
        if why:
            print(f"gpuprobe-analyze: {args.fleet_preset}: no fleet preset ({why})", file=sys.stderr)
            return 1
    found = audit.run(audit.build(rs), figures)
    print(audit.to_text(found, " ".join(args.results)), end="")
    if not figures:
        print("(fleet figures not checked: no --fleet-preset given)")
    return 3 if any(found.values()) else 0


def _fraction(text: str) -> float:
    """argparse type of --floor-fraction: a number in (0, 1]."""
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not (math.isfinite(v) and 0 < v <= 1):
        raise argparse.ArgumentTypeError(f"must be in (0, 1], got {text!r}")
    return v


def _at_least(minimum: int):
    """argparse type of a whole number >= minimum (`--top` 1, `--min-gpus` 3)."""
    def parse(text: str) -> int:
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
        if v < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {text!r}")
        return v
    return parse


def _threshold(minimum_exclusive: bool):
    """argparse type of a finite threshold: > 0 (`--sigmas`) or >= 0 (`--floor`, where 0 = none)."""
    def parse(text: str) -> float:
        try:
            v = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if not math.isfinite(v) or v < 0 or (minimum_exclusive and v == 0):
            raise argparse.ArgumentTypeError(
                f"must be a finite number {'> 0' if minimum_exclusive else '>= 0'}, got {text!r}")
        return v
    return parse


def _print_profile(d: dict) -> None:
    from .formatting import fmt, fmt_bytes
    dev = d.get("device", {})
    print(f"Device: {dev.get('gpu_name', 'unknown')} (cc {dev.get('gpu_compute_capability', '?')}, "
          f"{dev.get('gpu_sm_count', '?')} SMs, driver {dev.get('cuda_driver_version', '?')})")
    h = d.get("hierarchy")
    if h and h.get("levels"):
        print(f"\n{'level':<20}{'capacity':>14}{'cycles':>10}{'ns':>10}  edge ending the level")
        for lv in h["levels"]:
            print(f"{lv['name']:<20}{fmt_bytes(lv['capacity_bytes']):>14}{fmt(lv['latency_cycles']):>10}"
                  f"{fmt(lv['latency_ns']):>10}  {lv['model']}")
    g = d.get("granularity") or {}
    for lvl, size in (g.get("by_level") or {}).items():
        print(f"miss unit served by {lvl}: {fmt_bytes(size)}")
    t = d.get("tlb") or {}
    if t.get("page"):
        print(f"page size (the range one TLB entry translates): {fmt_bytes(t['page']['page_bytes'])}")
    for i, r in enumerate(t.get("reach") or []):
        print(f"TLB level {i + 1}: reach {fmt_bytes(r['reach_bytes'])} ({fmt(r['entries'])} entries)")
    b = d.get("bandwidth") or {}
    if b.get("ceilings"):
        print("\nbandwidth ceilings: " + ", ".join(
            f"{k} {fmt(v['gbps'])} GB/s" + (" (unverified)" if v.get("premise") == "unverified" else "")
            for k, v in b["ceilings"].items()))
    prem = d.get("premises") or {}
    if prem.get("declared"):
        # ceilings.premise_report's verdict: whether counters checked what each ceiling assumes.
        failed = prem.get("failed") or 0
        print(f"premises: {prem['verdict']}" + (f"; {failed} of {prem['declared']} entries whose premise failed are "
                                                 "no ceiling" if failed else ""))
    p = d.get("pipelines") or {}
    if p.get("compute_ceilings"):
        print("compute ceilings: " + ", ".join(f"{k} {fmt(v['gflops'])} GFLOP/s" for k, v in p["compute_ceilings"].items()))
    tc = (d.get("tensor") or {}).get("ceilings") or {}
    if tc:
        print("tensor ceilings: " + ", ".join(
            f"{k} {fmt(v['gflops'] / 1e3)} {'TOPS' if v.get('unit') == 'GOP/s' else 'TFLOP/s'}"
            + (f" at {fmt(v['random']['sm_clock_mhz'])} MHz" if (v.get("random") or {}).get("sm_clock_mhz") else "")
            for k, v in tc.items() if v.get("gflops")))
    for r in (d.get("transfers") or {}).get("fits", []):
        if "alpha_us" in r:
            key = "/".join(str(v) for v in r["key"].values() if v)
            print(f"transfer {key}: " + (f"α {fmt(r['alpha_us'])} µs, β {fmt(r['beta_gbps'])} GB/s, "
                                         f"rms error {100 * r['rms_rel_error']:.1f} %" if r.get("fits", True) else
                                         r.get("summary") or r.get("verdict", "")))
    for n in d.get("notes", []):
        print(f"note: {n}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="gpuprobe-analyze", description=(
        "Analysis of gpuprobe result files (Google Benchmark JSON, docs/results-schema.md). "
        "A missing FILE falls back to FILE.partial (an incomplete run), with a warning."))
    sub = ap.add_subparsers(dest="command", required=True)
    r = sub.add_parser("report", help="device profile, roofline, optimality, plots; report.html + report.md")
    r.add_argument("results", nargs="+", help="result files (merged as one device)")
    r.add_argument("-o", "--output", required=True, help="output directory")
    r.add_argument("--title", default=None)
    r.set_defaults(func=cmd_report)
    p = sub.add_parser("profile", help="print the device profile; -o DIR writes DIR/device-profile.json")
    p.add_argument("results", nargs="+")
    p.add_argument("-o", "--output", default=None)
    p.set_defaults(func=cmd_profile)
    c = sub.add_parser("compare", help="two result sets (two GPUs, or two runs): ceilings, kernels and families "
                       "side by side, then the changes beyond the recorded noise (CV)")
    c.add_argument("a", help="a result file, or a folder of them (premises/counters/results.json[.gz])")
    c.add_argument("b", help="the same for B")
    c.add_argument("--no-summary", action="store_true",
                   help="leave out the ceilings and kernels (they need each set's device profile: seconds)")
    c.add_argument("--sigmas", type=_threshold(True), default=2.0, help="threshold in units of sqrt(cv_a^2 + cv_b^2) (default 2)")
    c.add_argument("--floor", type=_threshold(False), default=0.0, help="minimum change in percent (default 0)")
    c.add_argument("-o", "--output", default=None, help="also write the table as Markdown here")
    c.set_defaults(func=cmd_compare)
    v = sub.add_parser("validate", help="check result files against the schema; exit 1 on errors")
    v.add_argument("results", nargs="+")
    v.set_defaults(func=cmd_validate)
    fl = sub.add_parser("fleet", help="one result file per GPU (gpuprobe --preset=fleet): flag the slow or faulty "
                        "GPUs of each model; exit 3 when any is flagged (docs/fleet.md)")
    fl.add_argument("results", nargs="+", help="result files or folders holding them (one file per GPU)")
    fl.add_argument("-o", "--output", required=True, help="output directory: fleet.json, fleet.md, fleet.png")
    # One path per --reference (repeat it for several files of one run): a list would take the
    # positional folder after it as a reference file.
    fl.add_argument("--reference", action="append", default=None, metavar="FILE_OR_DIR",
                    help="a run on one GPU of a model (e.g. reports/h100; repeat for several files of one run): "
                         "absolute floors for that model at --floor-fraction x its figures (for a lower-is-better "
                         "figure a ceiling: its figure / fraction; a figure of wide tolerance t: fraction at most "
                         "1 - 2 t)")
    fl.add_argument("--floor-fraction", type=_fraction, default=0.75,
                    help="floors as this fraction of the reference's figures (default 0.75, as DCGM's)")
    fl.add_argument("--z", type=_threshold(True), default=3.5,
                    help="robust z beyond which a GPU is an outlier of its model (default 3.5)")
    fl.add_argument("--min-gpus", type=_at_least(3), default=8,
                    help="GPUs of one model needed to compare them with each other (default 8)")
    fl.set_defaults(func=cmd_fleet)
    a = sub.add_parser("app", help="an application's Nsight Compute profile judged against the device results' "
                       "measured ceilings: app-kernels.html/.md/.json (docs/app-profiling.md)")
    a.add_argument("profile", help="the profile: ncu's raw-page CSV export or the .ncu-rep")
    a.add_argument("--device", nargs="+", required=True, metavar="RESULTS",
                   help="the device results: result files, or folders holding them (e.g. reports/h100)")
    a.add_argument("-o", "--output", required=True, help="output directory (not one holding files tracked by git)")
    a.add_argument("--top", type=_at_least(1), default=20, help="kernels in the table and the figure (default 20)")
    a.set_defaults(func=cmd_app)
    ac = sub.add_parser("app-compare", help="two profiles of one application (before and after a change) kernel by "
                        "kernel, matched by kernel name and launch shape")
    ac.add_argument("before")
    ac.add_argument("after")
    ac.add_argument("--device", nargs="+", required=True, metavar="RESULTS", help="as for app")
    ac.add_argument("-o", "--output", default=None, help="also write the table here (Markdown) and FILE's .json")
    ac.set_defaults(func=cmd_app_compare)
    au = sub.add_parser("audit", help="the report of the inputs checked against its own data (docs/analysis.md#report-"
                        "audit); exit 3 when a check fails")
    au.add_argument("results", nargs="+", help="result files or a folder of them (premises/counters/results.json[.gz])")
    au.add_argument("--fleet-preset", default=None, metavar="JSON",
                    help="gpuprobe --list-presets output: also check that the fleet figures take the report's ceilings")
    au.set_defaults(func=cmd_audit)
    args = ap.parse_args(argv)
    try:
        return args.func(args)
    except KeyboardInterrupt:
        return 130
    except OSError as exc:
        print(f"gpuprobe-analyze: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
