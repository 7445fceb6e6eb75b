"""Datasheet facts per GPU model, in one place: SM count, boost clock, memory bus and bandwidth, L2 size, and
the dense peak rate per SM per clock of each type (data/gpu_peaks.csv, which tests/cpu/gpu_peaks_test.cpp
also reads to check the binary's own per-compute-capability tables). Every figure carries its source.

A result file names its GPU in its context (gpu_name, gpu_compute_capability, gpu_sm_count); `find_gpu`
matches that against the table. A GPU the table does not have gets no "% of theoretical", and
`not_in_table_note` says why in one line. Bottom layer: knows nothing of sections."""
import csv
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Mapping, Optional, Tuple

PEAKS_CSV = Path(__file__).parent / "data" / "gpu_peaks.csv"


@dataclass(frozen=True)
class Fact:
    value: float
    source: str


@dataclass(frozen=True)
class GpuSpec:
    model: str                     # the key of data/gpu_peaks.csv ("H100 SXM")
    device_names: Tuple[str, ...]  # cudaDeviceProp::name of the boards it covers, exactly
    sm_count: int
    boost_clock_mhz: Optional[Fact]  # None where NVIDIA publishes none
    memory_bus_bits: Fact
    dram_gbps: Fact
    l2_bytes: Optional[Fact]
    # (type, accumulator) -> dense FLOP (or integer op) per clock per SM; filled from data/gpu_peaks.csv.
    per_clock: Dict[Tuple[str, str], Fact] = field(default_factory=dict)
    compute_capability: str = ""   # "9.0": data/gpu_peaks.csv's, which the C++ test also reads

    def peak_per_clock(self, kind: str, acc: str = "") -> Optional[float]:
        """The dense peak per SM per clock of a type ("fp32", "fp64", or a tensor precision with its
        accumulator, e.g. ("f16", "f32")), None when the datasheet gives none."""
        fact = self.per_clock.get((kind, acc))
        return fact.value if fact else None


def _mb(n: float) -> float:
    return n * 1024 * 1024


_A100_WP = "A100 whitepaper (NVIDIA A100 Tensor Core GPU Architecture) Table 1"
_ADA_WP = "Ada whitepaper (NVIDIA ADA GPU ARCHITECTURE)"
_H100_WP = "H100 whitepaper (NVIDIA H100 Tensor Core GPU Architecture)"
_GB202_WP = "RTX Blackwell whitepaper (NVIDIA RTX BLACKWELL GPU ARCHITECTURE), GeForce RTX 5090 table"

_SPECS = (
    GpuSpec("A100 SXM", ("NVIDIA A100-SXM4-40GB",), 108,
            Fact(1410, _A100_WP), Fact(5120, _A100_WP + ": 5120-bit HBM2"),
            Fact(1555, "NVIDIA A100 datasheet: 1,555 GB/s (40 GB HBM2)"), Fact(_mb(40), _A100_WP + ": 40 MB L2")),
    GpuSpec("A100 SXM", ("NVIDIA A100-SXM4-80GB",), 108,
            Fact(1410, _A100_WP), Fact(5120, "NVIDIA A100 datasheet: 5120-bit HBM2e"),
            Fact(2039, "NVIDIA A100 datasheet: 2,039 GB/s (80 GB HBM2e, SXM)"), Fact(_mb(40), _A100_WP + ": 40 MB L2")),
    GpuSpec("A10", ("NVIDIA A10",), 72,
            Fact(1695, "NVIDIA A10 datasheet"), Fact(384, "NVIDIA A10 datasheet: 384-bit GDDR6"),
            Fact(600, "NVIDIA A10 datasheet: 600 GB/s"), Fact(_mb(6), "NVIDIA Ampere GA102 whitepaper: 6 MB L2")),
    GpuSpec("L40S", ("NVIDIA L40S",), 142,
            Fact(2520, "NVIDIA L40S datasheet"), Fact(384, "NVIDIA L40S datasheet: 384-bit GDDR6"),
            Fact(864, "NVIDIA L40S datasheet: 864 GB/s"), Fact(_mb(96), _ADA_WP + ": 96 MB L2 (AD102)")),
    GpuSpec("RTX 4090", ("NVIDIA GeForce RTX 4090",), 128,
            Fact(2520, _ADA_WP + ", GeForce RTX 4090 table"), Fact(384, _ADA_WP + ": 384-bit GDDR6X"),
            Fact(1008, _ADA_WP + ": 1,008 GB/s"), Fact(_mb(72), _ADA_WP + ": 72 MB L2")),
    GpuSpec("H100 SXM", ("NVIDIA H100 80GB HBM3",), 132,
            Fact(1980, _H100_WP + ": max boost, FP64 and FP32; the tensor figures are quoted at 1830 MHz"),
            Fact(5120, _H100_WP + ": 5120-bit HBM3"), Fact(3350, "NVIDIA H100 datasheet (SXM): 3.35 TB/s"),
            Fact(_mb(50), _H100_WP + ": 50 MB L2")),
    GpuSpec("H100 PCIe", ("NVIDIA H100 PCIe",), 114,
            Fact(1755, _H100_WP + ": H100 PCIe max boost"), Fact(5120, _H100_WP + ": 5120-bit HBM2e"),
            Fact(2000, "NVIDIA H100 datasheet (PCIe): 2 TB/s"), Fact(_mb(50), _H100_WP + ": 50 MB L2")),
    GpuSpec("H200", ("NVIDIA H200",), 132,
            Fact(1980, "NVIDIA H200 datasheet: the H100 SXM's compute"),
            Fact(6144, "six HBM3e stacks of 1024 bits (the device reports its own, gpu_bus_width_bits)"),
            Fact(4800, "NVIDIA H200 datasheet (SXM): 4.8 TB/s"), None),
    GpuSpec("B200", ("NVIDIA B200",), 148,
            None,  # no boost clock published: no per-clock tensor peak to derive (tcgen05 is not probed anyway)
            Fact(8192, "NVIDIA B200 / HGX B200 datasheet: eight HBM3e stacks of 1024 bits"),
            Fact(8000, "NVIDIA HGX B200 datasheet: 8 TB/s per GPU"), None),
    GpuSpec("RTX 5090", ("NVIDIA GeForce RTX 5090",), 170,
            Fact(2407, _GB202_WP), Fact(512, _GB202_WP + ": 512-bit GDDR7"), Fact(1792, _GB202_WP + ": 1,792 GB/s"),
            Fact(_mb(96), _GB202_WP + ": 96 MB L2")),
)


def _load_peaks(path: Path = PEAKS_CSV) -> Dict[str, Tuple[str, Dict[Tuple[str, str], Fact]]]:
    """model -> (compute capability, (type, accumulator) -> per-clock peak); one capability per model."""
    peaks: Dict[str, Tuple[str, Dict[Tuple[str, str], Fact]]] = {}
    with path.open(newline="") as f:
        for row in csv.reader(line for line in f if not line.startswith("#")):
            model, cc, kind, acc, value, source = row
            known_cc, table = peaks.setdefault(model, (cc, {}))
            if cc != known_cc:
                raise ValueError(f"{path}: {model} has compute capabilities {known_cc} and {cc}")
            table[(kind, acc)] = Fact(float(value), source)
    return peaks


def _table() -> Tuple[GpuSpec, ...]:
    peaks = _load_peaks()
    return tuple(GpuSpec(**{**s.__dict__, "compute_capability": peaks[s.model][0], "per_clock": peaks[s.model][1]})
                 for s in _SPECS)


SPECS: Tuple[GpuSpec, ...] = _table()


def find_gpu(context: Mapping[str, str]) -> Optional[GpuSpec]:
    """The table's entry for the GPU a result context names: its gpu_name exactly, with the compute capability
    and SM count agreeing (a board the name matches but the SMs do not, e.g. a cut-down variant, is not it)."""
    name = (context.get("gpu_name") or "").strip()
    for spec in SPECS:
        if name not in spec.device_names:
            continue
        cc, sms = context.get("gpu_compute_capability"), context.get("gpu_sm_count")
        if cc is not None and str(cc).strip() != spec.compute_capability:
            return None
        if sms is not None and str(sms).strip() != str(spec.sm_count):
            return None
        return spec
    return None


def not_in_table_note(context: Mapping[str, str]) -> str:
    """One line: why a GPU gets no "% of theoretical"."""
    return (f"no % of theoretical: {context.get('gpu_name') or 'this GPU'} (compute capability "
            f"{context.get('gpu_compute_capability') or '?'}, {context.get('gpu_sm_count') or '?'} SMs) is not in "
            f"gpu_specs' table of datasheet peaks ({', '.join(sorted({s.model for s in SPECS}))})")


def find_gpu_of(rs) -> Optional[GpuSpec]:
    """find_gpu for a ResultSet's context; a GPU not in the table leaves one note on the inputs (once, however
    many sections ask), which the report lists with the other input notes."""
    spec = find_gpu(rs.context)
    if spec is None:
        message = not_in_table_note(rs.context)
        if not any(i.message == message for i in rs.issues):
            rs.note("gpu_specs", message)
    return spec
