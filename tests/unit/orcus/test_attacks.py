"""Attacks (RULES.md A4.5-A4.7: OR-10..OR-15, the A4.6 table, B-OR-4, B-OR-5, ruling 17).

mira (+5 Strike, 1d8+3) against gob (AC 15, 10 HP) and the ogre (AC 16, 52 HP, resist 5 fire).
"""

from __future__ import annotations

from typing import Any

import pytest

from domain.errors import DomainError, InvalidInput
from domain.rulesets.orcus.tables import ATTACK_MODIFIERS
from tests.unit.orcus.helpers import CLUB, OrcusTable, d20, refused, roll

STRIKE = {
    "name": "Strike",
    "power_id": "strike",
    "kind": "melee",
    "defense": "ac",
    "attack_bonus": 5,
    "damage": "1d8+3",
}


def strike(
    t: OrcusTable, face: int, damage: list[int] | None = None, target: str = "gob", **entry: Any
) -> dict[str, Any]:
    return t.attack("mira", dict(STRIKE), [{"target": target, "face": face, **entry}], damage=damage).outcome[
        "targets"
    ][0]


def test_or_10_a_total_equal_to_the_defense_hits_and_deals_its_rolled_damage(t: OrcusTable) -> None:
    """OR-10: d20 10 + 5 = 15 against AC 15 hits; OR-14: 1d8 (4) + 3 = 7 damage: gob 10 -> 3."""
    out = strike(t, 10, [4])
    assert (out["attack_total"], out["defense_value"], out["hit"], out["crit"]) == (15, 15, True, False)
    assert out["damage"]["amount"] == 7 and t.hp("gob") == 3


def test_or_10_a_total_below_the_defense_misses_and_needs_no_damage(t: OrcusTable) -> None:
    out = strike(t, 9)
    assert (out["attack_total"], out["hit"]) == (14, False) and "damage" not in out
    assert t.hp("gob") == 10


def test_b_or_4_a_natural_20_is_a_critical_hit_even_when_the_total_would_miss(t: OrcusTable) -> None:
    """B-OR-4 (literal OR-11): attack bonus -10, natural 20: 10 against AC 16, still a critical
    hit; OR-11 / B-OR-5: maximum damage instead of rolling: 2d6+4 -> 16, no damage roll needed."""
    weak = {**CLUB, "attack_bonus": -10}
    out = t.attack("ogre", weak, [{"target": "mira", "face": 20}]).outcome["targets"][0]
    assert (out["attack_total"], out["defense_value"]) == (10, 17)
    assert (out["hit"], out["crit"], out["damage"]["maximum"], out["damage"]["amount"]) == (
        True,
        True,
        16,
        16,
    )
    assert t.hp("mira") == 14


def test_or_11_a_natural_1_always_misses(t: OrcusTable) -> None:
    strong = {**CLUB, "attack_bonus": 30}
    out = t.attack("ogre", strong, [{"target": "mira", "face": 1}]).outcome["targets"][0]
    assert (out["attack_total"], out["hit"], out.get("fumble")) == (31, False, True)
    assert t.hp("mira") == 30


def test_b_or_5_maximum_damage_covers_weapon_dice_and_modifiers(t: OrcusTable) -> None:
    """OR-15: 2dW with a 1d10 weapon is 2d10; a critical hit: 2 x 10 + 3 = 23."""
    power = {
        "name": "Cleave",
        "kind": "melee",
        "defense": "ac",
        "attack_bonus": 5,
        "damage": "2dW+3",
        "weapon": "1d10",
    }
    out = t.attack("mira", power, [{"target": "ogre", "face": 20}]).outcome["targets"][0]
    assert out["damage"]["maximum"] == 23 and t.hp("ogre") == 52 - 23


def test_or_13_b_or_5_damage_is_rolled_once_the_crit_bonus_per_target_and_not_maximised(
    t: OrcusTable,
) -> None:
    """A far burst (fire, 2d6+4) on the ogre and gob: one damage roll (3, 4: 11) for every target;
    the ogre takes a critical hit: maximum 16 + its own bonus 1d6 (2) = 18, resist 5 fire: 13;
    gob is hit for the rolled 11 and dies (a monster at 0 HP or below, A4.9)."""
    burst = {
        "name": "Fireburst",
        "kind": "far",
        "defense": "ref",
        "attack_bonus": 6,
        "damage": "2d6+4",
        "damage_types": ["fire"],
    }
    out = t.attack(
        "mira",
        burst,
        [{"target": "ogre", "face": 20, "crit": ["1d6", 2]}, {"target": "gob", "face": 12}],
        damage=[3, 4],
    ).outcome
    ogre, gob = out["targets"]
    assert (ogre["damage"]["maximum"], ogre["damage"]["crit_bonus"], ogre["damage"]["amount"]) == (16, 2, 13)
    assert (gob["damage"]["rolled"], gob["damage"]["amount"], gob["damage"]["life_after"]) == (11, 11, "dead")
    assert t.hp("ogre") == 39


def test_or_13_a_creature_is_affected_once_and_damage_is_not_rolled_per_target(t: OrcusTable) -> None:
    with pytest.raises(InvalidInput, match="only once"):
        t.attack(
            "mira", dict(STRIKE), [{"target": "gob", "face": 10}, {"target": "gob", "face": 11}], damage=[3]
        )
    with pytest.raises(InvalidInput, match="unknown field"):
        t.record(
            "AttackMade",
            attacker="mira",
            power=dict(STRIKE),
            targets=[{"target": "gob", "roll": d20(10), "damage": roll("1d8+3", 3)}],
        )
    with pytest.raises(InvalidInput, match="record the damage roll"):
        strike(t, 15)  # a hit that is not a crit needs the rolled damage
    with pytest.raises(InvalidInput, match="not the power's"):
        t.record(
            "AttackMade",
            attacker="mira",
            power=dict(STRIKE),
            targets=[{"target": "gob", "roll": d20(15)}],
            damage=roll("1d6+3", 2),
        )


def test_or_14_damage_can_be_zero_but_never_negative(t: OrcusTable) -> None:
    """OR-14: 1d4 (1) - 5 = -4 deals 0."""
    feeble = {"name": "Poke", "kind": "melee", "defense": "ac", "attack_bonus": 5, "damage": "1d4-5"}
    out = t.attack("mira", feeble, [{"target": "gob", "face": 15}], damage=[1]).outcome["targets"][0]
    assert (out["damage"]["steps"][0]["value"], out["damage"]["amount"]) == (-4, 0) and t.hp("gob") == 10


def test_or_10_b_or_4_choosing_to_be_hit_is_a_hit_without_a_roll_and_no_crit(t: OrcusTable) -> None:
    out = t.attack("mira", dict(STRIKE), [{"target": "ogre", "chose_to_be_hit": True}], damage=[8]).outcome
    target = out["targets"][0]
    assert (target["hit"], target["crit"], target["automatic"]) == (True, False, "chose to be hit (OR-10)")
    assert target["damage"]["amount"] == 11 and "natural" not in target
    with pytest.raises(InvalidInput, match="without an attack roll"):
        t.record(
            "AttackMade",
            attacker="mira",
            power=dict(STRIKE),
            targets=[{"target": "gob", "chose_to_be_hit": True, "roll": d20(20)}],
        )


def test_or_12_hit_miss_and_effect_riders(t: OrcusTable) -> None:
    """OR-12: Hit applies on a hit, Miss on a miss, Effect either way; a Miss may deal half damage."""
    power = {
        "name": "Thunder Wave",
        "kind": "near",
        "defense": "fort",
        "attack_bonus": 4,
        "damage": "2d8",
        "miss": "half",
        "effects": [
            {
                "name": "dazed",
                "on": "hit",
                "components": [{"condition": "dazed"}],
                "duration": {"kind": "end_of_user_next"},
            },
            {"name": "pushed", "on": "miss", "components": [{"condition": "prone"}]},
            {
                "name": "deafening",
                "on": "effect",
                "components": [{"attack_mod": {"value": -1}}],
                "duration": {"kind": "start_of_user_next"},
            },
        ],
    }
    out = t.attack(
        "mira", power, [{"target": "ogre", "face": 15}, {"target": "gob", "face": 2}], damage=[5, 4]
    ).outcome
    ogre, gob = out["targets"]
    assert [e["name"] for e in ogre["effects"]] == ["dazed", "deafening"] and ogre["damage"]["amount"] == 9
    assert [e["name"] for e in gob["effects"]] == ["pushed", "deafening"]
    assert (gob["damage"]["rolled"], gob["damage"]["half_on_miss"], gob["damage"]["amount"]) == (9, 4, 4)
    assert t.v("ogre")["conditions"] == ["dazed"] and sorted(t.v("gob")["conditions"]) == ["prone"]
    dazed = t.v("ogre")["effects"][0]
    assert dazed["duration"]["anchor"] == "mira"  # the user's next turn (OR-17)


@pytest.mark.parametrize("row", sorted(ATTACK_MODIFIERS))
def test_a4_6_every_row_of_the_attack_modifier_table(t: OrcusTable, row: str) -> None:
    """A4.6 (RULE): each declared circumstance changes the total by its table value, applied to the
    origins it names (a ranged attack for long range; melee or ranged for concealment)."""
    expected = {
        "target_off_guard": 2,
        "attacker_prone": -2,
        "charge": 1,
        "cover": -2,
        "three_quarters_cover": -5,
        "concealment": -2,
        "total_concealment": -5,
        "long_range": -2,
        "attacker_restrained": -2,
    }[row]
    kind = "ranged" if row == "long_range" else "melee"
    power = {**STRIKE, "kind": kind, "power_id": None}
    out = t.attack(
        "mira", power, [{"target": "ogre", "face": 10, "circumstances": [row]}], damage=[1]
    ).outcome
    target = out["targets"][0]
    assert target["attack_total"] == 15 + expected
    assert [x["row"] for x in target["attack_parts"] if "row" in x] == [row]


@pytest.mark.parametrize(
    ("who", "condition", "row", "value"),
    [
        ("target", "off_guard", "target_off_guard", 2),
        ("attacker", "prone", "attacker_prone", -2),
        ("attacker", "restrained", "attacker_restrained", -2),
    ],
)
def test_a4_6_condition_rows_apply_by_themselves_and_only_once(
    t: OrcusTable, who: str, condition: str, row: str, value: int
) -> None:
    carrier = "ogre" if who == "target" else "mira"
    t.effect(carrier, "gob", components=[{"condition": condition}])
    out = strike(t, 10, [1], target="ogre")
    assert out["attack_total"] == 15 + value
    twice = strike(t, 10, [1], target="ogre", circumstances=[row])
    assert twice["attack_total"] == 15 + value  # declared as well: still once


def test_ruling_17_a_row_declared_for_an_origin_it_does_not_apply_to_is_ignored_with_the_reason(
    t: OrcusTable,
) -> None:
    burst = {"name": "Burst", "kind": "near", "defense": "ref", "attack_bonus": 5, "damage": "1d6"}
    out = t.attack(
        "mira", burst, [{"target": "ogre", "face": 10, "circumstances": ["concealment"]}], damage=[1]
    ).outcome
    target = out["targets"][0]
    assert target["attack_total"] == 15
    assert target["ignored"] == [
        {
            "circumstance": "concealment",
            "why": "target has concealment applies only to melee or ranged attacks",
        }
    ]
    out = strike(t, 10, [1], target="ogre", circumstances=["long_range"])
    assert out["attack_total"] == 15 and out["ignored"][0]["circumstance"] == "long_range"


def test_a4_6_cover_and_three_quarters_cover_do_not_stack(t: OrcusTable) -> None:
    out = strike(t, 10, None, target="ogre", circumstances=["cover", "three_quarters_cover"])
    assert out["attack_total"] == 10
    assert out["ignored"] == [{"circumstance": "cover", "why": "does not stack with the stronger row"}]


def test_a4_6_an_unknown_circumstance_is_refused(t: OrcusTable) -> None:
    with pytest.raises(InvalidInput, match="A4.6 rows"):
        strike(t, 10, [1], circumstances=["flanking"])


def test_a4_9_4e_conditions_grant_off_guard_and_blind(make_table) -> None:
    """or.placeholder.conditions = 4e: a dazed target is off-guard (+2); a blinded attacker's
    target has total concealment (-5); under 'seed' neither applies."""
    for mode, delta in (("seed", 0), ("4e", 2 - 5)):
        t = make_table({"or.placeholder.conditions": mode}).cast()
        t.effect("ogre", "gob", components=[{"condition": "dazed"}])
        t.effect("mira", "gob", components=[{"condition": "blinded"}])
        assert strike(t, 10, [1], target="ogre")["attack_total"] == 15 + delta, mode


def test_or_9_an_attack_with_an_encounter_power_expends_it(t: OrcusTable) -> None:
    lance = {
        "name": "Radiant Lance",
        "power_id": "lance",
        "kind": "ranged",
        "defense": "ref",
        "attack_bonus": 5,
        "damage": "1d10",
        "damage_types": ["radiant"],
    }
    out = t.attack("mira", lance, [{"target": "gob", "face": 3}]).outcome
    assert out["power_expended"] is True and t.v("mira")["powers"]["lance"]["expended"]
    with refused("POWER_EXPENDED"):
        t.attack("mira", lance, [{"target": "gob", "face": 15}], damage=[5])
    at_will = t.attack("mira", dict(STRIKE), [{"target": "gob", "face": 3}]).outcome
    assert at_will["power_expended"] is False and not t.v("mira")["powers"]["strike"]["expended"]


def test_or_16_damage_types_come_from_the_placeholder_list(t: OrcusTable) -> None:
    with pytest.raises(InvalidInput, match="unknown damage type"):
        t.attack("mira", {**STRIKE, "damage_types": ["plasma"]}, [{"target": "gob", "face": 15}], damage=[1])


def test_an_attack_by_or_on_the_dead_is_refused_and_stores_nothing(t: OrcusTable) -> None:
    t.damage("gob", 10)
    before = t.store_max()
    with refused("CREATURE_DEAD"):
        strike(t, 15, [1])
    with pytest.raises(DomainError):
        t.attack("gob", dict(STRIKE), [{"target": "mira", "face": 15}], damage=[1])
    assert t.store_max() == before
