"""Stellar Winds state: what the fold derives per creature (RULES.md C1.1); encounters are the core
engine's (``domain.core.encounters.Encounter``)."""

from __future__ import annotations

from typing import Any

from domain.core import state as core
from domain.core import xp
from domain.core.effects import with_implied
from domain.core.encounters import Encounter
from domain.core.state import CreatureBase, TableState
from domain.rulesets.stellar_winds.tables import CONDITIONS

SHEET_FIELDS = (
    "name",
    "kind",
    "heroic",
    "level",
    "abilities",
    "max_hp",
    "surges_per_day",
    "defenses",
    "speed",
    "resist",
    "vuln",
    "regeneration",
    "crit_min",
    "initiative_misc",
    "max_wounds_override",
    "second_wind",
    "powers",  # C1.1: [{id, name, frequency}] (powers.py)
    "action_points",  # SW-14: what the sheet gives (a monster's, per its sheet)
    "action_points_per_encounter",  # SW-15: "some monsters may spend more than one per encounter"
)
TRACK_FIELDS = (
    "hp",
    "temp_hp",
    "wounds",
    "surges",
    "second_wind_used",
    "life",
    "death_fails",
    "ap",
    "ap_locked",
    "encounters_since_rest",
    "xp",
    "level_pinned",
    "last_extended_rest_at",
    "care_day",
    "expended",  # C1.1 powers_used: {power_id: {"frequency", "encounter", "turn"}}
    "ammo",  # C1.1 ammo: {weapon_id: rounds} (grenades are a weapon id too)
    "ap_spent_encounter",  # SW-15: action points a monster spent in its current encounter
    "bluff_used_in",  # C1.1 bluff_ca_used_this_encounter: the encounter it was used in
)


# B-X-6: how a division rounds (flag ``rounding``): halving, 1/4 HP, 1/2 level, surge value.
ROUNDINGS = {
    "floor": lambda n, d: n // d,
    "up": lambda n, d: -(-n // d),
    "nearest": lambda n, d: (2 * n + d) // (2 * d),  # halves round up
}


def divide(n: int, d: int, flags: dict[str, Any]) -> int:
    """``n / d`` rounded as the campaign's ``rounding`` flag says (B-X-6)."""
    return int(ROUNDINGS[flags.get("rounding", "floor")](n, d))


def modifier(score: int) -> int:
    """Ability modifier: (score - 10) / 2, rounded down."""
    return (score - 10) // 2


class Creature(CreatureBase):
    """One creature's sheet and tracks. Effects are dicts (see ``effects.py``)."""

    __slots__ = (*SHEET_FIELDS, *TRACK_FIELDS, "effects")

    name: str
    kind: str
    heroic: bool
    level: int
    abilities: dict[str, int]
    max_hp: int
    surges_per_day: int
    defenses: dict[str, int]
    speed: int
    resist: dict[str, int]
    vuln: dict[str, int]
    regeneration: int
    crit_min: int
    initiative_misc: int
    max_wounds_override: int | None
    second_wind: bool | None
    powers: list[dict[str, Any]]
    action_points: int | None
    action_points_per_encounter: int
    hp: int
    temp_hp: int
    wounds: int
    surges: int
    second_wind_used: bool
    life: str  # active | knocked_out | dying | stabilized | dead
    death_fails: int
    ap: int
    ap_locked: bool
    encounters_since_rest: int
    xp: int | None
    level_pinned: int | None
    last_extended_rest_at: int | None
    care_day: int | None
    expended: dict[str, dict[str, Any]]
    ammo: dict[str, int]
    ap_spent_encounter: int
    bluff_used_in: str | None
    effects: list[dict[str, Any]]

    # --- derived numbers -------------------------------------------------
    @property
    def is_pc(self) -> bool:
        return self.kind == "pc"

    @property
    def makes_death_saves(self) -> bool:
        return self.kind == "pc" or self.heroic

    def bloodied_value(self, flags: dict[str, Any]) -> int:
        """SW-33: half the maximum HP (rounded per B-X-6)."""
        return divide(self.max_hp, 2, flags)

    def bloodied(self, flags: dict[str, Any]) -> bool:
        return self.hp <= self.bloodied_value(flags)

    def surge_value(self, flags: dict[str, Any]) -> int:
        """SW-36: a quarter of the maximum HP (rounded per B-X-6)."""
        return divide(self.max_hp, 4, flags)

    def max_wounds(self, flags: dict[str, Any]) -> int:
        """B-SW-4: the sheet's own maximum, else the Constitution score (``sw.max_wounds``: or a
        number the table set for every creature)."""
        if self.max_wounds_override is not None:
            return self.max_wounds_override
        rule = flags.get("sw.max_wounds", "con_score")
        return self.abilities.get("con", 10) if rule == "con_score" else int(rule)

    @property
    def conscious(self) -> bool:
        return self.life == "active" and not self.has_condition("unconscious")

    def speed_now(self) -> tuple[int, list[str]]:
        """A1.10: slowed makes speed 2, immobilized 0; a lower speed stays lower; the conditions
        that limit it."""
        found = self.conditions()
        limits = {
            n: CONDITIONS[n].speed for n in found if n in CONDITIONS and CONDITIONS[n].speed is not None
        }
        lowest = min([self.speed, *(v for v in limits.values() if v is not None)])
        return lowest, sorted(n for n, v in limits.items() if v is not None and v < self.speed)

    def perception_mod(self) -> int:
        """A1.10 Deafened: -10 to Perception checks."""
        return sum(CONDITIONS[n].perception_mod for n in self.conditions() if n in CONDITIONS)

    def has_condition(self, name: str) -> bool:
        return name in self.conditions()

    def conditions(self) -> set[str]:
        """Every condition it has now: from its life state and its effects, with implications."""
        found: set[str] = set()
        if not self.effects and self.life not in LIFE_CONDITIONS:
            return found  # the usual creature: nothing to collect
        if self.life in LIFE_CONDITIONS:
            found |= IMPLIED["dying" if self.life == "dying" else "unconscious"]
        for eff in self.effects:
            if eff.get("pending"):
                continue
            for comp in eff["components"]:
                cond = comp.get("condition")
                if cond:
                    brought = IMPLIED.get(cond)
                    if brought is None:
                        found.add(cond)  # (not a condition of the table: it brings nothing)
                    else:
                        found |= brought
        return found


LIFE_CONDITIONS = ("dying", "knocked_out", "stabilized")  # life states that bring a condition


# each condition with what it brings, directly or through others (A1.10)
IMPLIED = {name: frozenset(with_implied((name,), CONDITIONS)) for name in CONDITIONS}


def new_creature(cid: str) -> Creature:
    return core.new_creature(Creature, cid)


level_for_xp = xp.level_for_xp  # adopted ruling 3: one implementation (domain/core/xp.py)


def xp_table(flags: dict[str, Any]) -> list[int]:
    return xp.table_of(flags.get("xp_table", "orcus"))


def current_level(c: Creature, flags: dict[str, Any]) -> int:
    """A PC's level: pinned by the GM, else derived from XP (adopted rulings 3, 9)."""
    if c.kind != "pc" or c.xp is None:
        return c.level
    if c.level_pinned is not None:
        return c.level_pinned
    return level_for_xp(c.xp, xp_table(flags))


def initiative_bonus(c: Creature, flags: dict[str, Any]) -> int:
    """SW-3: half level + Dexterity modifier + misc."""
    return (
        divide(current_level(c, flags), 2, flags) + modifier(c.abilities.get("dex", 10)) + c.initiative_misc
    )


class SWState(TableState):
    """The whole Stellar Winds state of a campaign at one position (all of it is the core's
    :class:`~domain.core.state.TableState`: creatures copy-on-write, encounters, clock)."""

    __slots__ = ()
    creatures: dict[str, Creature]
    encounters: dict[str, Encounter]

    @property
    def encounter(self) -> Encounter | None:
        return self.encounters.get(self.active_encounter) if self.active_encounter else None
