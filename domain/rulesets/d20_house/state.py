"""d20 house-rules state: what the fold keeps per creature (RULES.md C3.1) and the numbers it
derives from it (effective scores, S and B, the life band, saves, AC, attack bonuses).

Every slot holds plain data (ints, strings, lists, dicts) so a state dumps to JSON and back.
Dict and list slots are *replaced*, never changed in place: a creature shared between two
states (copy-on-write, ``domain.core.state``) must not see another state's change.
"""

from __future__ import annotations

from typing import Any

from domain.core import state as core
from domain.core.rules import ability_modifier
from domain.core.state import CreatureBase, TableState
from domain.rulesets.d20_house.tables import CONDITIONS, FEATS, SAVE_ABILITY

SHEET_FIELDS = (
    "name",
    "kind",
    "level",
    "klass",
    "abilities",
    "max_hp",
    "bab",
    "base_saves",
    "armor",
    "shield",
    "size",
    "initiative_misc",
    "aoo_per_round",
    "feats",
)
TRACK_FIELDS = (
    "hp",
    "ability_damage",
    "ability_drain",
    "stable",
    "dead_by",
    "flat_footed",
    "running",
    "aoo_used",
    "turn",
    "massive_saves",
    "last_stabilization",
)


class Creature(CreatureBase):
    """One creature's sheet and tracks (C3.1)."""

    __slots__ = (*SHEET_FIELDS, *TRACK_FIELDS, "effects")

    name: str
    kind: str  # pc | npc | monster
    level: int
    klass: str  # the sheet's class ("class" in payloads and views)
    abilities: dict[str, int]  # base scores
    max_hp: int
    bab: list[int]  # the sheet's base attack bonus with its iteratives: [6, 1] is "+6/+1"
    base_saves: dict[str, int]  # fort, ref, will (progressions are ABSENT: sheet values)
    armor: int
    shield: int
    size: int  # size modifier (the size table is ABSENT: a sheet value)
    initiative_misc: int
    aoo_per_round: int  # 1; more with feats or abilities (DH-5)
    feats: list[str]
    hp: int  # may go below 0
    ability_damage: dict[str, int]
    ability_drain: dict[str, int]
    stable: bool
    dead_by: str | None  # hp_threshold | massive_damage | stamina_zero | declared
    flat_footed: bool
    running: bool
    aoo_used: int
    turn: dict[str, Any] | None  # the creature's own turn in progress (encounter hooks)
    massive_saves: list[dict[str, int]]  # owed: {"attack", "damage", "dc"}
    last_stabilization: list[Any] | None  # [encounter_id, round] of its last stabilisation roll
    effects: list[dict[str, Any]]  # durations are ABSENT (A3.6): always empty

    # --- ability scores (A3, B-DH-2, B-DH-9) ------------------------------
    def score(self, ability: str) -> int:
        """The effective score: base minus damage and drain, never below 0."""
        lost = self.ability_damage.get(ability, 0) + self.ability_drain.get(ability, 0)
        return max(0, self.abilities[ability] - lost)

    def mod(self, ability: str) -> int:
        return ability_modifier(self.score(ability))

    @property
    def S(self) -> int:  # noqa: N802 - the rules' own name (DH-10)
        """Effective Stamina: the dying range ends and death begins below -S."""
        return self.score("stamina")

    @property
    def B(self) -> int:  # noqa: N802 - the rules' own name (DH-10)
        """The Stamina bonus: max(0, Stamina modifier); the disabled range is -B..0."""
        return max(0, self.mod("stamina"))

    # --- life (DH-10, C3.1) -----------------------------------------------
    @property
    def band(self) -> str:
        """fine (HP >= 1), disabled (-B..0), dying (-S..-B-1), dead (below -S or ``dead_by``)."""
        if self.dead_by is not None:
            return "dead"
        if self.hp >= 1:
            return "fine"
        if self.hp >= -self.B:
            return "disabled"
        if self.hp >= -self.S:
            return "dying"
        return "dead"

    @property
    def life(self) -> str:
        """The common view's life state (``domain.rulesets.LIFE_STATES``): active, disabled,
        dying, stabilized (dying no more, still unconscious) or dead."""
        band = self.band
        if band == "fine":
            return "active"
        if band == "dying" and self.stable:
            return "stabilized"
        return band

    @property
    def conscious(self) -> bool:
        return self.band in ("fine", "disabled")

    def conditions(self) -> set[str]:
        """The A3.6 conditions it has now, all derived."""
        band = self.band
        found: set[str] = set()
        if band == "disabled":
            found.add("disabled")
        elif band == "dying":
            found |= {"stable" if self.stable else "dying", "unconscious"}
        elif band == "dead":
            found.add("dead")
        if self.flat_footed and band != "dead":
            found.add("flat_footed")
        if self.running and band in ("fine", "disabled"):
            found.add("running")
        return found

    def penalty(self, what: str) -> list[dict[str, Any]]:
        """The condition modifiers to its ``attack``, ``damage``, ``saves`` or ``checks``."""
        out = []
        for name in sorted(self.conditions()):
            value = getattr(CONDITIONS[name], what)
            if value:
                out.append({"source": name, "value": value})
        return out

    def feat_effects(self) -> list[Any]:
        """The effects of the feats it has that the fold applies (tables.FEATS)."""
        return [FEATS[f] for f in sorted(set(self.feats)) if f in FEATS]

    # --- numbers (DH-3, DH-6, DH-15) ---------------------------------------
    def save_bonus(self, save: str) -> int:
        """DH-15: base save bonus + the ability's modifier (before conditions)."""
        return self.base_saves[save] + self.mod(SAVE_ABILITY[save])

    def initiative_bonus(self) -> int:
        """DH-3: Agility modifier + initiative modifiers."""
        return self.mod("agility") + self.initiative_misc

    def attacks_of_opportunity_left(self) -> int:
        return max(0, self.aoo_per_round - self.aoo_used)


def new_creature(cid: str) -> Creature:
    return core.new_creature(Creature, cid)


def settle(c: Creature) -> str | None:
    """Latch death the moment a creature meets a death condition (DH-13, B-DH-9, ruling 26):
    Stamina 0, or HP below -S. Death stays when Stamina or HP later rise; only a
    resurrection ends it. A creature at 1 HP or more is no longer 'stable' (B-DH-7: fully
    functional). Returns the cause when this call latched death."""
    if c.dead_by is not None:
        return None
    cause = None
    if c.S <= 0:
        cause = "stamina_zero"
    elif c.hp < -c.S:
        cause = "hp_threshold"
    if cause is not None:
        die(c, cause)
    elif c.hp >= 1 and c.stable:
        c.stable = False
    return cause


def die(c: Creature, cause: str) -> None:
    c.dead_by = cause
    c.stable = False
    c.running = False
    c.turn = None
    if c.massive_saves:
        c.massive_saves = []


class D20State(TableState):
    """A d20 house-rules campaign at one position: the core table state plus the attacks
    still awaiting their confirmation or damage (keyed by the AttackRolled position)."""

    __slots__ = ("attacks",)
    creatures: dict[str, Creature]

    def __init__(self, flags: dict[str, Any]) -> None:
        super().__init__(flags)
        self.attacks: dict[str, dict[str, Any]] = {}
