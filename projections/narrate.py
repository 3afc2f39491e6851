"""One human-readable line per fact, as corrected: the ruleset's sentence with its corrections.

The sentence comes from the campaign's ruleset (``Ruleset.narrator``, plain text), the same
narrator the Markdown and HTML exports use, so the log, the GraphQL history and the story read
alike. This module adds the correction annotations::

    Traze misses Goblin with fireball: 14 + 10 = 24 vs Reflex 25.
    ~~Orc takes damage: 2d6 (4, 6) + 3 = 13 damage (13 HP).~~ (revoked at 14: misread die)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from domain.core.narration import Narrator

__all__ = ["FactStatus", "annotate", "narrate"]


@dataclass(frozen=True)
class FactStatus:
    """How corrections treat one fact (the annotations of its log line)."""

    revoked_at: int | None = None
    revoked_reason: str = ""
    amended_at: tuple[int, ...] = ()
    amended_reasons: tuple[str, ...] = ()
    orphan_reason: str | None = None
    overrides: Mapping[str, Any] = field(default_factory=dict)

    @property
    def flags(self) -> list[str]:
        out = []
        if self.revoked_at is not None:
            out.append("revoked")
        if self.amended_at:
            out.append("amended")
        if self.orphan_reason is not None:
            out.append("orphaned")
        if self.overrides:
            out.append("overridden")
        return out or ["active"]


def annotate(text: str, status: FactStatus) -> str:
    """A sentence struck through if revoked, with its corrections in brackets."""
    notes: list[str] = []
    if status.revoked_at is not None:
        text = f"~~{text}~~"
        notes.append(_note(f"revoked at {status.revoked_at}", status.revoked_reason))
    for at, reason in zip(status.amended_at, status.amended_reasons, strict=False):
        notes.append(_note(f"amended at {at}", reason))
    if status.orphan_reason is not None:
        notes.append(f"orphaned: {status.orphan_reason}")
    if status.overrides:
        shown = ", ".join(f"{k}={_short(v)}" for k, v in sorted(status.overrides.items()))
        notes.append(f"GM override: {shown}")
    return text + "".join(f" ({n})" for n in notes)


def narrate(
    narrator: Narrator,
    fact_type: str,
    payload: dict[str, Any],
    outcome: dict[str, Any] | None,
    status: FactStatus,
    state: Any,
) -> str:
    """The log line of one fact, from the state just after it (read at once, never kept)."""
    return annotate(narrator.sentence(fact_type, payload, outcome, state), status)


def _note(head: str, reason: str) -> str:
    return f"{head}: {reason}" if reason else head


def _short(value: Any) -> str:
    text = str(value)
    return text if len(text) <= 40 else text[:37] + "..."
