#!/usr/bin/env python3
"""Cross-check of kernels.gemm_lt (our cuBLASLt GEMMs) with PyTorch's matmul (development tool, GPU machine).

For each type, one square GEMM at --n (default 8192) the way PyTorch runs it, in the layout our entries
use (TN: D = A B^T with A and B row-major n x n, i.e. nn.Linear's, which PyTorch hands to cuBLAS as the
column-major A^T B of kernels.gemm_lt):
  bf16, f16  torch.matmul, FP32 accumulation (allow_{bf16,fp16}_reduced_precision_reduction off, so no
             split-K reduction in 16 bits);
  tf32       torch.matmul on float32 with allow_tf32 on;
  e4m3       torch._scaled_mm, scales 1.0 (float32 tensors), out_dtype bfloat16, use_fast_accum off
             (kernels.gemm_lt's contract, gemm_lt.hpp);
  s8         torch._int_mm (int8 in, int32 out);
  f64        torch.matmul on float64.
Operands random in [-1, 1) (s8: integers in [-127, 127]), or zeros with --data zero. Timing as our
entries: warm-up calls until --warmup of them and at least --warmup-seconds after the first, then
--samples calls, each between two CUDA events on the current stream behind a GPU spin of --gate-cycles
(our launch gate's counterpart: the host's work per call stays out of the interval); the figure is 2n^3
over the median call. The SM clock after each sample and the board power after the last come from NVML
when pynvml is installed.

With --compare RESULTS.json (gpuprobe's --benchmark_out of the same call) each line also gives our
entry's median and the ratio torch / ours; |ratio - 1| <= --tolerance (2 %) passes.

    build/gpuprobe --benchmark_filter='^kernels\\.gemm_lt/.*/n:8192/' --benchmark_out=gemm_lt.json
    python3 scripts/dev/gemm_lt_check.py --compare gemm_lt.json

With --gpuprobe EXE instead, the script runs our entries itself, alternating with PyTorch's calls for
--rounds rounds (ours, then PyTorch's, per round), so that a drift of clock or temperature during the
call falls on both; the ratio is the median of the rounds' ratios. Like-for-like needs the same cuBLASLt
call on both sides: --blas cublaslt makes torch.matmul call cuBLASLt (PyTorch's default, cuBLAS's
GemmEx, picks its kernel by other rules), and --workspace-mib offers PyTorch's cuBLAS(Lt) the workspace
our entries offer (64 MiB; PyTorch's own default is smaller, which changes the heuristic's pick).
torch._int_mm passes no workspace whatever the setting.

Exit status: 0, or 1 when a compared type is off by more than the tolerance (2: usage).
"""
import argparse
import math
import json
import os
import statistics
import subprocess
import sys
import tempfile

PRECISIONS = ("bf16", "f16", "tf32", "e4m3", "s8", "f64")


def operands(torch, precision: str, n: int, zero: bool):
    """(a, b) row-major n x n in the type the GEMM reads."""
    dev = "cuda"
    if precision == "s8":
        if zero:
            return (torch.zeros(n, n, dtype=torch.int8, device=dev),) * 2
        return tuple(torch.randint(-127, 128, (n, n), dtype=torch.int8, device=dev) for _ in range(2))
    dtype = {"bf16": torch.bfloat16, "f16": torch.float16, "tf32": torch.float32, "f64": torch.float64,
             "e4m3": torch.float32}[precision]
    make = (lambda: torch.zeros(n, n, dtype=dtype, device=dev)) if zero else \
        (lambda: torch.rand(n, n, dtype=dtype, device=dev) * 2 - 1)
    a, b = make(), make()
    if precision == "e4m3":
        a, b = a.to(torch.float8_e4m3fn), b.to(torch.float8_e4m3fn)
    return a, b


def gemm_call(torch, precision: str, a, b):
    """The callable that runs one GEMM D = A B^T."""
    bt = b.t()  # column-major view of B^T: the layout _scaled_mm and _int_mm want for their second operand
    if precision == "e4m3":
        one = torch.tensor(1.0, device="cuda", dtype=torch.float32)
        return lambda: torch._scaled_mm(a, bt, scale_a=one, scale_b=one, out_dtype=torch.bfloat16,
                                        use_fast_accum=False)
    if precision == "s8":
        return lambda: torch._int_mm(a, bt)
    return lambda: torch.matmul(a, bt)


def time_calls(torch, call, samples: int, warmup: int, warmup_seconds: float, gate_cycles: int = 0):
    """Median seconds of one call after the warm-up, the warm-up calls run, and the median SM clock
    (MHz, NVML, read after each sample as our harness does; None without pynvml)."""
    stream = torch.cuda.current_stream()

    def one():
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        # A gate, as our entries' launch gate: the GPU spins while the host enqueues the start event and
        # the call, so that PyTorch's host work per call (argument checks, cuBLASLt descriptors and
        # heuristic, each call) stays out of the timed interval. Without it, on an H200 the same cuBLASLt
        # kernel timed 12.6 % slower for fp8 (0.93 ms calls) and 1 % for f64 (19.5 ms).
        if gate_cycles:
            torch.cuda._sleep(gate_cycles)
        start.record(stream)
        call()
        end.record(stream)
        end.synchronize()
        return start.elapsed_time(end) / 1e3

    one()  # the first call carries one-time costs (library and kernel loading): never counted
    done, spent = 1, 0.0
    while done < warmup or (spent < warmup_seconds and done < 1000):
        spent += one()
        done += 1
    times, clocks = [], []
    for _ in range(samples):
        times.append(one())
        clocks.append(nvml_state()[0])
    clocks = [c for c in clocks if c is not None]
    return statistics.median(times), done, (statistics.median(clocks) if clocks else None)


_NVML = []


def nvml_state():
    """(SM clock MHz, board power W) now, or (None, None) without pynvml."""
    try:
        import pynvml
        if not _NVML:
            pynvml.nvmlInit()
            _NVML.append(pynvml.nvmlDeviceGetHandleByIndex(0))  # the visible device 0, as torch's "cuda"
        h = _NVML[0]
        return (pynvml.nvmlDeviceGetClockInfo(h, pynvml.NVML_CLOCK_SM),
                pynvml.nvmlDeviceGetPowerUsage(h) / 1e3)
    except Exception:  # noqa: BLE001 -- any failure only means no reading
        return None, None


def our_entries(path: str, n: int, data: str):
    """{precision: (GFLOP/s median, SM clock MHz median or None)} of kernels.gemm_lt entries at n in a
    gpuprobe result file."""
    with open(path, encoding="utf-8") as fh:
        doc = json.load(fh)
    out = {}
    for e in doc.get("benchmarks", []):
        parts = dict(p.split(":", 1) for p in e.get("name", "").split("/")[1:] if ":" in p)
        if e.get("name", "").startswith("kernels.gemm_lt/") and parts.get("n") == str(n) and parts.get("data") == data:
            # A skipped entry (cuBLASLt refused the type) carries its reason instead of figures.
            out[parts["precision"]] = (float(e["value_median"]) if "value_median" in e else math.nan,
                                       e.get("sm_clock_mhz"))
    return out


def time_torch(torch, precision: str, args, flops: float) -> dict:
    """One type's PyTorch GEMM: its median call, and the SM clock and board power after it."""
    torch.backends.cuda.matmul.allow_tf32 = precision == "tf32"
    torch.manual_seed(0)
    a, b = operands(torch, precision, args.n, args.data == "zero")
    seconds, warm, clock = time_calls(torch, gemm_call(torch, precision, a, b), args.samples, args.warmup,
                                      args.warmup_seconds, args.gate_cycles)
    power = nvml_state()[1]
    del a, b
    torch.cuda.empty_cache()
    return {"precision": precision, "n": args.n, "data": args.data, "median_ms": seconds * 1e3,
            "tflops": flops / seconds / 1e12, "warmup_calls": warm, "sm_clock_mhz": clock, "power_w": power}


def run_ours(exe: str, precisions, n: int, data: str) -> dict:
    """{precision: GFLOP/s median} of our entries for these types, run now by `exe`."""
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "gemm_lt.json")
        pattern = f"^kernels\\.gemm_lt/precision:({'|'.join(precisions)})/data:{data}/n:{n}/"
        run = subprocess.run([exe, f"--benchmark_filter={pattern}", f"--benchmark_out={out}",
                              "--benchmark_out_format=json"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if run.returncode != 0:
            raise SystemExit(f"gemm_lt_check: {exe} exited {run.returncode}: {run.stderr.strip()[-400:]}")
        return our_entries(out, n, data)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=8192, help="m = n = k (default 8192)")
    ap.add_argument("--precisions", default=",".join(PRECISIONS), help="comma-separated, of " + ", ".join(PRECISIONS))
    ap.add_argument("--data", choices=("random", "zero"), default="random")
    ap.add_argument("--samples", type=int, default=10, help="timed calls (default 10, as kernels.gemm_lt)")
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--warmup-seconds", type=float, default=0.05)
    ap.add_argument("--compare", metavar="RESULTS.json", help="gpuprobe result file with kernels.gemm_lt entries")
    ap.add_argument("--tolerance", type=float, default=0.02, help="allowed |torch/ours - 1| (default 0.02)")
    ap.add_argument("--json", action="store_true", help="print one JSON document instead of the table")
    ap.add_argument("--gate-cycles", type=int, default=4_000_000,
                    help="GPU cycles spun before each timed call while the host enqueues it (default 4e6, about "
                         "2 ms at 1.98 GHz; 0: none, PyTorch's host time per call then counts)")
    ap.add_argument("--gpuprobe", metavar="EXE", help="run our entries with EXE, alternating with PyTorch's")
    ap.add_argument("--rounds", type=int, default=3, help="alternating rounds with --gpuprobe (default 3)")
    ap.add_argument("--blas", choices=("cublas", "cublaslt"), default="cublas",
                    help="the library torch.matmul calls (default cublas, PyTorch's own default)")
    ap.add_argument("--workspace-mib", type=int,
                    help="workspace PyTorch offers cuBLAS and cuBLASLt (default: PyTorch's own); 64 = our entries'")
    args = ap.parse_args(argv)
    if args.compare and args.gpuprobe:
        ap.error("--compare and --gpuprobe exclude each other")
    if args.workspace_mib:
        # Read by PyTorch when it first creates its cuBLAS(Lt) workspaces: before the import below.
        os.environ["CUBLASLT_WORKSPACE_SIZE"] = str(args.workspace_mib * 1024)  # KiB
        os.environ["CUBLAS_WORKSPACE_CONFIG"] = f":{args.workspace_mib * 1024}:1"  # KiB : buffers
    wanted = [p.strip() for p in args.precisions.split(",") if p.strip()]
    unknown = [p for p in wanted if p not in PRECISIONS]
    if unknown or args.n <= 0 or args.samples <= 0:
        ap.error(f"unknown precision(s) {unknown}" if unknown else "--n and --samples must be positive")

    import torch
    if not torch.cuda.is_available():
        print("gemm_lt_check: no CUDA device visible to torch", file=sys.stderr)
        return 2
    torch.backends.cuda.preferred_blas_library(args.blas)
    torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
    torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False
    flops = 2.0 * args.n ** 3
    rounds = args.rounds if args.gpuprobe else 1
    # Per round and type: ours, then PyTorch's right after it, so that the two share the GPU's state.
    per_round = []  # per round: ({precision: (ours GFLOP/s, ours MHz)}, {precision: torch row})
    for _ in range(rounds):
        ours, torch_rows = {}, {}
        if args.compare:
            ours = our_entries(args.compare, args.n, args.data)
        for p in wanted:
            if args.gpuprobe:
                ours.update(run_ours(args.gpuprobe, [p], args.n, args.data))
            torch_rows[p] = time_torch(torch, p, args, flops)
        per_round.append((ours, torch_rows))
    rows, failed = [], False
    for precision in wanted:
        runs = [t[precision] for _, t in per_round]
        row = dict(runs[-1])
        row["tflops"] = statistics.median(r["tflops"] for r in runs)
        row["median_ms"] = flops / row["tflops"] / 1e9
        ours_r = [o.get(precision) for o, _ in per_round]
        if all(v is not None for v in ours_r):
            row["ours_tflops"] = statistics.median(v[0] / 1e3 for v in ours_r)
            ratios = [t[precision]["tflops"] / (o[precision][0] / 1e3) for o, t in per_round]
            row["torch_over_ours"] = statistics.median(ratios)
            row["round_ratios"] = ratios
            # The same ratio per clock: what is left once each side's own SM clock is divided out.
            per_clock = [t[precision]["tflops"] / t[precision]["sm_clock_mhz"] / (o[precision][0] / 1e3 / o[precision][1])
                         for o, t in per_round if t[precision]["sm_clock_mhz"] and o[precision][1]]
            row["ours_sm_clock_mhz"] = statistics.median(o[1] for o in ours_r) if all(o[1] for o in ours_r) else None
            row["torch_over_ours_per_clock"] = statistics.median(per_clock) if per_clock else None
            row["within_tolerance"] = abs(row["torch_over_ours"] - 1) <= args.tolerance
            failed |= not row["within_tolerance"]
        rows.append(row)
    doc = {"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__, "cuda": torch.version.cuda,
           "blas": args.blas, "workspace_mib": args.workspace_mib, "rounds": rounds,
           "cublaslt_note": "torch's own cuBLAS(Lt) build, which may differ from the one gpuprobe links",
           "tolerance": args.tolerance, "rows": rows}
    if args.json:
        print(json.dumps(doc, indent=1))
    else:
        print(f"{doc['gpu']}, torch {doc['torch']} (CUDA {doc['cuda']}), n = {args.n}, data = {args.data}, "
              f"median of {args.samples} calls; torch.matmul through {args.blas}, workspace "
              f"{args.workspace_mib or 'PyTorch default'} MiB; {rounds} round(s)")
        print(f"{'type':6} {'ms':>9} {'TFLOP/s':>9} {'MHz':>6} {'W':>6} {'ours':>9} {'our MHz':>8} {'torch/ours':>10} "
              f"{'per clock':>9}")
        for r in rows:
            pc = r.get("torch_over_ours_per_clock")
            cmp = (f"{r['ours_tflops']:9.1f} {r['ours_sm_clock_mhz'] or '-':>8} {r['torch_over_ours']:10.3f} "
                   f"{'-' if pc is None else f'{pc:.3f}':>9}{'' if r['within_tolerance'] else '  OFF'}"
                   if "ours_tflops" in r else f"{'-':>9} {'-':>8} {'-':>10} {'-':>9}")
            print(f"{r['precision']:6} {r['median_ms']:9.3f} {r['tflops']:9.1f} {r['sm_clock_mhz'] or '-':>6} "
                  f"{'-' if r['power_w'] is None else round(r['power_w']):>6} {cmp}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
