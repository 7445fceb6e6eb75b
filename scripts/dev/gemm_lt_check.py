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
Operands random in [-1, 1) (s8: integers in [-127, 127]), or zeros with --data zero.

Timing follows our entries' schedule (kernels_gemm_lt.cu): each sample is a batch of back-to-back calls
between two CUDA events, not gated (the host queues calls faster than the GPU runs them); one batch first
(one-time costs), then a warm-up of batches, then --samples batches; the SM clock and the board power are
read from NVML after each sample, as our harness does; the figure is calls x 2n^3 over the median batch.
Both sides start cool (NVML's board power below 70 % of the limit, as our entries wait for) and draw their
operands uniform in [-1, 1) in float64, rounded to the type. Where our entry of the same type ran first (--gpuprobe, --compare) its calls_per_sample and warmup_seconds
are used, so both sides run the same schedule from idle into the power cap's steady state; otherwise
--calls (default: enough for 10 ms) and --warmup-seconds.

With --series SECONDS, each type's PyTorch GEMM instead runs back to back for that long from idle, and
the script prints the rate of each 10 ms batch against time with the SM clock and power: how long the
GPU takes to reach the steady state under the power cap (what our entries' warm-up waits for).

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
import time

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
    # Uniform in [-1, 1) drawn in float64 and rounded to the type, as our entries fill theirs: drawn in
    # the type itself (torch.rand in bfloat16 gives multiples of 2^-8), the operands have fewer mantissa
    # bits set, the tensor cores draw less power and under the cap run at a higher clock (bf16 and f16
    # came out 3 % faster than ours on an H200, tf32 drawn in full float32 did not).
    make = (lambda: torch.zeros(n, n, dtype=dtype, device=dev)) if zero else \
        (lambda: (torch.rand(n, n, dtype=torch.float64, device=dev) * 2 - 1).to(dtype))
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


def timed_batch(torch, call, calls: int) -> float:
    """Seconds of `calls` back-to-back calls between two CUDA events on the current stream."""
    stream = torch.cuda.current_stream()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record(stream)
    for _ in range(calls):
        call()
    end.record(stream)
    end.synchronize()
    return start.elapsed_time(end) / 1e3


def time_calls(torch, call, calls: int, samples: int, warmup_seconds: float):
    """Median seconds of one batch after the warm-up, the warm-up batches run, and the median SM clock
    and board power after the samples (NVML, as our harness reads them; None without pynvml)."""
    timed_batch(torch, call, calls)  # one-time costs (library and kernel loading): never counted
    begin, warm = time.perf_counter(), 1
    while time.perf_counter() - begin < warmup_seconds or warm < 2:
        timed_batch(torch, call, calls)
        warm += 1
    times, clocks, powers = [], [], []
    for _ in range(samples):
        times.append(timed_batch(torch, call, calls))
        clock, power = nvml_state()
        clocks.append(clock)
        powers.append(power)
    clocks = [c for c in clocks if c is not None]
    powers = [p for p in powers if p is not None]
    return (statistics.median(times), warm, statistics.median(clocks) if clocks else None,
            statistics.median(powers) if powers else None)


def cool_down(share: float = 0.7, max_seconds: float = 1.0) -> float:
    """Our entries' cool start (kernels_gemm_lt.cu, cool_down): wait, the GPU idle, until NVML's board
    power is below `share` of the enforced limit, at most max_seconds; the seconds waited."""
    try:
        import pynvml
        nvml_state()
        limit = pynvml.nvmlDeviceGetEnforcedPowerLimit(_NVML[0]) / 1e3
    except Exception:  # noqa: BLE001 -- no NVML: no cool start
        return 0.0
    begin = time.perf_counter()
    while time.perf_counter() - begin < max_seconds and (nvml_state()[1] or 0) >= share * limit:
        time.sleep(0.02)
    return time.perf_counter() - begin


def calls_for(torch, call, target_seconds: float = 0.01) -> int:
    """Calls per batch for a batch of at least target_seconds (our entries' kSampleSeconds)."""
    timed_batch(torch, call, 1)
    return max(1, math.ceil(target_seconds / max(timed_batch(torch, call, 1), 1e-7)))


def series(torch, precision: str, args, flops: float) -> list:
    """The rate of each ~10 ms batch of one type's GEMM run back to back for --series seconds from idle:
    [(seconds since start, TFLOP/s, SM MHz, W)]."""
    torch.backends.cuda.matmul.allow_tf32 = precision == "tf32"
    torch.manual_seed(0)
    a, b = operands(torch, precision, args.n, args.data == "zero")
    call = gemm_call(torch, precision, a, b)
    calls = calls_for(torch, call)
    torch.cuda.synchronize()
    time.sleep(1.0)  # idle first, as before an entry
    rows, begin = [], time.perf_counter()
    while time.perf_counter() - begin < args.series:
        t = timed_batch(torch, call, calls)
        clock, power = nvml_state()
        rows.append((time.perf_counter() - begin, calls * flops / t / 1e12, clock, power))
    del a, b
    torch.cuda.empty_cache()
    return rows


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
    """{precision: {"gflops", "sm_clock_mhz", "calls_per_sample", "warmup_seconds", "power_w"}} of the
    kernels.gemm_lt entries at n in a gpuprobe result file (values None where the entry lacks them)."""
    with open(path, encoding="utf-8") as fh:
        doc = json.load(fh)
    out = {}
    for e in doc.get("benchmarks", []):
        parts = dict(p.split(":", 1) for p in e.get("name", "").split("/")[1:] if ":" in p)
        if e.get("name", "").startswith("kernels.gemm_lt/") and parts.get("n") == str(n) and parts.get("data") == data:
            # A skipped entry (cuBLASLt refused the type) carries its reason instead of figures.
            out[parts["precision"]] = {
                "gflops": float(e["value_median"]) if "value_median" in e else math.nan,
                **{k: e.get(k) for k in ("sm_clock_mhz", "calls_per_sample", "warmup_seconds", "power_w",
                                         "cooldown_seconds")}}
    return out


def time_torch(torch, precision: str, args, flops: float, schedule=None) -> dict:
    """One type's PyTorch GEMM: its median per call, and the SM clock and board power over the samples.
    schedule: our entry of the same type ({"calls_per_sample", "warmup_seconds"}), whose schedule is
    then followed."""
    torch.backends.cuda.matmul.allow_tf32 = precision == "tf32"
    torch.manual_seed(0)
    a, b = operands(torch, precision, args.n, args.data == "zero")
    call = gemm_call(torch, precision, a, b)
    schedule = schedule or {}
    calls = int(schedule.get("calls_per_sample") or args.calls or calls_for(torch, call))
    warmup_seconds = float(schedule.get("warmup_seconds") or args.warmup_seconds)
    torch.cuda.synchronize()
    cooled = cool_down()
    seconds, warm, clock, power = time_calls(torch, call, calls, args.samples, warmup_seconds)
    del a, b
    torch.cuda.empty_cache()
    return {"precision": precision, "n": args.n, "data": args.data, "median_ms": seconds / calls * 1e3,
            "tflops": calls * flops / seconds / 1e12, "calls_per_sample": calls, "warmup_seconds": warmup_seconds,
            "cooldown_seconds": cooled,
            "warmup_batches": warm, "sm_clock_mhz": clock, "power_w": power}


def run_ours(exe: str, precisions, n: int, data: str) -> dict:
    """our_entries() of our entries for these types, run now by `exe`."""
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
    ap.add_argument("--samples", type=int, default=10, help="timed batches (default 10, as kernels.gemm_lt)")
    ap.add_argument("--calls", type=int, help="calls per batch where no entry of ours gives it (default: >= 10 ms)")
    ap.add_argument("--warmup-seconds", type=float, default=0.5,
                    help="warm-up where no entry of ours gives it (default 0.5)")
    ap.add_argument("--series", type=float, metavar="SECONDS",
                    help="instead: each type's GEMM back to back for SECONDS from idle, the rate per batch")
    ap.add_argument("--compare", metavar="RESULTS.json", help="gpuprobe result file with kernels.gemm_lt entries")
    ap.add_argument("--tolerance", type=float, default=0.02, help="allowed |torch/ours - 1| (default 0.02)")
    ap.add_argument("--json", action="store_true", help="print one JSON document instead of the table")
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
    if args.series:
        for p in wanted:
            rows = series(torch, p, args, flops)
            print(f"# {p} n={args.n} data={args.data}: seconds TFLOP/s SM_MHz W (one ~10 ms batch per line)")
            for t, rate, clock, power in rows:
                print(f"{p} {t:8.4f} {rate:9.1f} {clock or '-'} {'-' if power is None else round(power)}")
        return 0
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
            torch_rows[p] = time_torch(torch, p, args, flops, ours.get(p))
        per_round.append((ours, torch_rows))
    rows, failed = [], False
    for precision in wanted:
        runs = [t[precision] for _, t in per_round]
        row = dict(runs[-1])
        row["tflops"] = statistics.median(r["tflops"] for r in runs)
        row["median_ms"] = flops / row["tflops"] / 1e9
        ours_r = [o.get(precision) for o, _ in per_round]
        if all(v is not None for v in ours_r):
            row["ours_tflops"] = statistics.median(v["gflops"] / 1e3 for v in ours_r)
            ratios = [t[precision]["tflops"] / (o[precision]["gflops"] / 1e3) for o, t in per_round]
            row["torch_over_ours"] = statistics.median(ratios)
            row["round_ratios"] = ratios
            # The same ratio per clock: what is left once each side's own SM clock is divided out.
            per_clock = [t[precision]["tflops"] / t[precision]["sm_clock_mhz"]
                         / (o[precision]["gflops"] / 1e3 / o[precision]["sm_clock_mhz"])
                         for o, t in per_round if t[precision]["sm_clock_mhz"] and o[precision]["sm_clock_mhz"]]
            clocks = [o["sm_clock_mhz"] for o in ours_r]
            row["ours_sm_clock_mhz"] = statistics.median(clocks) if all(clocks) else None
            powers = [o["power_w"] for o in ours_r]
            row["ours_power_w"] = statistics.median(powers) if all(powers) else None
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
              f"median of {args.samples} batches; torch.matmul through {args.blas}, workspace "
              f"{args.workspace_mib or 'PyTorch default'} MiB; {rounds} round(s)")
        print(f"{'type':6} {'calls':>5} {'warm s':>6} {'ms':>8} {'TFLOP/s':>8} {'MHz':>5} {'W':>4} {'ours':>8} "
              f"{'MHz':>5} {'W':>4} {'torch/ours':>10} {'per clock':>9}  rounds")

        def num(v, fmt="{:.0f}"):
            return "-" if v is None else fmt.format(v)
        for r in rows:
            pc = r.get("torch_over_ours_per_clock")
            cmp = (f"{r['ours_tflops']:8.1f} {num(r['ours_sm_clock_mhz']):>5} {num(r['ours_power_w']):>4} "
                   f"{r['torch_over_ours']:10.3f} {num(pc, '{:.3f}'):>9}  "
                   + " ".join(f"{x:.3f}" for x in r["round_ratios"]) + ("" if r["within_tolerance"] else "  OFF")
                   if "ours_tflops" in r else f"{'-':>8} {'-':>5} {'-':>4} {'-':>10} {'-':>9}")
            print(f"{r['precision']:6} {r['calls_per_sample']:5d} {r['warmup_seconds']:6.2f} {r['median_ms']:8.3f} "
                  f"{r['tflops']:8.1f} {num(r['sm_clock_mhz']):>5} {num(r['power_w']):>4} {cmp}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
