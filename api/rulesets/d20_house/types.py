"""``D20Character``: the shared ``Character`` fields plus the d20 house rules' own (RULES.md C3.1).

Every number is the ruleset's creature view (``domain.rulesets.d20_house``): nothing is
computed here, so the API and the fold cannot disagree.
"""

from __future__ import annotations

import enum
from typing import Any

import strawberry

from api.graphql.types import Character
from api.rulesets.d20_house.inputs import D20Ability


@strawberry.enum(
    description="DH-10 life bands: fine (1 HP or more), disabled (0 to -B), dying (-B-1 to -S), dead."
)
class D20Band(enum.Enum):
    FINE = "fine"
    DISABLED = "disabled"
    DYING = "dying"
    DEAD = "dead"


@strawberry.enum(description="How a creature died (C3.1 dead_by).")
class D20DeathCause(enum.Enum):
    HP_THRESHOLD = "hp_threshold"
    MASSIVE_DAMAGE = "massive_damage"
    STAMINA_ZERO = "stamina_zero"
    DECLARED = "declared"


@strawberry.enum(description="What a creature's round allows (DH-4, DH-11, DH-12, B-DH-11).")
class D20ActionAllowance(enum.Enum):
    ALL = "all"
    ONE = "one"
    NONE = "none"


@strawberry.type(description="One ability score: the sheet's, what it lost, and what counts now.")
class D20AbilityScore:
    ability: D20Ability
    base: int
    damage: int
    drain: int
    effective: int = strawberry.field(description="Base minus damage and drain, never below 0.")
    modifier: int = strawberry.field(description="floor((effective - 10) / 2).")


@strawberry.type(description="DH-10 thresholds, moving with effective Stamina (B-DH-9).")
class D20Thresholds:
    disabled_from: int = strawberry.field(description="0: disabled from here down...")
    disabled_to: int = strawberry.field(description="...to -B.")
    dying_from: int = strawberry.field(description="-B-1: dying from here down...")
    dying_to: int = strawberry.field(description="...to -S.")
    dead_below: int = strawberry.field(description="-S: dead below it.")


@strawberry.type
class D20SaveBonus:
    base: int
    total: int = strawberry.field(description="Base + the ability's modifier (before conditions).")


@strawberry.type
class D20Saves:
    fort: D20SaveBonus
    ref: D20SaveBonus
    will: D20SaveBonus


@strawberry.type(description="Armor class now (DH-6): a flat-footed creature's counts that already.")
class D20ArmorClass:
    ac: int
    touch: int
    flat_footed: int


@strawberry.type(description="B-DH-14: attacks of opportunity this round, counted from its own turn start.")
class D20AttacksOfOpportunity:
    used: int
    allowed: int
    left: int


@strawberry.type(description="A massive-damage Fortitude save the creature owes (B-DH-1).")
class D20MassiveDamageSaveOwed:
    attack: int = strawberry.field(description="The position of the attack whose damage called for it.")
    damage: int
    dc: int


def _abilities(v: dict[str, Any]) -> list[D20AbilityScore]:
    return [
        D20AbilityScore(
            ability=D20Ability(a),
            base=int(v["abilities"][a]),
            damage=int(v["ability_damage"].get(a, 0)),
            drain=int(v["ability_drain"].get(a, 0)),
            effective=int(v["effective_abilities"][a]),
            modifier=int(v["modifiers"][a]),
        )
        for a in v["abilities"]
    ]


@strawberry.type(
    description="A creature of the d20 house rules (Stamina / Agility / Spirit): abilities with damage "
    "and drain, effective Stamina S and its bonus B, the life band and its thresholds, saves, attack "
    "bonuses, armor class, flat-footed and attacks of opportunity."
)
class D20Character(Character):
    @strawberry.field(description="The sheet's class.")
    def class_name(self) -> str:
        return str(self.view_["class"])

    @strawberry.field(description="The six abilities with damage, drain and the effective score.")
    def abilities(self) -> list[D20AbilityScore]:
        return _abilities(self.view_)

    @strawberry.field(description="S: effective Stamina (DH-10).")
    def effective_stamina(self) -> int:
        return int(self.view_["S"])

    @strawberry.field(description="B: max(0, Stamina modifier) (DH-10).")
    def stamina_bonus(self) -> int:
        return int(self.view_["B"])

    @strawberry.field(description="The DH-10 band (lifeState is the shared vocabulary).")
    def band(self) -> D20Band:
        return D20Band(self.view_["band"])

    @strawberry.field(description="Dying but losing no more HP (DH-12, B-DH-4).")
    def stable(self) -> bool:
        return bool(self.view_["stable"])

    @strawberry.field
    def conscious(self) -> bool:
        return bool(self.view_["conscious"])

    @strawberry.field(description="How it died (null while alive).")
    def dead_by(self) -> D20DeathCause | None:
        cause = self.view_["dead_by"]
        return None if cause is None else D20DeathCause(cause)

    @strawberry.field
    def thresholds(self) -> D20Thresholds:
        return D20Thresholds(**self.view_["thresholds"])

    @strawberry.field(description="Flat-footed until its first turn of an encounter (DH-2).")
    def flat_footed(self) -> bool:
        return bool(self.view_["flat_footed"])

    @strawberry.field(description="Ran this round: no Agility to AC until its next turn (DH-4).")
    def running(self) -> bool:
        return bool(self.view_["running"])

    @strawberry.field
    def attacks_of_opportunity(self) -> D20AttacksOfOpportunity:
        used, allowed = int(self.view_["aoo_used"]), int(self.view_["aoo_allowed"])
        return D20AttacksOfOpportunity(used=used, allowed=allowed, left=max(0, allowed - used))

    @strawberry.field(description="Base attack bonus with its iteratives, highest first (+6/+1 is [6, 1]).")
    def base_attack_bonus(self) -> list[int]:
        return [int(b) for b in self.view_["bab"]]

    @strawberry.field(description="DH-15: base save + the ability's modifier.")
    def saves(self) -> D20Saves:
        base, total = self.view_["base_saves"], self.view_["saves"]
        return D20Saves(
            **{s: D20SaveBonus(base=int(base[s]), total=int(total[s])) for s in ("fort", "ref", "will")}
        )

    @strawberry.field
    def armor_class(self) -> D20ArmorClass:
        ac = self.view_["ac"]
        return D20ArmorClass(ac=int(ac["ac"]), touch=int(ac["touch"]), flat_footed=int(ac["flat_footed"]))

    @strawberry.field(description="DH-3: Agility modifier + initiative modifiers.")
    def initiative_bonus(self) -> int:
        return int(self.view_["initiative_bonus"])

    @strawberry.field
    def feats(self) -> list[str]:
        return [str(f) for f in self.view_["feats"]]

    @strawberry.field(description="What its round allows now.")
    def actions_allowed(self) -> D20ActionAllowance:
        return D20ActionAllowance(self.view_["actions_allowed"])

    @strawberry.field
    def massive_damage_saves_owed(self) -> list[D20MassiveDamageSaveOwed]:
        return [
            D20MassiveDamageSaveOwed(attack=int(x["attack"]), damage=int(x["damage"]), dc=int(x["dc"]))
            for x in self.view_["massive_damage_saves_owed"]
        ]
