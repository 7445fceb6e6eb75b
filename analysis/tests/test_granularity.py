"""Miss unit per serving level from fixed-stride chains (synth.Device's sector/DRAM unit, lines)."""
import math

import pytest

from gpuprobe_analysis import results
from gpuprobe_analysis.sections import device_profile
from gpuprobe_analysis.sections.granularity import fit_miss_unit
import synth


def granularity(dev, seed, tmp_path):
    doc = synth.synth_results(dev, noise=0.01, seed=seed, families=["memory.latency"])
    return device_profile(results.load([synth.write(str(tmp_path / f"r{seed}.json"), doc)]))["granularity"]


@pytest.mark.parametrize("sector", [32.0, 64.0])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_unit_of_the_level_behind_whatever_strides_the_sweep_starts_at(sector, seed, tmp_path):
    # Footprints of 16 MiB and more have no 8-B stride (the probe caps a chain at 2^20 elements): the
    # unit must still come out right there, not half of it from an extrapolated intercept.
    dev = synth.Device(sector_bytes=sector)
    g = granularity(dev, seed, tmp_path)
    rows = [r for r in g["per_footprint"] if r["served_by"] == "L2 near partition"]
    assert any(r["footprint_bytes"] >= 16 * 2**20 for r in rows)
    assert all(r["miss_unit_pow2_bytes"] == sector for r in rows), [(r["footprint_bytes"], r["miss_unit_bytes"]) for r in rows]
    assert g["by_level"]["L2 near partition"] == sector


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_no_miss_unit_where_l1_serves(seed, tmp_path):
    g = granularity(synth.Device(), seed, tmp_path)
    assert "L1" not in g["by_level"]
    assert all(r["served_by"] != "L1" for r in g["per_footprint"])
    assert g["no_miss"] and all(r["footprint_bytes"] <= synth.Device().l1_bytes for r in g["no_miss"])


def test_unit_needs_a_stride_below_the_power_of_two_it_reports():
    # Measured on the synthetic unpartitioned L2 (DRAM unit 64 B) at footprints past the L2, 1 % noise:
    # where the sweep starts at the unit, its first stride 3 % low fitted B = 132 B (reported 128), with no
    # stride below the unit; one stride at the unit 1 % low fitted B = 64.6 B, still a 64 B unit.
    assert fit_miss_unit([128, 256, 512], [625.6, 653.7, 637.0], 30.0, [0.01] * 3) is None
    r = fit_miss_unit([32, 64, 128], [332.9, 636.9, 644.1], 30.0, [0.01] * 3)
    assert r is not None and 2 ** round(math.log2(r[0])) == 64, r
