"""The registry of the families' own report sections (gpuprobe_analysis/sections/__init__.py): what it
refuses, the order it analyses and places sections in, and the templates it serves."""
from __future__ import annotations

import pytest

import synth
from gpuprobe_analysis import results
from gpuprobe_analysis import sections as S
from gpuprobe_analysis.report import SECTIONS


@pytest.fixture
def registry(monkeypatch):
    """The package's sections (loaded), in a copy the test may add to."""
    S.load()
    monkeypatch.setattr(S, "_REGISTERED", dict(S._REGISTERED))
    return S


def _section(sid, families, after=("transfers",), uses=(), analyze=lambda inputs: None, template=None):
    return S.FamilySection(id=sid, title=sid.title(), families=tuple(families), after=tuple(after), analyze=analyze,
                           content=lambda result, figdir: result, uses=tuple(uses), template=template)


def test_the_packages_sections_are_registered_with_their_families():
    ids = [s.id for s in S.load()]
    assert {"p2p", "collectives", "mgpu"} <= set(ids)
    claimed = S.claimed_families()
    assert "transfer.p2p" in claimed and "transfer.collective" in claimed and "kernels.symv_mgpu" in claimed
    assert len(claimed) == len(set(claimed))


def test_analysis_order_follows_uses_and_anchors_not_import_order():
    ids = [s.id for s in S.load()]
    assert ids.index("collectives") < ids.index("mgpu")  # mgpu uses the collectives' fits
    assert ids.index("p2p") < ids.index("collectives")  # collectives is placed after p2p


def test_a_second_claim_on_an_id_or_a_family_is_refused(registry):
    with pytest.raises(ValueError, match="registered twice"):
        registry.register(_section("p2p", ["memory.nothing_else"]))
    with pytest.raises(ValueError, match=r"already belong to 'p2p'"):
        registry.register(_section("p2p_again", ["transfer.p2p"]))


def test_uses_of_an_unknown_section_and_cycles_are_refused(registry):
    registry.register(_section("needs_ghost", ["memory.a"], uses=("ghost",)))
    with pytest.raises(ValueError, match="no such section"):
        registry.load()
    del registry._REGISTERED["needs_ghost"]
    registry.register(_section("first", ["memory.b"], uses=("second",)))
    registry.register(_section("second", ["memory.c"], after=("first",)))
    with pytest.raises(ValueError, match="cycle"):
        registry.load()


def test_placement_after_the_first_present_anchor_in_analysis_order():
    a = S.Placed(_section("a", ["x.a"], after=("missing", "transfers")), result=1)
    b = S.Placed(_section("b", ["x.b"], after=("transfers",)), result=1)
    c = S.Placed(_section("c", ["x.c"], after=("a", "kernels")), result=1)
    ids = [sid for sid, _ in S.place(SECTIONS, [a, b, c])]
    i = ids.index("transfers")
    # Each after its anchor and after the sections placed behind that anchor before it: b after a
    # (same anchor), c after a and b.
    assert ids[i + 1:i + 4] == ["a", "b", "c"]
    assert [sid for sid in ids if sid not in "abc"] == [sid for sid, _ in SECTIONS]
    with pytest.raises(ValueError, match="none of"):
        S.place(SECTIONS, [S.Placed(_section("d", ["x.d"], after=("nowhere",)), result=1)])


def test_analyze_all_keeps_present_sections_and_passes_earlier_results(registry, tmp_path):
    seen = {}

    def second(inputs):
        seen.update(inputs.results)
        return "second's result"

    registry.register(_section("zz_first", ["x.first"], analyze=lambda inputs: {"value": 3}))
    registry.register(_section("zz_second", ["x.second"], uses=("zz_first",), analyze=second))
    registry.register(_section("zz_absent", ["x.absent"]))
    # Results without any family section's entries: only the test's own sections are present.
    doc = synth.synth_results(synth.Device(), noise=0.0, families=["exec.launch"])
    rs = results.load([synth.write(str(tmp_path / "r.json"), doc)])
    placed = {p.section.id: p.result for p in registry.analyze_all(rs)}
    assert set(placed) - set(S.CORE) == {"zz_first", "zz_second"} and set(S.CORE) <= set(placed)
    assert placed["zz_first"] == {"value": 3} and placed["zz_second"] == "second's result"
    assert "zz_absent" not in placed
    assert seen["zz_first"] == {"value": 3}


def test_an_inline_template_is_served_under_the_sections_name(registry):
    registry.register(_section("inline", ["x.inline"], template="{{ section }}"))
    assert registry.template_source("sections/inline.j2") == "{{ section }}"
    assert registry.template_source("sections/p2p.j2") is None  # a file in templates/sections
    assert registry.template_source("report.html.j2") is None
