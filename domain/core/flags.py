"""Rules flags: named, documented switches for every PROPOSAL / default a ruleset adopts.

RULES.md ruling 1: every PROPOSAL and 4E-DEFAULT is adopted as the default behind a named
flag, so a table can change it with a ``RulesFlagSet`` fact without rewriting history. Each
ruleset declares its flags as a ``dict[str, Flag]`` (name -> default, RULES.md reference,
meaning, validator) and uses the helpers here for its ``flag_defaults``, ``validate_flag``
and ``flags_doc``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from domain.errors import InvalidInput

Check = Callable[[str, Any], Any]  # (flag name, value) -> normalised value, or InvalidInput


@dataclass(frozen=True)
class Flag:
    default: Any
    ref: str
    doc: str
    check: Check


def choice(*choices: Any) -> Check:
    """One of the given values."""

    def check(name: str, value: Any) -> Any:
        if not any(type(value) is type(c) and value == c for c in choices):
            raise InvalidInput(
                f"flag {name} must be one of {', '.join(map(str, choices))}; got {value!r}", field="value"
            )
        return value

    return check


def whole(lo: int, hi: int, nullable: bool = False) -> Check:
    """A whole number from ``lo`` to ``hi`` (or null when ``nullable``)."""

    def check(name: str, value: Any) -> Any:
        if value is None and nullable:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
            raise InvalidInput(
                f"flag {name} must be a whole number from {lo} to {hi}"
                + (" (or null)" if nullable else "")
                + f"; got {value!r}",
                field="value",
            )
        return value

    return check


def boolean(name: str, value: Any) -> Any:
    """True or false."""
    if not isinstance(value, bool):
        raise InvalidInput(f"flag {name} must be true or false; got {value!r}", field="value")
    return value


def either(*checks: Check) -> Check:
    """The first check that accepts the value wins; the last one's refusal is reported."""

    def check(name: str, value: Any) -> Any:
        error: InvalidInput | None = None
        for one in checks:
            try:
                return one(name, value)
            except InvalidInput as err:
                error = err
        assert error is not None
        raise error

    return check


def names(pattern: str = "lowercase words") -> Check:
    """A non-empty list of distinct lowercase names (e.g. the damage types a game knows)."""

    def check(name: str, value: Any) -> Any:
        if (
            not isinstance(value, list)
            or not value
            or len(value) > 100
            or not all(isinstance(v, str) and v.replace("_", "").isalpha() and v.islower() for v in value)
            or len(set(value)) != len(value)
        ):
            raise InvalidInput(
                f"flag {name} must be a list of distinct {pattern}; got {value!r}", field="value"
            )
        return list(value)

    return check


def defaults(flags: Mapping[str, Flag]) -> dict[str, Any]:
    return {name: flag.default for name, flag in flags.items()}


def validate(flags: Mapping[str, Flag], name: str, value: Any) -> Any:
    flag = flags.get(name)
    if flag is None:
        raise InvalidInput(f"unknown rules flag {name!r}", field="flag")
    return flag.check(name, value)


def document(flags: Mapping[str, Flag]) -> list[dict[str, Any]]:
    """``flags_doc`` of the Ruleset protocol."""
    return [{"name": n, "default": f.default, "ref": f.ref, "doc": f.doc} for n, f in flags.items()]
