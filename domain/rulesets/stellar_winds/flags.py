"""Stellar Winds rules flags: every PROPOSAL / 4E-DEFAULT of RULES.md, named.

Each flag has its documented default (RULES.md C5 and the cited ruling) and a
validator. A campaign sets them at creation or changes them with a
``RulesFlagSet`` fact, from that position on (or, as an explicit choice,
retroactively).
"""

from __future__ import annotations

from typing import Any

from domain.core import xp
from domain.core.flags import Flag, defaults, either, validate
from domain.core.flags import boolean as _bool
from domain.core.flags import choice as _choice
from domain.core.flags import whole as _int

_xp_table = xp.check_table  # A4.2 / adopted ruling 3 (domain/core/xp.py)


FLAGS: dict[str, Flag] = {
    "rounding": Flag(
        "floor",
        "B-X-6",
        "Round down everywhere (halving, 1/4 HP, 1/2 level, surge value); 'up' or 'nearest' (halves up).",
        _choice("floor", "up", "nearest"),
    ),
    "xp_table": Flag(
        "orcus", "Adopted ruling 3", "XP thresholds per level: 'orcus' (A4.2) or a list.", _xp_table
    ),
    "sw.bonus_stacking": Flag(
        "highest_per_type",
        "SW-17",
        "Bonuses of one type do not add (the highest applies); 'all' adds every bonus.",
        _choice("highest_per_type", "all"),
    ),
    "sw.duration_default_anchor": Flag(
        "creator", "B-X-2", "Whose turn 'your next turn' means.", _choice("creator", "target")
    ),
    "sw.damage_layering": Flag(
        "cascade", "B-SW-1", "Ordinary damage: temp HP, HP, then wounds.", _choice("cascade", "separate")
    ),
    "sw.hp_overflow_to_wounds": Flag(True, "B-SW-2", "HP stop at 0; the excess carries into wounds.", _bool),
    "sw.max_wounds": Flag(
        "con_score",
        "B-SW-4",
        "Max wounds = Constitution score; or a number, the same for every creature (a sheet's own wins).",
        either(_choice("con_score"), _int(1, 1000)),
    ),
    "sw.death_wounds_threshold": Flag(-10, "B-SW-4", "Dead at wounds <= this.", _int(-1000, 0)),
    "sw.crit_mode": Flag(
        "wounding",
        "B-SW-5",
        "A crit deals its rolled damage as wounding damage; 'max' is the 4e maximum-damage reading; "
        "'wounding_1W' deals one [W] of the weapon's dice as wounding damage (B-SW-5 point 1 literally).",
        _choice("wounding", "max", "wounding_1W"),
    ),
    "sw.wounding_hits_temp_hp_first": Flag(True, "B-SW-5", "Temp HP absorb wounding damage first.", _bool),
    "sw.death_save_failures_to_die": Flag(
        3, "B-SW-7", "Failed death saves before a rest that kill.", _int(1, 20)
    ),
    "sw.death_save_failure_costs_wound": Flag(
        False, "B-SW-7", "A failed death save also costs 1 wound.", _bool
    ),
    "sw.death_save_timing": Flag(
        "end_of_own_turn",
        "B-SW-8",
        "When a death save may be rolled in an encounter.",
        _choice("end_of_own_turn", "any_time"),
    ),
    "sw.dying_heal_sets_wounds_to": Flag(
        1, "B-SW-9", "Healing a dying creature first sets wounds to this.", _int(1, 1000)
    ),
    "sw.magic_heals_wounds_first": Flag(True, "B-SW-9", "Magical healing fills wounds before HP.", _bool),
    "sw.stabilized_rest_sets_wounds_to": Flag(
        1,
        "B-SW-10",
        "A stabilised creature's wounds after an extended rest (null: literal reading, no change).",
        _int(1, 1000, True),
    ),
    "sw.first_aid_stabilize_dc": Flag(
        15, "B-SW-10", "DC of the first-aid check that stabilises.", _int(0, 100)
    ),
    "sw.coup_de_grace_kill": Flag(
        "bloodied_value",
        "B-SW-12",
        "A coup de grace whose damage (after modifiers, before layering) is at least the target's "
        "bloodied value slays it outright; 'none': the cut clause stays cut, it is only an automatic "
        "critical hit.",
        _choice("bloodied_value", "none"),
    ),
    "sw.temp_hp_grant": Flag(
        "highest",
        "B-SW-17",
        "A new grant of temporary HP keeps the higher pool (SW-34); 'add': grants add up.",
        _choice("highest", "add"),
    ),
    "sw.regeneration_at_0_hp": Flag(
        False,
        "B-SW-22",
        "Regeneration needs at least 1 HP (literal); true: a creature at 0 HP with wounds above 0 "
        "regenerates HP too.",
        _bool,
    ),
    "sw.heal_without_surge": Flag(
        "no_hp",
        "SW-36",
        "A healing that needs a surge the target does not have restores nothing and its other effects "
        "apply; 'refuse': it is refused (NO_HEALING_SURGE) and nothing is stored.",
        _choice("no_hp", "refuse"),
    ),
    "sw.surprised_turn": Flag(
        "none",
        "B-SW-19",
        "Surprised creatures get no turn in the surprise round; 'free_actions': they have their turn "
        "(its start and end happen) and may take free actions only (the condition's text, 000 L168).",
        _choice("none", "free_actions"),
    ),
    "sw.immediate_window": Flag(
        "own_turn",
        "B-SW-31",
        "'Once per round' for immediate actions runs from the start of the creature's turn to the start "
        "of its next (4e); 'round': from the start of one round to the next.",
        _choice("own_turn", "round"),
    ),
    "sw.monsters_have_wounds": Flag(True, "B-SW-13", "Every creature has a wound track.", _bool),
    "sw.monster_death_at_wounds": Flag(
        0, "B-SW-13", "Non-heroic monsters/NPCs die at wounds <= this.", _int(-1000, 1000)
    ),
    "sw.resist_stacking": Flag(
        "highest",
        "B-SW-14",
        "Only the highest resistance of a type applies; 'sum' adds every resistance of the type.",
        _choice("highest", "sum"),
    ),
    "sw.multi_type_resist": Flag(
        "lowest_if_all",
        "B-SW-14",
        "Multi-typed damage: lowest resistance, 0 unless every type is resisted; 'highest': the highest "
        "resistance among its types.",
        _choice("lowest_if_all", "highest"),
    ),
    "sw.milestone_every_encounters": Flag(
        2, "B-SW-18", "Encounters ended per milestone (+1 AP).", _int(1, 100)
    ),
    "sw.ap_reset_on_extended_rest": Flag(1, "B-SW-18", "Action points after an extended rest.", _int(0, 100)),
    "sw.explosive_save": Flag(
        "reflex_defense_minus_10",
        "B-SW-20",
        "Planted-explosive save: d20 + (Reflex defense - 10); 'half_level_plus_dex': d20 + half level + "
        "Dexterity modifier (a Dexterity check).",
        _choice("reflex_defense_minus_10", "half_level_plus_dex"),
    ),
    "sw.falling": Flag(
        "dice",
        "SW-31",
        "Falling: 1d10 per 10 feet; 'fast_over_50': a fall of more than 50 feet deals 25 per 50 feet plus "
        "1d10 per 10 extra feet.",
        _choice("dice", "fast_over_50"),
    ),
    "sw.ap_while_dazed": Flag(True, "B-SW-29", "A dazed creature may spend an action point.", _bool),
    "sw.end_of_encounter_rounds": Flag(
        50,
        "SW-44 / B-SW-24",
        "'Until the end of the encounter' also ends after this many rounds (5 minutes).",
        _int(1, 10_000),
    ),
    "sw.extended_rest_interval_hours": Flag(
        24, "B-SW-25", "At most one extended rest per this many game hours.", _int(0, 10_000)
    ),
    "sw.long_term_care_per_day": Flag(
        1, "B-SW-27", "Wounds Long Term-Care restores per patient per day.", _int(0, 100)
    ),
    "sw.enforce_turns": Flag(
        True, "SW-15 / DESIGN quality bar", "Refuse turn-bound actions out of turn.", _bool
    ),
}

DEFAULTS: dict[str, Any] = defaults(FLAGS)


def validate_flag(name: str, value: Any) -> Any:
    return validate(FLAGS, name, value)
