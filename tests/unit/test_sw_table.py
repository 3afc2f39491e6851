"""Stellar Winds at the table (issue 14): the rules each item fixes, one test per rule.

Sheets from ``tests/unit/conftest.py``: ``vex`` is a level-5 PC (40 HP, AC 29, Fort 15, Ref 16,
Will 14); ``orc`` is a level-5 monster (50 HP, AC 17, Fort 15, Ref 14, Will 13). Every die face
is given; the numbers in the comments are worked by hand from RULES.md.
"""

from __future__ import annotations

from typing import Any

BOW = {"name": "bow", "kind": "ranged", "defense": "ac", "attack_bonus": 8, "damage": "1d10"}
SWORD = {"name": "sword", "kind": "melee", "defense": "ac", "attack_bonus": 8, "damage": "1d8"}


# ------------------------------------------------------------------ SW-30 step 5
def test_sw_30_vulnerability_applies_to_a_damage_total_of_0(make_table: Any) -> None:
    t = make_table()
    t.pc("vex", vuln={"cold": 5})
    # 1d4-5 with a 3: -2, which becomes 0 (step 1); then max(0, 0 + 5 - 0) = 5 (step 5)
    out = t.deal_damage("vex", "1d4-5", faces=[3], types=["cold"]).outcome
    assert out["amount"] == 5
    assert t.c("vex")["hp"] == 40 - 5


def test_sw_30_resistance_still_floors_a_total_of_0_at_0(make_table: Any) -> None:
    t = make_table()
    t.pc("vex", resist={"cold": 5})
    assert t.deal_damage("vex", "1d4-5", faces=[3], types=["cold"]).outcome["amount"] == 0
    assert t.c("vex")["hp"] == 40
