"""Generator of schema-conformant synthetic gpuprobe result files (docs/results-schema.md) with a
known ground truth, for the tests. The device is a parameter: nothing here is one real GPU."""
from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from typing import Dict, List, Optional

import numpy as np


@dataclass
class Device:
    name: str = "Synthetic GPU A"
    sm_count: int = 100
    clock_mhz: float = 1500.0
    l1_bytes: float = 192 * 1024
    l2_near_bytes: float = 20e6
    l2_bytes: float = 40e6
    lat_cycles: tuple = (30.0, 220.0, 290.0, 620.0)  # L1, L2 near, L2 far, DRAM
    sector_bytes: float = 32.0  # miss unit when L2 serves
    line_bytes: float = 128.0  # what a cache allocates per access: decides which level holds a chain
    dram_unit_bytes: float = 64.0  # miss unit when DRAM serves
    page_bytes: float = 2 * 2**20
    tlb_reach: tuple = (64 * 2**20, 2 * 2**30)  # bytes covered by each TLB level
    tlb_penalty_cycles: tuple = (60.0, 250.0)
    tlb_strides: tuple = tuple(2**k for k in (14, 16, 18, 20, 21, 22, 24, 26))
    tlb_max_footprint: float = 16 * 2**30
    tlb_max_elements: int = 2**17
    # Footprints per octave of the sweeps: memory.tlb's and the random chains' of memory.latency.
    tlb_per_octave: int = 4
    latency_per_octave: int = 4
    # Edges of the random chains' levels: "gradual" (a level keeps its capacity of a larger footprint) or
    # "step" (fully associative LRU under a cyclic chain: sharp).
    latency_edges: str = "gradual"
    # Whether the random chains of memory.latency pay the TLB's misses beyond its reach (a random chain
    # over F bytes misses a level of reach R on 1 - R / F of its loads), as real chains do.
    latency_tlb_misses: bool = False
    bw_gbps: tuple = (60000.0, 9000.0, 2500.0)  # L1 (aggregate), L2, DRAM
    # Edges of the bandwidth curve: the probe gives every SM a reuse distance = the working set, so L1
    # serves working sets up to ~its capacity (as on real data), not SM count x L1.
    bw_caps: tuple = (192 * 1024, 40e6)
    theoretical_dram_gbps: float = 3000.0
    fp32_ops_per_clk_sm: float = 128.0  # FFMA per clock per SM
    fp64_ops_per_clk_sm: float = 64.0
    banks: int = 32
    transfer: Dict[str, tuple] = field(default_factory=lambda: {  # (alpha s, beta B/s)
        "h2d/pinned": (8e-6, 25e9), "d2h/pinned": (9e-6, 26e9), "h2d/pageable": (15e-6, 10e9)})
    # Peer-to-peer: GPUs in the machine (1: the probe registers nothing), GB/s per (engine, direction)
    # (both ways: the two copies together), and ordered pairs whose link runs at a fraction of that.
    gpus: int = 1
    p2p_gbps: Dict[tuple, float] = field(default_factory=lambda: {
        ("ce", "uni"): 380.0, ("ce", "bidir"): 745.0, ("sm", "uni"): 360.0, ("sm", "bidir"): 700.0})
    p2p_slow_pairs: Dict[tuple, float] = field(default_factory=dict)  # (src, dst) -> fraction
    p2p_chase_ns: float = 850.0
    p2p_copy_ns: float = 2400.0
    # NCCL collectives per (op, G) (only with gpus > 1): (alpha s, beta B/s of algorithm bandwidth),
    # time = alpha + size / beta.
    collectives: Dict[tuple, tuple] = field(default_factory=lambda: {
        ("allreduce", 2): (12e-6, 150e9), ("reduce", 2): (10e-6, 300e9), ("reducescatter", 2): (9e-6, 320e9),
        ("allgather", 2): (9e-6, 330e9), ("broadcast", 2): (8e-6, 310e9),
        ("allreduce", 4): (18e-6, 110e9), ("allgather", 4): (14e-6, 200e9)})


def mixture(f, caps, levels, model):
    """The analysis' level model, written independently: fraction served by each level."""
    served_before = 0.0
    out = 0.0
    for i, lv in enumerate(levels):
        if i < len(caps):
            cum = min(1.0, caps[i] / f) if model == "gradual" else (1.0 if f <= caps[i] else 0.0)
            cum = max(cum, served_before)
        else:
            cum = 1.0
        out += (cum - served_before) * lv
        served_before = cum
    return out


def set_associative(f, caps, ways, levels, line=128):
    """Latency of a cyclic random chase over nested set-associative LRU caches with hashed sets:
    a set that receives more lines than its ways misses on every access (cyclic), and the lines per
    set are Poisson-distributed, so a level serves P(N <= ways - 1) of the accesses
    (N ~ Poisson(ways * f / capacity)): a smeared edge around the capacity."""
    served_before, out = 0.0, 0.0
    for i, lv in enumerate(levels):
        if i < len(caps):
            lam = ways[i] * f / caps[i]
            k = np.arange(ways[i])
            logp = -lam + k * math.log(lam) - np.array([math.lgamma(j + 1) for j in k])
            cum = max(float(np.exp(logp).sum()), served_before)
        else:
            cum = 1.0
        out += (cum - served_before) * lv
        served_before = cum
    return out


class Builder:
    def __init__(self, dev: Device, noise: float, seed: int):
        self.dev = dev
        self.noise = noise
        self.rng = np.random.default_rng(seed)
        self.entries: List[dict] = []

    def jitter(self, v: float) -> float:
        return float(v * math.exp(self.rng.normal(0.0, self.noise))) if self.noise else float(v)

    def add(self, family, params: Dict[str, str], unit: str, method: str, value: float, counters=None, tags=None,
            seconds: Optional[float] = None, work: Optional[dict] = None):
        name = family + "".join(f"/{k}:{v}" for k, v in params.items())
        label = f"probe={family};unit={unit};method={method}" + "".join(f";{k}={v}" for k, v in (tags or {}).items())
        v = self.jitter(value)
        secs = seconds if seconds is not None else 1e-5
        e = {"name": name, "family_index": len(self.entries), "per_family_instance_index": 0, "run_name": name,
             "run_type": "iteration", "repetitions": 1, "repetition_index": 0, "threads": 1, "iterations": 10,
             "real_time": secs * 1e6, "cpu_time": secs * 1e6, "time_unit": "us", "label": label,
             "samples": 10, "value_median": v, "value_min": v * 0.99, "value_max": v * 1.01, "value_mean": v,
             "value_cv": max(self.noise, 1e-4), "time_median_s": secs, "time_cv": max(self.noise, 1e-4),
             "sm_clock_mhz": self.dev.clock_mhz}
        if work:
            for k, w in work.items():
                e[k] = w
        e.update(counters or {})
        self.entries.append(e)
        return e


def premise(level: str, counters: bool, ratio: float = 1.0, ok: bool = True):
    """The premise fields gpuprobe writes: tags (declared level and rule, and the check when counters ran)
    and counters (premise_ok, premise_ratio), as (tags, counters)."""
    tags = {"premise_level": level, "premise_rule": f"{level} serves the counted bytes"}
    if not counters:
        return tags, {}
    tags["premise"] = "ok" if ok else f"failed: {level} bytes {ratio:.3f}x the counted (needs 0.97-1.03x)"
    return tags, {"premise_ok": 1.0 if ok else 0.0, "premise_ratio": ratio}


def footprints(lo, hi, per_octave):
    out, i = [], 0
    while True:
        f = int(round(lo * 2 ** (i / per_octave) / 64) * 64)
        if f > hi:
            return sorted(set(out))
        out.append(f)
        i += 1


def synth_results(dev: Optional[Device] = None, noise: float = 0.01, seed: int = 0, counters: bool = True,
                  families: Optional[List[str]] = None) -> dict:
    dev = dev or Device()
    b = Builder(dev, noise, seed)
    ghz = dev.clock_mhz / 1e3
    want = (lambda f: True) if families is None else (lambda f: f in families)
    lat_method = "one thread follows a chain of 64-bit pointers; clock64 around 4096 loads"

    if want("memory.latency"):
        l1, near, far, dram = dev.lat_cycles
        for load, caps, levels in (("ca", (dev.l1_bytes, dev.l2_near_bytes, dev.l2_bytes), (l1, near, far, dram)),
                                   ("cg", (dev.l2_near_bytes, dev.l2_bytes), (near, far, dram))):
            for f in footprints(1024, 4 * 2**30, dev.latency_per_octave):
                tlb = sum(p * max(0.0, 1.0 - r / f) for r, p in zip(dev.tlb_reach, dev.tlb_penalty_cycles)
                          ) if dev.latency_tlb_misses else 0.0
                cyc = b.jitter(mixture(f, caps, levels, dev.latency_edges) + tlb)
                b.add("memory.latency", {"pattern": "random", "load": load, "stride": "128", "footprint": str(f)},
                      "cycles", lat_method, cyc, {"footprint": f, "stride": 128, "elements": f // 128,
                                                   "cycles_per_op": cyc, "ns_per_op": cyc / ghz,
                                                   "ops_per_sample": 4096}, {"pattern": "random", "load": load})
        for f in (4096, 16384):
            b.add("memory.latency", {"pattern": "random", "load": "shared", "stride": "4", "footprint": str(f)}, "cycles",
                  lat_method, 25.0, {"footprint": f, "stride": 4, "cycles_per_op": 25.0, "ns_per_op": 25 / ghz},
                  {"pattern": "random", "load": "shared"})
        # Fixed-stride chains: within a level every access hits; beyond, one miss per unit.
        for s in [8 * 2**i for i in range(10)]:
            for f in footprints(max(1024, 16 * s), 1 * 2**30, 1):
                if f // s > 2**20:
                    break
                # A stride past a line touches fewer lines: the level that holds them serves the misses.
                lines = f * min(1.0, dev.line_bytes / s)
                if lines <= dev.l1_bytes:
                    cyc = l1
                elif lines <= dev.l2_near_bytes:
                    cyc = l1 + (near - l1) * min(1.0, s / dev.sector_bytes)
                elif lines <= dev.l2_bytes:
                    cyc = l1 + (far - l1) * min(1.0, s / dev.sector_bytes)
                else:
                    cyc = l1 + (dram - l1) * min(1.0, s / dev.dram_unit_bytes)
                cyc = b.jitter(cyc)
                b.add("memory.latency", {"pattern": "stride", "load": "ca", "stride": str(s), "footprint": str(f)},
                      "cycles", lat_method, cyc, {"footprint": f, "stride": s, "cycles_per_op": cyc,
                                                   "ns_per_op": cyc / ghz}, {"pattern": "stride", "load": "ca"})
    if want("memory.tlb"):
        base = dev.lat_cycles[2]
        for s in dev.tlb_strides:
            for f in footprints(8 * s, dev.tlb_max_footprint, dev.tlb_per_octave):
                if f // s > dev.tlb_max_elements:
                    break
                # A chain of f / s elements touches f / max(s, page) pages; a level of reach r covers
                # r / page of them; below the page, page / s loads share one translation.
                pages = f / max(s, dev.page_bytes)
                cyc = base + sum(p * (1.0 if pages > r / dev.page_bytes else 0.0) * min(1.0, s / dev.page_bytes)
                                 for r, p in zip(dev.tlb_reach, dev.tlb_penalty_cycles))
                cyc = b.jitter(cyc)
                b.add("memory.tlb", {"pattern": "stride", "load": "ca", "stride": str(s), "footprint": str(f)}, "cycles",
                      "fixed-stride pointer chase", cyc, {"footprint": f, "stride": s, "cycles_per_op": cyc,
                                                          "ns_per_op": cyc / ghz}, {"pattern": "stride", "load": "ca"})
    if want("memory.bandwidth"):
        inv = [1.0 / v for v in dev.bw_gbps]
        for kernel, scale in (("read", 1.0), ("copy", 0.92)):
            for f in footprints(64 * 2**10, 4 * 2**30, 4):
                gbps = scale / mixture(f, dev.bw_caps, inv, "gradual")
                # As gpuprobe: only working sets far beyond the L2 claim DRAM.
                tags, pc = premise("DRAM", counters) if f > 4 * dev.l2_bytes else ({}, {})
                b.add("memory.bandwidth", {"kernel": kernel, "vector": "16", "footprint": str(f)}, "GB/s",
                      "grid-stride loop over the footprint, repeated", gbps,
                      {"footprint": f, "vector": 16, "blocks_per_sm": 4, "gbps": gbps, **pc},
                      {"kernel": kernel, **tags})
    if want("memory.l2_bandwidth"):
        # One walker per SM: the near partition's rate up to its capacity, the far rate beyond (85 %).
        for kernel, scale in (("read_cg", 1.0), ("write", 0.9), ("copy", 0.8)):
            for f in footprints(2**20, dev.l2_bytes, 4):
                gbps = dev.bw_gbps[1] * scale * (1.0 if f <= dev.l2_near_bytes else 0.85)
                tags, pc = premise("L2", counters)
                b.add("memory.l2_bandwidth", {"kernel": kernel, "walk": "own_slice", "loads": "4", "footprint": str(f)},
                      "GB/s", "one walker per SM, ld.global.cg", gbps,
                      {"footprint": f, "vector": 16, "loads": 4, **pc},
                      {"kernel": kernel, "walk": "own_slice", **tags})
    if want("memory.l1_peak"):
        for vector in (8, 16):
            tags, pc = premise("L1", counters)
            b.add("memory.l1_peak", {"vector": str(vector)}, "GB/s", "per-block resident arrays",
                  dev.bw_gbps[0] * (1.0 if vector == 16 else 0.99), {"vector": vector, **pc}, tags)
    if want("memory.stride"):
        dram = dev.bw_gbps[2]
        for s in (1, 2, 4, 8, 16, 32):
            b.add("memory.stride", {"stride": str(s), "offset": "0"}, "GB/s", "float loads at stride", dram / min(s, 8),
                  {"stride": s, "offset": 0})
        for off in (4, 8, 64):
            b.add("memory.stride", {"stride": "1", "offset": str(off)}, "GB/s", "float loads at stride", dram * 0.8,
                  {"stride": 1, "offset": off})
    if want("memory.bank_conflicts"):
        for s in (1, 2, 4, 8, 16, 32, 64):
            b.add("memory.bank_conflicts", {"word": "4", "stride": str(s)}, "cycles", "32-bit shared loads",
                  2.0 * math.gcd(s, dev.banks), {"stride": s, "word": 4})
    if want("memory.shared_bandwidth"):
        tags, pc = premise("shared", counters)
        b.add("memory.shared_bandwidth", {"vector": "16"}, "GB/s", "shared loads", dev.bw_gbps[0] * 0.9,
              {"vector": 16, **pc}, tags)
    if want("baseline.memcpy_d2d"):
        for size in (256 * 2**20, 2**30):
            b.add("baseline.memcpy_d2d", {"size": str(size)}, "GB/s", "cudaMemcpyAsync device-to-device",
                  dev.bw_gbps[2] * 0.9, {"size": size})
    if want("exec.latency"):
        for op, c in (("ffma", 4.0), ("dfma", 8.0), ("imad", 4.0), ("rsqrt", 18.0)):
            b.add("exec.latency", {"op": op}, "cycles", "dependent chain", c, {"ops_per_sample": 65536,
                                                                               "cycles_per_op": c}, {"op": op})
    if want("exec.throughput"):
        for op, peak in (("ffma", dev.fp32_ops_per_clk_sm), ("dfma", dev.fp64_ops_per_clk_sm)):
            for warps in (8, 32):
                for ilp in (1, 2, 4, 8):
                    v = min(peak, peak * ilp * warps / 128)
                    b.add("exec.throughput", {"op": op, "ilp": str(ilp), "warps_per_sm": str(warps)}, "ops/clk/SM",
                          "independent chains", v, {"ilp": ilp, "warps_per_sm": warps,
                                                    "sm_clock_kernel_mhz": dev.clock_mhz}, {"op": op})
            b.add("exec.throughput_peak", {"op": op}, "ops/clk/SM", "best configuration re-measured", peak,
                  {"ilp": 8, "warps_per_sm": 32, "sm_clock_kernel_mhz": dev.clock_mhz,
                   "theoretical_ops_per_clk_per_sm": peak * 1.0, "fraction_of_theoretical": 1.0,
                   "theoretical_gflops_at_kernel_clock": peak * 2 * dev.sm_count * dev.clock_mhz * 1e-3,
                   **premise("compute", counters)[1]},
                  {"op": op, **premise("compute", counters)[0]})
    if want("exec.launch"):
        for fam, api, us in (("exec.launch_rate", "triple_chevron", 2.5), ("exec.launch_rate", "graph", 1.1),
                             ("exec.launch_sync", "triple_chevron", 9.0)):
            b.add(fam, {"api": api, "grid": "1"}, "ns", "back-to-back launches", us * 1e3,
                  {"grid": 1, "ops_per_sample": 1000}, {"api": api})
    if want("exec.barrier"):
        for blocks in (1, 16, 132):
            b.add("exec.barrier", {"barrier": "cg_grid_sync", "blocks": str(blocks)}, "ns", "cooperative grid sync",
                  800 + 3 * blocks, {"blocks": blocks}, {"barrier": "cg_grid_sync"})
    if want("transfer.host"):
        for key, (alpha, beta) in dev.transfer.items():
            direction, memory = key.split("/")
            for size in [4096 * 4**i for i in range(9)]:
                t = b.jitter(alpha + size / beta)
                b.add("transfer.host", {"memory": memory, "engine": "ce", "direction": direction, "size": str(size)},
                      "GB/s", "one transfer timed with CUDA events", size / t / 1e9,
                      {"size": size, "bytes_per_sample": size, "gbps": size / t / 1e9, "ops_per_sample": 1,
                       "ns_per_op": t * 1e9}, {"memory": memory, "engine": "ce", "direction": direction}, seconds=t)
        for direction in ("h2d", "d2h"):
            b.add("transfer.memcpy_baseline", {"direction": direction, "size": str(2**28)}, "GB/s",
                  "blocking cudaMemcpy", 24.0, {"size": 2**28}, {"memory": "pinned", "direction": direction})
    if want("transfer.collective") and dev.gpus > 1:
        collective_entries(b, dev)
    if want("kernels"):
        _kernels(b, dev, counters)
    if want("transfer.p2p") and dev.gpus > 1:
        _p2p(b, dev)
    doc = {"context": context(dev), "benchmarks": b.entries}
    return doc


def collective_factor(op: str, g: int) -> float:
    """nccl-tests' bus-bandwidth factors, written out independently of the package."""
    return {"allreduce": 2.0 * (g - 1) / g, "reducescatter": (g - 1) / g, "allgather": (g - 1) / g}.get(op, 1.0)


def collective_entries(b: Builder, dev: Device, sizes=None, busbw_counter: bool = True):
    """transfer.collective entries as the probe writes them: value = algbw (GB/s), time_median_s, and the
    busbw fields (busbw_counter=False: a file without them)."""
    method = "one NCCL collective of floats, CUDA events, first start to last end"
    for (op, g), (alpha, beta) in dev.collectives.items():
        if g > dev.gpus:
            continue
        for size in sizes or [8 * 2**i for i in range(28)]:  # 8 B .. 1 GiB
            if op in ("reducescatter", "allgather") and size < 4 * g:
                continue
            t = b.jitter(alpha + size / beta)
            algbw = size / t / 1e9
            c = {"ranks": g, "size": size, "count": size // 4 // (g if op in ("reducescatter", "allgather") else 1),
                 "bytes_per_sample": size, "gbps": algbw, "ops_per_sample": 1, "ns_per_op": t * 1e9,
                 "launch_gated": 1, "launch_gate_timeouts": 0}
            if busbw_counter:
                f = collective_factor(op, g)
                c.update({"busbw_factor": f, "busbw_gbps": algbw * f, "busbw_gbps_min": 0.99 * algbw * f,
                          "busbw_gbps_max": 1.01 * algbw * f})
            tags = {"op": op, "dtype": "float", "nccl_version": "2.30.7", "nccl_env": "NCCL_NVLS_ENABLE=0"}
            e = b.add("transfer.collective", {"op": op, "ranks": str(g), "size": str(size)}, "GB/s", method, algbw, c,
                      tags, seconds=t)
            # value_median is the jittered algbw, time_median_s its time: keep the two consistent.
            e["value_median"] = e["value_mean"] = algbw
            e["value_min"], e["value_max"] = 0.99 * algbw, 1.01 * algbw


def _kernels(b: Builder, dev: Device, counters: bool):
    dram = dev.bw_gbps[2]
    fp32 = dev.fp32_ops_per_clk_sm * 2 * dev.sm_count * dev.clock_mhz / 1e3
    for n in (1024, 4096, 8192):
        # "ours" is the default (roofline.DEFAULT_IMPL), "ours_v1" a variant of it.
        for impl, eff in (("ours_v1", 0.85), ("cublas", 0.80), ("ours", 0.85)):
            flops = 2.0 * n * n
            minimal = 4.0 * (n * n / 2 + 2 * n)
            secs = minimal / (dram * 1e9 * eff)
            c = {"n": n, "flops_per_sample": flops, "bytes_per_sample": minimal, "gflops": flops / secs / 1e9,
                 "gbps": minimal / secs / 1e9, "time_median_s": secs}
            if counters:
                c.update({"dram__bytes_read.sum": minimal * 1.02, "dram__bytes_write.sum": 4.0 * n,
                          "lts__t_bytes.sum": minimal * 1.3, "l1tex__t_bytes.sum": minimal * 2.0,
                          "sm__sass_thread_inst_executed_op_ffma_pred_on.sum": n * n})
            b.add("kernels.symv", {"impl": impl, "precision": "s", "uplo": "lower", "n": str(n)}, "GFLOP/s",
                  "one SYMV, events", flops / secs / 1e9, c, {"impl": impl, "precision": "s", "uplo": "lower"},
                  seconds=secs)
    for n in (1024, 4096):
        for impl, eff in (("ours_v1", 0.70), ("cublas", 0.85), ("ours_tuned", 0.70)):
            flops = 2.0 * n**3
            secs = flops / (fp32 * 1e9 * eff)
            minimal = 4.0 * 3 * n * n
            c = {"m": n, "n": n, "k": n, "flops_per_sample": flops, "bytes_per_sample": minimal,
                 "gflops": flops / secs / 1e9, "time_median_s": secs}
            if counters:
                c.update({"dram__bytes_read.sum": minimal * 1.5, "dram__bytes_write.sum": 4.0 * n * n,
                          "lts__t_bytes.sum": minimal * 20, "l1tex__t_bytes.sum": minimal * 200,
                          "sm__sass_thread_inst_executed_op_ffma_pred_on.sum": n**3})
            b.add("kernels.sgemm", {"impl": impl, "m": str(n), "n": str(n), "k": str(n)}, "GFLOP/s", "one SGEMM, events",
                  flops / secs / 1e9, c, {"impl": impl}, seconds=secs)


def _p2p(b: Builder, dev: Device):
    """Entries as transfer_p2p.cu names and labels them: every ordered pair, engine, form, direction."""
    size = 2**28
    for src in range(dev.gpus):
        for dst in range(dev.gpus):
            if src == dst:
                continue
            pair = {"src": str(src), "dst": str(dst)}
            devs = {"src": src, "dst": dst}
            for engine in ("ce", "sm"):
                for form in ("write", "read"):
                    for direction in ("uni", "bidir"):
                        slow = dev.p2p_slow_pairs.get((src, dst), 1.0)
                        if direction == "bidir":  # both links of the pair carry a copy
                            slow = min(slow, dev.p2p_slow_pairs.get((dst, src), 1.0))
                        gbps = dev.p2p_gbps[(engine, direction)] * slow
                        copies = 2 if direction == "bidir" else 1
                        tags = {"engine": engine, "form": form, "direction": direction}
                        b.add("transfer.p2p", dict(pair, **tags), "GB/s", "copies of size bytes, CUDA events", gbps,
                              dict(devs, size=size, copies=copies, bytes_per_sample=copies * size),
                              tags, seconds=copies * size / (gbps * 1e9))
            slow = dev.p2p_slow_pairs.get((src, dst), 1.0)
            b.add("transfer.p2p_latency", pair, "ns", "100 back-to-back 4-byte copies, CUDA events / 100",
                  dev.p2p_copy_ns / slow, dict(devs, ops_per_sample=100), {"engine": "ce", "form": "write"})
            b.add("transfer.p2p_chase", pair, "ns", "dependent loads, CUDA events / hops", dev.p2p_chase_ns / slow,
                  dict(devs, ops_per_sample=8192, cycles_per_op=dev.p2p_chase_ns / slow * dev.clock_mhz / 1e3),
                  {"load": "volatile"})


# The family records gpuprobe writes into every result file (its --list-families; the C++ test
# FamilyRecord.ListFamiliesWorksWithoutAGpu keeps this copy equal to the binary's).
FAMILIES_FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "families.json")


def family_records() -> str:
    with open(FAMILIES_FIXTURE, encoding="utf-8") as fh:
        return json.dumps(json.load(fh), separators=(",", ":"))


def context(dev: Device, records: bool = True) -> dict:
    return {**({"gpuprobe_families": family_records()} if records else {}),
        "date": "2026-11-22T12:00:00+00:00", "host_name": "synthetic", "executable": "gpuprobe", "num_cpus": 16,
        "library_build_type": "release", "gpuprobe_schema": "1", "gpuprobe_version": "synthetic",
        "gpuprobe_sweep": "full", "gpu_index": "0", "gpu_name": dev.name, "gpu_pci_bus_id": "0000:00:00.0",
        "gpu_compute_capability": "9.9", "gpu_sm_count": str(dev.sm_count),
        "gpu_sm_clock_max_mhz": str(dev.clock_mhz), "gpu_mem_clock_max_mhz": "2000",
        "gpu_sm_clock_at_start_mhz": str(dev.clock_mhz), "gpu_mem_clock_at_start_mhz": "2000",
        "gpu_bus_width_bits": "4096", "gpu_theoretical_dram_gbps": str(dev.theoretical_dram_gbps),
        "gpu_l2_bytes": str(int(dev.l2_bytes)), "gpu_smem_per_sm_bytes": "233472",
        "gpu_smem_per_block_optin_bytes": "232448", "gpu_total_mem_bytes": str(80 * 2**30),
        "gpu_max_threads_per_sm": "2048", "gpu_max_blocks_per_sm": "32", "gpu_regs_per_sm": "65536",
        "gpu_ecc": "on", "gpu_numa_node": "-1", "cuda_driver_version": "13.0", "cuda_runtime_version": "13.0",
    }


def write(path: str, doc: dict, truncate_after: Optional[int] = None) -> str:
    """Writes the file as Google Benchmark does; truncate_after=N cuts the text inside entry N+1
    (what a crashed run leaves)."""
    text = json.dumps(doc, indent=2)
    if truncate_after is not None:
        # Find the start of entry N+1 and cut in its middle.
        pos = 0
        for _ in range(truncate_after + 2):
            pos = text.index('"name"', pos + 1)
        text = text[:pos + 20]
    with open(path, "w") as fh:
        fh.write(text)
    return path


# ---------------------------------------------------------------- latency curves of fictional hierarchies
# Each edge of a hierarchy is (capacity bytes, shape): "step" (fully associative LRU under a cyclic
# chain), ("ways", w) (hashed w-way sets, LRU, cyclic chain: a line hits while its set holds at most
# w lines, Poisson-distributed), or "gradual" (a policy that keeps `capacity` bytes of a thrashing
# footprint: the level serves capacity / footprint of the accesses). The truth of a level's capacity is
# the bytes it holds, whatever the shape.


def edge_share(f, cap, shape):
    """Share of the accesses served by the levels up to this edge at footprint f."""
    if shape == "step":
        return 1.0 if f <= cap else 0.0
    if shape == "gradual":
        return min(1.0, cap / f)
    kind, ways = shape
    assert kind == "ways"
    lam = ways * f / cap
    k = np.arange(ways)
    return float(np.exp(-lam + k * math.log(lam) - np.array([math.lgamma(j + 1) for j in k])).sum())


def hierarchy_latency(f, edges, levels):
    """Latency of a chain at footprint f over nested levels (len(levels) = len(edges) + 1)."""
    served_before, out = 0.0, 0.0
    for i, lv in enumerate(levels):
        cum = max(edge_share(f, *edges[i]), served_before) if i < len(edges) else 1.0
        out += (cum - served_before) * lv
        served_before = cum
    return out


@dataclass
class Hierarchy:
    name: str
    edges: tuple  # ((capacity, shape), ...)
    levels: tuple  # latency per level, cycles
    outlier: Optional[tuple] = None  # (edge index, +1 first point past it | -1 last point before, factor)


HIERARCHIES = [
    # An H100-like partitioned L2, set-associative edges.
    Hierarchy("partitioned", ((256 * 2**10, ("ways", 64)), (24 * 2**20, ("ways", 32)), (48 * 2**20, ("ways", 32))),
              (30.0, 240.0, 420.0, 640.0)),
    # Small L1 and a unified 4 MiB L2 (consumer-class sizes).
    Hierarchy("unified small", ((64 * 2**10, ("ways", 32)), (4 * 2**20, ("ways", 16))), (20.0, 150.0, 500.0)),
    # A large L1 and an L2 only 8x bigger.
    Hierarchy("L2 = 8x L1", ((2**20, ("ways", 64)), (8 * 2**20, ("ways", 16))), (40.0, 200.0, 600.0)),
    # Sharp edges at sizes that are no power of two.
    Hierarchy("steps", ((96 * 2**10, "step"), (3 * 2**20, "step"), (11 * 2**20, "step")), (25.0, 130.0, 210.0, 450.0)),
    # The far level reached gradually: the L2 keeps part of a thrashing footprint (DRAM share grows).
    Hierarchy("gradual far, unified", ((128 * 2**10, ("ways", 64)), (32 * 2**20, "gradual")), (28.0, 190.0, 520.0)),
    Hierarchy("gradual far, partitioned", ((192 * 2**10, ("ways", 64)), (20 * 2**20, ("ways", 32)),
                                           (40 * 2**20, "gradual")), (30.0, 230.0, 380.0, 600.0)),
    # One point 12 % off next to an edge (first point past the L1 edge, last point before the L2 edge).
    Hierarchy("outlier past L1 edge", ((256 * 2**10, ("ways", 64)), (24 * 2**20, ("ways", 32)),
                                       (48 * 2**20, ("ways", 32))), (30.0, 240.0, 420.0, 640.0), (0, +1, 1.12)),
    Hierarchy("outlier before L2 edge", ((64 * 2**10, ("ways", 32)), (4 * 2**20, ("ways", 16))),
              (20.0, 150.0, 500.0), (1, -1, 1.12)),
]

# Footprint grids a sweep may use: the probe's default (4 per octave from 1 KiB), 2 per octave, and
# 4 per octave off the powers of two.
GRIDS = {"default": (1024, 4), "2/octave": (1024, 2), "4/octave shifted": (1024 * 2 ** 0.37, 4)}


def sweep(lo, per_octave, hi=4 * 2**30):
    n = int(math.floor(math.log2(hi / lo) * per_octave + 1e-9))
    return np.array([round(lo * 2 ** (i / per_octave) / 64) * 64 for i in range(n + 1)], float)


def hierarchy_curve(h: Hierarchy, grid: str, noise: float, seed: int):
    """(footprints, latencies) of hierarchy h on the named grid, with log-normal noise."""
    x = sweep(*GRIDS[grid])
    y = np.array([hierarchy_latency(f, h.edges, h.levels) for f in x])
    y *= np.exp(np.random.default_rng(seed).normal(0.0, noise, len(x)))
    if h.outlier:
        edge, side, factor = h.outlier
        cap = h.edges[edge][0]
        i = int(np.argmax(x > cap)) if side > 0 else int(np.nonzero(x <= cap)[0][-1])
        y[i] *= factor
    return x, y
