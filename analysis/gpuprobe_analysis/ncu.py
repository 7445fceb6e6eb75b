"""Nsight Compute profiles of an application's kernels, read into one record per kernel launch.

Bottom layer: knows nothing of the report or of its sections. The metrics and what each counts come from
ncu_metrics.py (the one declaration); docs/app-profiling.md says how a profile is taken."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple


class ProfileError(Exception):
    """A profile that cannot be read; str(exc) is ONE line naming the file and what is wrong."""


@dataclass(frozen=True)
class Launch:
    index: int                       # ncu's "ID": order of the launch in the profile
    kernel: str                      # ncu's demangled "Kernel Name", exactly as ncu prints it
    grid: Tuple[int, int, int]       # "Grid Size"
    block: Tuple[int, int, int]      # "Block Size"
    nvtx: Tuple[str, ...]            # NVTX push/pop range stack, outermost first; () when none
    device: str                      # GPU model as ncu names it ("NVIDIA H100 80GB HBM3")
    duration_s: float                # gpu__time_duration.sum, seconds (nan if missing)
    sm_clock_hz: float               # sm__cycles_elapsed.avg.per_second, Hz (nan if missing)
    flops: Dict[str, float]          # non-tensor FLOPs per compute-ceiling name; only nonzero ones
    tensor_ops: Dict[str, float]     # tensor-pipe operations per exec.tensor ceiling name; only nonzero ones
    bytes: Dict[str, float]          # bytes per level: "DRAM", "L2", "L1", "shared"; only levels measured
    dram_read_bytes: Optional[float] # for choosing the DRAM read vs copy ceiling
    missing: Tuple[str, ...]         # declared metrics this launch lacked (names)
    metrics: Dict[str, float] = field(default_factory=dict)  # every numeric metric, in base units

    @property
    def launch_shape(self) -> str:
        return "grid ({},{},{}) block ({},{},{})".format(*self.grid, *self.block)

    @property
    def total_flops(self) -> float:
        return sum(self.flops.values()) + sum(self.tensor_ops.values())


@dataclass
class Profile:
    path: str
    launches: List[Launch]
    device: str                      # the one GPU model in the profile (a profile mixing models: ProfileError)
    source: str                      # "ncu raw CSV" or "ncu-rep (ncu_report)"
    missing: Dict[str, int]          # metric -> launches lacking it (declared metrics only)
    notes: List[str]                 # e.g. clock control / replay mode / cache control where known


def read_profile(path: str) -> Profile:
    """A .csv (ncu --page raw --csv --print-units base) or a .ncu-rep (through NVIDIA's ncu_report)."""
    raise NotImplementedError("ncu.read_profile: the readers are being written on branch app42")
