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
