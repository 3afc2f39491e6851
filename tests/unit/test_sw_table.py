"""Stellar Winds at the table (issue 14): the rules each item fixes, one test per rule.

Sheets from ``tests/unit/conftest.py``: ``vex`` is a level-5 PC (40 HP, AC 29, Fort 15, Ref 16,
Will 14); ``orc`` is a level-5 monster (50 HP, AC 17, Fort 15, Ref 14, Will 13). Every die face
is given; the numbers in the comments are worked by hand from RULES.md.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from domain.errors import DomainError, InvalidInput
from domain.rulesets.stellar_winds import bonuses
from domain.rulesets.stellar_winds.state import divide
from tests.unit.conftest import AXE

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


# ------------------------------------------------------------------ ruling 19: adjacency
def prone(t: Any, who: str) -> None:
    effect = {"name": "prone", "components": [{"condition": "prone"}]}
    t.record("EffectApplied", {"target": who, "source": who, "effect": effect})


def bow_at_orc(t: Any, face: int, **target: Any) -> dict[str, Any]:
    out = t.attack("vex", dict(BOW), [{"target": "orc", "face": face, "damage_faces": [4], **target}])
    result: dict[str, Any] = out.outcome["targets"][0]
    return result


def test_ruling_19_prone_defends_plus_2_against_a_ranged_attack_from_a_non_adjacent_attacker(
    table: Any,
) -> None:
    prone(table, "orc")
    # d20 10 + 8 = 18 against AC 17 + 2 (prone, ranged, not adjacent: the default) = 19: a miss
    shot = bow_at_orc(table, 10)
    assert (shot["adjacent"], shot["defense_value"], shot["hit"]) == (False, 19, False)


def test_ruling_19_prone_gives_nothing_against_an_adjacent_ranged_attacker(table: Any) -> None:
    prone(table, "orc")
    # the archer stands next to it: 18 against AC 17, a hit
    shot = bow_at_orc(table, 10, adjacent=True)
    assert (shot["adjacent"], shot["defense_value"], shot["hit"]) == (True, 17, True)


def test_ruling_19_a_melee_attacker_is_adjacent_by_default_and_prone_gives_no_defense(table: Any) -> None:
    prone(table, "orc")
    out = table.attack("vex", dict(SWORD), [{"target": "orc", "face": 10, "damage_faces": [4]}])
    swing = out.outcome["targets"][0]
    assert (swing["adjacent"], swing["defense_value"]) == (True, 17)
    # a melee attacker with reach declared not adjacent: still no +2 (prone's bonus is vs ranged)
    out = table.attack(
        "vex", dict(SWORD), [{"target": "orc", "face": 10, "damage_faces": [4], "adjacent": False}]
    )
    assert out.outcome["targets"][0]["defense_value"] == 17


# ------------------------------------------------------------------ ruling 17
BURST = {"name": "burst", "kind": "area", "defense": "ref", "attack_bonus": 8, "damage": "1d6"}


def test_ruling_17_concealment_declared_on_an_area_attack_is_accepted_and_ignored_with_the_reason(
    table: Any,
) -> None:
    out = table.attack(
        "vex", dict(BURST), [{"target": "orc", "face": 6, "circumstances": ["concealment"]}], damage_faces=[3]
    ).outcome
    target = out["targets"][0]
    # 6 + 8 = 14, no -2: concealment is for melee and ranged attacks (A1.5); 14 against Reflex 14 hits
    assert (target["attack_total"], target["hit"]) == (14, True)
    assert target["ignored"] == [
        {
            "circumstance": "concealment",
            "why": "concealment applies only to melee or ranged attacks, not area (ruling 17)",
        }
    ]
    assert table.c("orc")["hp"] == 50 - 3


def test_ruling_17_concealment_still_counts_on_a_ranged_attack(table: Any) -> None:
    shot = bow_at_orc(table, 11, circumstances=["concealment"])
    # 11 + 8 - 2 = 17 against AC 17: a hit, nothing ignored
    assert (shot["attack_total"], shot["hit"]) == (17, True) and "ignored" not in shot


def test_ruling_17_an_unknown_circumstance_is_still_refused(table: Any) -> None:
    before = table.position
    with pytest.raises(InvalidInput):
        bow_at_orc(table, 11, circumstances=["moonlight"])
    assert table.position == before


# ------------------------------------------------------------------ SW-17 bonus types
def boost(t: Any, who: str, name: str, value: int, kind: str | None, key: str = "attack_mod") -> None:
    mod: dict[str, Any] = {"value": value}
    if key == "defense_mod":
        mod["defense"] = "all"
    if kind:
        mod["type"] = kind
    t.record(
        "EffectApplied", {"target": who, "source": who, "effect": {"name": name, "components": [{key: mod}]}}
    )


def test_sw_17_two_power_bonuses_to_attack_do_not_stack_only_the_higher_applies(table: Any) -> None:
    boost(table, "vex", "bless", 1, "power")
    boost(table, "vex", "inspire", 2, "power")
    # 5 + 8 + 2 (the higher power bonus; bless's +1 does not add) = 15
    shot = bow_at_orc(table, 5)
    assert shot["attack_total"] == 15
    bless = next(p for p in shot["attack_parts"] if p["source"] == "bless")
    assert (bless["value"], bless["does_not_stack"], bless["type"]) == (0, 1, "power")


def test_sw_17_bonuses_of_different_types_and_untyped_bonuses_add(table: Any) -> None:
    boost(table, "vex", "bless", 1, "power")
    boost(table, "vex", "sight", 1, "item")
    boost(table, "vex", "cheer", 1, None)
    boost(table, "vex", "shout", 1, None)
    assert bow_at_orc(table, 5)["attack_total"] == 5 + 8 + 4


def test_sw_17_penalties_have_no_types_and_all_add(table: Any) -> None:
    boost(table, "vex", "curse", -2, "power")
    boost(table, "vex", "hex", -1, "power")
    assert bow_at_orc(table, 5)["attack_total"] == 5 + 8 - 3


def test_sw_17_declared_modifiers_of_one_type_do_not_stack_with_an_effects(table: Any) -> None:
    boost(table, "vex", "bless", 1, "power")
    modifiers = [{"source": "war chant", "value": 2, "type": "power"}]
    assert bow_at_orc(table, 5, modifiers=modifiers)["attack_total"] == 5 + 8 + 2


def test_sw_17_defense_bonuses_of_one_type_do_not_stack(table: Any) -> None:
    boost(table, "orc", "shield spell", 2, "shield", "defense_mod")
    boost(table, "orc", "buckler", 1, "shield", "defense_mod")
    boost(table, "orc", "fend", 1, None, "defense_mod")
    # AC 17 + 2 (the higher shield bonus) + 1 untyped = 20
    assert bow_at_orc(table, 11)["defense_value"] == 20
    assert table.c("orc")["defenses_now"]["ac"]["value"] == 20


def test_sw_17_the_flag_all_adds_every_bonus(make_table: Any) -> None:
    t = make_table({"sw.bonus_stacking": "all"})
    t.pc("vex")
    t.monster("orc")
    boost(t, "vex", "bless", 1, "power")
    boost(t, "vex", "inspire", 2, "power")
    assert bow_at_orc(t, 5)["attack_total"] == 5 + 8 + 3


def test_sw_17_saving_throw_bonuses_of_one_type_do_not_stack(table: Any) -> None:
    eff = {"name": "slow", "components": [{"condition": "slowed"}], "duration": {"kind": "save_ends"}}
    eid = table.record("EffectApplied", {"target": "vex", "source": "orc", "effect": eff}).outcome[
        "effect_id"
    ]
    mods = [
        {"source": "elf", "value": 2, "type": "racial"},
        {"source": "amulet", "value": 1, "type": "racial"},
    ]
    roll = table.app.roll("1d20", faces=[7])
    out = table.record(
        "SavingThrowRolled", {"creature": "vex", "effect_id": eid, "roll": roll, "modifiers": mods}
    ).outcome
    # 7 + 2 (the amulet's racial +1 does not add) = 9: the save fails
    assert (out["total"], out["success"]) == (9, False)


def test_sw_17_an_unknown_bonus_type_is_refused(table: Any) -> None:
    with pytest.raises(InvalidInput):
        bow_at_orc(table, 5, modifiers=[{"source": "luck", "value": 1, "type": "luck"}])


# ------------------------------------------------------------------ actions of attacks, first aid, marks
def fight(t: Any, *order: str) -> None:
    """An encounter with the creatures in this order (d20s 20, 15, 10, ...); the first turn starts."""
    t.record("EncounterStarted", {"encounter_id": "e1", "participants": list(order)})
    for i, who in enumerate(order):
        t.record(
            "InitiativeRolled",
            {"encounter_id": "e1", "creature": who, "roll": t.app.roll("1d20", faces=[20 - 5 * i])},
        )
    t.record("TurnStarted", {"encounter_id": "e1"})


def test_an_attack_uses_the_attackers_standard_action_by_default(table: Any) -> None:
    fight(table, "vex", "orc")
    first = bow_at_orc(table, 3)
    assert first["hit"] is False  # 3 + 8 = 11 against AC 17
    with pytest.raises(DomainError) as info:  # SW-8: no action set has two standard actions
        bow_at_orc(table, 3)
    assert info.value.code == "NO_ACTION_LEFT"
    # an attack that says it uses no action of its own (a power's secondary attack) is accepted
    out = table.attack("vex", dict(BOW), [{"target": "orc", "face": 3, "damage_faces": [4]}], action=None)
    assert "action" not in out.outcome


def test_an_attack_out_of_the_attackers_turn_is_refused_unless_it_names_its_triggered_action(
    table: Any,
) -> None:
    fight(table, "vex", "orc")
    with pytest.raises(DomainError) as info:
        table.attack("orc", dict(AXE), [{"target": "vex", "face": 3, "damage_faces": [1, 1]}])
    assert info.value.code == "NOT_YOUR_TURN"
    out = table.attack(
        "orc", dict(AXE), [{"target": "vex", "face": 3, "damage_faces": [1, 1]}], action="opportunity"
    )
    assert out.outcome["action"] == "opportunity"


def test_a_stored_v1_attack_without_an_action_still_uses_none(table: Any) -> None:
    from domain.rulesets.stellar_winds.facts import CATALOGUE

    v1 = {"attacker": "vex", "power": dict(BOW), "targets": []}
    assert CATALOGUE.upcast("AttackMade", 1, v1)["action"] is None
    assert CATALOGUE.upcast("StabilizationAttempted", 1, {"target": "vex"})["action"] is None


def test_b_sw_10_first_aid_uses_the_healers_standard_action(table: Any) -> None:
    table.pc("mira")
    fight(table, "mira", "vex", "orc")
    table.deal_damage("vex", amount=40 + 12 + 1)  # HP 0, wounds -1: dying
    out = table.stabilize("vex", healer="mira", check="1d20+6", faces=[11]).outcome
    assert (out["success"], out["action"]) == (True, "standard")  # 17 >= DC 15
    with pytest.raises(DomainError):  # the Heal check took Mira's standard action
        table.attack("mira", dict(BOW), [{"target": "orc", "face": 3, "damage_faces": [4]}])


def test_a1_10_a_mark_without_a_marker_is_its_sources(table: Any) -> None:
    table.pc("kaelen")
    table.record(
        "EffectApplied",
        {
            "target": "orc",
            "source": "kaelen",
            "effect": {"name": "challenge", "components": [{"condition": "marked"}]},
        },
    )
    marked = table.c("orc")["effects"][0]["components"][0]
    assert marked == {"condition": "marked", "marker": "kaelen"}
    # the orc's axe at Vex, not its marker: -2 (A1.10): 15 + 8 - 2 = 21
    out = table.hit_vex([1, 1], face=15)
    assert out.outcome["targets"][0]["attack_total"] == 21


# ------------------------------------------------------------------ ruling 16
def sustained_slow(t: Any) -> str:
    eff = {"name": "stasis", "components": [{"condition": "slowed"}], "duration": {"kind": "sustained"}}
    return str(
        t.record("EffectApplied", {"target": "orc", "source": "vex", "effect": eff}).outcome["effect_id"]
    )


def test_ruling_16_a_sustained_effect_outlives_the_end_of_the_encounter(table: Any) -> None:
    fight(table, "vex", "orc")
    eid = sustained_slow(table)
    out = table.record("EncounterEnded", {"encounter_id": "e1"}).outcome
    assert eid in {e["effect_id"] for e in table.c("orc")["effects"]}
    assert "slowed" in table.c("orc")["conditions"]
    assert [e["effect_id"] for e in out["sustained_kept"]] == [eid]
    with pytest.raises(DomainError) as info:  # a rest stays refused while Vex sustains it (SW-44)
        table.short_rest(["vex"])
    assert info.value.code == "SUSTAINING"


def test_ruling_16_in_the_next_encounter_it_lapses_at_its_sustainers_first_turn_without_a_sustain(
    table: Any,
) -> None:
    fight(table, "vex", "orc")
    eid = sustained_slow(table)
    table.record("EncounterEnded", {"encounter_id": "e1"})
    table.record("EncounterStarted", {"encounter_id": "e2", "participants": ["vex", "orc"]})
    for who, face in (("vex", 20), ("orc", 2)):
        table.record(
            "InitiativeRolled",
            {"encounter_id": "e2", "creature": who, "roll": table.app.roll("1d20", faces=[face])},
        )
    table.record("TurnStarted", {"encounter_id": "e2"})
    table.record("EffectSustained", {"effect_id": eid, "action": "minor"})  # sustained: it stays
    table.record("TurnEnded", {"encounter_id": "e2", "start_next": True})
    assert eid in {e["effect_id"] for e in table.c("orc")["effects"]}
    table.record("TurnEnded", {"encounter_id": "e2", "start_next": True})  # the orc's turn; Vex's again
    table.record("TurnEnded", {"encounter_id": "e2"})  # Vex does not sustain it: it lapses (SW-44)
    assert eid not in {e["effect_id"] for e in table.c("orc")["effects"]}


# ------------------------------------------------------------------ SW-13, A1.10 table actions
def act(t: Any, who: str, name: str, **rest: Any) -> dict[str, Any]:
    out: dict[str, Any] = t.record("TableActionTaken", {"creature": who, "name": name, **rest}).outcome
    return out


def test_sw_13_total_defense_is_a_standard_action_giving_plus_2_to_all_defenses_until_the_next_turn(
    table: Any,
) -> None:
    fight(table, "orc", "vex")
    out = act(table, "orc", "total_defense")
    assert out["action"] == "standard"
    now = table.c("orc")["defenses_now"]
    assert {d: now[d]["value"] for d in now} == {"ac": 19, "fort": 17, "ref": 16, "will": 15}
    with pytest.raises(DomainError) as info:  # the standard action is spent
        table.attack("orc", dict(AXE), [{"target": "vex", "face": 3, "damage_faces": [1, 1]}])
    assert info.value.code == "NO_ACTION_LEFT"
    table.record("TurnEnded", {"encounter_id": "e1", "start_next": True})  # Vex
    assert table.c("orc")["defenses_now"]["ac"]["value"] == 19  # until the start of the orc's next turn
    table.record("TurnEnded", {"encounter_id": "e1", "start_next": True})  # the orc again
    assert table.c("orc")["defenses_now"]["ac"]["value"] == 17


def test_sw_13_total_defense_needs_a_running_encounter(table: Any) -> None:
    with pytest.raises(DomainError) as info:
        act(table, "orc", "total_defense")
    assert info.value.code == "ENCOUNTER_NOT_RUNNING"


def test_a1_10_dropping_prone_is_a_minor_action_and_standing_up_a_move_action(table: Any) -> None:
    fight(table, "vex", "orc")
    assert act(table, "vex", "drop_prone")["action"] == "minor"
    assert "prone" in table.c("vex")["conditions"]
    with pytest.raises(DomainError) as info:
        act(table, "vex", "drop_prone")
    assert info.value.code == "ALREADY_PRONE"
    up = act(table, "vex", "stand_up")
    assert up["action"] == "move" and "prone" not in table.c("vex")["conditions"]
    with pytest.raises(DomainError) as info:
        act(table, "vex", "stand_up")
    assert info.value.code in ("NOT_PRONE", "NO_ACTION_LEFT")


def test_a1_10_standing_up_needs_to_be_prone(table: Any) -> None:
    with pytest.raises(DomainError) as info:
        act(table, "vex", "stand_up")
    assert info.value.code == "NOT_PRONE"


def test_a1_10_knocked_prone_costs_no_action_and_standing_keeps_a_powers_other_components(table: Any) -> None:
    fight(table, "vex", "orc")
    out = act(table, "orc", "knock_prone", source="vex")
    assert "action" not in out and "prone" in table.c("orc")["conditions"]
    # a power that knocks prone and dazes: standing up ends only the prone part
    eff = {
        "name": "slam",
        "components": [{"condition": "prone"}, {"condition": "dazed"}],
        "duration": {"kind": "save_ends"},
    }
    table.record("EffectApplied", {"target": "vex", "source": "orc", "effect": eff})
    act(table, "vex", "stand_up")
    assert {"prone", "dazed"} & set(table.c("vex")["conditions"]) == {"dazed"}


def test_a1_10_slowed_and_immobilized_lower_the_speed_shown_on_the_character(table: Any) -> None:
    assert table.c("vex")["speed"] == {"base": 6, "current": 6, "limited_by": []}
    table.record(
        "EffectApplied",
        {"target": "vex", "source": "orc", "effect": {"components": [{"condition": "slowed"}]}},
    )
    assert table.c("vex")["speed"] == {"base": 6, "current": 2, "limited_by": ["slowed"]}
    table.record(
        "EffectApplied",
        {"target": "vex", "source": "orc", "effect": {"components": [{"condition": "restrained"}]}},
    )
    assert table.c("vex")["speed"] == {"base": 6, "current": 0, "limited_by": ["immobilized", "slowed"]}


def test_a1_10_deafened_takes_10_from_perception(table: Any) -> None:
    assert table.c("vex")["perception_modifier"] == 0
    table.record(
        "EffectApplied",
        {"target": "vex", "source": "orc", "effect": {"components": [{"condition": "deafened"}]}},
    )
    assert table.c("vex")["perception_modifier"] == -10


def test_a1_10_a_creature_that_cannot_flank_gains_nothing_from_a_declared_flank(table: Any) -> None:
    table.record(
        "EffectApplied",
        {"target": "vex", "source": "orc", "effect": {"components": [{"condition": "dazed"}]}},
    )
    out = table.attack(
        "vex", dict(SWORD), [{"target": "orc", "face": 7, "damage_faces": [4], "circumstances": ["flanking"]}]
    )
    target = out.outcome["targets"][0]
    # 7 + 8 = 15, no +2: a dazed creature cannot flank
    assert target["attack_total"] == 15
    assert target["ignored"] == [{"circumstance": "flanking", "why": "Vex is dazed and cannot flank (A1.10)"}]


# ------------------------------------------------------------------ C0.4 GM overrides
def test_c0_4_an_override_of_damage_taken_amount_changes_the_hit_points(table: Any) -> None:
    hit = table.deal_damage("vex", amount=8)
    assert table.c("vex")["hp"] == 32
    table.override(hit.position, "amount", 3, "GM: the blast was mostly absorbed")
    assert table.c("vex")["hp"] == 37


def test_c0_4_an_override_of_an_attacks_damage_for_one_target(table: Any) -> None:
    table.monster("imp", max_hp=20)
    out = table.attack(
        "vex",
        dict(BURST),
        [{"target": "orc", "face": 15}, {"target": "imp", "face": 15}],
        damage_faces=[4],
    )
    assert (table.c("orc")["hp"], table.c("imp")["hp"]) == (46, 16)
    table.override(out.position, "amount:imp", 10, "GM: the imp was at the centre")
    assert (table.c("orc")["hp"], table.c("imp")["hp"]) == (46, 10)


def test_c0_4_overrides_of_healing_saves_death_saves_and_first_aid_are_honoured(table: Any) -> None:
    table.deal_damage("vex", amount=20)
    heal = table.heal("vex", flat=5)
    table.override(heal.position, "amount", 12, "GM: a double dose")
    assert table.c("vex")["hp"] == 20 + 12
    eff = {"name": "slow", "components": [{"condition": "slowed"}], "duration": {"kind": "save_ends"}}
    eid = table.record("EffectApplied", {"target": "vex", "source": "orc", "effect": eff}).outcome[
        "effect_id"
    ]
    save = table.record(
        "SavingThrowRolled", {"creature": "vex", "effect_id": eid, "roll": table.app.roll("1d20", faces=[3])}
    )
    assert "slowed" in table.c("vex")["conditions"]
    table.override(save.position, "success", True, "GM: the ally's shout counts")
    assert "slowed" not in table.c("vex")["conditions"]
    table.deal_damage("vex", amount=32 + 12 + 1)  # HP 0, wounds -1: dying
    ds = table.death_save("vex", face=4)
    assert table.c("vex")["death_save_failures"] == 1
    table.override(ds.position, "total", 12, "GM: misread die")
    assert table.c("vex")["death_save_failures"] == 0
    aid = table.stabilize("vex", check="1d20", faces=[2])
    assert table.c("vex")["life"] == "dying"
    table.override(aid.position, "success", True, "GM: the medkit did it")
    assert table.c("vex")["life"] == "stabilized"


def test_c0_4_an_override_the_fold_would_not_read_is_refused_and_nothing_is_stored(table: Any) -> None:
    hit = table.deal_damage("vex", amount=8)
    before = table.position
    for field, value, code in (
        ("hp", 1, "NOT_OVERRIDABLE"),
        ("amount", "lots", "INVALID_INPUT"),
        ("amount:vex", 1, "NOT_OVERRIDABLE"),
    ):
        with pytest.raises(DomainError) as info:
            table.override(hit.position, field, value, "GM")
        assert info.value.code == code, field
    attack = bow_at_orc(table, 15)
    assert attack["hit"]
    with pytest.raises(DomainError) as info:
        table.override(table.position, "hit:nobody", False, "GM")
    assert info.value.code == "INVALID_INPUT"
    assert table.position == before + 1


# ------------------------------------------------------------------ flags beyond their defaults
def test_b_x_6_rounding_up_or_to_nearest_changes_halves_quarters_and_half_levels(make_table: Any) -> None:
    """SW-24: a power's miss for half damage is halved (and rounded per the flag)."""
    for mode, bloodied, surge, half in (("floor", 20, 10, 2), ("up", 21, 11, 3), ("nearest", 21, 10, 3)):
        t = make_table({"rounding": mode})
        t.pc("vex", max_hp=41, level=5)  # 41 / 2 = 20.5; 41 / 4 = 10.25; level 5 / 2 = 2.5
        t.monster("orc")
        vex = t.c("vex")
        assert (vex["bloodied_value"], vex["surge_value"]) == (bloodied, surge), mode
        assert vex["initiative_bonus"] == half + 2, mode  # Dexterity 14: +2
        # a miss for half damage: 2d6+4 = 1 + 2 + 4 = 7, halved: 3.5
        out = t.attack("orc", {**AXE, "miss": "half"}, [{"target": "vex", "face": 2, "damage_faces": [1, 2]}])
        assert out.outcome["targets"][0]["damage"]["amount"] == {"floor": 3, "up": 4, "nearest": 4}[mode]


def test_b_sw_4_max_wounds_may_be_one_number_for_every_creature(make_table: Any) -> None:
    t = make_table({"sw.max_wounds": 8})
    t.pc("vex", con=12)
    t.pc("kira", con=16, max_wounds=20)  # a sheet's own maximum wins
    assert (t.c("vex")["max_wounds"], t.c("vex")["wounds"]) == (8, 8)
    assert t.c("kira")["max_wounds"] == 20
    with pytest.raises(InvalidInput):
        make_table({"sw.max_wounds": "con_modifier"})


def test_b_sw_14_resist_stacking_sum_adds_resistances_of_a_type(make_table: Any) -> None:
    for mode, taken in (("highest", 10 - 5), ("sum", 10 - 8)):
        t = make_table({"sw.resist_stacking": mode})
        t.pc("vex", resist={"fire": 5})
        ward = {"name": "ward", "components": [{"resist": {"type": "fire", "value": 3}}]}
        t.record("EffectApplied", {"target": "vex", "source": "vex", "effect": ward})
        assert t.deal_damage("vex", amount=10, types=["fire"]).outcome["amount"] == taken, mode


def test_b_sw_14_multi_type_resist_highest_uses_the_best_of_the_types(make_table: Any) -> None:
    for mode, taken in (("lowest_if_all", 10), ("highest", 10 - 5)):
        t = make_table({"sw.multi_type_resist": mode})
        t.pc("vex", resist={"fire": 5})
        assert t.deal_damage("vex", amount=10, types=["fire", "cold"]).outcome["amount"] == taken, mode


def test_b_sw_5_crit_mode_wounding_1w_deals_one_weapon_die_as_wounding_damage(make_table: Any) -> None:
    t = make_table({"sw.crit_mode": "wounding_1W"})
    t.pc("vex")
    t.monster("orc")
    axe = {**AXE, "damage": "2[W]+4", "weapon": "1d6"}
    # Vex's natural 20 (28 against AC 17: a critical hit): 2[W]+4 rolled 5 and 3 (+4 = 12); read
    # literally only one [W] counts: 5 wounding damage
    out = t.attack("vex", axe, [{"target": "orc", "face": 20, "damage_faces": [5, 3]}]).outcome
    dealt = out["targets"][0]["damage"]
    assert (dealt["amount"], dealt["wounding"], dealt["wounds_lost"]) == (5, True, 5)
    assert (t.c("orc")["hp"], t.c("orc")["wounds"]) == (50, 12 - 5)


def test_b_sw_20_a_planted_explosive_save_is_d20_plus_reflex_minus_10_for_half_damage(
    make_table: Any,
) -> None:
    t = make_table()
    t.pc("vex")  # Reflex 16: +6
    roll = t.app.roll("1d20", faces=[9])
    boom = t.app.roll("3d6", faces=[6, 5, 4])
    out = t.record("ExplosiveSaveRolled", {"target": "vex", "roll": roll, "dc": 15, "damage": boom}).outcome
    # 9 + 6 = 15 >= DC 15: half of 15 = 7
    assert (out["total"], out["success"], out["amount"]) == (15, True, 7)
    assert t.c("vex")["hp"] == 40 - 7


def test_b_sw_20_the_flag_half_level_plus_dex_is_a_dexterity_check(make_table: Any) -> None:
    t = make_table({"sw.explosive_save": "half_level_plus_dex"})
    t.pc("vex")  # level 5: +2, Dexterity 14: +2
    roll = t.app.roll("1d20", faces=[9])
    out = t.record("ExplosiveSaveRolled", {"target": "vex", "roll": roll, "dc": 15, "amount": 15}).outcome
    # 9 + 4 = 13 < 15: the full 15
    assert (out["total"], out["success"], out["amount"]) == (13, False, 15)


def condition(t: Any, who: str, name: str) -> None:
    t.record("EffectApplied", {"target": who, "source": who, "effect": {"components": [{"condition": name}]}})


def test_a1_10_an_invisible_attacker_has_combat_advantage(table: Any) -> None:
    """B-SW-26: the reconstructed sources of combat advantage (A1.10) are used."""
    condition(table, "vex", "invisible")
    shot = bow_at_orc(table, 5)
    # 5 + 8 + 2 = 15
    assert shot["attack_total"] == 15
    assert {"source": "combat advantage (attacker invisible)", "value": 2} in shot["attack_parts"]


def test_a1_10_an_invisible_target_has_total_concealment_and_grants_no_combat_advantage(table: Any) -> None:
    condition(table, "orc", "invisible")
    condition(table, "orc", "dazed")  # would grant combat advantage, but Vex cannot see it
    shot = bow_at_orc(table, 15)
    # 15 + 8 - 5 = 18
    assert shot["attack_total"] == 18
    sources = [p["source"] for p in shot["attack_parts"]]
    assert "total concealment (target invisible)" in sources and not any(
        "combat advantage" in s for s in sources
    )
    # declared total concealment is not counted twice
    assert bow_at_orc(table, 15, circumstances=["total_concealment"])["attack_total"] == 18


def test_a1_10_blinded_takes_10_from_perception(table: Any) -> None:
    condition(table, "vex", "blinded")
    assert table.c("vex")["perception_modifier"] == -10


# ------------------------------------------------------------------ laws
PART = st.fixed_dictionaries(
    {"source": st.sampled_from(["a", "b", "c", "d"]), "value": st.integers(-5, 5)},
    optional={"type": st.sampled_from(["power", "item", "shield", "untyped"])},
)


@given(st.lists(PART, max_size=8))
def test_sw_17_law_per_type_only_the_highest_bonus_counts_and_everything_else_adds(
    parts: list[dict[str, Any]],
) -> None:
    flags = {"sw.bonus_stacking": "highest_per_type"}
    counted = bonuses.stack(parts, flags)
    typed = [p for p in parts if p.get("type") not in (None, "untyped") and p["value"] > 0]
    rest = [p for p in parts if p not in typed]
    best = {}
    for p in typed:
        best[p["type"]] = max(best.get(p["type"], 0), p["value"])
    assert bonuses.total(counted) == sum(p["value"] for p in rest) + sum(best.values())
    assert bonuses.total(counted) <= bonuses.total(bonuses.stack(parts, {"sw.bonus_stacking": "all"}))
    assert bonuses.total(bonuses.stack(list(reversed(parts)), flags)) == bonuses.total(counted)


@given(st.lists(PART, max_size=8))
def test_sw_17_law_a_breakdown_without_a_typed_bonus_counts_as_it_is_and_stays_its_callers(
    parts: list[dict[str, Any]],
) -> None:
    """The fast path (no bonus of a type to compare) gives what the part-by-part pass gives: every
    part unchanged, in order, in a new list (callers append to what ``stack`` returns)."""
    flags = {"sw.bonus_stacking": "highest_per_type"}
    counted = bonuses.stack(parts, flags)
    if not any(p.get("type") not in (None, "untyped") and p["value"] > 0 for p in parts):
        assert counted == parts and counted is not parts
        assert all(a is b for a, b in zip(counted, parts, strict=True))
    else:
        assert len(counted) == len(parts)


@given(st.integers(0, 10_000), st.sampled_from([2, 4]))
def test_b_x_6_law_rounding_modes_differ_by_at_most_one_and_keep_their_order(n: int, d: int) -> None:
    floor, up, nearest = (divide(n, d, {"rounding": m}) for m in ("floor", "up", "nearest"))
    assert floor == n // d and floor <= nearest <= up <= floor + 1
    assert up * d >= n and floor * d <= n


# ------------------------------------------------------------------ SW-49: a short rest, one table action
def test_sw_49_a_short_rest_and_each_creatures_surge_spends_are_one_append(make_table: Any) -> None:
    t = make_table()
    t.pc("vex", surges=3)  # 40 HP: surge value 10
    t.pc("kira", surges=2)
    t.deal_damage("vex", amount=25)
    t.deal_damage("kira", amount=15)
    out = t.short_rest(["vex", "kira"], {"vex": 2, "kira": 1})
    spent = ["HealingSurgeSpent"] * 3
    assert [f["type"] for f in out.facts] == ["ShortRestTaken", *spent]
    # vex: 15 + 10 + 10 = 35 HP, 1 surge left; kira: 25 + 10 = 35, 1 surge left
    assert (t.c("vex")["hp"], t.c("vex")["surges"]) == (35, 1)
    assert (t.c("kira")["hp"], t.c("kira")["surges"]) == (35, 1)


def test_sw_49_ruling_6_a_short_rest_with_one_spend_too_many_stores_nothing(make_table: Any) -> None:
    t = make_table()
    t.pc("vex", surges=3)
    t.pc("kira", surges=1)
    t.deal_damage("vex", amount=25)
    t.deal_damage("kira", amount=25)
    before = t.position
    with pytest.raises(DomainError) as refused:
        t.short_rest(["vex", "kira"], {"vex": 1, "kira": 2})  # kira has only one surge
    assert refused.value.code == "NO_HEALING_SURGE"
    assert t.position == before
    assert (t.c("vex")["hp"], t.c("vex")["surges"]) == (15, 3)
