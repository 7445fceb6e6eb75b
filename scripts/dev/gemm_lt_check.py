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
--samples calls, each between two CUDA events on the current stream; the figure is 2n^3 over the median
call. The SM clock and board power after the samples come from NVML when pynvml is installed.

With --compare RESULTS.json (gpuprobe's --benchmark_out of the same call) each line also gives our
entry's median and the ratio torch / ours; |ratio - 1| <= --tolerance (2 %) passes.

    build/gpuprobe --benchmark_filter='^kernels\\.gemm_lt/.*/n:8192$' --benchmark_out=gemm_lt.json
    python3 scripts/dev/gemm_lt_check.py --compare gemm_lt.json

Exit status: 0, or 1 when a compared type is off by more than the tolerance (2: usage).
"""
import argparse
import math
import json
import statistics
import sys

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


def time_calls(torch, call, samples: int, warmup: int, warmup_seconds: float):
    """Median seconds of one call, after the warm-up; and the warm-up calls run."""
    stream = torch.cuda.current_stream()

    def one():
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
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
    return statistics.median(one() for _ in range(samples)), done


def nvml_state():
    """(SM clock MHz, board power W) now, or (None, None) without pynvml."""
    try:
        import pynvml
        pynvml.nvmlInit()
        h = pynvml.nvmlDeviceGetHandleByIndex(0)  # the visible device 0, as torch's "cuda"
        return (pynvml.nvmlDeviceGetClockInfo(h, pynvml.NVML_CLOCK_SM),
                pynvml.nvmlDeviceGetPowerUsage(h) / 1e3)
    except Exception:  # noqa: BLE001 -- any failure only means no reading
        return None, None


def our_entries(path: str, n: int, data: str):
    """{precision: GFLOP/s median} of kernels.gemm_lt entries at n in a gpuprobe result file."""
    with open(path, encoding="utf-8") as fh:
        doc = json.load(fh)
    out = {}
    for e in doc.get("benchmarks", []):
        parts = dict(p.split(":", 1) for p in e.get("name", "").split("/")[1:] if ":" in p)
        if e.get("name", "").startswith("kernels.gemm_lt/") and parts.get("n") == str(n) and parts.get("data") == data:
            # A skipped entry (cuBLASLt refused the type) carries its reason instead of figures.
            out[parts["precision"]] = float(e["value_median"]) if "value_median" in e else math.nan
    return out


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
    args = ap.parse_args(argv)
    wanted = [p.strip() for p in args.precisions.split(",") if p.strip()]
    unknown = [p for p in wanted if p not in PRECISIONS]
    if unknown or args.n <= 0 or args.samples <= 0:
        ap.error(f"unknown precision(s) {unknown}" if unknown else "--n and --samples must be positive")

    import torch
    if not torch.cuda.is_available():
        print("gemm_lt_check: no CUDA device visible to torch", file=sys.stderr)
        return 2
    torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
    torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False
    ours = our_entries(args.compare, args.n, args.data) if args.compare else {}
    flops = 2.0 * args.n ** 3
    rows, failed = [], False
    for precision in wanted:
        torch.backends.cuda.matmul.allow_tf32 = precision == "tf32"
        torch.manual_seed(0)
        a, b = operands(torch, precision, args.n, args.data == "zero")
        seconds, warm = time_calls(torch, gemm_call(torch, precision, a, b), args.samples, args.warmup,
                                   args.warmup_seconds)
        clock, power = nvml_state()
        row = {"precision": precision, "n": args.n, "data": args.data, "median_ms": seconds * 1e3,
               "tflops": flops / seconds / 1e12, "warmup_calls": warm, "sm_clock_mhz": clock, "power_w": power}
        if precision in ours:
            row["ours_tflops"] = ours[precision] / 1e3
            row["torch_over_ours"] = row["tflops"] / row["ours_tflops"]
            row["within_tolerance"] = abs(row["torch_over_ours"] - 1) <= args.tolerance
            failed |= not row["within_tolerance"]
        rows.append(row)
        del a, b
        torch.cuda.empty_cache()
    doc = {"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__, "cuda": torch.version.cuda,
           "cublaslt_note": "torch's own cuBLAS(Lt) build, which may differ from the one gpuprobe links",
           "tolerance": args.tolerance, "rows": rows}
    if args.json:
        print(json.dumps(doc, indent=1))
    else:
        print(f"{doc['gpu']}, torch {doc['torch']} (CUDA {doc['cuda']}), n = {args.n}, data = {args.data}, "
              f"median of {args.samples} calls")
        print(f"{'type':6} {'ms':>9} {'TFLOP/s':>9} {'MHz':>6} {'W':>6} {'ours':>9} {'torch/ours':>10}")
        for r in rows:
            cmp = (f"{r['ours_tflops']:9.1f} {r['torch_over_ours']:10.3f}{'' if r['within_tolerance'] else '  OFF'}"
                   if "ours_tflops" in r else f"{'-':>9} {'-':>10}")
            print(f"{r['precision']:6} {r['median_ms']:9.3f} {r['tflops']:9.1f} {r['sm_clock_mhz'] or '-':>6} "
                  f"{'-' if r['power_w'] is None else round(r['power_w']):>6} {cmp}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
