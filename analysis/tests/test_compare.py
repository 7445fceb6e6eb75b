"""compare: changes beyond the recorded noise."""
import copy

from gpuprobe_analysis import results
from gpuprobe_analysis.compare import compare, to_markdown
import synth


def test_changes_beyond_noise(tmp_path):
    a = synth.synth_results(noise=0.0, families=["exec.latency", "baseline.memcpy_d2d"])
    b = copy.deepcopy(a)
    for e in a["benchmarks"] + b["benchmarks"]:
        e["value_cv"] = 0.02  # noise: 2 x sqrt(2) x 2 % = 5.7 % threshold
    lat = [e for e in b["benchmarks"] if e["name"].startswith("exec.latency")]
    lat[0]["value_median"] *= 1.20  # cycles up 20 %: worse
    lat[1]["value_median"] *= 1.03  # within noise
    bw = [e for e in b["benchmarks"] if e["name"].startswith("baseline")]
    bw[0]["value_median"] *= 1.10  # GB/s up 10 %: better
    b["benchmarks"].pop()  # only in A
    b["context"]["cuda_driver_version"] = "13.1"
    pa = synth.write(str(tmp_path / "a.json"), a)
    pb = synth.write(str(tmp_path / "b.json"), b)
    res = compare(results.load([pa]), results.load([pb]))
    sig = {r["entry"]: r for r in res["significant"]}
    assert set(sig) == {lat[0]["name"], bw[0]["name"]}
    assert sig[lat[0]["name"]]["verdict"] == "worse"
    assert sig[bw[0]["name"]]["verdict"] == "better"
    assert res["only_in_a"] == [a["benchmarks"][-1]["name"]]
    assert ("cuda_driver_version", "13.0", "13.1") in res["context_differences"]
    md = to_markdown(res, "a.json", "b.json")
    assert "Changes beyond noise: 2 of" in md and "+20.0 %" in md and "cuda_driver_version" in md
