"""Hero's-surge tables: the rules as data, not if-chains (RULES.md A2).

Success levels and what each does in combat (HS-8, HS-9), the Devastating and Hampering
effects (HS-8), what each purpose of a hero's-surge spend needs (HS-15, B-HS-13), the luck
roll contexts (HS-14, B-HS-9, ruling 25), rests (B-HS-12, B-HS-21) and the actions of a
turn (HS-4, for the core encounter engine's action budget). Tests check rows against the ids.
"""

from __future__ import annotations

from dataclasses import dataclass

# HS-7: six success levels, best first. The index is the initiative band (HS-2: critical
# successes act first, critical failures last; B-HS-18 knock-back moves one band down).
SUCCESS_LEVELS: tuple[str, ...] = (
    "critical_success",
    "major_success",
    "normal_success",
    "limited_success",
    "failure",
    "critical_failure",
)
BAND = {level: i for i, level in enumerate(SUCCESS_LEVELS)}
LOWEST_BAND = len(SUCCESS_LEVELS) - 1
NORMAL = BAND["normal_success"]


@dataclass(frozen=True)
class Level:
    """What a success level does in combat (HS-8) and in a defense against several attacks (HS-9)."""

    blocks: int  # HS-9: attacks a defense of this level blocks (before extra blocks)
    devastating: int  # HS-8: Devastating Effects to choose
    hampering: int  # HS-8: Hampering Effects to choose
    succeeds: bool  # normal success or better: the attack hits, the defense prevents
    bypass_armor: int  # HS-9 failure: attacks of the defender's choice that bypass armor DR
    critical_hits: bool  # HS-9 critical failure: one or more incoming attacks are critical hits
    may_call_luck_roll: bool  # HS-8: the DM may call for a Luck Roll (critical failure; crit + 20)


LEVELS: dict[str, Level] = {
    "critical_success": Level(3, 1, 0, True, 0, False, True),
    "major_success": Level(2, 0, 1, True, 0, False, False),
    "normal_success": Level(1, 0, 0, True, 0, False, False),
    "limited_success": Level(0, 0, 1, False, 0, False, False),
    "failure": Level(0, 0, 0, False, 1, False, False),
    "critical_failure": Level(0, 0, 0, False, 0, True, True),
}

# HS-7: a natural 1 on a failed attempt is a critical failure unless the rank is one of these.
RANKS_SPARED_NATURAL_1 = frozenset({"legendary", "godlike"})

ATTEMPT_KINDS = ("attack", "defense", "maneuver", "spell", "medical", "ability", "skill", "other")


@dataclass(frozen=True)
class Option:
    """A Devastating or Hampering Effect (HS-8) and what the fold does with it."""

    needs_target: bool = False
    grants_hampering: int = 0  # two_hampering: two Hampering Effects instead
    allows: str = ""  # "additional_die" | "brutal": what a later damage fact may then do
    knocks_initiative_back: bool = False  # B-HS-18
    rank_penalty: int = 0  # B-HS-5: stacking, until used or the end of the next round
    breaks_up_attack: bool = False  # the target's next attack is broken up


DEVASTATING: dict[str, Option] = {
    "additional_damage_die": Option(allows="additional_die"),
    "knock_back": Option(needs_target=True),
    "knock_initiative_back": Option(needs_target=True, knocks_initiative_back=True),
    "weapon_maneuver": Option(needs_target=True),
    "two_hampering_effects": Option(grants_hampering=2),
}

HAMPERING: dict[str, Option] = {
    "break_up_attack": Option(needs_target=True, breaks_up_attack=True),
    "brutal_damage": Option(allows="brutal"),
    "rank_penalty": Option(needs_target=True, rank_penalty=-1),
    "move_5ft": Option(),
}


@dataclass(frozen=True)
class SurgePurpose:
    """A purpose of spending a hero's surge (HS-15, B-HS-13, B-HS-14)."""

    heals: bool  # restores 1/4 of maximum hit points (floor)
    conscious: bool  # the hero must be conscious to do it
    limit: str | None  # "round" | "turn" | "hour" | None (unlimited)
    action: bool  # uses the hero's action for the turn (B-HS-14)
    forced: bool  # ruling 6: a power that makes the target spend one: no surge, no effect, accepted


SURGE_PURPOSES: dict[str, SurgePurpose] = {
    "class_feature": SurgePurpose(heals=False, conscious=True, limit="round", action=False, forced=False),
    "healing": SurgePurpose(heals=True, conscious=True, limit="hour", action=True, forced=False),
    "heroism": SurgePurpose(heals=False, conscious=True, limit="turn", action=False, forced=False),
    "spell": SurgePurpose(heals=True, conscious=False, limit=None, action=False, forced=True),
}
SURGE_HEALING_INTERVAL_MINUTES = 60  # HS-15: "Once per hour"


@dataclass(frozen=True)
class LuckContext:
    """When a luck roll is made (HS-14, HS-8) and what it needs (B-HS-9, ruling 25)."""

    owed: bool  # only when the dying hero owes one of this context (refused otherwise)
    attempt_level: str | None  # it follows an attempt of this level
    natural_20: bool  # ... rolled with a natural 20
    dying: bool  # a dying hero's roll: unlucky loses a surge, a 20 ends dying


LUCK_CONTEXTS: dict[str, LuckContext] = {
    "dying_turn_start": LuckContext(owed=True, attempt_level=None, natural_20=False, dying=True),
    "dying_damage": LuckContext(owed=True, attempt_level=None, natural_20=False, dying=True),
    "crit_success": LuckContext(owed=False, attempt_level="critical_success", natural_20=True, dying=False),
    "crit_failure": LuckContext(owed=False, attempt_level="critical_failure", natural_20=False, dying=False),
    "other": LuckContext(owed=False, attempt_level=None, natural_20=False, dying=False),
}
INSTAGIB_LUCK_ROLLS = 2  # B-HS-23: "three successive 20s" = the attempt and two luck rolls


@dataclass(frozen=True)
class Rest:
    """What a rest restores (B-HS-12, B-HS-21, HS-11); the amounts come from the named flags."""

    surges_flag: str | None
    hp_flag: str | None
    ends_undated_temp_hp: bool  # HS-11: temp HP without a duration last until a long rest


RESTS: dict[str, Rest] = {
    "long": Rest("hs.long_rest_surges", "hs.long_rest_hp", True),
    "short": Rest("hs.short_rest_surges", None, False),
    "other": Rest(None, None, False),
}


# HS-4 / HS-6: a turn is a move and one action (the encounter engine's action budget).
ACTIONS: dict[str, str] = {
    "assist": "action",
    "attack": "action",
    "cast": "action",
    "defend": "action",
    "delay": "turn",
    "move": "action",  # a second move (HS-4: "You can move twice on your turn by using the move action.")
    "use": "action",
    "ready": "action",
    "full_round": "action",  # HS-6: starting one uses the action
    "surge_healing": "action",  # B-HS-14
}
TURN_BUDGET: dict[str, int] = {"move": 1, "action": 1}
# The encounter engine's action economy (HS-4): the kinds, the turn-bound ones, the allowed sets
# of one turn (a move and an action; or the action taken as a second move).
ACTION_KINDS: tuple[str, ...] = ("action", "move", "free")
TURN_ACTIONS: tuple[str, ...] = ("action", "move")
ACTION_BUDGETS: tuple[dict[str, int], ...] = (dict(TURN_BUDGET), {"move": 2})
# Which attempts take the creature's action in a running encounter (HS-4: Attack, Cast, Use for
# a medical attempt); a defense, an ability or skill check and others take none. An attempt may
# name its action instead (``action``: e.g. 'free' for a readied attack, 'none').
ATTEMPT_ACTIONS: dict[str, str] = {
    "attack": "action",
    "spell": "action",
    "maneuver": "action",
    "medical": "action",
}


def hero_surges_max(level: int) -> int:
    """HS-15: four at 1st level and one more at each even level: 4 + floor(level / 2)."""
    return 4 + level // 2
