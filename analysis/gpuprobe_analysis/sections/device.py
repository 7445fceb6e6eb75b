"""Device: what the inputs' context says of the GPU, the driver and the run; the opening's first sentence."""
from __future__ import annotations

import math
from typing import Dict, List

from ..formatting import fmt_bytes
from . import AnalysisInputs, FamilySection, register

# The context keys the profile keeps (docs/results-schema.md), in this order.
CONTEXT_KEYS = ("gpu_name", "gpu_compute_capability", "gpu_sm_count", "gpu_sm_clock_max_mhz", "gpu_mem_clock_max_mhz",
                "gpu_sm_clock_at_start_mhz", "gpu_bus_width_bits", "gpu_theoretical_dram_gbps", "gpu_l2_bytes",
                "gpu_smem_per_sm_bytes", "gpu_ecc", "cuda_driver_version", "cuda_runtime_version", "gpuprobe_version",
                "gpuprobe_source_tree", "gpuprobe_sweep", "host_name", "date")


def analyze(inputs: AnalysisInputs) -> Dict[str, object]:
    c = inputs.rs.context
    return {k: c.get(k) for k in CONTEXT_KEYS if c.get(k) not in (None, "")}


def opening(device: Dict[str, object], data: dict) -> List[str]:
    """What the GPU is."""
    dev = data.get("device") or {}
    lines = []
    what = [f"compute capability {dev['gpu_compute_capability']}" if dev.get("gpu_compute_capability") else "",
            f"{dev['gpu_sm_count']} SMs" + (f" at up to {dev['gpu_sm_clock_max_mhz']} MHz"
                                            if dev.get("gpu_sm_clock_max_mhz") else "") if dev.get("gpu_sm_count") else "",
            f"{dev['gpu_bus_width_bits']}-bit memory bus" if dev.get("gpu_bus_width_bits") else "",
            f"driver L2 {fmt_bytes(float(dev['gpu_l2_bytes']))}" if _is_number(dev.get("gpu_l2_bytes")) else "",
            f"CUDA driver {dev['cuda_driver_version']}" if dev.get("cuda_driver_version") else ""]
    lines.append(f"{dev.get('gpu_name', 'Unknown GPU')}: " + (", ".join(w for w in what if w) or "no device context recorded")
                 + (f"; run of {dev['date'][:10]}" if dev.get("date") else "") + ".")
    return lines


def _is_number(v) -> bool:
    try:
        return math.isfinite(float(v))
    except (TypeError, ValueError):
        return False


SECTION = register(FamilySection(
    id="device", title="Device", families=(), after=(), core=True, analyze=analyze,
    content=lambda device, figdir: {}, opening=opening, profile_keys=lambda device: {"device": device}))
