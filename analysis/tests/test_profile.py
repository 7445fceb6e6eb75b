"""The device profile's typed results: a bug in a step raises instead of becoming a note, an expected
failure (a fit the data cannot make) is handled where it arises, and the JSON form writes the keys
device-profile.json has always had."""
import math

import pytest

from gpuprobe_analysis import profile, results
from gpuprobe_analysis import profile_results as R
from gpuprobe_analysis.profile import Profile
import synth


def load(tmp_path, families):
    return results.load([synth.write(str(tmp_path / "r.json"), synth.synth_results(noise=0.01, families=families))])


@pytest.mark.parametrize("step_function,family", [("fit_tlb", "memory.tlb"), ("fit_alpha_beta", "transfer.host"),
                                                  ("detect_levels_many", "memory.latency")])
def test_a_bug_in_a_step_is_not_swallowed(tmp_path, monkeypatch, step_function, family):
    rs = load(tmp_path, [family])

    def broken(*args, **kwargs):
        raise TypeError("a bug in the analysis")
    monkeypatch.setattr(profile, step_function, broken)
    with pytest.raises(TypeError, match="a bug in the analysis"):
        Profile(rs)


def test_a_fit_the_data_cannot_make_is_said_in_its_row(tmp_path, monkeypatch):
    rs = load(tmp_path, ["transfer.host"])
    assert all(f.model is not None and f.fit is None for f in Profile(rs).transfers.fits)  # the data fit

    def unfit(sizes, seconds):
        raise ValueError("alpha-beta fit needs at least two distinct sizes")
    monkeypatch.setattr(profile, "fit_alpha_beta", unfit)
    p = Profile(rs)
    assert p.transfers.fits and not p.curves["transfers"]
    for row in p.to_json()["transfers"]["fits"]:
        assert row["fit"] == "not fitted: alpha-beta fit needs at least two distinct sizes"
        assert "alpha_us" not in row and "verdict" not in row


def test_sections_without_entries_are_absent(tmp_path):
    p = Profile(load(tmp_path, ["memory.latency"]))
    assert p.hierarchy is not None and p.tlb is None and p.transfers is None and p.pipelines.throughput == []
    d = p.to_json()
    assert "tlb" not in d and "transfers" not in d and "launch_barrier" not in d
    assert list(d)[:4] == ["device", "inputs", "hierarchy", "granularity"] and list(d)[-2:] == ["notes", "issues"]


def test_to_json_leaves_unset_optional_keys_out_and_flattens():
    tlb = R.Tlb(curves=[], source={}, method="m", warm_up_recorded=True)
    assert R.to_json(tlb) == {"curves": [], "source": {}, "method": "m", "warm_up_recorded": True}
    caps = R.Capacities(l2_bytes=math.nan, l1_carveout="default")
    assert R.to_json(caps) == {"l2_bytes": None, "l1_carveout": "default"}
    row = R.TransferFit(key={"direction": "h2d"}, points=1, source={}, fit="not fitted: one size")
    assert list(R.to_json(row)) == ["key", "points", "source", "fit"]
