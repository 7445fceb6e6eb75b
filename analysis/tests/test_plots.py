"""The figure rules of plots.py: no series dropped, a distinct colour and marker per series, natural
order, coincident ceilings drawn once."""
import os
import numpy as np

from gpuprobe_analysis import plots
from gpuprobe_analysis.roofline import Ceiling
from gpuprobe_analysis.sections.roofline import _roof_lines


def test_every_series_has_its_own_colour_and_marker():
    styles = [tuple(plots.style(i).values()) for i in range(40)]
    assert len(set(styles)) == 40
    # within one panel (at most MAX_SERIES series) the colours alone differ too
    assert len({plots.style(i)["color"] for i in range(plots.MAX_SERIES)}) == plots.MAX_SERIES


def test_natural_order_reads_numbers_and_byte_units():
    labels = ["stride=1 KiB", "stride=128 B", "stride=8 B", "stride=16 B", "op=rsqrt", "op=dadd"]
    assert sorted(labels, key=plots.natural_key) == ["op=dadd", "op=rsqrt", "stride=8 B", "stride=16 B",
                                                     "stride=128 B", "stride=1 KiB"]


def test_many_series_become_panels_not_a_truncated_list(tmp_path):
    series = [(f"op=op{k}: {w} warps/SM", np.array([1, 2, 4, 8]), np.array([1.0, 2, 3, 3]) * w, [])
              for k in range(9) for w in (1, 2, 4, 8, 16, 32, 64, 12, 24)]
    fig = plots.simple_xy(series, "t", "T", "x", "y", str(tmp_path), "c", facet=lambda label: label.split(": ")[0])
    assert len(fig.provenance) == 81  # every series drawn
    panels = plots.panels_of(list(range(25)))
    assert sum(len(items) for _, items in panels) == 25 and all(len(i) <= plots.MAX_SERIES for _, i in panels)


def test_theoretical_ceiling_next_to_the_measured_one_is_one_line():
    ceilings = [Ceiling("DRAM", 3195.0, True, "m"), Ceiling("DRAM", 3352.0, False, "t"),
                Ceiling("L2", 7654.0, True, "m"), Ceiling("L2", 13126.0, False, "t")]
    lines = _roof_lines(ceilings)
    assert [(c.name, c.measured) for c, _, _ in lines] == [("DRAM", True), ("L2", True), ("L2", False)]
    assert "95 % of 3,352 theoretical" in lines[0][1]


def test_parallel_saves_write_the_same_files_by_the_end_of_the_block(tmp_path):
    """Figures saved inside plots.parallel_saves() are written by worker processes: every file exists
    when the block ends, and the PNG is the one an in-place save writes."""
    import matplotlib.pyplot as plt
    from gpuprobe_analysis import plots

    def draw():
        fig, ax = plt.subplots(figsize=(4, 3))
        ax.plot([1, 2, 3], [3, 1, 2], "o-")
        ax.set_xscale("log")
        ax.xaxis.set_major_formatter(plots.matplotlib.ticker.FuncFormatter(plots._bytes_formatter))
        return fig

    inplace = plots._save(draw(), str(tmp_path / "inplace"), "f")
    with plots.parallel_saves(workers=2):
        files = plots._save(draw(), str(tmp_path / "parallel"), "f")
    assert all(os.path.getsize(p) > 0 for p in files.values())
    with open(inplace["png"], "rb") as a, open(files["png"], "rb") as b:
        assert a.read() == b.read()
