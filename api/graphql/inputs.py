"""Input objects for mutations and what-if corrections."""

from __future__ import annotations

import enum
from typing import Any

import strawberry
from strawberry.scalars import JSON

from api.graphql.enums import CreatureKind, Role
from api.graphql.errors import ChronicleError


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
class TieBreakMethod(enum.Enum):
    BONUS = "bonus"
    DIE = "die"
    COIN = "coin"


@strawberry.enum
class WoundRestoration(enum.Enum):
    MAGIC = "magic"
    MEDICAL = "medical"
    LONG_TERM_CARE = "long_term_care"


@strawberry.enum
class RevocationCascade(enum.Enum):
    FACT = "fact"  # the fact alone
    ACTION = "action"  # its whole table action (same correlation id)
    CONSEQUENCES = "consequences"  # everything caused by it


@strawberry.enum
class RulingOutcome(enum.Enum):
    UPHELD = "upheld"
    OVERTURNED = "overturned"


@strawberry.input(
    description="Dice: an expression (2d6+3, 1d20, [W]...) rolled by the server, or with the "
    "faces read off physical dice."
)
class DiceInput:
    expression: str
    faces: list[int] | None = strawberry.field(default=None, description="Entered by hand, in term order.")


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


# --------------------------------------------------------------------------- base
@strawberry.input
class MutationInput:
    campaign_id: strawberry.ID
    idempotency_key: str | None = strawberry.field(
        default=None,
        description="Retries with the same key return the original result; nothing is applied twice.",
    )
    expected_position: int | None = strawberry.field(
        default=None, description="Refuse (CONFLICT) unless the campaign is still at this position."
    )


# --------------------------------------------------------------------------- campaign & access
@strawberry.input
class CreateCampaignInput:
    name: str
    ruleset: str | None = strawberry.field(
        default=None, description="The game system (see `rulesets`); the product's default if omitted."
    )
    flags: JSON | None = None
    idempotency_key: str | None = None


@strawberry.input
class IssueAccessTokenInput:
    campaign_id: strawberry.ID
    role: Role
    character_ids: list[strawberry.ID] = strawberry.field(default_factory=list)
    label: str = ""
    idempotency_key: str | None = None


@strawberry.input
class RevokeAccessTokenInput:
    access_token_id: strawberry.ID
    idempotency_key: str | None = None


# --------------------------------------------------------------------------- creatures
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


@strawberry.input
class UpdateSheetInput(MutationInput):
    character_id: strawberry.ID
    changes: JSON
    reason: str = ""


# --------------------------------------------------------------------------- encounters
@strawberry.input
class StartEncounterInput(MutationInput):
    participant_ids: list[strawberry.ID]
    encounter_id: str | None = strawberry.field(default=None, description="Local id (default: generated).")
    name: str = ""


@strawberry.input
class DetermineSurpriseInput(MutationInput):
    encounter_id: strawberry.ID
    surprised_ids: list[strawberry.ID] = strawberry.field(default_factory=list)


@strawberry.input
class RollInitiativeInput(MutationInput):
    encounter_id: strawberry.ID
    character_id: strawberry.ID
    roll: DiceInput | None = strawberry.field(default=None, description="Default: 1d20 rolled by the server.")


@strawberry.input
class BreakInitiativeTieInput(MutationInput):
    encounter_id: strawberry.ID
    character_ids: list[strawberry.ID] = strawberry.field(description="The tied creatures, winner first.")
    method: TieBreakMethod
    rolls: JSON | None = None


@strawberry.input(
    description="A roll the turn owes (as `pendingRolls` lists it), with its dice: matched by "
    "`type`, `effectId` and `characterId` where given."
)
class OwedRollInput:
    roll: DiceInput = strawberry.field(description="The dice as rolled at the table (faces).")
    type: str | None = strawberry.field(
        default=None, description="The fact it records, e.g. SavingThrowRolled or DeathSavingThrowRolled."
    )
    effect_id: str | None = strawberry.field(
        default=None, description="The effect a saving throw is against (null: a roll against no effect)."
    )
    character_id: strawberry.ID | None = None
    modifiers: JSON | None = strawberry.field(
        default=None, description="Save modifiers, as in rollSavingThrow."
    )


@strawberry.input(
    description="End the turn in progress (RULES.md ruling 18). It records, in one table action, the "
    "rolls the turn owes (in the order given, then any the server rolls) and the end of the turn; "
    "refused with ROLLS_PENDING (listing them in `pendingRolls`) while any owed roll has no dice "
    "and `serverRolls` is false."
)
class EndTurnInput(MutationInput):
    encounter_id: strawberry.ID
    rolls: list[OwedRollInput] | None = None
    server_rolls: bool = strawberry.field(
        default=False, description="Let the server roll the owed rolls not given in `rolls`."
    )
    start_next: bool = strawberry.field(
        default=False, description="Also start the next turn (a TurnStarted fact is recorded too)."
    )


@strawberry.input(description="Start the next turn: the next creature in the order that takes one.")
class StartTurnInput(MutationInput):
    encounter_id: strawberry.ID
    character_id: strawberry.ID | None = strawberry.field(
        default=None, description="If given, refused (NOT_YOUR_TURN) unless it is this creature's turn next."
    )


@strawberry.input
class EndEncounterInput(MutationInput):
    encounter_id: strawberry.ID
    outcome: str = ""


@strawberry.input
class EncounterCreatureInput(MutationInput):
    encounter_id: strawberry.ID
    character_id: strawberry.ID


@strawberry.input
class ReadyActionInput(MutationInput):
    encounter_id: strawberry.ID
    character_id: strawberry.ID
    action: TurnAction
    trigger: str


@strawberry.input
class TriggerReadiedActionInput(MutationInput):
    encounter_id: strawberry.ID
    character_id: strawberry.ID
    trigger_character_id: strawberry.ID


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


# --------------------------------------------------------------------------- attacks and damage
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


@strawberry.input
class AttackTargetInput:
    character_id: strawberry.ID
    attack_roll: DiceInput | None = strawberry.field(default=None, description="Default: 1d20 by the server.")
    damage_roll: DiceInput | None = strawberry.field(
        default=None, description="Melee/ranged damage (default: the power's)."
    )
    circumstances: JSON | None = None
    modifiers: JSON | None = None


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
    action: str | None = None


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
class CharacterInput(MutationInput):
    character_id: strawberry.ID


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


@strawberry.input
class StabilizeInput(MutationInput):
    character_id: strawberry.ID
    healer_id: strawberry.ID | None = None
    check: DiceInput | None = None
    dc: int | None = None


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


# --------------------------------------------------------------------------- effects and saves
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


# --------------------------------------------------------------------------- resources and progress
@strawberry.input
class SpendActionPointInput(MutationInput):
    character_id: strawberry.ID
    use: str = "extra_standard"


@strawberry.input
class CharactersInput(MutationInput):
    character_ids: list[strawberry.ID]


@strawberry.input
class AwardExperienceInput(MutationInput):
    character_ids: list[strawberry.ID]
    amount: int
    reason: str = ""


@strawberry.input
class SetLevelInput(MutationInput):
    character_id: strawberry.ID
    level: int | None = strawberry.field(description="null: follow XP again.")


@strawberry.input
class ShortRestInput(MutationInput):
    participant_ids: list[strawberry.ID] | None = None
    minutes: int = 5


@strawberry.input
class ExtendedRestInput(MutationInput):
    participant_ids: list[strawberry.ID] | None = None
    hours: int = 6


@strawberry.input
class AdvanceTimeInput(MutationInput):
    minutes: int


@strawberry.input
class RollDiceInput(MutationInput):
    roll: DiceInput
    purpose: str = ""
    character_id: strawberry.ID | None = None


@strawberry.input
class AddNoteInput(MutationInput):
    text: str


@strawberry.input(description="Escape hatch: any fact of the catalogue, payload as JSON (GM only).")
class RecordFactInput(MutationInput):
    type: str
    payload: JSON


# --------------------------------------------------------------------------- corrections
@strawberry.input
class Revocation:
    position: int
    reason: str
    cascade: RevocationCascade = RevocationCascade.FACT


@strawberry.input
class Restoration:
    revocation_position: int
    reason: str = ""


@strawberry.input
class Amendment:
    position: int
    patch: JSON = strawberry.field(description="A JSON merge patch over the fact's payload.")
    reason: str


@strawberry.input
class Ruling:
    ruling_id: str
    question: str
    decision: str
    value: JSON | None = strawberry.UNSET


@strawberry.input
class RulingContest:
    ruling_id: str
    argument: str
    by: str = ""


@strawberry.input
class RulingResolution:
    ruling_id: str
    outcome: RulingOutcome
    decision: str = ""
    value: JSON | None = strawberry.UNSET


@strawberry.input
class Override:
    position: int
    field: str
    value: JSON
    reason: str


@strawberry.input
class RulesFlagChange:
    flag: str
    value: JSON
    retroactive: bool = False


@strawberry.input
class RevokeFactInput(MutationInput, Revocation):
    pass


@strawberry.input
class RestoreFactInput(MutationInput, Restoration):
    pass


@strawberry.input
class AmendFactInput(MutationInput, Amendment):
    pass


@strawberry.input
class RecordRulingInput(MutationInput, Ruling):
    pass


@strawberry.input
class ContestRulingInput(MutationInput, RulingContest):
    pass


@strawberry.input
class ResolveRulingInput(MutationInput, RulingResolution):
    pass


@strawberry.input
class OverrideOutcomeInput(MutationInput, Override):
    pass


@strawberry.input
class SetRulesFlagInput(MutationInput, RulesFlagChange):
    pass


@strawberry.input(one_of=True, description="One proposed correction (exactly one field).")
class CorrectionInput:
    revoke: Revocation | None = strawberry.UNSET
    restore: Restoration | None = strawberry.UNSET
    amend: Amendment | None = strawberry.UNSET
    record_ruling: Ruling | None = strawberry.UNSET
    resolve_ruling: RulingResolution | None = strawberry.UNSET
    override: Override | None = strawberry.UNSET
    set_rules_flag: RulesFlagChange | None = strawberry.UNSET


def _given(value: Any) -> bool:
    return value is not strawberry.UNSET


def correction_fact(spec: Any) -> tuple[str, dict[str, Any]]:
    """The fact a correction spec stands for (works for the mutation inputs too)."""
    if isinstance(spec, CorrectionInput):
        for name in (
            "revoke",
            "restore",
            "amend",
            "record_ruling",
            "resolve_ruling",
            "override",
            "set_rules_flag",
        ):
            value = getattr(spec, name)
            if _given(value) and value is not None:
                return correction_fact(value)
        raise ChronicleError("INVALID_INPUT", "a correction needs exactly one field", "corrections")
    if isinstance(spec, Revocation):
        return "FactRevoked", {"target": spec.position, "reason": spec.reason, "cascade": spec.cascade.value}
    if isinstance(spec, Restoration):
        return "FactRestored", {"revocation": spec.revocation_position, "reason": spec.reason}
    if isinstance(spec, Amendment):
        return "FactAmended", {"target": spec.position, "patch": spec.patch, "reason": spec.reason}
    if isinstance(spec, Ruling):
        p: dict[str, Any] = {
            "ruling_id": spec.ruling_id,
            "question": spec.question,
            "decision": spec.decision,
        }
        if _given(spec.value):
            p["value"] = spec.value
        return "RulingRecorded", p
    if isinstance(spec, RulingContest):
        return "RulingContested", {"ruling_id": spec.ruling_id, "argument": spec.argument, "by": spec.by}
    if isinstance(spec, RulingResolution):
        p = {"ruling_id": spec.ruling_id, "outcome": spec.outcome.value, "decision": spec.decision}
        if _given(spec.value):
            p["value"] = spec.value
        return "RulingResolved", p
    if isinstance(spec, Override):
        return "OutcomeOverridden", {
            "target": spec.position,
            "field": spec.field,
            "value": spec.value,
            "reason": spec.reason,
        }
    if isinstance(spec, RulesFlagChange):
        return "RulesFlagSet", {"flag": spec.flag, "value": spec.value, "retroactive": spec.retroactive}
    raise AssertionError(f"not a correction: {spec!r}")  # pragma: no cover
