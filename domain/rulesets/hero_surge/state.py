"""Hero's-surge state: what the fold derives per creature and per campaign (RULES.md C2.1).

Everything is plain data (ints, strings, lists and dicts) so a state dumps to JSON and loads
back exactly. Records kept campaign-wide (attempts, damage rolls, resolved incoming attacks,
luck rolls cited by an Instagib) are dicts of dicts shared between
clones: a handler never changes one in place, it replaces it (``state.attempts[a] = {**old, ...}``).
"""

from __future__ import annotations

from typing import Any

from domain.core import state as core
from domain.core.state import CreatureBase, TableState
from domain.rulesets.hero_surge.tables import hero_surges_max

SHEET_FIELDS = (
    "name",
    "kind",
    "hero",
    "level",
    "con_score",
    "con_mod",
    "hit_die",
    "max_hp",
    "damage_reduction",
    "extra_blocks",
)
TRACK_FIELDS = (
    "hp",
    "temp_hp",
    "temp_until",  # None: until a long rest (HS-11); else the game minute the pool ends
    "surges",  # None for non-heroes (B-HS-6); may be negative (HS-16)
    "fortune_dice",
    "unconscious",
    "dying",
    "dead",
    "luck_owed",  # [{"context", "since"}]: luck rolls the dying hero owes (B-HS-9)
    "luck_advantage",  # a medical limited success: advantage on the next luck roll (HS-14)
    "rank_penalties",  # [{"id", "amount", "by", "source", "until_round"}] (B-HS-5)
    "defend",  # {"mode", "target", "since"} until the start of its next turn (HS-5)
    "initiative",  # {"encounter", "round", "level", "band", "die", "knocked_back"} (B-HS-18)
    "knockback_pending",  # levels to lose on its next initiative check (B-HS-18)
    "acted_round",  # (encounter, round) of its last turn start: has it acted this round?
    "class_feature_round",  # (encounter, round) of its last class-feature surge (B-HS-13)
    "heroism_used",  # a heroism surge since its own turn started (B-HS-13)
    "last_surge_heal",  # game minute of its last surge healing (B-HS-14)
    "full_round",  # {"action", "moved_before", "maintained", "since"} (HS-6)
    "movement_forfeited",  # HS-6: no movement this turn (a full-round action completed)
    "broken_up",  # its next attack is broken up (HS-8 Hampering)
)


class Creature(CreatureBase):
    """One hero, monster or NPC: its sheet and its tracks."""

    __slots__ = (*SHEET_FIELDS, *TRACK_FIELDS)

    name: str
    kind: str  # pc | npc | monster
    hero: bool
    level: int
    con_score: int
    con_mod: int | None
    hit_die: int | None
    max_hp: int
    damage_reduction: int
    extra_blocks: int
    hp: int
    temp_hp: int
    temp_until: int | None
    surges: int | None
    fortune_dice: int
    unconscious: bool
    dying: bool
    dead: bool
    luck_owed: list[dict[str, Any]]
    luck_advantage: bool
    rank_penalties: list[dict[str, Any]]
    defend: dict[str, Any] | None
    initiative: dict[str, Any] | None
    knockback_pending: int
    acted_round: list[Any] | None
    class_feature_round: list[Any] | None
    heroism_used: bool
    last_surge_heal: int | None
    full_round: dict[str, Any] | None
    movement_forfeited: bool
    broken_up: bool

    @property
    def surges_max(self) -> int | None:
        """HS-15: 4 + floor(level / 2) for heroes; monsters and NPCs have none (B-HS-6)."""
        return hero_surges_max(self.level) if self.hero else None

    @property
    def death_threshold(self) -> int:
        """HS-12 / B-HS-22: dead when -HP > max(Con score, floor(max HP / 2))."""
        return max(self.con_score, self.max_hp // 2)

    @property
    def stable(self) -> bool:
        """C2.1: unconscious and not dying (B-HS-10, B-HS-21)."""
        return self.unconscious and not self.dying and not self.dead

    @property
    def life(self) -> str:
        """The core life vocabulary (domain.rulesets.LIFE_STATES)."""
        if self.dead:
            return "dead"
        if self.dying:
            return "dying"
        if self.unconscious:
            return "stabilized" if self.hero and self.hp < 0 else "unconscious"
        return "active"


def new_creature(cid: str) -> Creature:
    return core.new_creature(Creature, cid)


class HSState(TableState):
    """A hero's-surge campaign at one position: the core's table state plus the records that
    later facts cite by id."""

    __slots__ = ("attempts", "damage", "incoming", "luck_rolls")

    creatures: dict[str, Creature]

    def __init__(self, flags: dict[str, Any]) -> None:
        super().__init__(flags)
        self.attempts: dict[str, dict[str, Any]] = {}  # attempt_id -> its record (A2.3)
        self.damage: dict[str, dict[str, Any]] = {}  # damage_id -> the damage roll (C2.2 DamageRolled)
        self.incoming: dict[str, dict[str, Any]] = {}  # attack label -> how a defense resolved it (HS-9)
        self.luck_rolls: dict[str, dict[str, Any]] = {}  # roll_id -> a luck roll an Instagib may cite


def current_round(state: HSState) -> list[Any] | None:
    """``[encounter id, round]`` of the running encounter, or None outside one."""
    enc = state.encounter
    if enc is None or getattr(enc, "state", None) != "running":
        return None
    return [enc.id, enc.round]
