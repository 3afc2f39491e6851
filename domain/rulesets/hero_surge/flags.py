"""Hero's-surge rules flags: every PROPOSAL of RULES.md A2 / B-HS and every ABSENT gap (A2.7)
that the fold has to decide, named (ruling 1). Gaps that are the table's judgement (success
levels, luck results, Fortune Die effects, ranks, order within a band) are recorded ruling
inputs instead, and docs/rules-flags.md lists them.
"""

from __future__ import annotations

from typing import Any

from domain.core.flags import Flag, boolean, choice, defaults, document, either, validate, whole
from domain.errors import InvalidInput


def _luck_roll(name: str, value: Any) -> Any:
    if (
        isinstance(value, dict)
        and set(value) == {"die", "lucky_min"}
        and all(isinstance(v, int) and not isinstance(v, bool) for v in value.values())
        and 2 <= value["die"] <= 100
        and 1 <= value["lucky_min"] <= value["die"]
    ):
        return {"die": value["die"], "lucky_min": value["lucky_min"]}
    raise InvalidInput(
        f"flag {name} must be {{die: 2..100, lucky_min: 1..die}}; got {value!r}", field="value"
    )


FLAGS: dict[str, Flag] = {
    "rounding": Flag(
        "floor", "B-X-6", "Round down everywhere (1/4 HP, 1/2 max HP, 1/2 level).", choice("floor")
    ),
    "hs.luck_roll": Flag(
        {"die": 20, "lucky_min": 10},
        "B-HS-2",
        "The luck roll's die and the lowest lucky face, used when a luck roll is recorded without "
        "the table's ruled result (a ruled result always wins).",
        _luck_roll,
    ),
    "hs.advantage": Flag(
        "2d20kh1",
        "B-HS-3",
        "Advantage (a medical attempt's limited success on the next luck roll): '2d20kh1' = the "
        "luck roll must roll two dice and keep the higher; 'ruled' = any roll the table accepts.",
        choice("2d20kh1", "ruled"),
    ),
    "hs.min_damage": Flag(0, "HS-10", "Damage after damage reduction never goes below this.", whole(0, 100)),
    "hs.monsters_die_below_zero": Flag(
        True,
        "B-HS-6 / ruling 25",
        "Monsters and NPCs are unconscious at exactly 0 HP and dead below; false: they die past "
        "the heroes' threshold (without dying state or surges).",
        boolean,
    ),
    "hs.surge_loss_at_zero": Flag(
        "transition",
        "B-HS-7",
        "A hero loses a surge when damage takes it from above 0 to 0 or less ('transition'), or "
        "on every damage that leaves it at 0 or less ('every_hit').",
        choice("transition", "every_hit"),
    ),
    "hs.luck_on_damage_that_starts_dying": Flag(
        False,
        "B-HS-9 / ruling 25",
        "The damage that starts dying also calls for a luck roll (false: the first comes at the "
        "next turn start or the next damage).",
        boolean,
    ),
    "hs.hp_loss_restarts_dying": Flag(
        False,
        "B-HS-8 / B-HS-10",
        "HP loss (the 1/4-HP loss of a surge the hero does not have) restarts dying for a stable hero "
        "already below 0 (false: only a loss that takes HP from 0 or more to below 0 starts dying).",
        boolean,
    ),
    "hs.heal_from_negative": Flag(
        "add",
        "B-HS-11",
        "Healing adds to the negative value ('add', as written) or starts from 0 ('from_zero', 4e).",
        choice("add", "from_zero"),
    ),
    "hs.long_rest_surges": Flag(
        "full",
        "B-HS-12",
        "Hero's surges a long rest restores: 'full' (to the maximum, clearing negative surges) or a number.",
        either(choice("full"), whole(0, 100)),
    ),
    "hs.short_rest_surges": Flag(0, "B-HS-12", "Hero's surges a short rest restores.", whole(0, 100)),
    "hs.long_rest_hp": Flag(
        "full",
        "B-HS-21",
        "A long rest restores hit points to the maximum ('full') or none ('none').",
        choice("full", "none"),
    ),
    "hs.heroism_once_per_turn": Flag(
        True,
        "B-HS-13",
        "Heroism surges: at most one between two starts of the hero's own turn (in an encounter).",
        boolean,
    ),
    "hs.crit_against_hero": Flag(
        "max_damage",
        "B-HS-19",
        "A critical hit against a hero deals maximum damage and bypasses armor DR ('max_damage'), "
        "or rolled damage bypassing armor DR ('rolled').",
        choice("max_damage", "rolled"),
    ),
    "hs.half_die_rounding": Flag(
        "up",
        "B-HS-17",
        "'1/2 the maximum possible' of an odd custom Hit Die rounds up ('up') or down ('down').",
        choice("up", "down"),
    ),
    "hs.level_up_gains_surge": Flag(
        True,
        "HS-15 / B-HS-17",
        "When a level raises the surge maximum, the hero also gains that surge now (false: only "
        "the maximum rises; rests fill it).",
        boolean,
    ),
    "hs.enforce_turns": Flag(
        True,
        "HS-4 / ruling 18",
        "Refuse actions out of turn or beyond a turn's move and action (false: record them, noting "
        "what the economy would have refused).",
        boolean,
    ),
    "hs.con_modifier": Flag(
        "score",
        "A2.7 (ability modifiers are not in the seed) / HS-13",
        "The Constitution modifier (extra level-up Hit Dice): 'score' = the sheet's con_mod, else "
        "(Con - 10) / 2 rounded down; 'sheet' = only the sheet's con_mod (none: 0).",
        choice("score", "sheet"),
    ),
}

DEFAULTS: dict[str, Any] = defaults(FLAGS)


def validate_flag(name: str, value: Any) -> Any:
    return validate(FLAGS, name, value)


def flags_doc() -> list[dict[str, Any]]:
    return document(FLAGS)
