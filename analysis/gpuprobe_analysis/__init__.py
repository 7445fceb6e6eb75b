"""gpuprobe analysis: reads gpuprobe result files (docs/results-schema.md) and derives the device
profile, the hierarchical roofline, the optimality table, plots, the report and comparisons."""
from .results import load  # noqa: F401

__version__ = "0.1.0"
