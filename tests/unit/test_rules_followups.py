"""Rulings settled after the rules review (see the closing note of the session that added them)."""

from __future__ import annotations

from typing import Any

import pytest

from domain.errors import InvalidInput


def test_b_sw_5_a_creature_without_a_wound_track_takes_a_critical_hit_as_hp_damage(make_table: Any) -> None:
    t = make_table({"sw.monsters_have_wounds": False})
    t.monster("orc", max_hp=50)
    t.deal_damage("orc", amount=12, wounding=True)
    orc = t.c("orc")
    assert (orc["hp"], orc["life"]) == (38, "active")


def test_sw_30_a_halving_condition_from_the_table_halves_damage_taken(make_table: Any) -> None:
    t = make_table()
    t.monster("ghost", max_hp=50)
    t.record(
        "EffectApplied",
        {"target": "ghost", "source": "ghost", "effect": {"components": [{"condition": "insubstantial"}]}},
    )
    t.deal_damage("ghost", amount=11)
    assert t.c("ghost")["hp"] == 50 - 11 // 2


def test_or_2_a_campaign_xp_table_has_at_most_thirty_levels(make_table: Any) -> None:
    with pytest.raises(InvalidInput):
        make_table({"xp_table": list(range(0, 31_000, 1000))})
