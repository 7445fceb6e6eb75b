"""The level-fit cache (levels.detect_levels_many with $GPUPROBE_FIT_CACHE): a stored fit is reused only
for the same inputs, and is the fit a fresh computation gives."""
import numpy as np

from gpuprobe_analysis import levels


def _curve(step_at=2.0**20, high=300.0):
    x = 2.0 ** np.arange(10, 26, 0.5)
    y = np.where(x < step_at, 30.0, high) * (1 + 0.001 * np.sin(np.arange(len(x))))
    return x, y


def test_cached_fit_is_reused_and_equal(tmp_path, monkeypatch):
    monkeypatch.setenv(levels.FIT_CACHE_ENV, str(tmp_path))
    x, y = _curve()
    first = levels.detect_levels_many([(x, y, [0.001] * len(x))])[0]
    assert len(list(tmp_path.glob("*.pickle"))) == 1

    def no_fit(*_args):
        raise AssertionError("a cached fit was computed again")
    monkeypatch.setattr(levels, "detect_levels", no_fit)
    again = levels.detect_levels_many([(x, y, [0.001] * len(x))])[0]
    assert again.levels == first.levels and again.knees == first.knees and again.model == first.model


def test_changed_curve_is_fitted_anew(tmp_path, monkeypatch):
    monkeypatch.setenv(levels.FIT_CACHE_ENV, str(tmp_path))
    x, y = _curve()
    levels.detect_levels_many([(x, y, None)])
    x2, y2 = _curve(step_at=2.0**22, high=400.0)
    fit = levels.detect_levels_many([(x2, y2, None)])[0]
    assert len(list(tmp_path.glob("*.pickle"))) == 2
    assert max(fit.levels) > 350  # the new curve's upper level, not the stored 300


def test_without_cache_nothing_is_written(tmp_path, monkeypatch):
    monkeypatch.delenv(levels.FIT_CACHE_ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    x, y = _curve()
    levels.detect_levels_many([(x, y, None)])
    assert not list(tmp_path.rglob("*.pickle"))
