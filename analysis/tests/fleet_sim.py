"""A simulated fleet: one gpuprobe --preset=fleet result file per GPU, two GPU models, a realistic
GPU-to-GPU spread, and injected faults of known kinds, for the fleet analysis' tests and benchmark.

The entries are those the preset declares (analysis/tests/data/presets.json, a copy of gpuprobe
--list-presets kept equal by the C++ test), named by the family records (data/families.json): the
same files the binary writes, with values from this generator. For a figure that picks the largest or
smallest point of a sweep, a second, different point of the same sweep is written too, so that the
pick is exercised; P2P has one entry per neighbour.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Set, Tuple

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
PRESETS_FIXTURE = os.path.join(HERE, "data", "presets.json")
FAMILIES_FIXTURE = os.path.join(HERE, "data", "families.json")

# Per model: each figure's typical value (near the committed H100 and H200 references) and its
# GPU-to-GPU spread (coefficient of variation): HBM and L2 bandwidth about 1 %, the pipelines at a
# fixed clock a few 0.1 %, what the host takes part in (launches, transfers) wider.
MODELS = {
    "NVIDIA H100 80GB HBM3": {
        "DRAM read": (3192.0, 0.008), "DRAM write": (3299.0, 0.008), "L2 read": (8186.0, 0.01),
        "FP32": (65800.0, 0.003), "FP64": (33300.0, 0.003), "SM clock under load": (1975.0, 0.003),
        "DRAM latency": (348.5, 0.006), "Launch rate": (3100.0, 0.04), "Pinned H2D": (55.0, 0.015),
        "Pinned D2H": (55.1, 0.015), "P2P write, slowest neighbour": (370.0, 0.015),
        "BF16 tensor": (940000.0, 0.01), "FP64 tensor": (66000.0, 0.005)},
    "NVIDIA H200": {
        "DRAM read": (4566.0, 0.008), "DRAM write": (4610.0, 0.008), "L2 read": (9511.0, 0.01),
        "FP32": (65700.0, 0.003), "FP64": (33300.0, 0.003), "SM clock under load": (1975.0, 0.003),
        "DRAM latency": (330.0, 0.006), "Launch rate": (2900.0, 0.04), "Pinned H2D": (55.5, 0.015),
        "Pinned D2H": (55.3, 0.015), "P2P write, slowest neighbour": (375.0, 0.015),
        "BF16 tensor": (950000.0, 0.01), "FP64 tensor": (66100.0, 0.005)},
}
GPUS_PER_NODE = 8
# The pick axis' value of the entry a figure takes, and of the other point written beside it.
PICKED = {"footprint": (4294967296, 268435456), "size": (268435456, 1048576)}
# A figure taken as a level ceiling (take "ceiling": the report's rule over a sweep, ceilings.py): its
# working sets and each one's value as a share of the figure. On a 50 MiB L2 the rule takes the
# working sets from 8 MiB (256 KiB per row of 32: beyond the request coalescer's window) to 80 % of the
# L2, whose median is the figure; 2 MiB reads faster (merged loads) and 48 MiB slower (partly DRAM).
CEILING_POINTS = {"memory.l2_bandwidth": ((2097152, 1.14), (8388608, 1.01), (16777216, 1.0), (25165824, 1.0),
                                          (33554432, 0.99), (50331648, 0.6))}


@dataclass
class Fault:
    kind: str
    scale: Dict[str, float] = field(default_factory=dict)  # figure -> factor on its value
    p2p_one_link: float = 0.0  # factor on the copy to one neighbour (0: none)
    drop_entry: str = ""  # the figure whose entry failed (error_occurred)
    partial: bool = False  # the run did not finish: FILE.partial, cut after a few entries
    context: Dict[str, str] = field(default_factory=dict)  # identity/health facts it changes

    def expected(self) -> Set[Tuple[str, Optional[str]]]:
        """(reason kind, figure) the analysis must give this GPU, nothing else."""
        if self.partial:
            return {("incomplete", None)}  # plus "missing" for what the cut removed (checked apart)
        out = {("fleet", f) for f, s in self.scale.items() if abs(s - 1) > 0}
        if self.p2p_one_link:
            out.add(("fleet", "P2P write, slowest neighbour"))
        if self.drop_entry:
            out.add(("missing", self.drop_entry))
        if self.context:
            out.add(("health", None))
        return out


# A dozen faults of different kinds (the and a few more), each placed on one GPU.
FAULTS = [
    Fault("slow HBM", {"DRAM read": 0.85, "DRAM write": 0.86}),
    Fault("low FP32 (DCGM #122: 6.7 of 19.2 TFLOP/s)", {"FP32": 0.35}),
    Fault("PCIe link at half width", {"Pinned H2D": 0.5, "Pinned D2H": 0.5}),
    Fault("SM clock stuck low", {"SM clock under load": 0.7, "FP32": 0.7, "FP64": 0.7, "L2 read": 0.72}),
    Fault("high DRAM latency", {"DRAM latency": 1.3}),
    Fault("low FP64", {"FP64": 0.5}),
    Fault("slow L2", {"L2 read": 0.8}),
    Fault("slow launches (host)", {"Launch rate": 2.0}),
    Fault("one NVLink degraded", p2p_one_link=0.45),
    Fault("pinned H2D slow (far NUMA node)", {"Pinned H2D": 0.7}),
    Fault("DRAM latency entry failed", drop_entry="DRAM latency"),
    Fault("uncorrectable ECC error, row remapping failed",
          context={"gpu_ecc_uncorrected_volatile": "2", "gpu_remapped_rows_failure": "yes"}),
    Fault("run did not finish", partial=True),
    Fault("slow HBM (second model)", {"DRAM read": 0.8, "DRAM write": 0.8}),
]


def presets() -> List[dict]:
    with open(PRESETS_FIXTURE, encoding="utf-8") as fh:
        return json.load(fh)


def fleet_preset() -> dict:
    return next(p for p in presets() if p["preset"] == "fleet")


def _families() -> Tuple[str, Dict[str, dict]]:
    with open(FAMILIES_FIXTURE, encoding="utf-8") as fh:
        doc = json.load(fh)
    return json.dumps(doc, separators=(",", ":")), {r["family"]: r for r in doc}


def _name(record: dict, axes: Dict[str, str]) -> str:
    name = record["entry_name"]
    for k, v in axes.items():
        name = name.replace(f"<{k}>", str(v))
    assert "<" not in name, name
    return name


@dataclass
class Gpu:
    host: str
    index: int
    model: str
    uuid: str
    serial: str = ""
    fault: Optional[Fault] = None
    busy: bool = False


def _entry(name: str, record: dict, counters: Dict[str, float], tags: Dict[str, str]) -> dict:
    label = f"probe={record['family']};unit={record['unit']};method={record['method']}" + "".join(
        f";{k}={v}" for k, v in tags.items())
    e = {"name": name + "/iterations:10/manual_time", "run_name": name + "/iterations:10/manual_time",
         "run_type": "iteration", "repetitions": 1, "repetition_index": 0, "threads": 1, "iterations": 10,
         "real_time": 1000.0, "cpu_time": 1000.0, "time_unit": "us", "samples": 10.0}
    e.update(counters)
    e["label"] = label
    return e


def gpu_document(gpu: Gpu, rng: np.random.Generator, families_json: str, records: Dict[str, dict],
                 preset: dict, node_gpus: int) -> Tuple[dict, int]:
    """(result document, entries kept when the run is cut: -1 for all)."""
    base = MODELS[gpu.model]
    fault = gpu.fault or Fault("none")
    value = {}
    for fig, (typical, cv) in base.items():
        value[fig] = typical * (1 + cv * rng.standard_normal()) * fault.scale.get(fig, 1.0)
    entries: Dict[str, dict] = {}

    def put(name, record, counters, tags):
        e = entries.setdefault(name, _entry(name, record, {}, tags))
        e.update(counters)

    for fig in preset["figures"]:
        name_fig = fig["figure"]
        if name_fig == fault.drop_entry:
            continue
        record = records[fig["family"]]
        text = {a["name"] for a in record["axes"] if a["type"] == "text"}
        axes = {k: (str(gpu.index) if v == "<device>" else v) for k, v in fig["axes"].items()}
        pick = fig.get("pick") or {}
        v = value[name_fig]
        field = fig["field"]
        if pick.get("take") == "ceiling":
            premise = {"premise_level": record["premise"]["level"], "premise_rule": record["premise"]["rule"]}
            for point, share in CEILING_POINTS[fig["family"]]:
                a = dict(axes, **{pick["axis"]: str(point)})
                put(_name(record, a), record, {field: v * share, pick["axis"]: float(point)},
                    dict({k: x for k, x in a.items() if k in text}, **premise))
        elif pick.get("take") in ("max", "min"):
            taken, other = PICKED[pick["axis"]]
            for point, val in ((taken, v), (other, v * 0.9 if fig["better"] == "higher" else v * 0.8)):
                a = dict(axes, **{pick["axis"]: str(point)})
                counters = {field: val, pick["axis"]: float(point)}
                counters.setdefault("value_median", val)
                put(_name(record, a), record, counters, {k: x for k, x in a.items() if k in text})
        elif pick.get("take") == "worst":
            if node_gpus < 2:
                continue
            others = [d for d in range(node_gpus) if d != gpu.index]
            slow = others[0] if fault.p2p_one_link else None
            for d in others:
                val = value[name_fig] * (1 + 0.004 * rng.standard_normal()) * (fault.p2p_one_link if d == slow else 1)
                if d != slow:
                    val = max(val, value[name_fig])  # the slowest healthy link is the figure's value
                a = dict(axes, **{pick["axis"]: str(d)})
                put(_name(record, a), record, {field: val, "src": float(gpu.index), "dst": float(d)},
                    {k: x for k, x in a.items() if k in text})
        else:
            counters = {field: v}
            if field != "value_median":  # the entry's own figure beside the counter the preset reads
                counters.setdefault("value_median", 126.0 if "ffma" in axes.values() else 64.0)
            put(_name(record, axes), record, counters, {k: x for k, x in axes.items() if k in text})
    ctx = {
        "date": "2026-11-29T12:00:00+00:00", "host_name": gpu.host, "executable": "gpuprobe", "num_cpus": 64,
        "library_build_type": "release", "gpuprobe_schema": "1", "gpuprobe_version": "simulated",
        "gpuprobe_sweep": "full", "gpuprobe_families": families_json, "gpuprobe_preset": json.dumps(preset),
        "gpu_index": str(gpu.index), "gpu_name": gpu.model, "gpu_pci_bus_id": f"0000:{0x18 + 0x10 * gpu.index:02x}:00.0",
        "gpu_uuid": gpu.uuid, "gpu_serial": gpu.serial, "gpu_vbios": "96.00.99.00.01",
        "gpu_driver_version": "580.159", "gpu_compute_capability": "9.0", "gpu_sm_count": "132",
        "gpu_sm_clock_max_mhz": "1980", "gpu_mem_clock_max_mhz": "2619", "gpu_bus_width_bits": "5120",
        "gpu_theoretical_dram_gbps": "3352.32", "gpu_l2_bytes": "52428800", "gpu_smem_per_sm_bytes": "233472",
        "cuda_driver_version": "13.0", "cuda_runtime_version": "13.0",
        "gpu_ecc_uncorrected_volatile": "0", "gpu_remapped_rows_failure": "no", "gpu_remapped_rows_pending": "no",
        "gpu_idle_at_start": "no: 1 other compute process (pid 4242)" if gpu.busy else "yes",
        "fleet_rank": str(gpu.index), "fleet_local_rank": str(gpu.index), "fleet_rank_source": "SLURM_PROCID/SLURM_LOCALID",
    }
    ctx.update(fault.context)
    doc = {"context": ctx, "benchmarks": list(entries.values())}
    return doc, (3 if fault.partial else -1)


@dataclass
class Fleet:
    files: List[str]
    gpus: List[Gpu]
    injected: Dict[str, Fault]  # uuid -> fault


def make_fleet(outdir: str, gpus: int = 1024, seed: int = 35, faults: Optional[List[Fault]] = None,
               models: Tuple[str, ...] = tuple(MODELS), model_share: float = 0.625, busy: int = 1) -> Fleet:
    """Writes one result file per GPU under outdir/<host>/fleet.rank<k>.json: `gpus` GPUs, 8 per node,
    the first `model_share` of the nodes of models[0], the rest of models[1]; each fault on one GPU
    (spread over both models), `busy` healthy GPUs measured beside another process."""
    rng = np.random.default_rng(seed)
    families_json, records = _families()
    preset = fleet_preset()
    faults = FAULTS if faults is None else faults
    nodes = (gpus + GPUS_PER_NODE - 1) // GPUS_PER_NODE
    fleet: List[Gpu] = []
    for n in range(nodes):
        model = models[0] if n < round(model_share * nodes) or len(models) == 1 else models[1]
        for i in range(min(GPUS_PER_NODE, gpus - n * GPUS_PER_NODE)):
            u = rng.integers(0, 2**63, dtype=np.int64)
            fleet.append(Gpu(f"node{n:04d}", i, model, f"GPU-{u:016x}-sim-{n:04d}-{i}", f"1652{n:05d}{i:04d}"))
    # The faults on GPUs spread over the fleet; the second model's own fault on one of its GPUs.
    slots = rng.choice(len(fleet), size=len(faults) + busy, replace=False)
    second = [k for k, g in enumerate(fleet) if len(models) > 1 and g.model == models[1]]
    injected: Dict[str, Fault] = {}
    for f, k in zip(faults, slots):
        if "second model" in f.kind and second:
            k = second[len(second) // 2]
        fleet[k].fault = f
        injected[fleet[k].uuid] = f
    for k in slots[len(faults):]:
        if fleet[k].fault is None:
            fleet[k].busy = True
    files = []
    for n in range(nodes):
        node = [g for g in fleet if g.host == f"node{n:04d}"]
        d = os.path.join(outdir, f"node{n:04d}")
        os.makedirs(d, exist_ok=True)
        for g in node:
            doc, keep = gpu_document(g, rng, families_json, records, preset, len(node))
            path = os.path.join(d, f"fleet.rank{n * GPUS_PER_NODE + g.index}.json")
            text = json.dumps(doc)
            if keep >= 0:  # cut inside entry keep + 1, as a killed run leaves its FILE.partial
                doc["benchmarks"] = doc["benchmarks"][:keep + 1]
                text = json.dumps(doc)
                text = text[:text.rfind('"label"')]
                path += ".partial"
            with open(path, "w") as fh:
                fh.write(text)
            files.append(path)
    return Fleet(files, fleet, injected)
