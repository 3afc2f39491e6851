"""What each roll of a fact is for (RULES.md C0.3 ``purpose``), derived, never stored.

A fact's payload holds its roll records where its catalogue puts them (``roll``, ``damage``,
``targets.0.roll``...). Each ruleset may name them with ``roll_purposes``: per fact type, a
path pattern (``*`` stands for a list index) and its purpose. The core names its own facts'
rolls here. A free ``DiceRolled`` roll carries the purpose the table gave it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

RollPurposes = Mapping[str, Mapping[str, str]]

CORE_ROLL_PURPOSES: dict[str, dict[str, str]] = {
    "InitiativeRolled": {"roll": "initiative"},
    "CreatureJoinedEncounter": {"roll": "initiative"},
    "InitiativeTieBroken": {"rolls.*": "initiative tie-break"},
    "DiceRolled": {"roll": "free roll"},
}


def _matches(pattern: str, path: tuple[str, ...]) -> bool:
    parts = pattern.split(".")
    if len(parts) != len(path):
        return False
    return all(p == k or (p == "*" and k.isdigit()) for p, k in zip(parts, path, strict=True))


def roll_purpose(ruleset: Any, fact_type: str, payload: Mapping[str, Any], path: tuple[str, ...]) -> str:
    """The purpose of the roll at ``path`` in a fact of ``fact_type``; the path itself if no table
    names it (a fact of a plug-in that names none)."""
    if fact_type == "DiceRolled" and path == ("roll",) and payload.get("purpose"):
        return str(payload["purpose"])
    own: RollPurposes = getattr(ruleset, "roll_purposes", None) or {}
    for table in (own.get(fact_type, {}), CORE_ROLL_PURPOSES.get(fact_type, {})):
        for pattern, purpose in table.items():
            if _matches(pattern, path):
                return purpose
    return ".".join(path)
