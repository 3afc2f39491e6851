"""Rules flags: the shape every ruleset's named flags take (RULES.md adopted ruling 1).

A :class:`Flag` has its documented default, the RULES.md reference it settles, one line of
meaning and a validator ``check(name, value) -> value`` that raises ``InvalidInput`` for a
value the ruleset cannot fold. The validators below cover the usual kinds.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from domain.errors import InvalidInput

Check = Callable[[str, Any], Any]


@dataclass(frozen=True)
class Flag:
    default: Any
    ref: str
    doc: str
    check: Check


def choice(*choices: Any) -> Check:
    def check(name: str, value: Any) -> Any:
        if isinstance(value, bool) or value not in choices:
            raise InvalidInput(
                f"flag {name} must be one of {', '.join(map(str, choices))}; got {value!r}", field="value"
            )
        return value

    return check


def whole(lo: int, hi: int, nullable: bool = False) -> Check:
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
    if not isinstance(value, bool):
        raise InvalidInput(f"flag {name} must be true or false; got {value!r}", field="value")
    return value


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


def validate(flags: Mapping[str, Flag], name: str, value: Any) -> Any:
    """Check one flag's value against its ruleset's flags (unknown flag: INVALID_INPUT)."""
    flag = flags.get(name)
    if flag is None:
        raise InvalidInput(f"unknown rules flag {name!r}", field="flag")
    return flag.check(name, value)


def docs(flags: Mapping[str, Flag]) -> list[dict[str, Any]]:
    """``Ruleset.flags_doc``: every flag with its default, reference and meaning."""
    return [{"name": n, "default": f.default, "ref": f.ref, "doc": f.doc} for n, f in flags.items()]
