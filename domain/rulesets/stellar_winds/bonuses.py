"""Bonus types (SW-17): bonuses of the same type do not add, only the highest applies; untyped
bonuses add; penalties have no types and all add (RULES.md SW-17, 4E-DEFAULT completion of the
cut panel at 000 L138; flag ``sw.bonus_stacking``).

A modifier part is ``{"source": ..., "value": n, "type"?: t}``. :func:`stack` is the one
implementation: every attack total, defense and saving throw goes through it. A bonus that does
not stack stays in the breakdown with value 0, ``type`` and ``does_not_stack`` (its own value),
so the outcome shows why the total is what it is.
"""

from __future__ import annotations

from typing import Any

from domain.errors import InvalidInput

# The bonus types of the 4e rules Stellar Winds was adapted from (001 L337-348).
BONUS_TYPES = ("enhancement", "feat", "item", "power", "proficiency", "racial", "shield")


def check_type(value: Any, field: str) -> None:
    """A declared bonus type: absent, ``untyped`` or one of :data:`BONUS_TYPES`."""
    if value is not None and value != "untyped" and value not in BONUS_TYPES:
        raise InvalidInput(f"a bonus type is one of untyped, {', '.join(BONUS_TYPES)} (SW-17)", field=field)


def stack(parts: list[dict[str, Any]], flags: dict[str, Any]) -> list[dict[str, Any]]:
    """The parts as they count: per bonus type only the highest bonus (the first of equal ones)."""
    if flags.get("sw.bonus_stacking", "highest_per_type") != "highest_per_type":
        return parts
    for p in parts:
        if "type" in p:
            break
    else:  # no typed part at all (the usual breakdown): every part counts as it is
        return list(parts)
    best: dict[str, int] = {}
    for i, p in enumerate(parts):
        kind = p.get("type")
        if not isinstance(kind, str) or kind == "untyped" or int(p["value"]) <= 0:
            continue
        if kind not in best or int(p["value"]) > int(parts[best[kind]]["value"]):
            best[kind] = i
    if not best:  # no typed bonus (the usual breakdown): every part counts as it is
        return list(parts)
    out = []
    for i, p in enumerate(parts):
        kind = p.get("type")
        if kind in best and best[kind] != i and int(p["value"]) > 0:
            winner = parts[best[kind]]
            out.append(
                {
                    **p,
                    "value": 0,
                    "does_not_stack": p["value"],
                    "why": f"a {kind} bonus does not stack with {winner['source']}'s (SW-17)",
                }
            )
        else:
            out.append(p)
    return out


def declared(
    modifiers: list[dict[str, Any]], holds: Any, flags: dict[str, Any], field: str = "modifiers"
) -> list[dict[str, Any]]:
    """Declared roll modifiers ``{source?, value, type?, ruling?}`` as they count: those whose ruling
    holds (``holds(modifier)``), stacked by type."""
    parts = []
    for m in modifiers:
        check_type(m.get("type"), field)
        if holds(m):
            part = {"source": str(m.get("source", "modifier")), "value": int(m.get("value", 0))}
            if m.get("type") not in (None, "untyped"):
                part["type"] = m["type"]
            parts.append(part)
    return stack(parts, flags)


def total(parts: list[dict[str, Any]]) -> int:
    out = 0
    for p in parts:  # (a loop, not sum() over a generator: every defense and save asks)
        out += int(p["value"])
    return out
