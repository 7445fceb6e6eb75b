#!/usr/bin/env python3
"""Cross-check of transfer.collective's allreduce with PyTorch (development tool, GPU machine).

torch.distributed with the NCCL backend, one process per GPU (torch.multiprocessing.spawn), the first
--gpus GPUs: sum-allreduce of random floats, in place, at a few sizes. Per size: --warmup calls, then
--iters calls back to back on the rank's current stream with a CUDA event between consecutive calls;
a call's time is the interval between its two events; each rank takes the median over its calls and
the slowest rank's median is the figure. algbw = size / time, busbw = algbw x 2(G-1)/G (nccl-tests'
size and factor, as transfer.collective). Prints one JSON document.

NCCL_NVLS_ENABLE=0 is forced before torch is imported (and inherited by the workers): NVLink
multicast must stay off.

    python3 scripts/dev/torch_allreduce.py --gpus 2 > torch_allreduce.json
"""
import os

os.environ["NCCL_NVLS_ENABLE"] = "0"  # before torch (and NCCL) is loaded anywhere in this process tree

import argparse  # noqa: E402
import json  # noqa: E402
import socket  # noqa: E402
import sys  # noqa: E402
from datetime import timedelta  # noqa: E402

DEFAULT_SIZES = [8, 64 << 10, 1 << 20, 16 << 20, 256 << 20, 1 << 30]


def busbw_factor(ranks: int) -> float:
    return 2.0 * (ranks - 1) / ranks


def worker(rank: int, world: int, args, port: int) -> None:
    os.environ["NCCL_NVLS_ENABLE"] = "0"
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    import torch
    import torch.distributed as dist

    torch.cuda.set_device(rank)
    device = torch.device("cuda", rank)
    # A bounded rendezvous: a rank that never comes ends the run instead of hanging it.
    dist.init_process_group("nccl", rank=rank, world_size=world, device_id=device, timeout=timedelta(seconds=120))
    gen = torch.Generator(device=device).manual_seed(1234 + rank)
    rows = []
    for size in args.sizes:
        # Random in [-1, 1), never zeros. In place, every call multiplies the magnitude by about G:
        # warmup + iters <= 40 calls stay within float's range for G <= 8.
        buf = torch.rand(size // 4, device=device, generator=gen) * 2 - 1
        for _ in range(args.warmup):
            dist.all_reduce(buf)
        torch.cuda.synchronize()
        events = [torch.cuda.Event(enable_timing=True) for _ in range(args.iters + 1)]
        events[0].record()
        for i in range(args.iters):
            dist.all_reduce(buf)
            events[i + 1].record()
        torch.cuda.synchronize()
        times = sorted(events[i].elapsed_time(events[i + 1]) * 1e-3 for i in range(args.iters))
        median = times[len(times) // 2] if len(times) % 2 else 0.5 * (times[len(times) // 2 - 1] + times[len(times) // 2])
        slowest = torch.tensor([median, times[0], times[-1]], dtype=torch.float64, device=device)
        dist.all_reduce(slowest, op=dist.ReduceOp.MAX)
        t, t_min, t_max = (float(v) for v in slowest.cpu())
        algbw = size / t / 1e9
        rows.append({"size_bytes": size, "time_median_s": t, "time_min_s": t_min, "time_max_s": t_max,
                     "algbw_gbps": algbw, "busbw_gbps": algbw * busbw_factor(world),
                     "busbw_factor": busbw_factor(world)})
        del buf
    if rank == 0:
        nccl = torch.cuda.nccl.version()
        doc = {"tool": "torch.distributed all_reduce (scripts/dev/torch_allreduce.py)", "op": "allreduce",
               "ranks": world, "dtype": "float32", "warmup": args.warmup, "iters": args.iters,
               "torch_version": torch.__version__,
               "nccl_version": ".".join(str(v) for v in nccl) if isinstance(nccl, tuple) else str(nccl),
               "gpu_name": torch.cuda.get_device_name(0),
               "nccl_env": " ".join(f"{k}={v}" for k, v in sorted(os.environ.items()) if k.startswith("NCCL_")),
               "method": "per rank: CUDA events between back-to-back in-place all_reduce calls, median over the "
                         "calls; the slowest rank's median; size = bytes per rank; busbw = algbw x 2(G-1)/G",
               "results": rows}
        print(json.dumps(doc, indent=1))
        sys.stdout.flush()
    dist.destroy_process_group()


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--gpus", type=int, default=0, help="ranks, one per GPU 0..N-1 (default: every visible GPU)")
    p.add_argument("--sizes", type=int, nargs="+", default=DEFAULT_SIZES, help="bytes per rank (multiples of 4)")
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--iters", type=int, default=20)
    args = p.parse_args()
    if any(s < 4 or s % 4 for s in args.sizes):
        p.error("sizes must be positive multiples of 4 bytes (float32)")
    if args.warmup < 0 or args.iters < 1 or args.warmup + args.iters > 40:
        p.error("warmup >= 0, iters >= 1, warmup + iters <= 40")
    import torch
    import torch.multiprocessing as mp

    visible = torch.cuda.device_count()
    world = args.gpus or visible
    if world < 2 or world > visible:
        print(f"torch_allreduce: needs 2 <= ranks <= {visible} visible GPUs, asked for {world}", file=sys.stderr)
        return 2
    with socket.socket() as s:  # a free port for the rendezvous
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    mp.spawn(worker, args=(world, args, port), nprocs=world, join=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
