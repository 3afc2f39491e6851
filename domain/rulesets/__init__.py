"""Rulesets: each owns every number that differs between systems.

A ruleset reads ruleset-neutral facts and folds them into its own state.
Stellar Winds is the default; Orcus, the hero's-surge game and the d20 house
rules plug in here as further entries of ``RULESETS``.
"""

from __future__ import annotations

from typing import Any, Protocol

from domain.errors import InvalidInput


class State(Protocol):
    flags: dict[str, Any]

    def clone(self) -> State: ...


class Context(Protocol):
    """What the fold tells a rule handler about the fact being applied."""

    seq: int
    meta: dict[str, Any]
    overrides: dict[str, Any]
    waived: bool

    def ruling_holds(self, ruling_id: str) -> bool: ...

    def ruling_value(self, ruling_id: str) -> Any: ...


class Ruleset(Protocol):
    id: str
    title: str
    flag_defaults: dict[str, Any]
    @property
    def fact_types(self) -> frozenset[str]: ...

    def initial_state(self, flags: dict[str, Any]) -> Any: ...

    def apply(self, state: Any, fact_type: str, payload: dict[str, Any], ctx: Context) -> dict[str, Any]:
        """Apply one fact to ``state`` in place and return its outcome.

        Raises ``RuleViolation`` *before mutating anything* when the fact's
        preconditions do not hold: the command is refused, or during a refold
        the fact is orphaned.
        """
        ...

    def validate_flag(self, flag: str, value: Any) -> Any: ...

    def summary(self, state: Any) -> dict[str, Any]:
        """A JSON-able view of the whole state (used for diffs and exports)."""
        ...


_REGISTRY: dict[str, Ruleset] = {}


def register(ruleset: Ruleset) -> Ruleset:
    _REGISTRY[ruleset.id] = ruleset
    return ruleset


def get_ruleset(ruleset_id: str) -> Ruleset:
    _load_builtin()
    try:
        return _REGISTRY[ruleset_id]
    except KeyError:
        known = ", ".join(sorted(_REGISTRY))
        raise InvalidInput(f"unknown ruleset {ruleset_id!r} (known: {known})", field="ruleset") from None


def available() -> list[str]:
    _load_builtin()
    return sorted(_REGISTRY)


def _load_builtin() -> None:
    if not _REGISTRY:
        from domain.rulesets import stellar_winds  # noqa: F401  (registers itself)
