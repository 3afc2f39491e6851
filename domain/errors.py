"""Typed domain errors.

Every refusal carries a stable machine-readable ``code`` (documented in
``docs/errors.md`` and mirrored by the API's ``UserErrorCode`` enum), a human
message and, where one input is at fault, the ``field`` that names it.
A refused command stores nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class Lazy:
    """A refusal's details made when first read (``DomainError.details``): a refold after a
    far-reaching correction refuses tens of thousands of facts whose details nobody reads.
    ``make`` must only read what does not change afterwards."""

    __slots__ = ("_make", "_value")

    def __init__(self, make: Callable[[], Any]) -> None:
        self._make: Callable[[], Any] | None = make
        self._value: Any = None

    def get(self) -> Any:
        make = self._make
        if make is not None:
            self._value, self._make = make(), None
        return self._value


class DomainError(Exception):
    """Base class: a command was refused because of its input or the state."""

    code = "INVALID_INPUT"

    def __init__(
        self,
        message: str,
        *,
        field: str | None = None,
        code: str | None = None,
        details: dict[str, Any] | Lazy | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.field = field
        if code is not None:
            self.code = code
        # Structured facts about the refusal a client can act on (plain JSON), e.g. for
        # ROLLS_PENDING ``{"owed": [{"type", "creature", "effect_id", "kind", "dice"}, ...]}``.
        self._details = details

    @property
    def details(self) -> dict[str, Any] | None:
        d = self._details
        return d.get() if isinstance(d, Lazy) else d

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"{type(self).__name__}({self.code}: {self.message!r}, field={self.field!r})"


class InvalidInput(DomainError):
    """The input is malformed: wrong type, negative amount, unknown name."""

    code = "INVALID_INPUT"


class DiceError(DomainError):
    """A dice expression is malformed, too long, or would roll too many dice."""

    code = "INVALID_DICE"


class NotFound(DomainError):
    """A creature, encounter, effect, fact or ruling that does not exist."""

    code = "NOT_FOUND"


class RuleViolation(DomainError):
    """The rules forbid this now (a resource spent, a creature not dying, not its turn, ...).

    During a refold the same exception marks a fact as *orphaned*: its
    preconditions no longer hold after a correction.
    """

    code = "RULE_VIOLATION"


class Conflict(DomainError):
    """Another writer changed the campaign first (optimistic concurrency)."""

    code = "CONFLICT"


# Codes the core (ledger, catalogue, encounter engine) raises, with their meaning. Each ruleset
# declares the codes its own rules add (``Ruleset.error_codes``); the API's enum is their union.
CORE_CODES: dict[str, str] = {
    "INVALID_INPUT": "The input is malformed: wrong type, out of range, unknown name or fact type.",
    "INVALID_DICE": (
        "A dice expression is malformed, too long, rolls too many dice, or hand-entered faces do not fit it."
    ),
    "NOT_FOUND": (
        "No such campaign, creature, encounter, effect, fact or ruling — also what a token of another "
        "campaign gets."
    ),
    "RULE_VIOLATION": "The rules forbid this now (generic; most refusals have a more specific code below).",
    "CONFLICT": (
        "`expectedPosition` is stale, or the campaign kept changing under the command: reload and retry."
    ),
    "POSITION_OUT_OF_RANGE": "A position outside the campaign (e.g. `afterPosition` beyond the latest).",
    "ROLLS_PENDING": (
        "Rolls are owed first: the turn cannot end before the rolls it owes (a saving throw against each "
        "save-ends effect, a dying creature's death save: SW-10), nor the next round start before the rolls "
        "owed between rounds. The refusal lists them (`pendingRolls`); record them, pass their dice to "
        "`endTurn`, or ask it to roll them (`serverRolls: true`)."
    ),
    "TURN_IN_PROGRESS": "A turn is in progress: end it first (RULES.md ruling 18).",
    "INITIATIVE_PENDING": (
        "The next round's initiative is not settled yet (initiative re-rolled each round): a roll or an "
        "order choice is missing."
    ),
    "CLOCK_BACKWARDS": (
        "The in-game clock only moves forward; to fix a wrong time, amend or revoke the fact that moved it."
    ),
    "ALREADY_EXISTS": "A creature, encounter or ruling with this id already exists.",
    "ALREADY_REVOKED": "The fact is already revoked (restore it first to amend it).",
    "NOT_REVOKED": "The revocation is no longer in force.",
    "ALREADY_ROLLED": (
        "The creature already rolled initiative in this encounter, or its death save this turn."
    ),
    "BONUS_DECIDES": "The tie is broken by initiative bonus; no die or coin needed.",
    "NOT_ROLLED": "The creature has not rolled initiative.",
    "NOT_TIED": "The creatures are not tied.",
    "TIE_ORDER_WRONG": "The tie-break does not name exactly the tied creatures.",
    "ENCOUNTER_ENDED": "The encounter has ended.",
    "ENCOUNTER_NOT_RUNNING": "The encounter has no turns yet (initiative or a tie-break missing).",
    "ENCOUNTER_RUNNING": "Another encounter is running, or this needs the encounter not to be running.",
    "NOT_IN_ENCOUNTER": "The creature is not a participant of the encounter.",
    "NO_TURN": (
        "No turn is in progress (between turns: start the next one first), or no creature can take one."
    ),
    "NOT_YOUR_TURN": "It is not this creature's turn.",
    "NOT_DELAYED": "The creature is not delaying.",
    "CANNOT_DELAY": "The creature cannot delay now.",
    "NOTHING_READIED": "The creature has no readied action.",
    "OWN_TURN": "Not allowed on the creature's own turn.",
    "ALREADY_ACTED": "The creature already acted in a way that excludes this.",
    "NO_ACTION_LEFT": "The creature has no action of that kind left this turn.",
    "CREATURE_DEAD": "The creature is dead.",
    "NOT_YET": "Not yet possible.",
    "TOO_MUCH": "More than allowed (e.g. a track restored above its maximum).",
    "WRONG_ACTION": "The wrong kind of action for this.",
    "NOT_ALLOWED": ("Not allowed for this creature (e.g. a player-character option used by a monster)."),
    "NOT_ACTIVE": "The creature or effect is not active.",
    "NOT_AFFECTED": "The creature is not affected by this effect.",
    "SURPRISE_ROUND": "Not allowed in the surprise round.",
    "PROPOSAL_NOT_PENDING": (
        "The proposal was already approved, rejected or withdrawn: a proposal is decided once."
    ),
    "APPROVAL_REQUIRED": (
        "The GM wants players to propose this command (`submitProposal`) rather than do it directly "
        "(`setProposalPolicy` mode APPROVAL)."
    ),
}
