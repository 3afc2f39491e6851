"""Orcus GraphQL inputs (RULES.md A4, B-OR, C4.2): sheets, attacks with the A4.6 circumstances,
powers and recharge rolls, action points, effects with their durations, saves and maintain, the
A4.9 placeholder pack (damage, healing, surges, Rally, death saves), rests, XP and levels.

Every die is a ``DiceInput`` (``expression`` and optional ``faces`` read off physical dice; the
server rolls otherwise). Every type is prefixed ``Orcus`` so no other system's names collide.
"""

from __future__ import annotations

import enum
from typing import Any

import strawberry
from strawberry.scalars import JSON

from api.graphql.inputs import DiceInput, MutationInput

MODIFIERS = (
    "Declared modifiers: a list of {source, value}, optionally citing a ruling ({source, value, ruling})."
)


@strawberry.enum(description="C4.1 kind: a hero (played by a player) or a monster, elite or boss.")
class OrcusRank(enum.Enum):
    HERO = "hero"
    MONSTER = "monster"
    ELITE = "elite"
    BOSS = "boss"


@strawberry.enum(description="OR-10: the defense an attack targets.")
class OrcusDefense(enum.Enum):
    AC = "ac"
    FORT = "fort"
    REF = "ref"
    WILL = "will"


@strawberry.enum(description="An attack's origin (A4: close/area are near/far).")
class OrcusOrigin(enum.Enum):
    MELEE = "melee"
    RANGED = "ranged"
    NEAR = "near"
    FAR = "far"


@strawberry.enum(description="OR-9 power frequencies.")
class OrcusFrequency(enum.Enum):
    AT_WILL = "at_will"
    ENCOUNTER = "encounter"
    DAILY = "daily"
    RECHARGE = "recharge"
    RECHARGE_IF = "recharge_if"


@strawberry.enum(description="OR-6 / OR-8 action kinds (a counter or a reaction is an immediate action).")
class OrcusActionKind(enum.Enum):
    STANDARD = "standard"
    MOVE = "move"
    SWIFT = "swift"
    FREE = "free"
    IMMEDIATE = "immediate"
    OPPORTUNITY = "opportunity"


@strawberry.enum(description="OR-7: what an action point buys.")
class OrcusExtraAction(enum.Enum):
    STANDARD = "standard"
    MOVE = "move"
    SWIFT = "swift"


@strawberry.enum(description="OR-18: the action that maintains an effect.")
class OrcusMaintainAction(enum.Enum):
    STANDARD = "standard"
    MOVE = "move"
    SWIFT = "swift"
    FREE = "free"


@strawberry.enum(description="The A4.6 attack-modifier table, every row.")
class OrcusCircumstance(enum.Enum):
    TARGET_OFF_GUARD = "target_off_guard"
    ATTACKER_PRONE = "attacker_prone"
    CHARGE = "charge"
    COVER = "cover"
    THREE_QUARTERS_COVER = "three_quarters_cover"
    CONCEALMENT = "concealment"
    TOTAL_CONCEALMENT = "total_concealment"
    LONG_RANGE = "long_range"
    ATTACKER_RESTRAINED = "attacker_restrained"


@strawberry.enum(description="OR-12: an attack's effect applies on a Hit, on a Miss, or as its Effect.")
class OrcusEffectWhen(enum.Enum):
    HIT = "hit"
    MISS = "miss"
    EFFECT = "effect"


@strawberry.enum(description="What a power's Miss deals.")
class OrcusMissDamage(enum.Enum):
    NONE = "none"
    HALF = "half"


@strawberry.enum(
    description="OR-17 durations (the anchor always explicit), maintain (OR-18) and until removed."
)
class OrcusDurationKind(enum.Enum):
    END_OF_TARGET_NEXT = "end_of_target_next"
    END_OF_USER_NEXT = "end_of_user_next"
    START_OF_TARGET_NEXT = "start_of_target_next"
    START_OF_USER_NEXT = "start_of_user_next"
    SAVE_ENDS = "save_ends"
    MAINTAIN = "maintain"
    UNTIL_REMOVED = "until_removed"


# ------------------------------------------------------------------ sheets
@strawberry.input(description="OR-10 defenses from the stat block or sheet.")
class OrcusDefensesInput:
    ac: int
    fort: int
    ref: int
    will: int

    def as_payload(self) -> dict[str, int]:
        return {"ac": self.ac, "fort": self.fort, "ref": self.ref, "will": self.will}


@strawberry.input(description="A resistance or vulnerability: a damage type (or `all`) and its value.")
class OrcusTypedValueInput:
    type: str
    value: int


def typed(values: list[OrcusTypedValueInput]) -> dict[str, int]:
    return {v.type: v.value for v in values}


@strawberry.input(description="A power on the sheet (OR-9).")
class OrcusPowerInput:
    id: str
    frequency: OrcusFrequency
    name: str | None = None
    recharge: list[int] | None = strawberry.field(
        default=None, description="'Recharge X-Y': the d6 faces that recharge it, e.g. [5, 6]."
    )
    condition: str | None = strawberry.field(default=None, description="'Recharge if ...': the condition.")

    def as_payload(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "frequency": self.frequency.value}
        if self.name is not None:
            out["name"] = self.name
        if self.recharge is not None:
            out["recharge"] = list(self.recharge)
        if self.condition is not None:
            out["condition"] = self.condition
        return out


@strawberry.input(
    description="A sheet (C4.1). A hero gives its XP (its level follows, ruling 22) or a level (its XP "
    "is that level's threshold) and starts with 1 action point (ruling 21); a monster, elite or boss "
    "gives its stat block's level and action points."
)
class OrcusRegisterCreatureInput(MutationInput):
    name: str
    kind: OrcusRank
    max_hp: int
    defenses: OrcusDefensesInput
    level: int | None = None
    xp: int | None = None
    surges_per_day: int = 0
    resist: list[OrcusTypedValueInput] = strawberry.field(default_factory=list)
    vuln: list[OrcusTypedValueInput] = strawberry.field(default_factory=list)
    powers: list[OrcusPowerInput] = strawberry.field(default_factory=list)
    action_points: int | None = strawberry.field(
        default=None, description="Monsters: per the stat block (OR-7); heroes: default 1."
    )
    creature_id: str | None = strawberry.field(default=None, description="Local id (default: from the name).")


@strawberry.input(description="Ruling 3: sheet numbers change only by a recorded update.")
class OrcusUpdateSheetInput(MutationInput):
    character_id: strawberry.ID
    changes: JSON = strawberry.field(
        description="Sheet fields as in the fact: name, level (monsters), defenses, max_hp, surges_per_day, "
        "resist, vuln, powers, action_points."
    )
    reason: str = ""


@strawberry.input(description="OR-2 / ruling 22: XP for heroes; their level follows the A4.2 table.")
class OrcusAwardExperienceInput(MutationInput):
    character_ids: list[strawberry.ID]
    amount: int
    reason: str = ""


@strawberry.input(description="Ruling 3: the GM sets a level (null: a hero's level follows its XP again).")
class OrcusSetLevelInput(MutationInput):
    character_id: strawberry.ID
    level: int | None


# ------------------------------------------------------------------ effects
@strawberry.input(description="Persistent damage of a type (or `untyped`), taken at the start of a turn.")
class OrcusPersistentInput:
    type: str
    amount: int


@strawberry.input
class OrcusDefenseModInput:
    value: int
    defense: OrcusDefense | None = strawberry.field(default=None, description="Null: all defenses.")


@strawberry.input(
    description="One component of an effect: give exactly one of condition, persistent, attackMod, "
    "defenseMod, resist, vuln."
)
class OrcusComponentInput:
    condition: str | None = None
    persistent: OrcusPersistentInput | None = None
    attack_mod: int | None = None
    defense_mod: OrcusDefenseModInput | None = None
    resist: OrcusTypedValueInput | None = None
    vuln: OrcusTypedValueInput | None = None

    def as_payload(self) -> dict[str, Any]:
        given: dict[str, Any] = {}
        if self.condition is not None:
            given["condition"] = self.condition
        if self.persistent is not None:
            given["persistent"] = {"type": self.persistent.type, "amount": self.persistent.amount}
        if self.attack_mod is not None:
            given["attack_mod"] = {"value": self.attack_mod}
        if self.defense_mod is not None:
            mod: dict[str, Any] = {"value": self.defense_mod.value}
            if self.defense_mod.defense is not None:
                mod["defense"] = self.defense_mod.defense.value
            given["defense_mod"] = mod
        if self.resist is not None:
            given["resist"] = {"type": self.resist.type, "value": self.resist.value}
        if self.vuln is not None:
            given["vuln"] = {"type": self.vuln.type, "value": self.vuln.value}
        return given


def components(items: list[OrcusComponentInput]) -> list[dict[str, Any]]:
    """Each component as the fact has it; one with none or several keys is passed on as given, for
    the fold to refuse (INVALID_INPUT)."""
    return [c.as_payload() for c in items]


@strawberry.input(description="A duration (OR-17, OR-18): the anchor defaults to the target or the user.")
class OrcusDurationInput:
    kind: OrcusDurationKind
    anchor_id: strawberry.ID | None = strawberry.field(
        default=None, description="The creature whose turn times it (default: target or user, by kind)."
    )
    action: OrcusMaintainAction | None = strawberry.field(
        default=None, description="A maintained effect's action (default swift)."
    )


@strawberry.input(description="One-off damage of an aftereffect (OR-19).")
class OrcusOneOffDamageInput:
    amount: int
    types: list[str] = strawberry.field(default_factory=list)


@strawberry.input(description="What begins when the effect ends by a save or expires (OR-19, ruling 23).")
class OrcusAftereffectInput:
    name: str | None = None
    components: list[OrcusComponentInput] = strawberry.field(default_factory=list)
    duration: OrcusDurationInput | None = None
    damage: OrcusOneOffDamageInput | None = None


@strawberry.input(
    description="A First Failed Save rider (B-OR-12): applied once, at the first failed save; `instead` "
    "replaces the components. The effect keeps its id and stays save-ends unless a duration is given."
)
class OrcusFirstFailedSaveInput:
    components: list[OrcusComponentInput]
    instead: bool = False
    name: str | None = None
    duration: OrcusDurationInput | None = None


@strawberry.input(description="An effect (OR-17..OR-19).")
class OrcusEffectInput:
    components: list[OrcusComponentInput]
    duration: OrcusDurationInput
    name: str | None = None
    aftereffect: OrcusAftereffectInput | None = None
    first_failed_save: OrcusFirstFailedSaveInput | None = None
    on: OrcusEffectWhen | None = strawberry.field(
        default=None, description="In an attack's power only: Hit (default), Miss or Effect (OR-12)."
    )


# ------------------------------------------------------------------ attacks
@strawberry.input(description="A declared A4.6 circumstance, optionally counting only while a ruling holds.")
class OrcusCircumstanceInput:
    circumstance: OrcusCircumstance
    ruling: str | None = None


@strawberry.input(
    description="One target of an attack (OR-13: one attack roll per target): its d20 (default: rolled "
    "by the server), or that it chose to be hit (OR-10); the A4.6 circumstances; the critical hit "
    "bonus damage rolled for it (B-OR-5: counts only on a critical hit)."
)
class OrcusAttackTargetInput:
    target_id: strawberry.ID
    roll: DiceInput | None = None
    chose_to_be_hit: bool = False
    circumstances: list[OrcusCircumstanceInput] = strawberry.field(default_factory=list)
    modifiers: JSON | None = strawberry.field(default=None, description=MODIFIERS)
    crit_bonus: DiceInput | None = None


@strawberry.input(description="The power as declared (OR-10..OR-15).")
class OrcusAttackPowerInput:
    kind: OrcusOrigin
    defense: OrcusDefense
    name: str = "attack"
    power_id: str | None = strawberry.field(
        default=None, description="A power on the attacker's sheet: expended unless at-will (OR-9)."
    )
    attack_bonus: int = 0
    proficiency: int = strawberry.field(default=0, description="A weapon power's proficiency bonus (OR-10).")
    damage: str | None = strawberry.field(default=None, description="The damage expression, e.g. 2dW+4.")
    weapon: str | None = strawberry.field(
        default=None, description="The weapon's dice for dW, e.g. 1d10 (OR-15)."
    )
    damage_types: list[str] = strawberry.field(default_factory=list)
    miss: OrcusMissDamage = OrcusMissDamage.NONE
    effects: list[OrcusEffectInput] = strawberry.field(default_factory=list)
    auto_hit: bool = False


@strawberry.input(
    description="An attack (A4.5-A4.7): each target's d20, the damage rolled once for all (OR-13; a "
    "natural 20 deals the maximum instead, B-OR-5). Takes the attacker's standard action unless another "
    "is named."
)
class OrcusAttackInput(MutationInput):
    attacker_id: strawberry.ID
    power: OrcusAttackPowerInput
    targets: list[OrcusAttackTargetInput]
    damage: DiceInput | None = strawberry.field(
        default=None, description="The damage dice (default: the server rolls the power's damage)."
    )
    action: OrcusActionKind | None = strawberry.field(
        default=OrcusActionKind.STANDARD,
        description="The action it takes in a running encounter (null: none of the economy, e.g. a "
        "secondary attack).",
    )


# ------------------------------------------------------------------ powers, actions, action points
@strawberry.input(description="OR-9: using a power that is not an attack expends it (unless at-will).")
class OrcusUsePowerInput(MutationInput):
    character_id: strawberry.ID
    power_id: str
    action: OrcusActionKind | None = strawberry.field(
        default=OrcusActionKind.STANDARD,
        description="The action it takes in a running encounter (null: none of the economy).",
    )


@strawberry.input(
    description="B-OR-17: a d6 at the start of the creature's turns after the one it used the power in, "
    "only while it is expended."
)
class OrcusRechargeRollInput(MutationInput):
    character_id: strawberry.ID
    power_id: str
    roll: DiceInput | None = strawberry.field(default=None, description="Default: 1d6 by the server.")


@strawberry.input(description="OR-9 'Recharge if ...': the condition happened.")
class OrcusRechargeConditionInput(MutationInput):
    character_id: strawberry.ID
    power_id: str
    trigger: str = ""


@strawberry.input(
    description="OR-7 / B-OR-3: on its own turn, never in the surprise round: one more standard, move or "
    "swift action; a hero once per encounter, an elite or boss once per round."
)
class OrcusSpendActionPointInput(MutationInput):
    character_id: strawberry.ID
    extra: OrcusExtraAction


@strawberry.input(description="An action (OR-6, OR-8): a swift action, an immediate, an opportunity...")
class OrcusTakeActionInput(MutationInput):
    character_id: strawberry.ID
    action: OrcusActionKind
    name: str = ""
    substitutes_for: OrcusActionKind | None = strawberry.field(
        default=None, description="The action it is taken instead of (a move or swift for the standard...)."
    )
    gm_exception: bool = False


@strawberry.input(description="Ready an action (a standard action) with its trigger.")
class OrcusReadyActionInput(MutationInput):
    character_id: strawberry.ID
    action: str
    trigger: str


# ------------------------------------------------------------------ effects, saves, maintain
@strawberry.input(description="Put an effect on a creature (OR-17, OR-18).")
class OrcusApplyEffectInput(MutationInput):
    character_id: strawberry.ID
    effect: OrcusEffectInput
    source_id: strawberry.ID | None = strawberry.field(
        default=None, description="The creature that is the effect's user."
    )
    source: str | None = strawberry.field(
        default=None, description="A source that is not a creature (a trap): then name user-timed anchors."
    )


@strawberry.input(
    description="OR-19: d20 + bonuses, 10 or higher ends the effect (one save per effect per turn, "
    "ruling 20); the first failure applies a First Failed Save rider (B-OR-12)."
)
class OrcusSavingThrowInput(MutationInput):
    character_id: strawberry.ID
    effect_id: str
    roll: DiceInput | None = strawberry.field(default=None, description="Default: 1d20 by the server.")
    modifiers: JSON | None = strawberry.field(default=None, description=MODIFIERS)


@strawberry.input(description="OR-18 / B-OR-8: the user pays the effect's stated action on its turn.")
class OrcusMaintainEffectInput(MutationInput):
    effect_id: str
    action: OrcusMaintainAction = OrcusMaintainAction.SWIFT


@strawberry.input(
    description="End an effect: by its user's choice (a maintained effect, a free action, OR-18), or for a "
    "reason the fold cannot see (the grappler lets go, a dispel). No aftereffect either way."
)
class OrcusEndEffectInput(MutationInput):
    effect_id: str
    by_choice: bool = False
    reason: str = "gm"


@strawberry.input(description="B-OR-11: the order of the end-of-turn resolutions without a roll.")
class OrcusEndOfTurnOrderInput(MutationInput):
    character_id: strawberry.ID
    effect_ids: list[str]


# ------------------------------------------------------------------ the A4.9 placeholder pack
@strawberry.input(description="Damage that is not an attack's (a hazard...): types, resistance, then HP.")
class OrcusDealDamageInput(MutationInput):
    character_id: strawberry.ID
    roll: DiceInput | None = None
    amount: int = 0
    types: list[str] = strawberry.field(default_factory=list)
    source: str = "other"


@strawberry.input(
    description="A4.9 healing: surge values (surgeMultiplier), dice and flat healing; `requiresSurge` "
    "spends one (ruling 6: none left, it restores nothing)."
)
class OrcusHealInput(MutationInput):
    character_id: strawberry.ID
    surge_multiplier: int = 0
    roll: DiceInput | None = None
    flat: int = 0
    requires_surge: bool = False
    source: str = ""
    healer_id: strawberry.ID | None = None


@strawberry.input(description="A4.9: temporary hit points do not add up; the larger pool stays.")
class OrcusGrantTemporaryHitPointsInput(MutationInput):
    character_id: strawberry.ID
    amount: int = 0
    roll: DiceInput | None = None
    source: str = ""


@strawberry.input(description="A4.9: a hero spends a healing surge on its own, out of an encounter.")
class OrcusSpendHealingSurgeInput(MutationInput):
    character_id: strawberry.ID
    note: str = ""


@strawberry.input(description="OR-9: Rally, once per encounter (A4.9: spend a surge, regain its value).")
class OrcusRallyInput(MutationInput):
    character_id: strawberry.ID


@strawberry.input(
    description="A4.9: a dying hero's death save at the end of its turn: below 10 a failure, 20 or higher "
    "spends a surge."
)
class OrcusDeathSaveInput(MutationInput):
    character_id: strawberry.ID
    roll: DiceInput | None = strawberry.field(default=None, description="Default: 1d20 by the server.")
    modifiers: JSON | None = strawberry.field(default=None, description=MODIFIERS)


@strawberry.input(description="A4.9: a check that stabilises a dying hero (no roll: the table's ruling).")
class OrcusStabilizeInput(MutationInput):
    character_id: strawberry.ID
    healer_id: strawberry.ID | None = None
    roll: DiceInput | None = None
    dc: int | None = strawberry.field(default=None, description="Default: or.placeholder.stabilize_dc.")


@strawberry.input
class OrcusDeclareDeathInput(MutationInput):
    character_id: strawberry.ID
    cause: str


@strawberry.input(description="OR-9: a short rest recharges encounter and recharge powers (A4.9: the rest).")
class OrcusShortRestInput(MutationInput):
    character_ids: list[strawberry.ID] | None = strawberry.field(
        default=None, description="Default: every living hero."
    )
    minutes: int = 5


@strawberry.input(
    description="OR-7 / OR-9: a long rest recharges daily powers too and resets a hero's action points "
    "to 1 (A4.9: HP and surges)."
)
class OrcusLongRestInput(MutationInput):
    character_ids: list[strawberry.ID] | None = strawberry.field(
        default=None, description="Default: every living hero."
    )
    hours: int = 6
