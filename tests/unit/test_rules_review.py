"""Rules review: one test per discrepancy found between the code and RULES.md.

Each test is named after the RULES.md id (or adopted ruling) it checks. The
fixture ``table`` (tests/unit/conftest.py) holds ``vex``, a level-5 PC with
40 HP, 8 surges, 12 wounds and AC 29, and ``orc``, a monster with 50 HP and
AC 17.
"""

from __future__ import annotations

from typing import Any

import pytest

from api.rulesets.stellar_winds.commands import StellarWindsCommands
from domain import dice
from domain.errors import DomainError
from tests.unit.conftest import ABILITIES, AXE, MONSTER_DEFENSES, Table

ENC = "e1"


def d20(face: int) -> dict[str, Any]:
    return dice.roll("1d20", faces=[face])


def rec(t: Table, fact_type: str, **payload: Any) -> dict[str, Any]:
    outcome: dict[str, Any] = t.app.record(t.cid, fact_type, payload).outcome
    return outcome


def put(t: Table, target: str, source: str, *components: dict[str, Any], **duration: Any) -> str:
    out = rec(
        t,
        "EffectApplied",
        target=target,
        source=source,
        effect={
            "name": "effect",
            "components": list(components),
            "duration": duration or {"kind": "until_removed"},
        },
    )
    return str(out["effect_id"])


def parts(outcome: dict[str, Any]) -> dict[str, int]:
    return {p["source"]: p["value"] for p in outcome["targets"][0]["attack_parts"]}


# ------------------------------------------------------ B-SW-2 (flag off)
def test_b_sw_2_sw_32_without_overflow_later_damage_at_zero_hp_still_reduces_wounds(make_table: Any) -> None:
    """sw.hp_overflow_to_wounds = false drops only the excess of the instance that empties HP;
    'once HP = 0, all further ordinary damage reduces wounds' (SW-32) still holds."""
    t = make_table({"sw.hp_overflow_to_wounds": False})
    t.pc("vex")
    r = t.deal_damage("vex", amount=45)
    assert (r.outcome["hp_lost"], r.outcome["wounds_lost"]) == (40, 0)
    r = t.deal_damage("vex", amount=3)
    assert (r.outcome["hp_lost"], r.outcome["wounds_lost"]) == (0, 3)
    assert (t.c("vex")["hp"], t.c("vex")["wounds"]) == (0, 9)


# ------------------------------------------------- A1.5 / A1.10 Blinded
def test_a1_10_blinded_attacker_takes_no_total_concealment_penalty_on_area_attacks(table: Table) -> None:
    """Blinded: all targets have total concealment, which is -5 for melee and ranged attacks only (A1.5)."""
    put(table, "orc", "orc", {"condition": "blinded"})
    burst = {"name": "grenade", "kind": "area", "defense": "ref", "attack_bonus": 5}
    r = table.attack("orc", burst, [{"target": "vex", "face": 10}])
    assert "attacker blinded" not in parts(r.outcome)
    r = table.attack("orc", dict(AXE, damage=None), [{"target": "vex", "face": 10}])
    assert parts(r.outcome)["attacker blinded"] == -5


def test_a1_5_a_blinded_attacker_gains_no_combat_advantage_it_cannot_see(table: Table) -> None:
    """A1.5: 'The attacker must be able to see the target' for combat advantage."""
    put(table, "vex", "orc", {"condition": "dazed"})
    put(table, "orc", "orc", {"condition": "blinded"})
    r = table.attack("orc", dict(AXE, damage=None), [{"target": "vex", "face": 10}])
    assert not any(s.startswith("combat advantage") for s in parts(r.outcome))


# --------------------------------------------- A1.10 Unconscious: falls prone
def test_a1_10_b_sw_11_a_knocked_out_creature_falls_prone_and_stays_prone_when_healed(table: Table) -> None:
    """Unconscious: 'falls prone if possible'; SW-40: still prone until it stands up."""
    table.deal_damage("vex", amount=60, nonlethal=True)
    assert table.c("vex")["life"] == "knocked_out"
    table.heal("vex", flat=5)
    vex = table.c("vex")
    assert vex["life"] == "active"
    assert "prone" in vex["conditions"]


def test_a1_10_c1_2_an_unconscious_effect_leaves_the_creature_prone_after_it_ends(table: Table) -> None:
    """C1.2 EffectApplied: 'conditions with immediate consequences (falls prone when unconscious)
    are derived'."""
    eid = put(table, "vex", "orc", {"condition": "unconscious"})
    rec(table, "EffectEnded", effect_id=eid, reason="gm")
    assert "prone" in table.c("vex")["conditions"]


# ------------------------------------------------- SW-44 / B-SW-25 sustaining
def test_b_sw_25_the_sustainer_named_as_anchor_cannot_rest(table: Table) -> None:
    """The creature that sustains an effect (its anchor, as EffectSustained reads it) cannot rest."""
    put(table, "orc", "trap", {"condition": "immobilized"}, kind="sustained", anchor="vex")
    with pytest.raises(DomainError) as info:
        table.short_rest(["vex"])
    assert info.value.code == "SUSTAINING"


# ------------------------------------------------------- adopted ruling 9
def test_ruling_9_a_pc_above_a_custom_xp_table_is_refused_with_a_typed_error(make_table: Any) -> None:
    t = make_table({"xp_table": [0, 100, 300]})
    with pytest.raises(DomainError) as info:
        t.pc("vex", level=5)
    assert info.value.code == "INVALID_INPUT"
    t.pc("vex", level=3)
    assert t.c("vex")["xp"] == 300 and t.c("vex")["level"] == 3


# ------------------------------------------- C0.5: an orphan changes nothing
def test_c0_5_a_kept_orphan_healing_a_dead_creature_spends_no_surge(table: Table) -> None:
    """A fact that fails (even one the GM keeps) must leave the state as it was."""
    hit = table.deal_damage("vex", amount=10)
    heal = table.heal("vex", requires_surge=True, surge_multiplier=1)
    assert table.c("vex")["surges"] == 7
    table.amend(hit.position, {"amount": 100}, "it was a disintegration")  # vex dies before the heal
    assert str(heal.position) in table.orphans()
    table.override(heal.position, "orphan", "keep", "GM: keep it")
    assert str(heal.position) in table.orphans()  # healing cannot help the dead
    assert table.c("vex")["surges"] == 8


# ------------------------------------------------------ SW-44: 5 minutes
def test_sw_44_a_sustained_effect_lapses_after_five_minutes(make_table: Any) -> None:
    """'you can sustain a power with a sustained duration for as long as 5 minutes' (50 rounds)."""
    t = make_table({"sw.end_of_encounter_rounds": 2})
    for cid in ("a", "b"):
        StellarWindsCommands(t.app).register_creature(
            t.cid,
            creature_id=cid,
            name=cid,
            kind="monster",
            level=1,
            abilities=dict(ABILITIES),
            max_hp=40,
            defenses=dict(MONSTER_DEFENSES),
        )
    rec(t, "EncounterStarted", encounter_id=ENC, participants=["a", "b"])
    rec(t, "InitiativeRolled", encounter_id=ENC, creature="a", roll=d20(20))
    rec(t, "InitiativeRolled", encounter_id=ENC, creature="b", roll=d20(5))
    rec(t, "TurnStarted", encounter_id=ENC)  # ruling 18: each turn starts with its own fact
    eid = put(t, "b", "a", {"condition": "slowed"}, kind="sustained", action="minor")
    for _ in range(3):  # rounds 2, 3, 4: a sustains it each turn
        for _turn in ("a", "b"):
            rec(t, "TurnEnded", encounter_id=ENC)
            rec(t, "TurnStarted", encounter_id=ENC)
        if eid not in {e["effect_id"] for e in t.c("b")["effects"]}:
            break
        rec(t, "EffectSustained", effect_id=eid, action="minor")
    assert eid not in {e["effect_id"] for e in t.c("b")["effects"]}


# ------------------------------------------------- A1.10 Stunned: cannot act
@pytest.mark.parametrize("condition", ["stunned", "petrified"])
def test_a1_10_a_creature_that_cannot_act_makes_no_attack_even_without_a_declared_action(
    table: Table, condition: str
) -> None:
    """Stunned / petrified: 'cannot act' — an attack is an action whatever its kind."""
    put(table, "orc", "vex", {"condition": condition})
    position = table.position
    with pytest.raises(DomainError) as info:
        table.attack("orc", dict(AXE), [{"target": "vex", "face": 15, "damage_faces": [3, 3]}])
    assert info.value.code == "CANNOT_ACT"
    assert table.position == position and table.c("vex")["hp"] == 40
