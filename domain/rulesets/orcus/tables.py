"""Orcus tables: the rules as data (RULES.md A4), read by the fold; tests check each row.

* :data:`ATTACK_MODIFIERS`: the A4.6 attack-modifier table, every row (RULE);
* :data:`CONDITIONS`: what a condition does, per ``or.placeholder.conditions`` mode: ``seed``
  (only what the seed says: the A4.6 rows, and that an unconscious creature cannot act) or
  ``4e`` (the 4e effects of the names the seed uses, A4.9);
* the action economy (OR-6, OR-8, B-OR-9, B-OR-10, OR-4);
* :data:`DURATIONS`: the common durations of OR-17 and maintain (OR-18) as timing rows;
* :data:`FREQUENCIES` and :data:`RESTS`: power frequencies (OR-9) and what each rest restores
  (OR-9 RULE; the A4.9 placeholders are read from their flags);
* the XP table is the core's (``domain.core.xp``, A4.2).
"""

from __future__ import annotations

from dataclasses import dataclass

from domain.core.effects import END, SOURCE, START, TARGET, Timing

# --- creatures (C4.1): an Orcus kind, and the core kind it is (pc: played by a player) ---------
RANKS: dict[str, str] = {"hero": "pc", "monster": "monster", "elite": "monster", "boss": "monster"}
DEFENSES = ("ac", "fort", "ref", "will")
DEFENSE_NAMES = {"ac": "AC", "fort": "Fortitude", "ref": "Reflex", "will": "Will"}

# --- attacks (OR-10..13) ------------------------------------------------------------------------
ORIGINS = ("melee", "ranged", "near", "far")  # A4 renames close/area to near/far
EFFECT_WHEN = ("hit", "miss", "effect")  # OR-12: Effect applies whatever the roll
SAVE_DC = 10  # OR-19
CRIT_NATURAL = 20  # OR-11 / B-OR-4: always a critical hit
FUMBLE_NATURAL = 1  # OR-11: always a miss


@dataclass(frozen=True)
class Circumstance:
    """One row of the A4.6 attack-modifier table.

    ``kinds``: the attack origins it applies to (ruling 17: declared for another origin it is
    ignored, and the outcome says so). ``target_condition`` / ``attacker_condition``: the row
    applies by itself when the target / attacker has that condition (it may also be declared;
    it counts once). ``excludes``: rows it does not stack with (the stronger applies)."""

    modifier: int
    label: str
    kinds: tuple[str, ...] = ORIGINS
    target_condition: str | None = None
    attacker_condition: str | None = None
    excludes: tuple[str, ...] = ()


ATTACK_MODIFIERS: dict[str, Circumstance] = {
    "target_off_guard": Circumstance(+2, "target is off-guard", target_condition="off_guard"),
    "attacker_prone": Circumstance(-2, "attacker is prone", attacker_condition="prone"),
    "charge": Circumstance(+1, "attacker used the Charge action"),
    "cover": Circumstance(-2, "target is in cover", excludes=("three_quarters_cover",)),
    "three_quarters_cover": Circumstance(-5, "target is in three-quarters cover", excludes=("cover",)),
    "concealment": Circumstance(
        -2, "target has concealment", kinds=("melee", "ranged"), excludes=("total_concealment",)
    ),
    "total_concealment": Circumstance(
        -5, "target has total concealment", kinds=("melee", "ranged"), excludes=("concealment",)
    ),
    "long_range": Circumstance(-2, "ranged attack at long range", kinds=("ranged",)),
    "attacker_restrained": Circumstance(-2, "attacker is restrained", attacker_condition="restrained"),
}
"""A4.6 (RULE, complete in the seed): circumstance -> attack roll modifier."""


# --- conditions (A4.9: only the names are in the seed; their 4e effects behind a flag) ---------
@dataclass(frozen=True)
class Condition:
    """What a condition does beyond the A4.6 rows (which read conditions by themselves)."""

    grants_off_guard: bool = False  # attackers treat the creature as off-guard (the A4.6 row)
    grants_off_guard_melee: bool = False  # only to melee attackers (4e prone)
    blinds: bool = False  # its targets count as totally concealed from it (4e blinded)
    defense_mod: int = 0  # to all its defenses (4e unconscious: -5)
    actions: str = "all"  # "all" | "one" (one standard, move or swift) | "none"
    implies: tuple[str, ...] = ()


SEED_NAMES = ("off_guard", "prone", "restrained", "dazed", "blinded", "rattled", "grappled")
CONDITIONS: dict[str, dict[str, Condition]] = {
    # Only what the seed says: every name is known, its effects are the A4.6 rows; a creature
    # that is unconscious (dying, A4.9) cannot act.
    "seed": {
        **{name: Condition() for name in SEED_NAMES},
        "unconscious": Condition(actions="none"),
    },
    # The 4e effects of the same names (4E-DEFAULT, A4.9), for a table that wants them.
    "4e": {
        "off_guard": Condition(),
        "prone": Condition(grants_off_guard_melee=True),
        "restrained": Condition(grants_off_guard=True),
        "dazed": Condition(grants_off_guard=True, actions="one"),
        "blinded": Condition(grants_off_guard=True, blinds=True),
        "rattled": Condition(),
        "grappled": Condition(),
        "stunned": Condition(grants_off_guard=True, actions="none"),
        "unconscious": Condition(grants_off_guard=True, defense_mod=-5, actions="none", implies=("prone",)),
    },
}
CONDITION_NAMES = tuple(sorted({n for table in CONDITIONS.values() for n in table}))

# --- the action economy (OR-4, OR-6, OR-8, B-OR-6, B-OR-9, B-OR-10) -----------------------------
ACTION_KINDS = ("standard", "move", "swift", "free", "immediate", "opportunity")
TURN_ACTIONS = ("standard", "move", "swift")
# OR-6: one standard (or a move or swift instead), one move (or a swift instead), one swift.
ACTION_BUDGETS: tuple[dict[str, int], ...] = (
    {"standard": 1, "move": 1, "swift": 1},
    {"move": 2, "swift": 1},  # the standard taken as a move
    {"move": 1, "swift": 2},  # the standard taken as a swift
    {"standard": 1, "swift": 2},  # the move taken as a swift
    {"swift": 3},  # both
)
SUBSTITUTIONS: dict[str, tuple[str, ...]] = {"move": ("standard",), "swift": ("standard", "move")}
# OR-8 / B-OR-9: one immediate action (counter or reaction) between two of its own turns.
ONCE_PER_ROUND: dict[str, str] = {"immediate": "IMMEDIATE_USED"}
# OR-8 / B-OR-10: one opportunity attack per other creature's turn.
ONCE_PER_TURN: dict[str, str] = {"opportunity": "OPPORTUNITY_USED"}
SURPRISE_ROUND_ACTIONS = 1  # OR-4: a single standard action (or a move or swift instead)
# Action points buy one more of these (OR-7).
EXTRA_ACTIONS = ("standard", "move", "swift")

# --- durations (OR-17, OR-18; the anchor is always explicit, B-X-2) ------------------------------
DURATIONS: dict[str, Timing] = {
    "end_of_target_next": Timing(END, TARGET),
    "end_of_user_next": Timing(END, SOURCE),
    "start_of_target_next": Timing(START, TARGET),
    "start_of_user_next": Timing(START, SOURCE),
    "save_ends": Timing(save_ends=True),
    # OR-18 / B-OR-8 / ruling 24: ends at the end of its user's first turn without a maintain.
    "maintain": Timing(anchor=SOURCE, kept_up=True),
    "until_removed": Timing(),  # e.g. dropping prone: it lasts until something ends it
}
USER_ANCHORED = tuple(k for k, t in DURATIONS.items() if t.anchor == SOURCE)
TURN_TIMED = tuple(k for k, t in DURATIONS.items() if t.boundary is not None or t.kept_up)
MAINTAIN_ACTIONS = ("standard", "move", "swift", "free")

# --- powers (OR-9, B-OR-17) -----------------------------------------------------------------------
FREQUENCIES = ("at_will", "encounter", "daily", "recharge", "recharge_if")


@dataclass(frozen=True)
class Rest:
    """What a rest restores: RULE parts here, the A4.9 placeholders through their flags."""

    recharges: tuple[str, ...]  # the power frequencies it recharges (OR-9)
    resets_action_points: bool = False  # OR-7: a hero's action points reset to 1
    resets_encounter_count: bool = False  # OR-7: "every second encounter ... between long rests"
    restores_hit_points: bool = False  # A4.9 4E-DEFAULT (or.placeholder.long_rest)
    restores_surges: bool = False  # A4.9 4E-DEFAULT (or.placeholder.long_rest)
    may_spend_surges: bool = True  # A4.9 4E-DEFAULT (or.placeholder.short_rest_surges)


RESTS: dict[str, Rest] = {
    "short": Rest(recharges=("encounter", "recharge", "recharge_if")),
    "long": Rest(
        recharges=("encounter", "daily", "recharge", "recharge_if"),
        resets_action_points=True,
        resets_encounter_count=True,
        restores_hit_points=True,
        restores_surges=True,
    ),
}

# --- damage types (OR-16 ABSENT: the 4e list is the placeholder, or.placeholder.damage_types) -----
DAMAGE_TYPES_4E = [
    "acid",
    "cold",
    "fire",
    "force",
    "lightning",
    "necrotic",
    "poison",
    "psychic",
    "radiant",
    "thunder",
]
