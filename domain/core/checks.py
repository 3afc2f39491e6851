"""Precondition helpers every ruleset's handlers share.

A handler checks every precondition *before* it changes anything: a refused command stores
nothing, and during a refold the same refusal orphans the fact (RULES.md C0.5). The GM may
keep an orphan with ``OutcomeOverridden(field="orphan", value="keep")``; the fold then sees
``ctx.waived`` and :func:`require` lets the fact through.
"""

from __future__ import annotations

from typing import Any

from domain.errors import NotFound, RuleViolation


def require(ok: bool, message: str, code: str, ctx: Any, field: str | None = None) -> None:
    """A precondition: refuse (or orphan) unless it holds or the GM waived it with an override."""
    if not ok and not getattr(ctx, "waived", False):
        raise RuleViolation(message, field=field, code=code)


def owned(state: Any, cid: str, field: str = "creature") -> Any:
    """The creature ``cid`` as this state's own copy (safe to change), or NOT_FOUND."""
    if not isinstance(cid, str) or cid not in state.creatures:
        raise NotFound(f"no creature {cid!r} in this campaign", field=field)
    return state.own(cid)


def peek(state: Any, cid: str, field: str = "creature") -> Any:
    """The creature ``cid`` for reading only (not copied), or NOT_FOUND."""
    if not isinstance(cid, str) or cid not in state.creatures:
        raise NotFound(f"no creature {cid!r} in this campaign", field=field)
    return state.creatures[cid]
