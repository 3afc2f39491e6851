"""Stellar Winds tables: the rules as data, not if-chains.

Conditions (A1.10), attack circumstances (A1.5), rest contents (SW-49) and the
XP table (A4.2, adopted ruling 3). The fold reads these; tests check rows
against RULES.md ids.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from domain.core import xp
from domain.core.encounters import ActionLimit, ActionTable


@dataclass(frozen=True)
class Condition:
    """What a condition does (A1.10). Numbers are modifiers, booleans switches."""

    grants_ca: bool = False  # attackers have combat advantage against it
    grants_ca_melee_only: bool = False  # prone: only melee attackers
    attack_penalty: int = 0  # to its own attack rolls
    attack_penalty_kinds: tuple[str, ...] = ("melee", "ranged", "close", "area")  # where it applies
    cannot_see: bool = False  # blinded: gains no combat advantage from what it cannot see (A1.5)
    defense_mod: int = 0  # to all its defenses
    ranged_defense_mod: int = 0  # to its defenses against ranged attacks (prone: +2)
    actions: str = "all"  # "all" | "one" (one of standard/move/minor) | "free_only" | "none"
    no_immediate: bool = False  # no immediate or opportunity actions
    cannot_flank: bool = False
    cannot_delay: bool = False
    half_damage_dealt: bool = False  # weakened
    half_damage_taken: bool = False  # insubstantial (ongoing included)
    resist_all: int = 0  # petrified
    implies: tuple[str, ...] = ()  # further conditions it brings
    speed: int | None = None  # slowed: speed becomes 2 (a lower speed stays lower); immobilized: 0
    perception_mod: int = 0  # deafened, blinded: -10 to Perception checks
    unseen: bool = False  # invisible: attackers cannot see it; it has combat advantage (A1.10, A1.5)


CONDITIONS: dict[str, Condition] = {
    "blinded": Condition(  # its targets have total concealment: -5 to melee and ranged attacks (A1.5)
        grants_ca=True,
        attack_penalty=-5,
        attack_penalty_kinds=("melee", "ranged"),
        cannot_see=True,
        cannot_flank=True,
        perception_mod=-10,
    ),
    "dazed": Condition(
        grants_ca=True, actions="one", no_immediate=True, cannot_flank=True, cannot_delay=True
    ),
    "deafened": Condition(perception_mod=-10),  # cannot hear (A1.10)
    "dominated": Condition(implies=("dazed",)),
    "dying": Condition(implies=("unconscious",)),
    "helpless": Condition(grants_ca=True),
    "immobilized": Condition(speed=0),  # cannot leave its space; teleport and forced movement still work
    "marked": Condition(),
    "petrified": Condition(actions="none", resist_all=20, cannot_delay=True, no_immediate=True),
    "prone": Condition(grants_ca_melee_only=True, attack_penalty=-2, ranged_defense_mod=2),
    "restrained": Condition(grants_ca=True, attack_penalty=-2, implies=("immobilized",)),
    "slowed": Condition(speed=2),
    "stunned": Condition(
        grants_ca=True, actions="none", no_immediate=True, cannot_flank=True, cannot_delay=True
    ),
    "surprised": Condition(
        grants_ca=True, actions="free_only", no_immediate=True, cannot_flank=True, cannot_delay=True
    ),
    "unconscious": Condition(
        defense_mod=-5,
        actions="none",
        no_immediate=True,
        cannot_flank=True,
        cannot_delay=True,
        implies=("helpless", "prone"),
    ),
    "weakened": Condition(half_damage_dealt=True),
    # statuses
    "invisible": Condition(unseen=True),
    "insubstantial": Condition(half_damage_taken=True),
    "grabbed": Condition(implies=("immobilized",)),
}


def conditions_where(test: Callable[[Condition], bool]) -> frozenset[str]:
    """The names of the conditions ``test`` selects: an index of :data:`CONDITIONS` (a set
    intersection then asks what a loop over a creature's conditions would)."""
    return frozenset(name for name, spec in CONDITIONS.items() if test(spec))


# Indexes of CONDITIONS for the attack path (every attack asks each of them)
GRANTS_CA = conditions_where(lambda c: c.grants_ca)
GRANTS_CA_MELEE = conditions_where(lambda c: c.grants_ca or c.grants_ca_melee_only)
UNSEEN = conditions_where(lambda c: c.unseen)
CANNOT_SEE = conditions_where(lambda c: c.cannot_see)
ATTACK_PENALTY = conditions_where(lambda c: bool(c.attack_penalty))
HALF_DAMAGE_DEALT = conditions_where(lambda c: c.half_damage_dealt)
HALF_DAMAGE_TAKEN = conditions_where(lambda c: c.half_damage_taken)


@dataclass(frozen=True)
class Circumstance:
    """A declared attack circumstance (A1.5): its modifier and where it applies."""

    modifier: int
    label: str
    kinds: tuple[str, ...] = ("melee", "ranged", "close", "area")
    combat_advantage: bool = False  # counts as (and does not stack with) combat advantage


CIRCUMSTANCES: dict[str, Circumstance] = {
    "combat_advantage": Circumstance(+2, "combat advantage", combat_advantage=True),
    "flanking": Circumstance(+2, "combat advantage (flanking)", ("melee",), combat_advantage=True),
    "cover": Circumstance(-2, "cover"),
    "superior_cover": Circumstance(-5, "superior cover"),
    "concealment": Circumstance(-2, "concealment", ("melee", "ranged")),
    "total_concealment": Circumstance(-5, "total concealment", ("melee", "ranged")),
    "long_range": Circumstance(-2, "long range", ("ranged",)),
    "charge": Circumstance(+1, "charge", ("melee",)),
    "running": Circumstance(-5, "attacker running"),
    "squeezing": Circumstance(-5, "attacker squeezing"),
    "aid_another": Circumstance(+2, "aid another"),
    "autofire_without_expert": Circumstance(-4, "autofire without Firearms Expert", ("ranged", "area")),
}

# SW-8 (reconstructed, 4E-DEFAULT): the action sets a turn may use; each is {kind: count}.
ACTION_SETS: tuple[dict[str, int], ...] = (
    {"standard": 1, "move": 1, "minor": 1},  # A
    {"standard": 1, "minor": 2},  # B
    {"move": 2, "minor": 1},  # C
    {"move": 1, "minor": 2},  # D
    {"minor": 3},  # E
)
TURN_ACTIONS = ("standard", "move", "minor")  # the budgeted kinds
ACTION_KINDS = ("standard", "move", "minor", "free", "immediate", "opportunity")
# SW-8: an action may be taken instead of the ones listed (move or minor for standard; minor for move).
SUBSTITUTIONS: dict[str, tuple[str, ...]] = {"move": ("standard",), "minor": ("standard", "move")}

# What a condition's ``actions`` value allows (A1.10), with the refusal it makes.
ACTION_LIMITS: dict[str, ActionLimit] = {
    "all": ActionLimit(None),
    "one": ActionLimit(  # dazed
        1, triggered=False, code="DAZED_ONE_ACTION", text="one standard, move or minor action per turn"
    ),
    "free_only": ActionLimit(
        0, triggered=False, code="FREE_ACTIONS_ONLY", text="free actions only"
    ),  # surprised
    "none": ActionLimit(  # stunned, unconscious, petrified
        0, free=False, triggered=False, code="CANNOT_ACT", text="no actions"
    ),
}
# SW-5: an aware creature takes one action in the surprise round (standard, move or minor).
SURPRISE_ROUND_LIMIT = ActionLimit(
    1,
    code="SURPRISE_ROUND_ONE_ACTION",
    text="in the surprise round a creature takes one action: standard, move or minor (SW-5)",
)

# The Stellar Winds action table the core encounter engine reads (SW-5, SW-8, SW-9, SW-12, B-SW-31).
SW_ACTIONS = ActionTable(
    kinds=ACTION_KINDS,
    turn_bound=TURN_ACTIONS,
    budgets=ACTION_SETS,
    free=("free",),
    substitutions=SUBSTITUTIONS,
    once_per_round={"immediate": "IMMEDIATE_USED"},  # B-SW-31: from the start of its turn to the next
    once_per_turn={"opportunity": "OPPORTUNITY_USED"},  # SW-9: once per other combatant's turn
    surprise_round=SURPRISE_ROUND_LIMIT,
    ready_cost="standard",  # SW-12
    readied_kind="immediate",
    budget_text=(
        "(SW-8: standard, move and minor; a move or minor instead of the standard, "
        "a minor instead of the move)"
    ),
)


@dataclass(frozen=True)
class TableAction:
    """A table action the engine resolves (SW-13, A1.10 Prone): the action it costs its creature
    (None: it is the consequence of something else, such as a power's hit), the effect it puts on
    the creature, the condition it ends, and what the creature must be."""

    action: str | None
    effect: dict[str, Any] | None = None
    ends: str | None = None
    needs: tuple[str, str] | None = None  # a condition the creature must have, and the refusal code
    refuses: tuple[str, str] | None = None  # a condition it must not have, and the refusal code
    conscious: bool = True  # the creature acts itself


PRONE_EFFECT: dict[str, Any] = {
    "name": "prone",
    "components": [{"condition": "prone"}],
    "duration": {"kind": "until_removed"},
}
TABLE_ACTIONS: dict[str, TableAction] = {
    # SW-13: +2 to all defenses until the start of your next turn (a standard action)
    "total_defense": TableAction(
        "standard",
        effect={
            "name": "total defense",
            "components": [{"defense_mod": {"defense": "all", "value": 2}}],
            "duration": {"kind": "until_start_of_turn"},
        },
    ),
    # A1.10 Prone: dropping prone is a minor action; standing up is a move action
    "drop_prone": TableAction("minor", effect=PRONE_EFFECT, refuses=("prone", "ALREADY_PRONE")),
    "stand_up": TableAction("move", ends="prone", needs=("prone", "NOT_PRONE")),
    # knocked prone by another creature's power or a GM ruling: no action of its own
    "knock_prone": TableAction(None, effect=PRONE_EFFECT, conscious=False),
}

COMBAT_ADVANTAGE_BONUS = 2
MARKED_PENALTY = -2  # attack that does not target the marker
SECOND_WIND_DEFENSE_BONUS = 2


@dataclass(frozen=True)
class Rest:
    """What a rest restores (SW-48, SW-49)."""

    minutes: int
    regains_second_wind: bool = True
    clears_action_point_lock: bool = True
    ends_temporary_hp: bool = True
    resets_death_save_failures: bool = True
    revives_knocked_out: bool = True
    ends_encounter_effects: bool = True
    restores_hp: bool = False
    restores_surges: bool = False
    resets_action_points: bool = False
    resets_milestones: bool = False
    wakes_stabilized: bool = False
    once_per_day: bool = False


RESTS: dict[str, Rest] = {
    "short": Rest(minutes=5),
    "extended": Rest(
        minutes=360,
        restores_hp=True,
        restores_surges=True,
        resets_action_points=True,
        resets_milestones=True,
        wakes_stabilized=True,
        once_per_day=True,
    ),
}

# A4.2 (adopted ruling 3): the XP table lives in the core, shared with Orcus.
ORCUS_XP = xp.ORCUS_XP
XP_TABLES = xp.XP_TABLES

DAMAGE_TYPES = frozenset(
    {"acid", "cold", "fire", "force", "lightning", "necrotic", "poison", "psychic", "radiant", "thunder"}
)
