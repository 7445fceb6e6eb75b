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


def test_cli_profile_and_compare(tmp_path, capsys):
    from gpuprobe_analysis.cli import main
    doc = synth.synth_results(noise=0.01, families=["transfer.host", "exec.latency"])
    p = synth.write(str(tmp_path / "a.json"), doc)
    assert main(["profile", p, "-o", str(tmp_path / "prof")]) == 0
    out = capsys.readouterr().out
    assert "transfer h2d/pinned/ce: α" in out
    assert (tmp_path / "prof" / "device-profile.json").exists()
    assert main(["compare", p, p, "-o", str(tmp_path / "c.md")]) == 0
    assert "Changes beyond noise: 0 of" in (tmp_path / "c.md").read_text()
    # compare printed nothing for 77 s on two full runs: each step now says what it does, on stderr
    # (stdout is the table), the long one (each set's device profile) before it starts.
    err = capsys.readouterr().err.splitlines()
    assert err[0] == f"gpuprobe-analyze: compare: reading A ({p}) and B ({p}) ..."
    n = len(doc["benchmarks"])
    assert err[1] == f"gpuprobe-analyze: compare: matching {n:,} entries of A with {n:,} of B ..."
    assert err[2].startswith(f"gpuprobe-analyze: compare: analysing A ({n:,} entries): its device profile")
    assert err[3].startswith(f"gpuprobe-analyze: compare: analysing B ({n:,} entries)")


def test_direction_comes_from_the_record(tmp_path):
    a = synth.synth_results(noise=0.0, families=["memory.bank_conflicts"])
    for e in a["benchmarks"]:
        e["value_cv"] = 0.01
    b = copy.deepcopy(a)
    b["benchmarks"][0]["value_median"] *= 1.5  # cycles per access up: worse (the record says lower is better)
    res = compare(results.load([synth.write(str(tmp_path / "a.json"), a)]),
                  results.load([synth.write(str(tmp_path / "b.json"), b)]))
    assert [r["verdict"] for r in res["significant"]] == ["worse"]
    # Without records nothing says which way is better: the change is listed, without a verdict.
    for doc in (a, b):
        del doc["context"]["gpuprobe_families"]
    res = compare(results.load([synth.write(str(tmp_path / "a2.json"), a)]),
                  results.load([synth.write(str(tmp_path / "b2.json"), b)]))
    assert [r["verdict"] for r in res["significant"]] == ["changed (no family record says which way is better)"]
    # and no summary built on axes nobody declared: it says why
    assert "no family records" in res["summary_skipped"] and "ceilings" not in res


def test_summary_figures_come_from_the_sections_they_read_only(tmp_path, monkeypatch):
    """compare's summary analyses only the sections its figures come from (no TLB or transfer fits): the
    same figures as from the whole device profile."""
    from gpuprobe_analysis import compare as C
    from gpuprobe_analysis import sections
    # Ceilings and kernels without the level fits (their cost is not the point here).
    doc = synth.synth_results(noise=0.01, seed=4, families=["exec.throughput", "memory.shared_bandwidth", "kernels",
                                                            "exec.latency"])
    rs = results.load([synth.write(str(tmp_path / "r.json"), doc)])
    few = C.headline_figures(rs)
    assert few[0] and few[1]  # ceilings and kernels
    asked = []
    whole = sections.device_profile

    def every_section(rs, only=None):
        asked.append(only)
        return whole(rs)
    monkeypatch.setattr(sections, "device_profile", every_section)
    assert C.headline_figures(rs) == few
    assert asked == [C.HEADLINE_SECTIONS]
    assert not {"tlb", "transfers", "granularity", "access"} & sections._closure(C.HEADLINE_SECTIONS)
