"""Stellar Winds powers, a sheet's action points, ammunition, grenades, autofire, Bluff, escape
and falls (issue 14; RULES.md C1.1, C1.2, SW-13, SW-14, SW-15, SW-31, SW-49, B-SW-20, B-SW-21,
B-SW-32).

Sheets from ``tests/unit/conftest.py``: ``vex`` is a level-5 PC (40 HP, Dex 14: +2, AC 29,
Fort 15, Ref 16); ``orc`` is a level-5 monster (50 HP, AC 17, Fort 15, Ref 14). Every die face is
given; the numbers in the comments are worked by hand from RULES.md.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domain.errors import DomainError, InvalidInput
from tests.unit.conftest import Table, memory_application

POWERS = [
    {"id": "jab", "name": "Plasma Jab", "frequency": "at_will"},
    {"id": "ray", "name": "Ion Ray", "frequency": "encounter"},
    {"id": "nova", "name": "Nova Burst", "frequency": "daily"},
]


def refused(t: Any, code: str, fact: str, payload: dict[str, Any]) -> None:
    """A refusal with its code that stores nothing."""
    before = t.store_max()
    with pytest.raises(DomainError) as caught:
        t.record(fact, payload)
    assert caught.value.code == code
    assert t.store_max() == before


def power(t: Any, who: str, pid: str) -> dict[str, Any]:
    return next(x for x in t.c(who)["powers"] if x["id"] == pid)


def use(t: Any, who: str, pid: str) -> dict[str, Any]:
    out: dict[str, Any] = t.record("PowerUsed", {"creature": who, "power_id": pid}).outcome
    return out


# ------------------------------------------------------------------ C1.2 PowerUsed, SW-49
def test_c1_2_an_encounter_power_is_expended_when_used_and_refused_until_a_short_rest(
    make_table: Any,
) -> None:
    t = make_table()
    t.pc("kira", powers=POWERS)
    assert [(x["id"], x["expended"]) for x in t.c("kira")["powers"]] == [
        ("jab", False),
        ("ray", False),
        ("nova", False),
    ]
    out = use(t, "kira", "ray")
    assert (out["frequency"], out["expended"]) == ("encounter", True)
    assert power(t, "kira", "ray")["expended"] is True
    refused(t, "POWER_EXPENDED", "PowerUsed", {"creature": "kira", "power_id": "ray"})
    rest = t.short_rest(["kira"]).outcome
    assert rest["powers_regained"] == {"kira": ["ray"]}
    assert use(t, "kira", "ray")["expended"] is True


def test_c1_2_an_at_will_power_is_never_expended(make_table: Any) -> None:
    t = make_table()
    t.pc("kira", powers=POWERS)
    assert [use(t, "kira", "jab")["expended"] for _ in range(3)] == [False, False, False]
    assert power(t, "kira", "jab")["expended"] is False


def test_sw_49_a_daily_power_comes_back_only_with_an_extended_rest(make_table: Any) -> None:
    t = make_table()
    t.pc("kira", powers=POWERS)
    use(t, "kira", "nova")
    use(t, "kira", "ray")
    assert t.short_rest(["kira"]).outcome["powers_regained"] == {"kira": ["ray"]}
    assert power(t, "kira", "nova")["expended"] is True
    refused(t, "POWER_EXPENDED", "PowerUsed", {"creature": "kira", "power_id": "nova"})
    use(t, "kira", "ray")
    assert t.extended_rest(["kira"]).outcome["powers_regained"] == {"kira": ["nova", "ray"]}
    assert not any(x["expended"] for x in t.c("kira")["powers"])


def test_a_power_not_on_the_sheet_is_invalid_input(make_table: Any) -> None:
    t = make_table()
    t.pc("kira", powers=POWERS)
    with pytest.raises(InvalidInput):
        use(t, "kira", "fireball")
    with pytest.raises(InvalidInput):
        t.pc("zed", powers=[{"id": "a", "frequency": "weekly"}])


def test_c1_2_an_attack_naming_its_power_expends_it_and_is_refused_when_expended(make_table: Any) -> None:
    t = make_table()
    t.pc("kira", powers=POWERS)
    t.monster("orc")
    ray = {"name": "Ion Ray", "power_id": "ray", "kind": "ranged", "defense": "ref", "attack_bonus": 6}
    ray["damage"] = "1d8"
    # d20 10 + 6 = 16 against Reflex 14: a hit for 5; the ray is expended
    out = t.attack("kira", dict(ray), [{"target": "orc", "face": 10, "damage_faces": [5]}]).outcome
    assert out["targets"][0]["hit"] is True and out["power_used"] == {"power_id": "ray", "expended": True}
    assert t.c("orc")["hp"] == 45 and power(t, "kira", "ray")["expended"] is True
    before = t.store_max()
    with pytest.raises(DomainError) as caught:
        t.attack("kira", dict(ray), [{"target": "orc", "face": 10, "damage_faces": [5]}])
    assert caught.value.code == "POWER_EXPENDED" and t.store_max() == before


def test_sheet_update_drops_the_expended_mark_of_a_power_no_longer_listed(make_table: Any) -> None:
    t = make_table()
    t.pc("kira", powers=POWERS)
    use(t, "kira", "ray")
    t.record("SheetUpdated", {"creature_id": "kira", "changes": {"powers": POWERS[:1]}})
    assert [x["id"] for x in t.c("kira")["powers"]] == ["jab"]
    t.record("SheetUpdated", {"creature_id": "kira", "changes": {"powers": POWERS}})
    assert power(t, "kira", "ray")["expended"] is False


# ------------------------------------------------------------------ SW-14 / SW-15: monsters
def test_sw_14_a_monster_has_no_action_point_unless_its_sheet_gives_one(make_table: Any) -> None:
    t = make_table()
    t.monster("orc")
    assert t.c("orc")["action_points"] == 0
    refused(t, "NO_ACTION_POINT", "ActionPointSpent", {"creature": "orc"})
    t.monster("boss", action_points=2)
    assert t.c("boss")["action_points"] == 2


def test_sw_14_a_monster_whose_sheet_is_updated_holds_its_new_action_points(make_table: Any) -> None:
    t = make_table()
    t.monster("orc")
    t.record("SheetUpdated", {"creature_id": "orc", "changes": {"action_points": 1}, "reason": "now elite"})
    assert t.c("orc")["action_points"] == 1
    t.spend_action_point("orc")
    assert t.c("orc")["action_points"] == 0


def test_sw_15_a_monster_spends_as_many_per_encounter_as_its_sheet_allows(make_table: Any) -> None:
    t = make_table()
    t.monster("elite", action_points=1)
    t.monster("solo", action_points=2, action_points_per_encounter=2)
    t.spend_action_point("elite")
    assert t.c("elite")["action_points"] == 0
    t.spend_action_point("solo")
    t.spend_action_point("solo")  # "some monsters may spend more than one per encounter"
    assert t.c("solo")["action_points"] == 0
    refused(t, "NO_ACTION_POINT", "ActionPointSpent", {"creature": "solo"})
    t.monster("brute", action_points=2)
    t.spend_action_point("brute")
    refused(t, "ACTION_POINT_LOCKED", "ActionPointSpent", {"creature": "brute"})
    t.short_rest(["brute"])  # the count starts afresh
    t.spend_action_point("brute")
    assert t.c("brute")["action_points"] == 0
    t.extended_rest(["brute", "solo"])  # its sheet's points back (SW-14 reset, per the sheet)
    assert (t.c("brute")["action_points"], t.c("solo")["action_points"]) == (2, 2)


# ------------------------------------------------------------------ ammunition, B-SW-21 autofire
def test_c1_2_ammunition_is_spent_refused_without_enough_and_reloaded(make_table: Any) -> None:
    t = make_table()
    t.pc("kira", ammo={"rifle": 12})
    out = t.record("AmmunitionExpended", {"creature": "kira", "weapon_id": "rifle", "rounds": 3}).outcome
    assert out["rounds_left"] == 9
    refused(
        t, "NO_AMMUNITION", "AmmunitionExpended", {"creature": "kira", "weapon_id": "rifle", "rounds": 10}
    )
    refused(t, "NO_AMMUNITION", "AmmunitionExpended", {"creature": "kira", "weapon_id": "bow", "rounds": 1})
    t.record("EquipmentChanged", {"creature": "kira", "ammo": {"rifle": 30}, "reason": "reload"})
    assert t.c("kira")["ammo"] == {"rifle": 30}


def test_c1_2_a_shot_naming_its_weapon_spends_its_rounds_and_is_refused_without_them(
    make_table: Any,
) -> None:
    t = make_table()
    t.pc("vex", ammo={"pistol": 2})
    t.monster("orc")
    pistol = {"name": "pistol", "kind": "ranged", "defense": "ac", "attack_bonus": 8, "damage": "1d8"}
    pistol["weapon_id"] = "pistol"
    # d20 10 + 8 = 18 against AC 17: a hit for 3, 50 -> 47; one round spent
    out = t.attack("vex", dict(pistol), [{"target": "orc", "face": 10, "damage_faces": [3]}]).outcome
    assert out["ammunition"] == {"weapon_id": "pistol", "rounds": 1, "rounds_left": 1}
    before = t.store_max()
    with pytest.raises(DomainError) as caught:  # a two-round burst with one round left
        t.attack("vex", {**pistol, "rounds": 2}, [{"target": "orc", "face": 10, "damage_faces": [3]}])
    assert caught.value.code == "NO_AMMUNITION" and t.store_max() == before and t.c("orc")["hp"] == 47


def autofire(t: Any, d20: int, w: int, expert: bool = False, rounds_of: str = "rifle") -> Any:
    burst = {"name": "burst", "special": "autofire", "weapon": "1d10", "weapon_id": rounds_of}
    if expert:
        burst["firearms_expert"] = True
    return t.attack(
        "vex",
        burst,
        [{"target": "orc", "face": d20}],
        damage=t.app.roll("1[W]", weapon="1d10", faces=[w]),
    )


def test_b_sw_21_autofire_is_half_level_plus_dex_minus_4_vs_reflex_for_1w_and_spends_10_rounds(
    make_table: Any,
) -> None:
    t = make_table()
    t.pc("vex", ammo={"rifle": 25})
    t.monster("orc")
    # d20 12 + 2 (half of level 5) + 2 (Dex 14) - 4 (no Firearms Expert) = 12 against Reflex 14: a miss
    out = autofire(t, 12, 7).outcome
    hit = out["targets"][0]
    assert (hit["attack_total"], hit["defense"], hit["hit"]) == (12, "ref", False)
    assert out["autofire"]["rounds_left"] == 15 and t.c("vex")["ammo"]["rifle"] == 15
    # with Firearms Expert: 12 + 4 = 16, a hit for 1[W] = the d10's 7, no ability modifier
    out = autofire(t, 12, 7, expert=True).outcome
    assert (out["targets"][0]["attack_total"], out["targets"][0]["damage"]["amount"]) == (16, 7)
    assert t.c("orc")["hp"] == 50 - 7 and t.c("vex")["ammo"]["rifle"] == 5
    before = t.store_max()
    with pytest.raises(DomainError) as caught:  # 5 rounds left: autofire needs 10
        autofire(t, 12, 7)
    assert caught.value.code == "NO_AMMUNITION" and t.store_max() == before


# ------------------------------------------------------------------ B-SW-20 grenades
def test_b_sw_20_a_grenade_within_one_increment_lands_where_aimed(make_table: Any) -> None:
    t = make_table()
    t.pc("vex", ammo={"grenade": 1})
    out = t.record("GrenadeThrown", {"creature": "vex", "square": [4, 2], "increments": 1}).outcome
    assert (out["lands_on"], out["grenades_left"]) == ([4, 2], 0)
    refused(t, "NO_AMMUNITION", "GrenadeThrown", {"creature": "vex", "square": [4, 2], "increments": 1})


def test_b_sw_20_beyond_one_increment_a_d4_sends_it_increments_minus_1_squares(make_table: Any) -> None:
    t = make_table()
    t.pc("vex", ammo={"grenade": 4})
    for face, landing in ((1, [2, 0]), (2, [6, 0]), (3, [6, 4]), (4, [2, 4])):
        # 3 increments: 2 squares toward 1 upper left, 2 upper right, 3 lower right, 4 lower left
        out = t.record(
            "GrenadeThrown",
            {
                "creature": "vex",
                "square": [4, 2],
                "increments": 3,
                "deviation": t.app.roll("1d4", faces=[face]),
            },
        ).outcome
        assert (out["lands_on"], out["bounced"]) == (landing, 2)
    with pytest.raises(InvalidInput):  # beyond one increment the d4 is owed
        t.record("GrenadeThrown", {"creature": "vex", "square": [4, 2], "increments": 2})


def test_b_sw_20_the_burst_is_one_dex_attack_vs_reflex_per_creature_with_one_damage_roll(
    make_table: Any,
) -> None:
    t = make_table()
    t.pc("vex")
    t.monster("orc")
    t.monster("gob")
    frag = {"name": "frag", "special": "grenade", "damage": "2d6"}
    # d20 10 + 2 + 2 = 14 against Reflex 14: a hit; d20 9: 13, a miss; 2d6 = 4 + 3 = 7 once
    out = t.attack(
        "vex",
        frag,
        [{"target": "orc", "face": 10}, {"target": "gob", "face": 9}],
        damage=t.app.roll("2d6", faces=[4, 3]),
    ).outcome
    orc, gob = out["targets"]
    assert (orc["attack_total"], orc["hit"], orc["damage"]["amount"]) == (14, True, 7)
    assert (gob["attack_total"], gob["hit"]) == (13, False)
    assert out["grenade"]["attack_bonus_parts"] == [
        {"source": "half level", "value": 2},
        {"source": "Dexterity modifier", "value": 2},
    ]


# ------------------------------------------------------------------ Bluff, escape, falls
def test_c1_2_a_bluff_that_beats_insight_gives_combat_advantage_against_that_target(table: Any) -> None:
    # Bluff 1d20+5 with a 9 = 14 against Insight 14: success
    out = table.record(
        "BluffForCombatAdvantageRolled",
        {"creature": "vex", "target": "orc", "roll": table.app.roll("1d20+5", faces=[9]), "vs_insight": 14},
    ).outcome
    assert (out["total"], out["success"]) == (14, True)
    # the axe (+8): d20 7 + 8 + 2 (combat advantage from the bluff) = 17 against AC 17: a hit
    swing = table.attack(
        "vex",
        {"name": "axe", "kind": "melee", "defense": "ac", "attack_bonus": 8},
        [{"target": "orc", "face": 7}],
    ).outcome
    assert swing["bluff_combat_advantage"] == ["orc"]
    assert (swing["targets"][0]["attack_total"], swing["targets"][0]["hit"]) == (17, True)
    # the orc attacking vex gains nothing from vex's bluff
    back = table.hit_vex([1, 1], face=2).outcome
    assert "bluff_combat_advantage" not in back


def test_c1_2_a_bluff_below_insight_gives_nothing(table: Any) -> None:
    out = table.record(
        "BluffForCombatAdvantageRolled",
        {"creature": "vex", "target": "orc", "roll": table.app.roll("1d20+5", faces=[8]), "vs_insight": 14},
    ).outcome
    assert (out["total"], out["success"], "effect" in out) == (13, False, False)


def grab(t: Any) -> str:
    effect = {"name": "grab", "components": [{"condition": "grabbed"}], "duration": {"kind": "until_removed"}}
    out = t.record("EffectApplied", {"target": "vex", "source": "orc", "effect": effect}).outcome
    return str(out["effect_id"])


def test_sw_13_b_sw_32_escape_acrobatics_vs_reflex_ends_the_grab_and_allows_a_shift(table: Any) -> None:
    eid = grab(table)
    # Acrobatics 1d20+4 with a 9 = 13 against the orc's Reflex 14: still held
    held = table.record(
        "EscapeAttempted",
        {
            "creature": "vex",
            "effect_id": eid,
            "skill": "acrobatics",
            "roll": table.app.roll("1d20+4", faces=[9]),
        },
    ).outcome
    assert (held["total"], held["defense_value"], held["success"]) == (13, 14, False)
    assert "grabbed" in table.c("vex")["conditions"]
    # Athletics 1d20+4 with an 11 = 15 against its Fortitude 15: free, may shift 1
    free = table.record(
        "EscapeAttempted",
        {
            "creature": "vex",
            "effect_id": eid,
            "skill": "athletics",
            "roll": table.app.roll("1d20+4", faces=[11]),
        },
    ).outcome
    assert (free["defense"], free["success"], free["may_shift"]) == ("fort", True, 1)
    assert "grabbed" not in table.c("vex")["conditions"]


def test_sw_13_an_escape_is_only_from_a_grab_held_by_another_creature(table: Any) -> None:
    roll = table.app.roll("1d20+4", faces=[20])
    dazed = {
        "name": "stun gun",
        "components": [{"condition": "dazed"}],
        "duration": {"kind": "until_removed"},
    }
    eid = table.record("EffectApplied", {"target": "vex", "source": "orc", "effect": dazed}).outcome[
        "effect_id"
    ]
    escape = {"creature": "vex", "effect_id": eid, "skill": "athletics", "roll": roll}
    refused(table, "NOT_A_GRAB", "EscapeAttempted", escape)
    held = {"name": "net", "components": [{"condition": "restrained"}], "duration": {"kind": "until_removed"}}
    eid = table.record("EffectApplied", {"target": "vex", "source": "vex", "effect": held}).outcome[
        "effect_id"
    ]
    refused(table, "NOT_A_GRAB", "EscapeAttempted", {**escape, "effect_id": eid})


def test_sw_31_a_fall_deals_1d10_per_10_feet_and_lands_prone(table: Any) -> None:
    # 30 feet: 3d10 = 4 + 6 + 2 = 12; 40 -> 28, prone
    out = table.record(
        "FallTaken", {"creature": "vex", "feet": 30, "roll": table.app.roll("3d10", faces=[4, 6, 2])}
    )
    assert out.outcome["amount"] == 12 and table.c("vex")["hp"] == 28
    assert "prone" in table.c("vex")["conditions"]
    with pytest.raises(InvalidInput):  # 30 feet is 3d10, not 2d10
        table.record(
            "FallTaken", {"creature": "vex", "feet": 30, "roll": table.app.roll("2d10", faces=[4, 6])}
        )


def test_sw_31_the_fast_falling_rule_past_50_feet_is_a_flag(make_table: Any) -> None:
    t = make_table({"sw.falling": "fast_over_50"})
    t.pc("vex", max_hp=100)
    # 70 feet: 25 (the first 50 feet) + 2d10 for the 20 extra feet = 25 + 3 + 5 = 33; 100 -> 67
    out = t.record("FallTaken", {"creature": "vex", "feet": 70, "roll": t.app.roll("2d10", faces=[3, 5])})
    assert out.outcome["amount"] == 33 and t.c("vex")["hp"] == 67
    with pytest.raises(InvalidInput):  # 7d10 is the dice rule's, not this one's
        t.record("FallTaken", {"creature": "vex", "feet": 70, "roll": t.app.roll("7d10", faces=[1] * 7)})
    # 50 feet is not more than 50: 5d10 = 10
    out = t.record("FallTaken", {"creature": "vex", "feet": 50, "roll": t.app.roll("5d10", faces=[2] * 5)})
    assert out.outcome["amount"] == 10


def test_b_sw_32_a_trained_jumpers_acrobatics_check_takes_off_half_its_result(table: Any) -> None:
    # 20 feet: 2d10 = 5 + 4 = 9; Acrobatics 1d20+6 with a 12 = 18, half 9: 0 damage, not prone
    out = table.record(
        "FallTaken",
        {
            "creature": "vex",
            "feet": 20,
            "roll": table.app.roll("2d10", faces=[5, 4]),
            "acrobatics": table.app.roll("1d20+6", faces=[12]),
        },
    ).outcome
    assert out["amount"] == 0 and "prone" not in out and table.c("vex")["hp"] == 40
    assert "prone" not in table.c("vex")["conditions"]


# ------------------------------------------------------------------ the log
def test_the_log_tells_each_new_fact(make_table: Any) -> None:
    from domain.rulesets import get_ruleset, narrator_for

    t = make_table()
    t.pc("vex", powers=POWERS, ammo={"rifle": 12, "grenade": 2})
    t.monster("orc")
    narrator = narrator_for(get_ruleset("stellar-winds"))

    def told(fact: str, payload: dict[str, Any]) -> tuple[str, str]:
        out = t.record(fact, payload).outcome
        state = t.ledger.state
        return narrator.sentence(fact, payload, out, state), narrator.sentence(fact, payload, None, state)

    assert told("PowerUsed", {"creature": "vex", "power_id": "ray"}) == (
        "Vex uses Ion Ray (encounter: expended until a rest).",
        "Vex uses the power ray.",
    )
    assert told("AmmunitionExpended", {"creature": "vex", "weapon_id": "rifle", "rounds": 2})[0] == (
        "Vex spends 2 round(s) of rifle; 10 left."
    )
    assert told("EquipmentChanged", {"creature": "vex", "ammo": {"rifle": 30}, "reason": "reload"})[0] == (
        "Vex now carries rifle 30 (reload)."
    )
    throw = {"creature": "vex", "square": [4, 2], "increments": 2, "deviation": t.app.roll("1d4", faces=[3])}
    assert told("GrenadeThrown", throw)[0] == (
        "Vex throws a grenade at square (4, 2), 2 range increments away: 1d4 (3) = 3, it bounces 1 square(s) "
        "lower right and lands on (5, 3)."
    )
    bluff = {"creature": "vex", "target": "orc", "roll": t.app.roll("1d20+5", faces=[9]), "vs_insight": 14}
    assert told("BluffForCombatAdvantageRolled", bluff)[0].endswith(
        "= 14 vs Insight 14: combat advantage against them."
    )
    fall = {"creature": "vex", "feet": 10, "roll": t.app.roll("1d10", faces=[6])}
    text = told("FallTaken", fall)[0]
    assert text.startswith("Vex falls 10 feet: ") and text.endswith("Vex lands prone.")
    grabbed = grab(t)
    escape = {
        "creature": "vex",
        "effect_id": grabbed,
        "skill": "acrobatics",
        "roll": t.app.roll("1d20+4", faces=[10]),
    }
    assert told("EscapeAttempted", escape)[0].endswith(
        "= 14 vs Orc's Reflex 14: free, and may shift 1 square."
    )


# ------------------------------------------------------------------ a law (hypothesis)
STEPS = st.lists(st.sampled_from(["jab", "ray", "nova", "short", "extended"]), max_size=14)


@settings(max_examples=40, deadline=None)
@given(STEPS)
def test_sw_49_law_a_power_is_expended_exactly_when_used_since_the_last_rest_that_regains_it(
    steps: list[str],
) -> None:
    """Any sequence of uses and rests: an encounter power is expended iff it was used after the
    last rest (short or extended); a daily power iff used after the last extended rest; an at-will
    power never. Using an expended power is refused and changes nothing."""
    app = memory_application()
    try:
        t = Table(app, {"sw.extended_rest_interval_hours": 0})
        t.pc("kira", powers=POWERS)
        used: set[str] = set()
        for step in steps:
            if step == "short":
                t.short_rest(["kira"])
                used -= {"ray"}
            elif step == "extended":
                t.extended_rest(["kira"])
                used -= {"ray", "nova"}
            elif step in used:
                refused(t, "POWER_EXPENDED", "PowerUsed", {"creature": "kira", "power_id": step})
            else:
                use(t, "kira", step)
                if step != "jab":
                    used.add(step)
            assert {x["id"] for x in t.c("kira")["powers"] if x["expended"]} == used
    finally:
        app.close()
