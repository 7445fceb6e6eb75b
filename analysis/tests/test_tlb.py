"""TLB page size, reach, entries and penalty from synthetic devices with a known TLB (synth.Device),
several noise seeds; and the cases the data cannot decide, which must say so instead of a number."""
import pytest

from gpuprobe_analysis import results
from gpuprobe_analysis.sections import device_profile
import synth

KiB, MiB, GiB = 2**10, 2**20, 2**30

DEVICES = {
    # 64 KiB pages, two levels; one reach off the footprint grid (96 MiB: between 4/octave points).
    "64k-pages": synth.Device(name="Synthetic TLB 64K", lat_cycles=(28.0, 190.0, 260.0, 540.0), page_bytes=64 * KiB,
                              tlb_reach=(96 * MiB, 256 * MiB), tlb_penalty_cycles=(40.0, 180.0)),
    # 2 MiB pages, three levels, a slower base.
    "2m-three-levels": synth.Device(name="Synthetic TLB 2M", lat_cycles=(35.0, 300.0, 400.0, 800.0),
                                    page_bytes=2 * MiB, tlb_reach=(32 * MiB, 512 * MiB, 8 * GiB),
                                    tlb_penalty_cycles=(40.0, 90.0, 300.0)),
    # 1 MiB pages (no real GPU's): the page must come from the data, not from a list of usual sizes.
    "1m-pages": synth.Device(name="Synthetic TLB 1M", page_bytes=1 * MiB, tlb_reach=(16 * MiB, 1 * GiB),
                             tlb_penalty_cycles=(50.0, 120.0)),
}


def tlb_of(dev, seed, tmp_path, noise=0.01):
    path = synth.write(str(tmp_path / f"r{seed}.json"),
                       synth.synth_results(dev, noise=noise, seed=seed, families=["memory.tlb"]))
    return device_profile(results.load([path]))["tlb"]


@pytest.mark.parametrize("name", sorted(DEVICES))
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_page_reach_entries_and_penalty(name, seed, tmp_path):
    dev = DEVICES[name]
    t = tlb_of(dev, seed, tmp_path)
    assert t["page_status"] == "measured", t["findings"]
    assert t["page_bytes"] == dev.page_bytes
    assert len(t["levels"]) == len(dev.tlb_reach), t["findings"]
    for lv, reach, pen in zip(t["levels"], dev.tlb_reach, dev.tlb_penalty_cycles):
        assert abs(lv["reach_bytes"] / reach - 1) < 0.10
        assert abs(lv["penalty_cycles"] / pen - 1) < 0.05
        assert lv["entries"] * dev.page_bytes == lv["reach_bytes"]
        assert abs(lv["entries"] / (reach / dev.page_bytes) - 1) < 0.10


def test_page_below_every_stride_is_a_bound_not_a_value(tmp_path):
    # 4 KiB pages with strides from 16 KiB: every stride is beyond the page, so the data give the
    # entries but neither the page nor the reach.
    dev = synth.Device(page_bytes=4 * KiB, tlb_reach=(256 * KiB, 16 * MiB), tlb_penalty_cycles=(50.0, 200.0))
    t = tlb_of(dev, 0, tmp_path)
    assert t["page_status"] == "at most" and t["page_bytes"] is None
    assert t["page"] is None
    assert [lv["entries"] for lv in t["levels"]] == [64, 4096]
    assert all(lv["reach_bytes"] is None for lv in t["levels"])
    assert "at most 16 KiB" in t["findings"][0]


def test_no_tlb_penalty_gives_no_level_and_says_why(tmp_path):
    dev = synth.Device(tlb_reach=(), tlb_penalty_cycles=())
    t = tlb_of(dev, 0, tmp_path)
    assert t["levels"] == [] and t["page_bytes"] is None
    assert t["findings"][0].startswith("No TLB level found")
    assert any("has no knee below its largest steady footprint" in f for f in t["findings"])


def test_a_knee_on_one_stride_only_is_not_a_tlb_level(tmp_path):
    # A first-touch or L2-spill rise on one curve (here: the 64 KiB stride beyond 2 GiB) must not
    # become a TLB level.
    dev = synth.Device(tlb_reach=(), tlb_penalty_cycles=())
    doc = synth.synth_results(dev, noise=0.01, seed=0, families=["memory.tlb"])
    for e in doc["benchmarks"]:
        if e["stride"] == 64 * KiB and e["footprint"] > 2 * GiB:
            e["value_median"] = e["cycles_per_op"] = e["cycles_per_op"] * 1.8
    t = device_profile(results.load([synth.write(str(tmp_path / "r.json"), doc)]))["tlb"]
    assert t["levels"] == []
    assert any("64 KiB-stride curve stays at its base up to" in f for f in t["findings"])


def test_points_without_a_full_warm_lap_are_left_out(tmp_path):
    dev = DEVICES["2m-three-levels"]
    doc = synth.synth_results(dev, noise=0.01, seed=0, families=["memory.tlb"])
    for e in doc["benchmarks"]:
        n = e["footprint"] // e["stride"]
        e["elements"] = n
        e["warm_loads"] = n
        if e["stride"] == 4 * MiB and n > 64:  # cold laps: far slower, as on real first touches
            e["warm_loads"] = 64
            e["value_median"] = e["cycles_per_op"] = e["cycles_per_op"] * 2
    t = device_profile(results.load([synth.write(str(tmp_path / "r.json"), doc)]))["tlb"]
    assert t["page_bytes"] == dev.page_bytes
    assert t["excluded"] and all(x["stride_bytes"] == 4 * MiB for x in t["excluded"])
    assert all(x["why"] == "no full warm lap recorded" for x in t["excluded"])
