"""Typed domain errors.

Every refusal carries a stable machine-readable ``code`` (documented in
``docs/errors.md`` and mirrored by the API's ``UserErrorCode`` enum), a human
message and, where one input is at fault, the ``field`` that names it.
A refused command stores nothing.
"""

from __future__ import annotations


class DomainError(Exception):
    """Base class: a command was refused because of its input or the state."""

    code = "INVALID_INPUT"

    def __init__(self, message: str, *, field: str | None = None, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field
        if code is not None:
            self.code = code

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
    """The rules forbid this now (no surge left, action point locked, ...).

    During a refold the same exception marks a fact as *orphaned*: its
    preconditions no longer hold after a correction.
    """

    code = "RULE_VIOLATION"


class Conflict(DomainError):
    """Another writer changed the campaign first (optimistic concurrency)."""

    code = "CONFLICT"
