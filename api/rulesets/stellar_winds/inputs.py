"""Stellar Winds' GraphQL inputs: sheets, attacks, damage and healing, effects, rests."""

from __future__ import annotations

import enum

import strawberry
from strawberry.scalars import JSON

from api.graphql.enums import CreatureKind
from api.graphql.inputs import DiceInput, MutationInput
from api.rulesets.stellar_winds.gear import AmmoInput, SheetPowerInput


@strawberry.enum
class AttackKind(enum.Enum):
    MELEE = "melee"
    RANGED = "ranged"
    CLOSE = "close"
    AREA = "area"


@strawberry.enum
class DefenseName(enum.Enum):
    AC = "ac"
    FORT = "fort"
    REF = "ref"
    WILL = "will"


@strawberry.enum
class MissEffect(enum.Enum):
    NONE = "none"
    HALF = "half"


@strawberry.enum(description="A bonus type (SW-17): bonuses of one type do not add, the highest applies.")
class BonusType(enum.Enum):
    UNTYPED = "untyped"
    ENHANCEMENT = "enhancement"
    FEAT = "feat"
    ITEM = "item"
    POWER = "power"
    PROFICIENCY = "proficiency"
    RACIAL = "racial"
    SHIELD = "shield"


@strawberry.input(
    description="A declared modifier of a roll (C0.3): its value (a penalty is negative and has no "
    "type), its bonus type, where it comes from, and the ruling it relies on, if any."
)
class ModifierInput:
    value: int
    source: str = "modifier"
    type: BonusType = BonusType.UNTYPED
    ruling: str | None = strawberry.field(default=None, description="The ruling it cites (C0.2 ruling_refs).")


TYPED_MODIFIERS = "Typed modifiers (prefer these to the JSON `modifiers`; give one or the other)."


@strawberry.enum
class ActionType(enum.Enum):
    STANDARD = "standard"
    MOVE = "move"
    MINOR = "minor"
    FREE = "free"
    IMMEDIATE = "immediate"
    OPPORTUNITY = "opportunity"


@strawberry.enum
class TurnAction(enum.Enum):
    STANDARD = "standard"
    MOVE = "move"
    MINOR = "minor"


@strawberry.enum(description="Why a healing surge was spent on its own.")
class HealingSurgeCause(enum.Enum):
    SHORT_REST = "short_rest"
    EXTENDED_REST = "extended_rest"
    POWER = "power"
    CONSUMABLE = "consumable"
    OTHER = "other"


@strawberry.enum
class WoundRestoration(enum.Enum):
    MAGIC = "magic"
    MEDICAL = "medical"
    LONG_TERM_CARE = "long_term_care"


@strawberry.input
class DefensesInput:
    ac: int
    fort: int
    ref: int
    will: int


@strawberry.input
class AbilitiesInput:
    strength: int = 10
    constitution: int = 10
    dexterity: int = 10
    intelligence: int = 10
    wisdom: int = 10
    charisma: int = 10

    def as_payload(self) -> dict[str, int]:
        return {
            "str": self.strength,
            "con": self.constitution,
            "dex": self.dexterity,
            "int": self.intelligence,
            "wis": self.wisdom,
            "cha": self.charisma,
        }


@strawberry.input
class RegisterCreatureInput(MutationInput):
    name: str
    kind: CreatureKind
    level: int
    max_hp: int
    defenses: DefensesInput
    abilities: AbilitiesInput = strawberry.field(default_factory=AbilitiesInput)
    creature_id: str | None = strawberry.field(default=None, description="Local id (default: from the name).")
    surges_per_day: int = 0
    speed: int = 6
    resist: JSON | None = None
    vuln: JSON | None = None
    regeneration: int = 0
    crit_min: int = 20
    heroic: bool = False
    xp: int | None = None
    initiative_misc: int = 0
    max_wounds: int | None = None
    second_wind: bool | None = None
    powers: list[SheetPowerInput] = strawberry.field(
        default_factory=list, description="C1.1: the sheet's powers (at will, encounter, daily)."
    )
    action_points: int | None = strawberry.field(
        default=None,
        description="SW-14: a PC starts with 1; a monster has what its sheet says (default none).",
    )
    action_points_per_encounter: int = strawberry.field(
        default=1, description="SW-15: how many it may spend per encounter (some monsters more than one)."
    )
    ammo: list[AmmoInput] = strawberry.field(
        default_factory=list, description="C1.1 ammunition per weapon id."
    )


@strawberry.input
class UpdateSheetInput(MutationInput):
    character_id: strawberry.ID
    changes: JSON
    reason: str = ""


@strawberry.input
class ReadyActionInput(MutationInput):
    encounter_id: strawberry.ID
    character_id: strawberry.ID
    action: TurnAction
    trigger: str


@strawberry.input
class TakeActionInput(MutationInput):
    character_id: strawberry.ID
    action: ActionType
    encounter_id: strawberry.ID | None = None
    name: str = ""
    substitutes_for: TurnAction | None = None
    gm_exception: bool = strawberry.field(
        default=False, description="GM only: allow what the economy refuses."
    )


@strawberry.input
class PowerInput:
    kind: AttackKind
    defense: DefenseName
    attack_bonus: int
    name: str = "attack"
    damage: str | None = strawberry.field(default=None, description="Damage dice, e.g. 1[W]+4 or 2d6+3.")
    weapon: str | None = strawberry.field(default=None, description="The weapon's die for [W], e.g. 1d8.")
    damage_types: list[str] = strawberry.field(default_factory=list)
    miss: MissEffect = MissEffect.NONE
    effects: JSON | None = None
    power_id: str | None = strawberry.field(
        default=None,
        description="The power on the attacker's sheet: an encounter or daily power is expended.",
    )
    weapon_id: str | None = strawberry.field(
        default=None, description="The weapon whose ammunition the attack spends (C1.1 ammo)."
    )
    rounds: int | None = strawberry.field(default=None, description="Rounds it spends (default 1).")


@strawberry.input
class AttackTargetInput:
    character_id: strawberry.ID
    attack_roll: DiceInput | None = strawberry.field(default=None, description="Default: 1d20 by the server.")
    damage_roll: DiceInput | None = strawberry.field(
        default=None, description="Melee/ranged damage (default: the power's)."
    )
    circumstances: JSON | None = None
    modifiers: JSON | None = None
    typed_modifiers: list[ModifierInput] | None = strawberry.field(default=None, description=TYPED_MODIFIERS)
    adjacent: bool | None = strawberry.field(
        default=None,
        description="Whether the attacker is adjacent to this target (ruling 19; default: adjacent for "
        "melee, not adjacent otherwise). Prone's +2 defenses hold only against ranged attacks from "
        "non-adjacent attackers.",
    )


@strawberry.input
class AttackInput(MutationInput):
    attacker_id: strawberry.ID
    power: PowerInput
    targets: list[AttackTargetInput]
    damage_roll: DiceInput | None = strawberry.field(
        default=None, description="Close/area damage, rolled once for all targets."
    )
    nonlethal: bool = False
    coup_de_grace: bool = False
    action: str | None = strawberry.field(
        default=None,
        description="The attacker's action in a running encounter: standard by default; move, minor, free, "
        "immediate or opportunity; 'none' when the attack uses no action of its own.",
    )


@strawberry.input
class DealDamageInput(MutationInput):
    character_id: strawberry.ID
    roll: DiceInput | None = None
    amount: int = 0
    types: list[str] = strawberry.field(default_factory=list)
    wounding: bool = False
    source: str = "other"
    nonlethal: bool = False
    half: bool = False


@strawberry.input
class HealInput(MutationInput):
    character_id: strawberry.ID
    healer_id: strawberry.ID | None = None
    surge_multiplier: int = 0
    roll: DiceInput | None = None
    flat: int = 0
    magical: bool = False
    requires_surge: bool = False
    source: str = ""


@strawberry.input
class GrantTemporaryHitPointsInput(MutationInput):
    character_id: strawberry.ID
    amount: int = 0
    roll: DiceInput | None = None
    source: str = ""


@strawberry.input
class SpendHealingSurgeInput(MutationInput):
    character_id: strawberry.ID
    cause: HealingSurgeCause = HealingSurgeCause.SHORT_REST
    note: str = strawberry.field(default="", description="Free words, e.g. what the power was.")


@strawberry.input
class DeathSaveInput(MutationInput):
    character_id: strawberry.ID
    roll: DiceInput | None = strawberry.field(default=None, description="Default: 1d20 by the server.")
    modifiers: JSON | None = None
    typed_modifiers: list[ModifierInput] | None = strawberry.field(default=None, description=TYPED_MODIFIERS)


@strawberry.input
class StabilizeInput(MutationInput):
    character_id: strawberry.ID
    healer_id: strawberry.ID | None = None
    check: DiceInput | None = None
    dc: int | None = None
    action: str | None = strawberry.field(
        default=None,
        description="The healer's action in a running encounter: standard by default (first aid, B-SW-10); "
        "'none' when it uses no action of its own.",
    )


@strawberry.input
class RestoreWoundsInput(MutationInput):
    character_id: strawberry.ID
    amount: int
    method: WoundRestoration
    caregiver_id: strawberry.ID | None = None


@strawberry.input
class DeclareDeathInput(MutationInput):
    character_id: strawberry.ID
    cause: str


@strawberry.input
class RaiseCreatureInput(MutationInput):
    character_id: strawberry.ID
    means: str
    hp: int = 1
    wounds: int = 1


@strawberry.input(
    description="An effect: components (condition, ongoing, defense_mod, attack_mod, resist, vuln, "
    "regeneration) and a duration {kind, anchor, ...}."
)
class EffectSpecInput:
    components: JSON
    name: str = "effect"
    duration: JSON | None = None
    aftereffect: JSON | None = None
    beneficial: bool = False
    key: str | None = strawberry.field(
        default=None,
        description="A client-chosen key that becomes the effect's id (effectId), so the app can "
        "name the effect in rollSavingThrow, sustainEffect or endEffect without reading it back. "
        "Unique among the campaign's active effects (EFFECT_KEY_TAKEN); not of the form e<number>.",
    )


@strawberry.input
class ApplyEffectInput(MutationInput):
    character_id: strawberry.ID
    effect: EffectSpecInput
    source_character_id: strawberry.ID | None = None
    source: str | None = strawberry.field(default=None, description="The source when it is not a creature.")


@strawberry.input
class SustainEffectInput(MutationInput):
    effect_id: str
    action: TurnAction = TurnAction.MINOR


@strawberry.input
class EndEffectInput(MutationInput):
    effect_id: str
    reason: str = "gm"


@strawberry.input
class SavingThrowInput(MutationInput):
    character_id: strawberry.ID
    effect_id: str
    roll: DiceInput | None = strawberry.field(default=None, description="Default: 1d20 by the server.")
    modifiers: JSON | None = None
    typed_modifiers: list[ModifierInput] | None = strawberry.field(default=None, description=TYPED_MODIFIERS)


@strawberry.input
class SpendActionPointInput(MutationInput):
    character_id: strawberry.ID
    use: str = "extra_standard"


@strawberry.input
class AwardExperienceInput(MutationInput):
    character_ids: list[strawberry.ID]
    amount: int
    reason: str = ""


@strawberry.input
class SetLevelInput(MutationInput):
    character_id: strawberry.ID
    level: int | None = strawberry.field(description="null: follow XP again.")


@strawberry.input(description="How many healing surges one creature spends during a short rest (SW-49).")
class SurgeSpendInput:
    character_id: strawberry.ID
    surges: int = strawberry.field(default=1, description="Surges spent, each restoring its value in HP.")


@strawberry.input
class ShortRestInput(MutationInput):
    participant_ids: list[strawberry.ID] | None = None
    minutes: int = 5
    surge_spends: list[SurgeSpendInput] | None = strawberry.field(
        default=None,
        description=(
            "The surges each creature spends during the rest (SW-49), recorded with the rest as one "
            "table action: a refusal of any spend (no surge left, ...) stores nothing."
        ),
    )


@strawberry.input
class ExtendedRestInput(MutationInput):
    participant_ids: list[strawberry.ID] | None = None
    hours: int = 6


@strawberry.input
class KnockProneInput(MutationInput):
    character_id: strawberry.ID
    source_character_id: strawberry.ID | None = strawberry.field(
        default=None, description="Who knocked it prone (its power or shove); default: the GM's ruling."
    )


@strawberry.input
class ExplosiveSaveInput(MutationInput):
    character_id: strawberry.ID
    dc: int = strawberry.field(description="The explosive's DC (B-SW-20).")
    roll: DiceInput | None = strawberry.field(
        default=None, description="The save's d20. Default: by the server."
    )
    damage_roll: DiceInput | None = strawberry.field(default=None, description="The explosive's damage dice.")
    amount: int = 0
    types: list[str] = strawberry.field(default_factory=list)
    explosive: str = ""
    modifiers: JSON | None = None
    typed_modifiers: list[ModifierInput] | None = strawberry.field(default=None, description=TYPED_MODIFIERS)
