"""Stellar Winds mutations for powers, ammunition, grenades, autofire, Bluff, escape and falls
(RULES.md C1.2, SW-13, SW-31, SW-49, B-SW-20, B-SW-21, B-SW-32; domain: ``powers.py``,
``skills.py``). Every die may be given (``DiceInput`` with its faces); the numbers are the fold's."""

from __future__ import annotations

import enum
from typing import Any

import strawberry
from strawberry.scalars import JSON

from api.graphql.errors import ChronicleError
from api.graphql.inputs import DiceInput, MutationInput
from api.graphql.planning import ACTORS, Look, MutationSpec, Plan, json_arg, one
from domain.rulesets.stellar_winds.skills import fall_dice

RULESET = "stellar-winds"


@strawberry.enum(description="How often a power can be used (C1.1).")
class PowerFrequency(enum.Enum):
    AT_WILL = "at_will"
    ENCOUNTER = "encounter"
    DAILY = "daily"


@strawberry.enum(description="The skill of an escape (SW-13): Acrobatics vs Reflex, Athletics vs Fortitude.")
class EscapeSkill(enum.Enum):
    ACROBATICS = "acrobatics"
    ATHLETICS = "athletics"


@strawberry.input(description="A power on the sheet (C1.1).")
class SheetPowerInput:
    id: str
    frequency: PowerFrequency
    name: str | None = None

    def as_payload(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "frequency": self.frequency.value}
        if self.name is not None:
            out["name"] = self.name
        return out


@strawberry.input(description="Rounds of a weapon's ammunition (a grenade is a weapon id too).")
class AmmoInput:
    weapon_id: str
    rounds: int


def _action(value: str | None) -> dict[str, Any]:
    """The action in a running encounter: the fact's default when not given; 'none': no action."""
    if value is None:
        return {}
    return {"action": None if value == "none" else value}


ACTION_DOC = "The creature's action in a running encounter ({default} by default); 'none': no action."


@strawberry.input(description="C1.2 PowerUsed: a power that is not an attack (an attack names its powerId).")
class UsePowerInput(MutationInput):
    character_id: strawberry.ID
    power_id: str
    action: str | None = strawberry.field(default=None, description=ACTION_DOC.format(default="standard"))


@strawberry.input(description="C1.2 AmmunitionExpended.")
class ExpendAmmunitionInput(MutationInput):
    character_id: strawberry.ID
    weapon_id: str
    rounds: int = 1


@strawberry.input(description="C1.2 EquipmentChanged: set ammunition counts (a reload, grenades picked up).")
class ChangeEquipmentInput(MutationInput):
    character_id: strawberry.ID
    ammo: list[AmmoInput]
    reason: str = ""


@strawberry.input(description="A creature in an autofire area or a grenade's burst: its attack d20.")
class AreaTargetInput:
    character_id: strawberry.ID
    attack_roll: DiceInput | None = strawberry.field(default=None, description="Default: 1d20 by the server.")
    circumstances: JSON | None = None
    modifiers: JSON | None = strawberry.field(
        default=None, description="Typed bonuses (feats...) as in attack; no weapon modifiers (B-SW-21)."
    )


@strawberry.input(
    description="B-SW-21 autofire: d20 + half level + Dex modifier (-4 without Firearms Expert) vs Reflex "
    "for each creature in the area; 1[W] rolled once; spends 10 rounds of weaponId."
)
class AutofireInput(MutationInput):
    attacker_id: strawberry.ID
    weapon_id: str
    weapon: str = strawberry.field(description="The weapon's die for [W], e.g. 1d10.")
    targets: list[AreaTargetInput]
    firearms_expert: bool = False
    damage_roll: DiceInput | None = strawberry.field(default=None, description="1[W], once for all.")
    name: str = "autofire"
    damage_types: list[str] = strawberry.field(default_factory=list)
    power_id: str | None = strawberry.field(default=None, description="A power on the sheet it uses.")
    action: str | None = strawberry.field(default=None, description=ACTION_DOC.format(default="standard"))


@strawberry.input(
    description="B-SW-20: a grenade thrown at a square; beyond 1 range increment a d4 sends it "
    "(increments - 1) squares (1 upper left, 2 upper right, 3 lower right, 4 lower left); the burst "
    "is a Dex attack vs Reflex (half level + Dex modifier) per creature, damage rolled once."
)
class ThrowGrenadeInput(MutationInput):
    character_id: strawberry.ID
    square: list[int] = strawberry.field(description="[x, y]: x to the right, y down.")
    damage: str = strawberry.field(description="The grenade's damage dice, e.g. 2d6.")
    targets: list[AreaTargetInput] = strawberry.field(
        default_factory=list, description="The creatures in the burst where it lands."
    )
    increments: int = 1
    deviation_roll: DiceInput | None = strawberry.field(
        default=None, description="The 1d4 beyond one increment (default: by the server)."
    )
    grenade_id: str = "grenade"
    damage_types: list[str] = strawberry.field(default_factory=list)
    damage_roll: DiceInput | None = None
    action: str | None = strawberry.field(default=None, description=ACTION_DOC.format(default="standard"))


@strawberry.input(description="C1.2 BluffForCombatAdvantageRolled: Bluff against the target's Insight.")
class BluffInput(MutationInput):
    character_id: strawberry.ID
    target_id: strawberry.ID
    vs_insight: int
    roll: DiceInput | None = strawberry.field(default=None, description="The Bluff check (1d20 + skill).")
    duration: JSON | None = strawberry.field(
        default=None,
        description="How long the combat advantage lasts (GM-ruled; default until the end of the bluffer's "
        'next turn: {"kind": "until_end_of_turn"}).',
    )
    action: str | None = strawberry.field(default=None, description=ACTION_DOC.format(default="standard"))


@strawberry.input(description="SW-13, B-SW-32: escape a grab; success ends it and allows a 1-square shift.")
class EscapeInput(MutationInput):
    character_id: strawberry.ID
    effect_id: str = strawberry.field(description="The grab (an effect whose source is the grabber).")
    skill: EscapeSkill
    roll: DiceInput | None = strawberry.field(default=None, description="The check (1d20 + skill).")
    action: str | None = strawberry.field(default=None, description=ACTION_DOC.format(default="move"))


@strawberry.input(description="SW-31, B-SW-32: a fall; 1d10 per 10 feet, prone unless no damage.")
class FallInput(MutationInput):
    character_id: strawberry.ID
    feet: int
    roll: DiceInput | None = strawberry.field(default=None, description="The d10s (default: by the server).")
    acrobatics_roll: DiceInput | None = strawberry.field(
        default=None,
        description="A trained jumper's Acrobatics check: reduces the damage by half its result.",
    )


def _enc(look: Look) -> Any:
    return look.view.campaign().get("active_encounter")


def p_use_power(i: UsePowerInput, look: Look) -> Plan:
    c = look.creature(i.character_id)
    payload = {"creature": c, "power_id": i.power_id, **_action(i.action)}
    return one("PowerUsed", payload, ACTORS, {c}, [c], _enc(look))


def p_expend(i: ExpendAmmunitionInput, look: Look) -> Plan:
    c = look.creature(i.character_id)
    payload = {"creature": c, "weapon_id": i.weapon_id, "rounds": i.rounds}
    return one("AmmunitionExpended", payload, ACTORS, {c}, [c])


def p_equipment(i: ChangeEquipmentInput, look: Look) -> Plan:
    c = look.creature(i.character_id)
    ammo = {a.weapon_id: a.rounds for a in i.ammo}
    return one("EquipmentChanged", {"creature": c, "ammo": ammo, "reason": i.reason}, ACTORS, {c}, [c])


def _area_targets(look: Look, targets: list[AreaTargetInput]) -> tuple[list[dict[str, Any]], list[str]]:
    if len(targets) > 50:
        raise ChronicleError("INVALID_INPUT", "at most 50 targets", "targets")
    out, names = [], []
    for t in targets:
        tid = look.creature(t.character_id, "targets.characterId")
        names.append(tid)
        entry: dict[str, Any] = {"target": tid, "roll": look.roll(t.attack_roll, "1d20")}
        if t.circumstances is not None:
            entry["circumstances"] = json_arg(t.circumstances, "targets.circumstances", list)
        if t.modifiers is not None:
            entry["modifiers"] = json_arg(t.modifiers, "targets.modifiers", list)
        out.append(entry)
    return out, names


def p_autofire(i: AutofireInput, look: Look) -> Plan:
    attacker = look.creature(i.attacker_id, "attackerId")
    if not i.targets:
        raise ChronicleError("INVALID_INPUT", "autofire needs at least one creature in its area", "targets")
    targets, names = _area_targets(look, i.targets)
    power: dict[str, Any] = {
        "name": i.name,
        "special": "autofire",
        "weapon": i.weapon,
        "weapon_id": i.weapon_id,
        "firearms_expert": i.firearms_expert,
        "damage_types": list(i.damage_types),
    }
    if i.power_id is not None:
        power["power_id"] = i.power_id
    payload = {
        "attacker": attacker,
        "power": power,
        "targets": targets,
        "damage": look.roll(i.damage_roll, "1[W]", weapon=i.weapon),
        **_action(i.action),
    }
    return one("AttackMade", payload, ACTORS, {attacker}, [attacker, *names], _enc(look))


def p_grenade(i: ThrowGrenadeInput, look: Look) -> Plan:
    c = look.creature(i.character_id)
    if len(i.square) != 2:
        raise ChronicleError("INVALID_INPUT", "a square is [x, y]", "square")
    throw = {
        "creature": c,
        "grenade_id": i.grenade_id,
        "square": list(i.square),
        "increments": i.increments,
        "deviation": look.roll(i.deviation_roll, "1d4") if i.increments > 1 else look.roll(i.deviation_roll),
    }
    items: list[tuple[str, dict[str, Any]]] = [("GrenadeThrown", throw)]
    targets, names = _area_targets(look, i.targets)
    if targets:
        power = {
            "name": i.grenade_id,
            "special": "grenade",
            "damage": i.damage,
            "damage_types": list(i.damage_types),
        }
        burst = {
            "attacker": c,
            "power": power,
            "targets": targets,
            "damage": look.roll(i.damage_roll, i.damage),
            **_action(i.action),
        }
        items.append(("AttackMade", burst))
    else:  # no one in the burst: the throw itself is the action
        throw["action"] = "standard" if i.action is None else (None if i.action == "none" else i.action)
    return Plan(items, ACTORS, {c}, [c, *names], _enc(look))


def p_bluff(i: BluffInput, look: Look) -> Plan:
    c = look.creature(i.character_id)
    target = look.creature(i.target_id, "targetId")
    payload = {
        "creature": c,
        "target": target,
        "roll": look.roll(i.roll, "1d20"),
        "vs_insight": i.vs_insight,
        "duration": json_arg(i.duration, "duration") if i.duration is not None else None,
        **_action(i.action),
    }
    return one("BluffForCombatAdvantageRolled", payload, ACTORS, {c}, [c, target], _enc(look))


def p_escape(i: EscapeInput, look: Look) -> Plan:
    c = look.creature(i.character_id)
    payload = {
        "creature": c,
        "effect_id": i.effect_id,
        "skill": i.skill.value,
        "roll": look.roll(i.roll, "1d20"),
        **_action(i.action),
    }
    return one("EscapeAttempted", payload, ACTORS, {c}, [c], _enc(look))


def p_fall(i: FallInput, look: Look) -> Plan:
    c = look.creature(i.character_id)
    _, count = fall_dice(max(0, i.feet), look.view.campaign().get("flags", {}))
    payload = {
        "creature": c,
        "feet": i.feet,
        "roll": look.roll(i.roll, f"{count}d10" if count else None),
        "acrobatics": look.roll(i.acrobatics_roll),
    }
    return one("FallTaken", payload, ACTORS, {c}, [c])


def _spec(name: str, input_cls: type[Any], planner: Any, description: str) -> MutationSpec:
    return MutationSpec(name, input_cls, planner, description, ruleset=RULESET)


MUTATIONS: list[MutationSpec] = [
    _spec("use_power", UsePowerInput, p_use_power, "Use a power that is not an attack (C1.2 PowerUsed)."),
    _spec("expend_ammunition", ExpendAmmunitionInput, p_expend, "Spend rounds of ammunition."),
    _spec("change_equipment", ChangeEquipmentInput, p_equipment, "Set ammunition counts (reload)."),
    _spec("autofire", AutofireInput, p_autofire, "An autofire attack (B-SW-21)."),
    _spec("throw_grenade", ThrowGrenadeInput, p_grenade, "Throw a grenade and resolve its burst (B-SW-20)."),
    _spec("bluff_for_combat_advantage", BluffInput, p_bluff, "Bluff for combat advantage (C1.2)."),
    _spec("escape_grab", EscapeInput, p_escape, "Escape a grab (SW-13, B-SW-32)."),
    _spec("fall", FallInput, p_fall, "Falling damage (SW-31, B-SW-32)."),
]
