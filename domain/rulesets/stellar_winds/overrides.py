"""GM overrides (RULES.md C0.4 ``OutcomeOverridden``): the derived results a GM may set by fiat,
per fact type, each honoured by the fold. Any other field is refused with ``NOT_OVERRIDABLE``
when the override is recorded, so an override is never stored and then silently ignored.

Every fact may be kept as an orphan (``orphan: "keep"``, the core's). Per-target results of an
attack take the target's id or its index as a suffix (``hit:goblin``, ``amount:0``); without
one they apply to every target.
"""

from __future__ import annotations

from typing import Any

from domain.errors import InvalidInput, RuleViolation


def _flag(value: Any) -> bool:
    if not isinstance(value, bool):
        raise InvalidInput("this override's value is true or false", field="value")
    return value


def _whole(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 100_000:
        raise InvalidInput("this override's value is a whole number from 0", field="value")
    return int(value)


# fact type -> {field: value check}; what each means is in the handler that reads it
OVERRIDABLE: dict[str, dict[str, Any]] = {
    "AttackMade": {"hit": _flag, "crit": _flag, "amount": _whole},  # amount: damage after SW-30
    "DamageTaken": {"amount": _whole},  # the damage after SW-30, before the layers
    "HealingApplied": {"amount": _whole},  # the healing, before the healing path (SW-35)
    "SavingThrowRolled": {"success": _flag},
    "DeathSavingThrowRolled": {"total": _whole},  # the result follows from the total (SW-42)
    "StabilizationAttempted": {"success": _flag},
    "ExplosiveSaveRolled": {"success": _flag},
    "BluffForCombatAdvantageRolled": {"success": _flag},
    "EscapeAttempted": {"success": _flag},
    "FallTaken": {"amount": _whole},  # the damage after SW-30, before the layers
}


def check(fact_type: str, payload: dict[str, Any], field: str, value: Any) -> Any:
    """The override's value, checked; refused when the fold would not honour it."""
    name, _, suffix = field.partition(":")
    checks = OVERRIDABLE.get(fact_type, {})
    if name not in checks or (suffix and fact_type != "AttackMade"):
        allowed = ", ".join(sorted(checks)) or "nothing but orphan"
        raise RuleViolation(
            f"the fold does not read an override of {field!r} on {fact_type} (it may override: {allowed})",
            field="field",
            code="NOT_OVERRIDABLE",
        )
    if suffix:
        targets = [t.get("target") for t in payload.get("targets", [])]
        if suffix not in targets and not (suffix.isdigit() and int(suffix) < len(targets)):
            raise InvalidInput(
                f"{suffix!r} is not a target of this attack (an id or an index)", field="field"
            )
    return checks[name](value)


def value(ctx: Any, name: str, *suffixes: Any) -> tuple[Any, bool]:
    """The overridden value of ``name`` (most specific first: each suffix, then none), if any."""
    given = ctx.overrides
    if not given:  # the usual fact: no override at all (no key to build)
        return None, False
    for key in (*(f"{name}:{s}" for s in suffixes), name):
        if key in given:
            return given[key], True
    return None, False
