"""Orcus state: what the fold derives per creature (RULES.md C4.1).

Everything is plain data (strings, whole numbers, lists and dicts) so a snapshot can be
written as JSON and read back exactly. Effects are dicts (``domain/core/effects.py``).
"""

from __future__ import annotations

from typing import Any

from domain.core import state as core
from domain.core import xp
from domain.core.effects import with_implied
from domain.core.state import CreatureBase, TableState
from domain.rulesets.orcus.tables import CONDITIONS, RANKS

SHEET_FIELDS = (
    "name",
    "rank",  # hero | monster | elite | boss (C4.1 kind)
    "level",
    "defenses",
    "max_hp",
    "surges_per_day",
    "resist",
    "vuln",
    "powers",  # power id -> {"name", "frequency", "recharge": [faces] | None, "condition": str}
    "ap_stat",  # action points per the stat block (monsters, elites, bosses; OR-7)
)
TRACK_FIELDS = (
    "hp",
    "temp_hp",
    "surges",
    "life",  # active | dying | stabilized | dead
    "death_fails",
    "ap",
    "ap_spent",  # the last action point spent: {"encounter", "round"} (OR-7, B-OR-3)
    "encounters_since_long_rest",
    "xp",  # heroes only (ruling 9)
    "level_pinned",  # a GM's explicit level (ruling 3)
    "expended",  # power id -> {"encounter", "turn"}: when it was used (B-OR-17)
    "recharge_rolled",  # power id -> the turn number its recharge was last rolled in
    "rally_used",  # the encounter id (or "" out of an encounter) Rally was last used in
    "effects",
)


class Creature(CreatureBase):
    """One Orcus creature's sheet and tracks."""

    __slots__ = (*SHEET_FIELDS, *TRACK_FIELDS)

    name: str
    rank: str
    level: int
    defenses: dict[str, int]
    max_hp: int
    surges_per_day: int
    resist: dict[str, int]
    vuln: dict[str, int]
    powers: dict[str, dict[str, Any]]
    ap_stat: int
    hp: int
    temp_hp: int
    surges: int
    life: str
    death_fails: int
    ap: int
    ap_spent: dict[str, Any] | None
    encounters_since_long_rest: int
    xp: int | None
    level_pinned: int | None
    expended: dict[str, dict[str, Any]]
    recharge_rolled: dict[str, int]
    rally_used: str | None
    effects: list[dict[str, Any]]

    # --- derived -------------------------------------------------------------
    @property
    def kind(self) -> str:
        """The core kind (``pc`` for a hero, ``monster`` for monsters, elites and bosses)."""
        return RANKS[self.rank]

    @property
    def is_hero(self) -> bool:
        return self.rank == "hero"

    @property
    def bloodied_value(self) -> int:
        """A4.9 placeholder: bloodied at floor(max HP / 2) or fewer HP."""
        return self.max_hp // 2

    @property
    def bloodied(self) -> bool:
        return self.hp <= self.bloodied_value

    @property
    def conscious(self) -> bool:
        return self.life == "active"

    def conditions(self, mode: str = "seed") -> set[str]:
        """Its conditions: from its life state and its effects in force, with implications."""
        found: set[str] = set()
        if self.life in ("dying", "stabilized"):
            found.add("unconscious")
            if self.life == "dying":
                found.add("dying")
        for eff in self.effects:
            if eff.get("pending"):
                continue
            for comp in eff["components"]:
                name = comp.get("condition")
                if name:
                    found.add(name)
        return with_implied(found, CONDITIONS[mode])


def new_creature(cid: str) -> Creature:
    return core.new_creature(Creature, cid)


def xp_thresholds(flags: dict[str, Any]) -> list[int]:
    return xp.table_of(flags.get("xp_table", "orcus"))


def xp_level(c: Creature, flags: dict[str, Any]) -> int | None:
    """OR-2 / ruling 22: the level a hero's XP earns on the campaign's table (capped, B-OR-16)."""
    return xp.level_for_xp(c.xp, xp_thresholds(flags)) if c.xp is not None else None


def current_level(c: Creature, flags: dict[str, Any]) -> int:
    """A hero's level: a GM's explicit level, else the one its XP earns (rulings 3, 22);
    a monster keeps its stat block's level (ruling 9)."""
    if not c.is_hero or c.xp is None:
        return c.level
    if c.level_pinned is not None:
        return c.level_pinned
    return xp.level_for_xp(c.xp, xp_thresholds(flags))


def surge_value(c: Creature, flags: dict[str, Any]) -> int:
    """A4.9 placeholder: a healing surge restores floor(max HP / 4) (the divisor is a flag)."""
    return c.max_hp // int(flags["or.placeholder.surge_value_divisor"])


class OrcusState(TableState):
    """An Orcus campaign's state at one position: the core ``TableState`` with Orcus creatures."""

    __slots__ = ()
    creatures: dict[str, Creature]
