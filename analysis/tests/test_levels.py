"""Change-point detection on synthetic latency curves with known knees and noise."""
import math

import numpy as np
import pytest

from gpuprobe_analysis.levels import detect_levels, estimate_noise
from gpuprobe_analysis.sections.granularity import detect_knee_saturation
from synth import GRIDS, HIERARCHIES, hierarchy_curve, hierarchy_latency, mixture, set_associative


def grid(per_octave, lo=1024, hi=8 * 2**30):
    n = int(math.log2(hi / lo) * per_octave)
    return np.array([lo * 2 ** (i / per_octave) for i in range(n + 1)])


CASES = [
    # (capacities, level values, shape, points per octave, noise)
    ((64e3, 4e6), (20.0, 150.0, 500.0), "gradual", 4, 0.005),
    ((64e3, 4e6), (20.0, 150.0, 500.0), "gradual", 4, 0.02),
    ((64e3, 4e6), (20.0, 150.0, 500.0), "gradual", 4, 0.05),
    ((240e3, 25e6, 50e6), (33.0, 260.0, 330.0, 700.0), "gradual", 4, 0.005),
    # A gradual sub-level only 2x its predecessor (an L2 near partition) never serves more than half
    # of the accesses: its value needs <= 0.5 % noise at 4 points/octave, or 8 points/octave at 1 %
    # (at 4 points/octave and 1 % noise, 2-3 seeds in 10 miss its latency by 5-10 %).
    ((240e3, 25e6, 50e6), (33.0, 260.0, 330.0, 700.0), "gradual", 8, 0.01),
    ((240e3, 25e6, 50e6), (33.0, 260.0, 330.0, 700.0), "step", 8, 0.005),
    ((240e3, 25e6, 50e6), (33.0, 260.0, 330.0, 700.0), "step", 8, 0.03),
    ((16e3, 1.5e6, 6e6), (28.0, 110.0, 190.0, 450.0), "step", 8, 0.01),
    ((16e3, 1.5e6, 6e6), (28.0, 110.0, 190.0, 450.0), "gradual", 6, 0.02),
    ((3e6,), (90.0, 400.0), "gradual", 4, 0.05),
]


@pytest.mark.parametrize("caps,levels,shape,ppo,noise", CASES)
def test_detects_known_levels(caps, levels, shape, ppo, noise):
    rng = np.random.default_rng(int(noise * 1e4) + len(caps) * 7 + ppo)
    x = grid(ppo)
    y = np.array([mixture(f, caps, levels, shape) for f in x]) * np.exp(rng.normal(0, noise, len(x)))
    fit = detect_levels(x, y)
    assert fit.n_levels == len(levels), (fit.knees, fit.levels, fit.candidates)
    for got, want in zip(fit.knees, caps):
        assert abs(got / want - 1) < 0.10, (fit.knees, caps)
    for got, want in zip(fit.levels, levels):
        assert abs(got / want - 1) < 0.05, (fit.levels, levels)


@pytest.mark.parametrize("noise", [0.005, 0.01])
def test_smeared_set_associative_edges(noise):
    """A curve the models do not contain exactly: edges smeared by set overflow (64/32/32 ways)."""
    rng = np.random.default_rng(301)
    caps, levels = (256 * 1024, 25e6, 50e6), (33.0, 260.0, 330.0, 700.0)
    x = grid(4)
    y = np.array([set_associative(f, caps, (64, 32, 32), levels) for f in x]) * np.exp(rng.normal(0, noise, len(x)))
    fit = detect_levels(x, y)
    assert fit.n_levels == 4, (fit.model, fit.knees, fit.levels)
    for got, want in zip(fit.knees, caps):
        assert abs(got / want - 1) < 0.10, (fit.knees, caps)
    for got, want in zip(fit.levels, levels):
        assert abs(got / want - 1) < 0.05, (fit.levels, levels)


def test_flat_curve_is_one_level():
    rng = np.random.default_rng(1)
    x = grid(4, hi=2**26)
    fit = detect_levels(x, 100 * np.exp(rng.normal(0, 0.02, len(x))))
    assert fit.n_levels == 1
    assert abs(fit.levels[0] / 100 - 1) < 0.02


def test_noise_estimate_ignores_knees():
    rng = np.random.default_rng(2)
    x = grid(4)
    clean = np.array([mixture(f, (64e3, 4e6), (20, 150, 500), "gradual") for f in x])
    for sigma in (0.01, 0.04):
        est = estimate_noise(clean * np.exp(rng.normal(0, sigma, len(x))))
        assert sigma / 1.6 < est < sigma * 1.6


def test_recorded_cv_raises_the_noise():
    assert estimate_noise([1.0] * 10, [0.05] * 10) == pytest.approx(0.05)


def test_bad_points_are_dropped():
    x = np.array([1024, 2048, -1, 4096, np.nan, 8192, 16384, 32768])
    y = np.array([10, 10, 10, 10, 10, 0, 10, 10])
    fit = detect_levels(x, y)
    assert fit.n_levels == 1 and len(fit.x) == 5


@pytest.mark.parametrize("unit", [32.0, 128.0])
def test_line_size_from_stride_sweep(unit):
    rng = np.random.default_rng(int(unit))
    strides = np.array([8 * 2**i for i in range(10)], float)
    lat = (30 + 250 * np.minimum(1, strides / unit)) * np.exp(rng.normal(0, 0.01, len(strides)))
    b, lo, hi, _ = detect_knee_saturation(strides, lat)
    assert 2 ** round(math.log2(b)) == unit
    assert abs(hi / 280 - 1) < 0.05


def test_no_line_in_a_flat_stride_sweep():
    strides = np.array([8 * 2**i for i in range(8)], float)
    assert detect_knee_saturation(strides, 100 * np.exp(np.random.default_rng(0).normal(0, 0.01, 8))) is None


def test_level_values_are_plateau_medians_not_pulled_by_transition_points():
    # H100-like steps (L1 216 KiB, L2 near 22.6 MiB, L2 45 MiB) at 4 points/octave, with a point half
    # way up each edge (the steps take two points on the device). The least-squares value of a step
    # model counts such a point as a plateau point and was 3-5 % low on the device's curve; the
    # reported level must be the plateau itself.
    x = grid(4, hi=2**32)
    plateaus = (32.0, 276.0, 521.0, 683.0)
    edges = (216 * 2**10, 22.7 * 2**20, 46 * 2**20)
    y = np.full_like(x, plateaus[0])
    for edge, level in zip(edges, plateaus[1:]):
        y[x > edge] = level
    rng = np.random.default_rng(3)
    y *= 1 + 0.001 * rng.standard_normal(len(x))
    for edge, lo, hi in zip(edges, plateaus, plateaus[1:]):
        y[np.argmax(x > edge)] = lo + 0.6 * (hi - lo)  # first point past the edge: mid-transition
    fit = detect_levels(x, y)
    assert len(fit.levels) == 4, fit
    for got, want in zip(fit.levels, plateaus):
        assert got == pytest.approx(want, rel=0.005)


# Fictional hierarchies (synth.HIERARCHIES): partitioned and unified L2s, an L2 only 8x its L1, sharp
# steps, a far level reached gradually, an outlier beside an edge; each on three footprint grids and
# several noise seeds. The capacity is the bytes a level holds whatever its edge shape.
FICTION_SEEDS = (0, 1)


@pytest.mark.parametrize("grid_name", list(GRIDS))
@pytest.mark.parametrize("h", HIERARCHIES, ids=lambda h: h.name)
def test_fictional_hierarchies(h, grid_name):
    for seed in FICTION_SEEDS:
        x, y = hierarchy_curve(h, grid_name, 0.005, seed)
        fit = detect_levels(x, y)
        assert fit.n_levels == len(h.levels), (seed, fit.knees, fit.shapes, fit.levels)
        for (cap, shape), got, (below, above) in zip(h.edges, fit.knees, fit.brackets):
            # Between two measured footprints a sharp step fits them all alike: the data place it in its
            # bracket and no closer, which at 2 points per octave is a factor 1.41 wide.
            if shape == "step" and grid_name == "2/octave":
                assert below <= cap < above, (seed, fit.knees, fit.brackets)
            else:
                assert abs(got / cap - 1) < 0.10, (seed, fit.knees, fit.shapes, [c for c, _ in h.edges])
        for got, want in zip(fit.levels, h.levels):
            assert abs(got / want - 1) < 0.05, (seed, fit.levels, h.levels)


# An L1, a gradual L2 near partition of 20 MB and far level to 40 MB, then DRAM, on 2 points per octave at
# 1 % noise: one footprint (33.5 MB) carries the far level in each random chain, the L1-allocating one and
# the L1-bypassing one (its witness, no L1).
PARTITIONED = (((196608, "gradual"), (20e6, "gradual"), (40e6, "gradual")), (30.0, 220.0, 290.0, 620.0))


def partitioned_chain(seed, l1=True):
    edges, levels = PARTITIONED
    if not l1:
        edges, levels = edges[1:], levels[1:]
    x = grid(2, hi=4 * 2**30)
    y = np.array([hierarchy_latency(f, edges, levels) for f in x])
    y *= np.exp(np.random.default_rng(seed).normal(0.0, 0.01, len(x)))
    return x, y


def test_a_level_on_one_point_is_kept_when_a_witness_shows_it():
    missed = 0
    for seed in range(5):
        x, y = partitioned_chain(seed)
        # Alone, the far level rests on one point in some seeds (2 and 4): rejected as that point's error.
        missed += detect_levels(x, y, [0.01] * len(x)).n_levels == 3
        wx, wy = partitioned_chain(seed + 100, l1=False)
        fit = detect_levels(x, y, [0.01] * len(x), witnesses=((wx, wy, [0.01] * len(wx)),))
        assert fit.n_levels == 4, (seed, fit.knees, fit.candidates)
        for got, (cap, _) in zip(fit.knees, PARTITIONED[0]):
            assert abs(got / cap - 1) < 0.10, (seed, fit.knees)
    assert missed, "no seed rests on one point: the test no longer shows what a witness adds"


@pytest.mark.parametrize("seed", [0, 1])
def test_an_outlier_is_not_a_level_when_the_witness_does_not_repeat_it(seed):
    # An unpartitioned L2 with one point 12 % high just past its 20 MB edge: the witness, measured
    # without that error, must not make a level of it.
    edges, levels = ((196608, "gradual"), (40e6, "gradual")), (30.0, 220.0, 620.0)
    x = grid(2, hi=4 * 2**30)
    rng = np.random.default_rng(seed)
    y = np.array([hierarchy_latency(f, edges, levels) for f in x]) * np.exp(rng.normal(0.0, 0.01, len(x)))
    wy = np.array([hierarchy_latency(f, edges[1:], levels[1:]) for f in x]) * np.exp(rng.normal(0.0, 0.01, len(x)))
    i = int(np.argmax(x > 25e6))
    y[i] *= 1.12
    fit = detect_levels(x, y, [0.01] * len(x), witnesses=((x, wy, [0.01] * len(x)),))
    assert fit.n_levels == 3, (fit.knees, fit.levels)
    assert abs(fit.knees[1] / 40e6 - 1) < 0.10, fit.knees
