"""Small rule-handler helpers every ruleset needs, whatever its game system.

* :func:`owned`: a creature of the state, as the state's own copy (copy-on-write), or NOT_FOUND;
* :func:`require`: a precondition, checked *before* anything changes: it refuses the command
  (or, during a refold, orphans the fact) with a typed code unless the GM waived it with an
  ``OutcomeOverridden`` of ``orphan = keep``;
* :func:`declared_modifiers`: the situational modifiers a table declares on a roll
  (``{"source", "value", "ruling"?}``), keeping those whose cited ruling holds, so that an
  overturned ruling changes the total on the next fold;
* :func:`ability_modifier`: the d20 family's ``floor((score - 10) / 2)``.

Nothing here knows a game system's numbers: what a critical hit or a dying creature is
stays in each ruleset (RULES.md B-X-5: one attack resolver per system).
"""

from __future__ import annotations

from typing import Any

from domain.errors import InvalidInput, NotFound, RuleViolation

MAX_MODIFIER = 1000


def owned(state: Any, cid: Any, field: str = "creature") -> Any:
    """The creature ``cid`` as ``state``'s own copy (safe to change), or NOT_FOUND."""
    if not isinstance(cid, str) or cid not in state.creatures:
        raise NotFound(f"no creature {cid!r} in this campaign", field=field)
    return state.own(cid)


def peek(state: Any, cid: Any, field: str = "creature") -> Any:
    """The creature ``cid`` without taking a copy (read only), or NOT_FOUND."""
    if not isinstance(cid, str) or cid not in state.creatures:
        raise NotFound(f"no creature {cid!r} in this campaign", field=field)
    return state.creatures[cid]


def require(ok: bool, message: str, code: str, ctx: Any, field: str | None = None) -> None:
    """A precondition: refuse (or orphan) unless the GM waived it with an override."""
    if not ok and not getattr(ctx, "waived", False):
        raise RuleViolation(message, field=field, code=code)


def declared_modifiers(mods: Any, ctx: Any, field: str = "modifiers") -> list[dict[str, Any]]:
    """The declared modifiers that apply: each ``{"source", "value", "ruling"?}`` with a whole
    value; one citing a ruling counts only while the ruling holds (RULES.md C0.4)."""
    if mods is None:
        return []
    if not isinstance(mods, list):
        raise InvalidInput("modifiers must be a list of {source, value, ruling?}", field=field)
    out: list[dict[str, Any]] = []
    for mod in mods:
        value = mod.get("value") if isinstance(mod, dict) else None
        if isinstance(value, bool) or not isinstance(value, int) or abs(value) > MAX_MODIFIER:
            raise InvalidInput(
                "each modifier is {source, value, ruling?} with a whole-number value", field=field
            )
        unknown = set(mod) - {"source", "value", "ruling"}
        if unknown:
            raise InvalidInput(f"a modifier has unknown field(s) {', '.join(sorted(unknown))}", field=field)
        rid = mod.get("ruling")
        if rid is not None and not isinstance(rid, str):
            raise InvalidInput("a modifier's ruling is a ruling id", field=field)
        if rid is None or ctx.ruling_holds(rid):
            out.append(
                {
                    "source": str(mod.get("source", "modifier")),
                    "value": value,
                    **({"ruling": rid} if rid else {}),
                }
            )
    return out


def ability_modifier(score: int) -> int:
    """The d20 family's ability modifier: ``(score - 10) / 2`` rounded down."""
    return (score - 10) // 2
