"""Input objects for mutations and what-if corrections."""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Any

import strawberry
from strawberry.scalars import JSON

from api.graphql.enums import Role
from api.graphql.errors import ChronicleError
from domain import dice as dice_rules
from domain.errors import DiceError


@strawberry.enum
class TieBreakMethod(enum.Enum):
    BONUS = "bonus"
    DIE = "die"
    COIN = "coin"


@strawberry.enum
class RevocationCascade(enum.Enum):
    FACT = "fact"  # the fact alone
    ACTION = "action"  # its whole table action (same correlation id)
    CONSEQUENCES = "consequences"  # everything caused by it


@strawberry.enum
class RulingOutcome(enum.Enum):
    UPHELD = "upheld"
    OVERTURNED = "overturned"


@strawberry.input(description="An in-game reroll of one die: its index (from 0, in term order) and new face.")
class DieRerollInput:
    index: int
    face: int
    reason: str = ""


@strawberry.input(
    description="Dice: an expression (2d6+3, 1d20, [W]...) rolled by the server, or with the "
    "faces read off physical dice."
)
class DiceInput:
    expression: str
    faces: list[int] | None = strawberry.field(default=None, description="Entered by hand, in term order.")
    rerolls: list[DieRerollInput] | None = strawberry.field(
        default=None,
        description="In-game rerolls of these dice, in order (a power that rerolls a die; C0.3): each "
        "is recorded as a DiceRerolled fact before the fact that uses the roll. Only where a "
        "command says it takes them.",
    )


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
    dice: list[DiceInput] | None = strawberry.field(
        default=None,
        description="Method DIE: each tied creature's die as rolled at the table (expression and "
        "faces), in the order of characterIds.",
    )
    rolls: JSON | None = strawberry.field(
        default=None,
        description="The stored roll records, one per creature (prefer `dice`).",
        deprecation_reason="Give `dice`: expression and faces per creature.",
    )


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
class TriggerReadiedActionInput(MutationInput):
    encounter_id: strawberry.ID
    character_id: strawberry.ID
    trigger_character_id: strawberry.ID


# --------------------------------------------------------------------------- attacks and damage


@strawberry.input
class CharacterInput(MutationInput):
    character_id: strawberry.ID


# --------------------------------------------------------------------------- effects and saves


# --------------------------------------------------------------------------- resources and progress


@strawberry.input
class CharactersInput(MutationInput):
    character_ids: list[strawberry.ID]


@strawberry.input
class AdvanceTimeInput(MutationInput):
    minutes: int


@strawberry.input(description="Set the in-game clock to a day and hour (day 1 is the campaign's first).")
class SetTimeInput(MutationInput):
    day: int
    hour: int
    minute: int = 0


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


@strawberry.input(
    description="One die of a stored roll by its index (every die of the roll in term order, dropped "
    "dice included, from 0) and the face it really showed."
)
class DieFaceInput:
    index: int
    face: int


@strawberry.input(
    description="Change a fact's inputs, keeping its place: a die face with `dice` (the roll as it "
    "should have been: expression and faces) or `die` (one die by its index), anything else with "
    "`patch`. Give exactly one of them."
)
class Amendment:
    position: int
    reason: str
    patch: JSON | None = strawberry.field(
        default=None, description="A JSON merge patch over the fact's payload."
    )
    dice: DiceInput | None = strawberry.field(
        default=None, description="The roll as it should have been: its expression and all its faces."
    )
    die: DieFaceInput | None = strawberry.field(default=None, description="One die's corrected face.")
    roll: str | None = strawberry.field(
        default=None,
        description="Which roll of the fact `dice` or `die` corrects, as a path in its payload "
        "(`roll`, `damage`, `targets.0.roll`); needed only when the fact holds more than one roll.",
    )


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


def correction_fact(
    spec: Any, payload_of: Callable[[int], dict[str, Any]] | None = None
) -> tuple[str, dict[str, Any]]:
    """The fact a correction spec stands for (works for the mutation inputs too). ``payload_of``
    reads a stored fact's payload (as amended so far): an amendment by dice needs it."""
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
                return correction_fact(value, payload_of)
        raise ChronicleError("INVALID_INPUT", "a correction needs exactly one field", "corrections")
    if isinstance(spec, Revocation):
        return "FactRevoked", {"target": spec.position, "reason": spec.reason, "cascade": spec.cascade.value}
    if isinstance(spec, Restoration):
        return "FactRestored", {"revocation": spec.revocation_position, "reason": spec.reason}
    if isinstance(spec, Amendment):
        patch = amendment_patch(spec, payload_of)
        return "FactAmended", {"target": spec.position, "patch": patch, "reason": spec.reason}
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


# --------------------------------------------------------------------------- amendments by dice
def amendment_patch(spec: Amendment, payload_of: Callable[[int], dict[str, Any]] | None) -> Any:
    """The JSON merge patch an amendment stands for: its own ``patch``, or the one that puts the
    corrected roll (``dice``, or ``die`` over the stored roll) in place of the stored roll."""
    given = [name for name in ("patch", "dice", "die") if getattr(spec, name) is not None]
    if len(given) != 1:
        raise ChronicleError("INVALID_INPUT", "give exactly one of patch, dice or die", "patch")
    if spec.patch is not None:
        if spec.roll is not None:
            raise ChronicleError("INVALID_INPUT", "roll names the roll that dice or die correct", "roll")
        return spec.patch
    if payload_of is None:  # pragma: no cover - every caller reads the ledger
        raise ChronicleError("INVALID_INPUT", "a correction by dice needs the stored fact", "dice")
    payload = payload_of(spec.position)
    path = _roll_path(payload, spec.roll)
    stored = _at(payload, path)
    if spec.dice is not None:
        if spec.dice.rerolls:
            raise ChronicleError("INVALID_INPUT", "a correction gives the faces, not rerolls", "dice")
        if spec.dice.faces is None:
            raise ChronicleError("INVALID_INPUT", "a corrected roll gives its faces", "dice")
        corrected = dice_rules.roll(spec.dice.expression, faces=spec.dice.faces)
    else:
        try:
            corrected = {**dice_rules.with_face(stored, spec.die.index, spec.die.face), "manual": True}
        except DiceError as err:
            raise ChronicleError("INVALID_DICE", str(err), "die") from err
    return _merge_diff(payload, _put(payload, path, corrected))


def roll_paths(value: Any, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Where the roll records of a payload are, in payload order."""
    if isinstance(value, dict):
        if "expression" in value and "terms" in value:
            return [path]
        return [p for key, item in value.items() for p in roll_paths(item, (*path, str(key)))]
    if isinstance(value, list):
        return [p for i, item in enumerate(value) for p in roll_paths(item, (*path, str(i)))]
    return []


def _roll_path(payload: dict[str, Any], named: str | None) -> tuple[str, ...]:
    paths = roll_paths(payload)
    listed = ", ".join(".".join(p) for p in paths)
    if named is not None:
        path = tuple(named.split("."))
        if path not in paths:
            raise ChronicleError(
                "INVALID_INPUT", f"the fact has no roll at {named!r} (its rolls: {listed or 'none'})", "roll"
            )
        return path
    if not paths:
        raise ChronicleError("INVALID_INPUT", "the fact holds no roll: amend it with patch", "position")
    if len(paths) > 1:
        raise ChronicleError("INVALID_INPUT", f"the fact holds several rolls: name one of {listed}", "roll")
    return paths[0]


def _at(value: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        value = value[int(key)] if isinstance(value, list) else value[key]
    return value


def _put(value: Any, path: tuple[str, ...], new: Any) -> Any:
    """A copy of ``value`` with ``new`` at ``path`` (the rest shared)."""
    if not path:
        return new
    key, rest = path[0], path[1:]
    if isinstance(value, list):
        i = int(key)
        return [*value[:i], _put(value[i], rest, new), *value[i + 1 :]]
    return {**value, key: _put(value[key], rest, new)}


def _merge_diff(old: Any, new: Any) -> Any:
    """The JSON merge patch (RFC 7396) that turns ``old`` into ``new`` (lists go whole)."""
    if not (isinstance(old, dict) and isinstance(new, dict)):
        return new
    patch: dict[str, Any] = {k: _merge_diff(old.get(k), v) for k, v in new.items() if old.get(k) != v}
    patch.update({k: None for k in old if k not in new})
    return patch
