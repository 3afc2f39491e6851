"""Sheets, XP and levels (RULES.md C4.1, A4.2 / OR-2, adopted rulings 3, 9, 21, 22, B-OR-16)."""

from __future__ import annotations

import pytest

from domain.core import xp
from domain.errors import DomainError, InvalidInput
from tests.unit.orcus.helpers import OrcusTable, refused

# A4.2 as printed: level, XP to reach the next level (level 30: N/A)
XP_TO_NEXT = [1000, 1250, 1500, 1750, 2000, 2500, 3000, 3500, 4000, 5000]
XP_TO_NEXT += [6000, 7000, 8000, 10000, 12000, 14000, 16000, 20000, 24000, 28000]
XP_TO_NEXT += [32000, 40000, 48000, 56000, 64000, 80000, 96000, 112000, 128000]


def test_a4_2_every_row_of_the_xp_table_adds_up() -> None:
    """A4.2: cumulative(n+1) = cumulative(n) + XP to reach the next level; level 30 is 826,500."""
    assert len(xp.ORCUS_XP) == 30 and xp.ORCUS_XP[0] == 0 and xp.ORCUS_XP[-1] == 826_500
    for n, step in enumerate(XP_TO_NEXT):
        assert xp.ORCUS_XP[n + 1] == xp.ORCUS_XP[n] + step, n + 1
    # the 4e table agrees to level 10 and differs from 11 (25,500 here, 26,000 in 4e)
    assert (xp.ORCUS_XP[9], xp.ORCUS_XP[10]) == (20_500, 25_500)


def test_c4_1_kinds_map_to_the_core_kind_and_keep_their_rank(t: OrcusTable) -> None:
    """C4.1: hero / monster / elite / boss; the core kind is pc for a hero, monster for the rest."""
    t.monster("tyrant", "boss", level=8, max_hp=120, action_points=2)
    kinds = {who: (t.v(who)["kind"], t.v(who)["rank"]) for who in ("mira", "ogre", "gob", "tyrant")}
    assert kinds == {
        "mira": ("pc", "hero"),
        "ogre": ("monster", "elite"),
        "gob": ("monster", "monster"),
        "tyrant": ("monster", "boss"),
    }
    v = t.v("mira")
    assert v["hit_points"] == {"current": 30, "max": 30, "temporary": 0}
    assert (v["life"], v["conditions"], v["effects"]) == ("active", [], [])
    assert v["powers"]["lance"] == {"name": "Radiant Lance", "frequency": "encounter", "expended": False}


def test_ruling_22_a_heros_level_is_derived_from_xp(t: OrcusTable) -> None:
    """OR-2 / ruling 22: 2,250 XP is level 3; 3,749 still 3; 3,750 is level 4."""
    assert (t.v("mira")["level"], t.v("mira")["xp_level"]) == (3, 3)
    out = t.record("ExperienceAwarded", creatures=["mira"], amount=1499).outcome
    assert out["creatures"]["mira"] == {"xp": 3749, "xp_level": 3, "level_before": 3, "level_after": 3}
    t.record("ExperienceAwarded", creatures=["mira"], amount=1)
    assert (t.v("mira")["xp"], t.v("mira")["level"]) == (3750, 4)


def test_ruling_22_a_corrected_award_corrects_the_level(t: OrcusTable) -> None:
    award = t.record("ExperienceAwarded", creatures=["mira"], amount=1500).position
    assert t.v("mira")["level"] == 4
    t.amend(award, {"amount": 1000})
    assert (t.v("mira")["xp"], t.v("mira")["level"]) == (3250, 3)
    assert t.v("mira", award, "recorded")["level"] == 4  # what the table believed then


def test_ruling_9_a_hero_registered_at_a_level_gets_that_levels_threshold(table: OrcusTable) -> None:
    table.hero("kel", level=11)
    assert (table.v("kel")["xp"], table.v("kel")["level"]) == (25_500, 11)
    table.hero("new", level=None, xp=None)
    assert (table.v("new")["xp"], table.v("new")["level"]) == (0, 1)


def test_ruling_22_level_and_xp_must_agree_at_registration(table: OrcusTable) -> None:
    with pytest.raises(InvalidInput, match="follows its XP"):
        table.hero("kel", level=5, xp=2250)


def test_b_or_16_level_caps_at_30_and_xp_above_is_kept(table: OrcusTable) -> None:
    table.hero("sage", xp=826_499)
    assert table.v("sage")["level"] == 29
    table.record("ExperienceAwarded", creatures=["sage"], amount=500_001)
    v = table.v("sage")
    assert (v["xp"], v["level"], v["xp_level"]) == (1_326_500, 30, 30)


def test_ruling_9_monsters_keep_their_level_and_track_no_xp(t: OrcusTable) -> None:
    with refused("NOT_ALLOWED"):
        t.record("ExperienceAwarded", creatures=["mira", "ogre"], amount=100)
    assert t.v("mira")["xp"] == 2250  # refused as a whole
    with pytest.raises(InvalidInput, match="tracks no XP"):
        t.monster("imp", xp=100)
    with pytest.raises(InvalidInput, match="level"):
        t.monster("imp", level=None)
    assert (t.v("ogre")["level"], t.v("ogre")["xp"], t.v("ogre")["xp_level"]) == (4, None, None)


def test_ruling_3_a_gm_may_set_a_level_and_return_the_hero_to_its_xp(t: OrcusTable) -> None:
    t.record("LevelSet", creature="mira", level=5)
    assert (t.v("mira")["level"], t.v("mira")["xp_level"], t.v("mira")["level_pinned"]) == (5, 3, 5)
    t.record("LevelSet", creature="mira", level=None)
    assert t.v("mira")["level"] == 3
    t.record("LevelSet", creature="ogre", level=6)
    assert t.v("ogre")["level"] == 6


def test_ruling_21_a_new_hero_starts_with_one_action_point_monsters_per_stat_block(t: OrcusTable) -> None:
    """Ruling 21 / OR-7: a new hero has 1; elites and bosses as their stat block gives."""
    assert t.v("mira")["action_points"] == 1
    assert t.v("ogre")["action_points"] == 1
    assert t.v("gob")["action_points"] == 0


def test_b_x_3_a_campaign_can_set_its_own_xp_table(make_table) -> None:
    t = make_table({"xp_table": [0, 100, 300]})
    t.hero("kel", xp=350)
    assert t.v("kel")["level"] == 3
    with pytest.raises(InvalidInput):
        make_table({"xp_table": [0, 50, 40]})


def test_c4_1_sheet_updates_change_the_sheet_not_a_heros_level(t: OrcusTable) -> None:
    t.damage("mira", 10)
    t.record(
        "SheetUpdated", creature_id="mira", changes={"max_hp": 36, "surges_per_day": 7}, reason="level 4"
    )
    v = t.v("mira")
    assert (v["max_hp"], v["hp"], v["surges_per_day"], v["surges"]) == (36, 26, 7, 6)
    with pytest.raises(InvalidInput, match="LevelSet"):
        t.record("SheetUpdated", creature_id="mira", changes={"level": 4})
    with pytest.raises(InvalidInput, match="cannot change"):
        t.record("SheetUpdated", creature_id="mira", changes={"kind": "boss"})


def test_sheet_checks_refuse_bad_input_and_store_nothing(table: OrcusTable) -> None:
    before = table.store_max()
    bad = [
        {"defenses": {"ac": 10}},
        {"resist": {"plasma": 5}},
        {"powers": [{"id": "x", "frequency": "sometimes"}]},
        {"powers": [{"id": "x", "frequency": "recharge"}]},
        {"powers": [{"id": "x", "frequency": "recharge", "recharge": [7]}]},
        {"powers": [{"id": "x", "frequency": "at_will"}, {"id": "x", "frequency": "daily"}]},
    ]
    for sheet in bad:
        with pytest.raises(DomainError):
            table.hero("kel", **sheet)
    table.hero("kel")
    with refused("ALREADY_EXISTS"):
        table.hero("kel")
    assert table.store_max() == before + 1
