"""d20 house-rules flags: every PROPOSAL and ABSENT gap of RULES.md A3 / B-DH that the
fold decides, named (adopted ruling 1), with its default and reference.

A campaign sets them at creation or changes one with a ``RulesFlagSet`` fact, from that
position on (or, explicitly, retroactively). Gaps the table decides case by case are
*inputs* instead (sheet values, declared modifiers citing rulings): docs/rules-flags.md
lists both.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from domain.errors import InvalidInput


@dataclass(frozen=True)
class Flag:
    default: Any
    ref: str
    doc: str
    check: Callable[[str, Any], Any]


def _choice(*choices: Any) -> Callable[[str, Any], Any]:
    def check(name: str, value: Any) -> Any:
        if value not in choices:
            raise InvalidInput(
                f"flag {name} must be one of {', '.join(map(str, choices))}; got {value!r}", field="value"
            )
        return value

    return check


def _int(lo: int, hi: int) -> Callable[[str, Any], Any]:
    def check(name: str, value: Any) -> Any:
        if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
            raise InvalidInput(
                f"flag {name} must be a whole number from {lo} to {hi}; got {value!r}", field="value"
            )
        return value

    return check


def _bool(name: str, value: Any) -> Any:
    if not isinstance(value, bool):
        raise InvalidInput(f"flag {name} must be true or false; got {value!r}", field="value")
    return value


def _massive(name: str, value: Any) -> Any:
    """B-DH-1: ``{"threshold": int >= 1, "dc": int, "enabled": bool}`` (all three)."""
    if not isinstance(value, dict) or set(value) != {"threshold", "dc", "enabled"}:
        raise InvalidInput(f"flag {name} is {{threshold, dc, enabled}}; got {value!r}", field="value")
    _int(1, 100_000)(f"{name}.threshold", value["threshold"])
    _int(0, 1000)(f"{name}.dc", value["dc"])
    _bool(f"{name}.enabled", value["enabled"])
    return dict(value)


FLAGS: dict[str, Flag] = {
    "rounding": Flag("floor", "B-X-6", "Round down everywhere (halves, 1 1/2 Strength).", _choice("floor")),
    "dh.ability_modifier": Flag(
        "floor_half", "A3 / B-DH-2", "Ability modifier = floor((score - 10) / 2).", _choice("floor_half")
    ),
    "dh.massive_damage": Flag(
        {"threshold": 50, "dc": 15, "enabled": True},
        "B-DH-1 / ruling 26",
        "One attack dealing at least `threshold` damage to a creature it leaves alive owes a "
        "Fortitude save against `dc`; failure kills. Hazards never call for it.",
        _massive,
    ),
    "dh.crit_doubles_static_mods": Flag(
        True,
        "B-DH-5 / ruling 26",
        "A confirmed critical counts the weapon's static modifiers (Strength with its grip "
        "factor, enhancement) twice; false: the literal reading, only the weapon dice twice.",
        _bool,
    ),
    "dh.confirmation_natural_rules": Flag(
        True,
        "B-DH-13",
        "On the confirmation roll a natural 1 fails and a natural 20 succeeds; false: only the "
        "total against AC counts.",
        _bool,
    ),
    "dh.minimum_damage_after_penalties": Flag(
        True,
        "B-DH-12",
        "The minimum damage of 1 applies after every modifier (the disabled -2 included); "
        "false: the minimum first, then the penalty (never below 0).",
        _bool,
    ),
    "dh.stabilize_on": Flag(
        "at_most_stamina",
        "B-DH-3",
        "A stabilisation roll succeeds when the d% face is at most the effective Stamina "
        "(00 = 100); 'below_stamina' needs a face below it.",
        _choice("at_most_stamina", "below_stamina"),
    ),
    "dh.stable_recovery": Flag(
        "none",
        "B-DH-4",
        "A stable creature regains nothing on its own (natural recovery is ABSENT): only "
        "recorded healing raises it.",
        _choice("none"),
    ),
    "dh.heal_check_dc_base": Flag(
        10, "B-DH-6", "Heal check DC to stabilise = this + |HP| at the moment of the check.", _int(0, 100)
    ),
    "dh.strenuous_hp_loss": Flag(
        1,
        "B-DH-8 / DH-11",
        "Hit points a disabled creature loses after a strenuous action (an attack, running...).",
        _int(0, 100),
    ),
    "dh.aoo_reset": Flag(
        "own_turn_start",
        "B-DH-14 / ruling 26",
        "When a creature's count of attacks of opportunity starts again: at the start of its "
        "own turn, or ('round_start') at the start of each round.",
        _choice("own_turn_start", "round_start"),
    ),
    "dh.flat_footed_no_aoo": Flag(
        True, "B-DH-11 / ruling 26", "A flat-footed creature makes no attacks of opportunity.", _bool
    ),
    "dh.flat_footed_loses": Flag(
        "bonus",
        "DH-2",
        "What a flat-footed target loses from its AC: its Agility 'bonus' (a penalty still "
        "counts, the d20 reading) or the whole Agility 'modifier' (the seed's literal words).",
        _choice("bonus", "modifier"),
    ),
    "dh.surprise_round_actions": Flag(
        "standard_or_move",
        "B-DH-11",
        "In the surprise round a creature takes one standard or one move action (and free actions).",
        _choice("standard_or_move"),
    ),
    "dh.initiative_ties": Flag(
        "modifier_then_roll_off",
        "DH-3 / B-DH-10",
        "Tied initiative: the higher initiative modifier goes first; equal modifiers roll off "
        "(a recorded InitiativeTieBroken). Read by the core encounter engine.",
        _choice("modifier_then_roll_off"),
    ),
}

DEFAULTS: dict[str, Any] = {name: flag.default for name, flag in FLAGS.items()}


def validate_flag(name: str, value: Any) -> Any:
    flag = FLAGS.get(name)
    if flag is None:
        raise InvalidInput(f"unknown rules flag {name!r}", field="flag")
    return flag.check(name, value)
