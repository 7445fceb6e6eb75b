"""The alpha-beta transfer model recovers known parameters."""
import numpy as np
import pytest

from gpuprobe_analysis.fits import fit_alpha_beta


def test_exact_data_exact_fit():
    sizes = np.array([4096 * 4**i for i in range(9)], float)
    fit = fit_alpha_beta(sizes, 5e-6 + sizes / 20e9)
    assert fit.alpha_s == pytest.approx(5e-6, rel=1e-9)
    assert fit.beta_bps == pytest.approx(20e9, rel=1e-9)
    assert fit.rms_rel_error < 1e-12
    assert fit.half_bandwidth_bytes == pytest.approx(5e-6 * 20e9)


@pytest.mark.parametrize("alpha,beta,noise", [(8e-6, 25e9, 0.01), (2e-6, 50e9, 0.02), (40e-6, 6e9, 0.03)])
def test_noisy_data_recovers_parameters(alpha, beta, noise):
    rng = np.random.default_rng(7)
    sizes = np.array([1024 * 2**i for i in range(19)], float)  # 1 KiB .. 256 MiB
    t = (alpha + sizes / beta) * np.exp(rng.normal(0, noise, len(sizes)))
    fit = fit_alpha_beta(sizes, t)
    assert abs(fit.alpha_s / alpha - 1) < 0.10
    assert abs(fit.beta_bps / beta - 1) < 0.03
    assert noise / 2 < fit.rms_rel_error < noise * 2
    # The reported standard errors cover the truth (3 sigma).
    assert abs(fit.alpha_s - alpha) < 3 * fit.alpha_stderr_s + 1e-12
    assert abs(fit.beta_bps - beta) < 3 * fit.beta_stderr_bps + 1


def test_needs_two_sizes():
    with pytest.raises(ValueError):
        fit_alpha_beta([4096, 4096], [1e-5, 1.1e-5])


def test_alpha_beta_robust_to_a_few_slow_points():
    rng = np.random.default_rng(5)
    s = 2.0 ** np.arange(0, 31)
    t = 5e-6 + s / 50e9
    t = t * (1 + 0.01 * rng.standard_normal(len(s)))
    slow = [3, 9, 20]  # a slow path on a few calls: 3x the time
    t[slow] *= 3.0
    ab = fit_alpha_beta(s, t)
    assert abs(ab.alpha_s / 5e-6 - 1) < 0.05
    assert abs(ab.beta_bps / 50e9 - 1) < 0.05
    assert ab.outliers == len(slow) and set(ab.outlier_sizes) == set(s[slow])


def two_regime_times(sizes):
    """A transfer that switches path at 1 MiB: 3 us + s / 10 GB/s below, 40 us + s / 50 GB/s from it."""
    return np.where(sizes < 2**20, 3e-6 + sizes / 10e9, 40e-6 + sizes / 50e9)


def test_two_regimes_are_found_where_one_model_does_not_fit():
    from gpuprobe_analysis.fits import alpha_beta_holds, fit_two_regimes
    sizes = np.array([4096.0 * 2**i for i in range(15)])
    t = two_regime_times(sizes)
    assert not alpha_beta_holds(fit_alpha_beta(sizes, t))
    small, large = fit_two_regimes(sizes, t)
    assert small.hi_bytes < 2**20 <= large.lo_bytes
    assert alpha_beta_holds(small.fit) and alpha_beta_holds(large.fit)
    assert small.fit.beta_bps == pytest.approx(10e9, rel=1e-6) and large.fit.beta_bps == pytest.approx(50e9, rel=1e-6)
    assert large.fit.alpha_s == pytest.approx(40e-6, rel=1e-6)


def test_transfer_verdict_is_one_and_the_summary_quotes_no_alpha_beta_that_does_not_hold():
    from gpuprobe_analysis.sections.transfers import transfer_model
    sizes = np.array([4096.0 * 2**i for i in range(15)])
    good = transfer_model(fit_alpha_beta(sizes, 3e-6 + sizes / 10e9), sizes, 3e-6 + sizes / 10e9, 0.01)
    assert good.fits and good.verdict.startswith("model fits") and good.summary.startswith("β 10 GB/s")
    t = two_regime_times(sizes)
    bad = transfer_model(fit_alpha_beta(sizes, t), sizes, t, 0.01)
    assert not bad.fits and bad.verdict.startswith("model does not fit")
    assert bad.summary.startswith("α-β model does not fit")
    assert f"β {bad.beta_gbps:.4g} GB/s" not in bad.summary  # the rejected fit's β is quoted nowhere
    assert "β 10 GB/s" in bad.summary and "β 50 GB/s" in bad.summary and "measured up to" in bad.summary


def test_beta_is_not_quoted_for_sizes_too_small_to_carry_bandwidth():
    """A regime of small transfers (the H100's bidir/write_combined/ce: 2 B–32 KiB, α 7 µs): the bytes take
    4 % of the largest one's time, so its β (118 GB/s, above the 100 GB/s any size reached) is noise on α."""
    from gpuprobe_analysis.fits import beta_not_quoted
    sizes = np.array([2.0 * 2**i for i in range(15)])  # 2 B .. 32 KiB
    fit = fit_alpha_beta(sizes, 6.95e-6 + sizes / 118e9)
    why = beta_not_quoted(fit, float(sizes[-1]), 100.4e9)
    assert why and "n½" in why, why
    # The same range at a bandwidth it can carry (a 32 KiB transfer at 1 GB/s: its bytes 5 x α): quoted.
    slow = fit_alpha_beta(sizes, 6.95e-6 + sizes / 1e9)
    assert beta_not_quoted(slow, float(sizes[-1]), 2e9) is None
    # A β above what any size of the curve reached, beyond the model's error, is no bandwidth either.
    big = np.array([4096.0 * 2**i for i in range(15)])
    fast = fit_alpha_beta(big, 3e-6 + big / 60e9)
    assert beta_not_quoted(fast, float(big[-1]), 59e9) is None
    assert "above the" in beta_not_quoted(fast, float(big[-1]), 40e9)


def test_summary_quotes_alpha_only_where_the_regime_cannot_carry_bandwidth():
    """Two regimes, the small one over sizes whose time is all α: the summary gives it α only, and its
    regime's β is None; the large one keeps α and β."""
    from gpuprobe_analysis.sections.transfers import transfer_model
    sizes = np.array([2.0 * 2**i for i in range(28)])  # 2 B .. 256 MiB
    t = np.where(sizes <= 32768, 6.95e-6 + sizes / 118e9, 13.4e-6 + sizes / 100.5e9)
    t = t * (1 + 0.004 * np.sin(np.arange(len(t))))  # the points' own spread
    m = transfer_model(fit_alpha_beta(sizes, t), sizes, t, 0.01)
    assert not m.fits and m.regimes
    small, large = m.regimes
    assert small.beta_gbps is None and small.beta_note
    assert "118" not in m.summary and "α 6.9" in m.summary, m.summary
    assert large.beta_gbps == pytest.approx(100.5, rel=0.02) and "β 100" in m.summary, m.summary


def _transfer_models(paths):
    from gpuprobe_analysis import results
    from gpuprobe_analysis.sections.transfers import _transfers
    tr = _transfers(results.load(paths), [])
    return {tuple(r.key.values()): r.model for r in tr.fits}


def _no_beta_above_the_curve(models):
    for m in models.values():  # no quoted β anywhere above the curve's measured maximum beyond the model's error
        for b in [m.beta_gbps] + [g.beta_gbps for g in (m.regimes or [])]:
            if b is not None and m.measured_peak_gbps:
                assert b <= 1.1 * m.measured_peak_gbps


def test_h100_reference_transfers_quote_no_beta_the_sizes_cannot_carry():
    """The issue's two regimes, on the transfer entries of the H100 reference of 2026-11-26 (kept in tests/data
    when the reference was measured again): bidir/write_combined/ce 2 B–32 KiB (β 118.2 GB/s, above the 100.4
    any size reached) and bidir/pinned/sm 2 B–512 B (β 0.1195 GB/s) give α only; h2d/pageable/ce 1 B–64 KiB,
    whose largest transfer spends 3.9 x α on its bytes, keeps its β."""
    import os
    by = _transfer_models([os.path.join(os.path.dirname(os.path.abspath(__file__)), "data",
                                        "h100_2026-11-26_transfers.json.gz")])
    wc, sm, pageable = by[("bidir", "write_combined", "ce")], by[("bidir", "pinned", "sm")], by[("h2d", "pageable", "ce")]
    assert wc.regimes[0].beta_gbps is None and "118" not in wc.summary and "2 B–32 KiB: α 6.95" in wc.summary
    assert sm.regimes[0].beta_gbps is None and "0.1195" not in sm.summary and "2 B–512 B: α 10.97" in sm.summary
    assert wc.regimes[1].beta_gbps == pytest.approx(100.5, abs=0.1)  # the large sizes keep theirs
    assert pageable.regimes[0].beta_gbps == pytest.approx(7.26, abs=0.01) and "β 7.26 GB/s" in pageable.summary
    _no_beta_above_the_curve(by)


def test_committed_h100_reference_quotes_no_beta_above_its_curves():
    import os
    from gpuprobe_analysis.cli import result_paths
    ref = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "reports", "h100")
    if not os.path.isdir(ref):
        pytest.skip("no committed H100 reference")
    by = _transfer_models(result_paths(ref))
    assert len(by) >= 10
    _no_beta_above_the_curve(by)
