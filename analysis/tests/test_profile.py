"""The device profile's typed results: a bug in a step raises instead of becoming a note, an expected
failure (a fit the data cannot make) is handled where it arises, and the JSON form writes the keys
device-profile.json has always had."""
import math

import pytest

from gpuprobe_analysis import curves, results
from gpuprobe_analysis import profile_results as R
from gpuprobe_analysis.sections import device_profile, results_of
from gpuprobe_analysis.sections import tlb as tlb_section
from gpuprobe_analysis.sections import transfers as transfers_section
import synth


def load(tmp_path, families):
    return results.load([synth.write(str(tmp_path / "r.json"), synth.synth_results(noise=0.01, families=families))])


@pytest.mark.parametrize("module,step_function,family", [(tlb_section, "fit_tlb", "memory.tlb"),
                                                         (transfers_section, "fit_alpha_beta", "transfer.host"),
                                                         (curves, "detect_levels_many", "memory.latency")])
def test_a_bug_in_a_step_is_not_swallowed(tmp_path, monkeypatch, module, step_function, family):
    rs = load(tmp_path, [family])

    def broken(*args, **kwargs):
        raise TypeError("a bug in the analysis")
    monkeypatch.setattr(module, step_function, broken)
    with pytest.raises(TypeError, match="a bug in the analysis"):
        device_profile(rs)


def test_a_fit_the_data_cannot_make_is_said_in_its_row(tmp_path, monkeypatch):
    rs = load(tmp_path, ["transfer.host"])
    assert all(f.model is not None and f.fit is None for f in results_of(rs)["transfers"].transfers.fits)  # the data fit

    def unfit(sizes, seconds):
        raise ValueError("alpha-beta fit needs at least two distinct sizes")
    monkeypatch.setattr(transfers_section, "fit_alpha_beta", unfit)
    t = results_of(rs)["transfers"]
    assert t.transfers.fits and not t.curves
    for row in device_profile(rs)["transfers"]["fits"]:
        assert row["fit"] == "not fitted: alpha-beta fit needs at least two distinct sizes"
        assert "alpha_us" not in row and "verdict" not in row


def test_sections_without_entries_are_absent(tmp_path):
    rs = load(tmp_path, ["memory.latency"])
    r = results_of(rs)
    assert (r["hierarchy"].hierarchy is not None and r["tlb"].tlb is None and r["transfers"].transfers is None
            and r["execution"].pipelines.throughput == [])
    d = device_profile(rs)
    assert "tlb" not in d and "transfers" not in d and "launch_barrier" not in d
    assert list(d) == ["device", "inputs", "hierarchy", "granularity", "bandwidth_l2", "bandwidth_errors", "premises", "bandwidth",
                       "pipelines", "notes", "issues", "roofline", "optimality", "kernels_vs_cublas", "tool_time",
                       "unsettled_operands", "launch_gate"]


def test_to_json_leaves_unset_optional_keys_out_and_flattens():
    tlb = R.Tlb(curves=[], source={}, method="m", warm_up_recorded=True)
    assert R.to_json(tlb) == {"curves": [], "source": {}, "method": "m", "warm_up_recorded": True}
    caps = R.Capacities(l2_bytes=math.nan, l1_carveout="default")
    assert R.to_json(caps) == {"l2_bytes": None, "l1_carveout": "default"}
    row = R.TransferFit(key={"direction": "h2d"}, points=1, source={}, fit="not fitted: one size")
    assert list(R.to_json(row)) == ["key", "points", "source", "fit"]
