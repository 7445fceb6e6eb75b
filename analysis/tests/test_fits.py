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
