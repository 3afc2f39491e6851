"""Orcus rules flags: every PROPOSAL, 4E-DEFAULT and ABSENT gap of RULES.md A4 / B-OR / C5 that
the fold decides, named (adopted ruling 1), with its documented default and reference.

The ``or.placeholder.*`` flags are the placeholder rules pack of A4.9 / B-OR-1: the seed
(about 20 % of the Orcus Basic Rules) lacks hit points, dying, healing, persistent damage,
rests and conditions; each placeholder is the 4e rule until a table with the full text
switches it. A campaign sets flags at creation or changes one with ``RulesFlagSet`` (from
that position on, or explicitly retroactively). docs/rules-flags.md lists them (a test keeps
it in step).
"""

from __future__ import annotations

from typing import Any

from domain.core import xp
from domain.core.flags import Flag, boolean, choice, names, validate, whole
from domain.rulesets.orcus.tables import DAMAGE_TYPES_4E, MAINTAIN_ACTIONS

FLAGS: dict[str, Flag] = {
    "xp_table": Flag(
        "orcus",
        "A4.2 / B-X-3 / ruling 22",
        "XP thresholds per level: 'orcus' (the A4.2 table) or the campaign's own rising list.",
        xp.check_table,
    ),
    "or.enforce_turns": Flag(
        True,
        "OR-6 / DESIGN quality bar",
        "Refuse turn-bound actions out of turn and beyond the action budget (false: record them "
        "with a note).",
        boolean,
    ),
    "or.maintain_on_creation_turn": Flag(
        True,
        "B-OR-8 / ruling 24",
        "A maintained effect must be maintained on the turn it is created too (false: the 4e "
        "reading, the creation turn is free).",
        boolean,
    ),
    "or.action_point_cap": Flag(
        None,
        "OR-7 (PROPOSAL)",
        "Most action points a hero can hold (null: unspent points accumulate without a cap).",
        whole(1, 100, nullable=True),
    ),
    "or.encounter_end_effects": Flag(
        "turn_timed",
        "OR-17 / OR-18 (gap)",
        "What the end of an encounter ends: 'turn_timed' effects (until the start or end of a next "
        "turn, maintained: no turn is left to end them) or 'none'.",
        choice("turn_timed", "none"),
    ),
    # ---------------------------------------------------------------- A4.9 placeholders
    "or.placeholder.hit_points": Flag(
        "4e",
        "A4.9 Hit points / B-OR-1",
        "'4e': max, current and temporary HP (temporary HP do not add up: the larger stays; damage "
        "takes them first); current HP may go below 0. 'floor_zero': HP stop at 0.",
        choice("4e", "floor_zero"),
    ),
    "or.placeholder.dying": Flag(
        "4e",
        "A4.9 0 HP or below / B-OR-1",
        "'4e': a hero at 0 HP or below is dying (unconscious, death saves at the end of its turns); "
        "a monster, elite or boss dies at 0 HP or below. 'dead_at_zero': every creature dies at 0 HP "
        "or below.",
        choice("4e", "dead_at_zero"),
    ),
    "or.placeholder.death_save_failures": Flag(
        3,
        "A4.9 0 HP or below",
        "Failed death saves (below 10) before a rest that kill a dying hero.",
        whole(1, 20),
    ),
    "or.placeholder.death_at_minus_bloodied": Flag(
        True,
        "A4.9 0 HP or below",
        "A dying hero dies when its HP fall to minus its bloodied value (floor(max HP / 2)) or lower.",
        boolean,
    ),
    "or.placeholder.heal_from_zero": Flag(
        True,
        "A4.9 Healing (4e)",
        "Healing a creature below 0 HP first raises it to 0, then adds the healing.",
        boolean,
    ),
    "or.placeholder.surge_value_divisor": Flag(
        4,
        "A4.9 Healing (4e: a quarter of max HP)",
        "A healing surge restores floor(max HP / this).",
        whole(1, 100),
    ),
    "or.placeholder.rally": Flag(
        "surge",
        "A4.9 Healing / OR-9 ('Rally ... usable once per encounter')",
        "What Rally does besides being usable once per encounter: 'surge' (spend a healing surge, "
        "regain its value) or 'none' (the table records any healing itself).",
        choice("surge", "none"),
    ),
    "or.placeholder.rally_action": Flag(
        "standard",
        "A4.9 Healing (4e second wind)",
        "The action Rally takes in a running encounter.",
        choice(*MAINTAIN_ACTIONS),
    ),
    "or.placeholder.persistent_damage": Flag(
        "highest_per_type",
        "A4.9 Persistent damage / ruling 20 / B-OR-7",
        "Several persistent damage effects: per damage type only the highest amount is taken at the "
        "start of the turn ('highest_per_type', 4e) or every one ('sum'); each effect keeps its own save.",
        choice("highest_per_type", "sum"),
    ),
    "or.placeholder.long_rest": Flag(
        "4e",
        "A4.9 Resting (4E-DEFAULT)",
        "What a long rest does besides the RULE parts (daily powers, action points): '4e' restores "
        "HP and healing surges, ends temporary HP and resets death saves; 'rule_only' does none of it.",
        choice("4e", "rule_only"),
    ),
    "or.placeholder.short_rest": Flag(
        "4e",
        "A4.9 Resting (4E-DEFAULT)",
        "What a short rest does besides recharging powers (RULE): '4e' ends temporary HP and resets "
        "death saves, and heroes may spend healing surges on their own only out of an encounter; "
        "'rule_only' does none of it (surges may be spent any time).",
        choice("4e", "rule_only"),
    ),
    "or.placeholder.stabilize_dc": Flag(
        15,
        "A4.9 0 HP or below (4e Heal check)",
        "DC of the check that stabilises a dying hero (a Stabilized fact with its roll).",
        whole(0, 100),
    ),
    "or.placeholder.conditions": Flag(
        "seed",
        "A4.9 Conditions / A4.6",
        "What conditions do: 'seed' (only the A4.6 rows: off-guard +2 to attacks against it, prone "
        "and restrained -2 to its attacks; an unconscious creature cannot act) or '4e' (also the 4e "
        "effects of the names the seed uses: dazed one action, stunned none, blinded and restrained "
        "grant off-guard, ...).",
        choice("seed", "4e"),
    ),
    "or.placeholder.damage_types": Flag(
        list(DAMAGE_TYPES_4E),
        "OR-16 (ABSENT) / A4.9",
        "The damage types the game knows (the seed names only the Fire tag; the 4e list). A type "
        "outside it is refused, so it cannot slip past a resistance.",
        names("lowercase damage type names"),
    ),
}

DEFAULTS: dict[str, Any] = {name: flag.default for name, flag in FLAGS.items()}


def validate_flag(name: str, value: Any) -> Any:
    return validate(FLAGS, name, value)
