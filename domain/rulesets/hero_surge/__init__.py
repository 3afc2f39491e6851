"""The hero's-surge system (RULES.md A2, B-HS, C2; seed 002) as a ruleset plug-in.

The system leaves its core mechanics undefined (success-level thresholds, luck rolls, the
Fortune Die, ranks, advantage): the table rules them and the facts carry the rulings (ruling
4); this package derives only their consequences. Modules:

* ``facts``: the fact catalogue (C2.2) on top of the core's;
* ``state``: creatures and campaign records (C2.1);
* ``tables``: success levels, effects, surge purposes, luck contexts, rests, actions as data;
* ``flags``: every PROPOSAL / ABSENT gap the fold decides, named (prefix ``hs.``);
* ``vitality``: the one implementation of damage, HP loss, surges, dying, death and healing;
* ``rules``, ``attempts``: the handlers, one per fact type; ``rounds``: initiative bands,
  knock-back and the turn-boundary steps; ``encounter``: the hooks the core encounter engine
  calls, the initiative facts and the facts that take an action (HS-4);
* ``narrate``: the narrator (one sentence per fact, turn-start steps, summary columns, marks).
"""

from __future__ import annotations

from typing import Any

from domain.core import encounters as core_encounters
from domain.core.narration import Markup
from domain.core.state import dump_table, load_table
from domain.errors import InvalidInput
from domain.rulesets import Track
from domain.rulesets.hero_surge import attempts, encounter, rules
from domain.rulesets.hero_surge.facts import CATALOGUE
from domain.rulesets.hero_surge.flags import DEFAULTS, flags_doc, validate_flag
from domain.rulesets.hero_surge.narrate import HeroSurgeNarrator
from domain.rulesets.hero_surge.state import Creature, HSState

HANDLERS: dict[str, Any] = {**rules.HANDLERS, **attempts.HANDLERS, **encounter.HANDLERS}

ERROR_CODES: dict[str, str] = {
    "ALREADY_EXCHANGED": "The attempt's natural 20 was already exchanged for a Fortune Die.",
    "ALREADY_RESOLVED": "The defense attempt, or an incoming attack it names, was already resolved (HS-9).",
    "ATTACK_BLOCKED": "The damage names an incoming attack that the defense blocked (HS-9).",
    "BLOCKS_WRONG": (
        "A defense against several attacks blocks more than its success level allows, or its "
        "bypass-armor / critical-hit lists do not fit the level (HS-9)."
    ),
    "CLASS_FEATURE_SURGE_USED": "A hero's surge was already spent on a class feature this round (HS-15).",
    "CREATURE_DYING": "The creature is dying.",
    "DIE_AT_MAXIMUM": "The die already shows its maximum: Brutal Damage cannot reroll it (B-HS-16).",
    "FULL_ROUND_IN_PROGRESS": "The creature is already engaged in a full-round action (HS-6).",
    "HEROISM_USED": "A heroism surge was already spent this turn (B-HS-13).",
    "LEVEL_USED": (
        "The attempt's success level was already used (effects chosen, damage rolled): a Fortune Die "
        "exchange must come first."
    ),
    "NOTHING_TO_DOWNGRADE": "The attempt is not above a normal success: no Fortune Die exchange (HS-7).",
    "NOT_A_HERO": (
        "Monsters and NPCs have no hero's surges, luck rolls for dying or levels by LevelGained (B-HS-6)."
    ),
    "NOT_CONSCIOUS": "The creature is not conscious.",
    "NOT_DEAD": "The creature is not dead (raising needs a dead creature).",
    "NOT_DYING": "The creature is not dying.",
    "NOT_NATURAL_20": (
        "The attempt did not roll a natural 20 (Fortune Die exchange, a critical success's luck roll), "
        "or an Instagib lacks its three successive 20s (B-HS-23)."
    ),
    "NOT_NEXT_LEVEL": "LevelGained names a level other than the creature's next one (ruling 22).",
    "NO_ADDITIONAL_DIE": "The attempt did not choose the Additional Damage Die Devastating Effect (HS-8).",
    "NO_BRUTAL_REROLL": (
        "No Brutal Damage reroll: not chosen for this damage, the damage is maximised or applied, or the "
        "one die was already rerolled higher (B-HS-16)."
    ),
    "NO_DEVASTATING_EFFECT": (
        "The attempt has no Devastating Effect to choose (not a critical success, or chosen)."
    ),
    "NO_FORTUNE_DIE": "The creature has no Fortune Die to spend (B-HS-4).",
    "NO_FULL_ROUND_ACTION": "The creature is in no full-round action (HS-6).",
    "NO_HAMPERING_EFFECT": "The attempt has no Hampering Effect left to choose (HS-8).",
    "NO_HERO_SURGE": "The hero has no hero's surge to spend (ruling 6).",
    "NO_LUCK_ROLL_OWED": (
        "No luck roll of this kind is owed: after damage only by a hero already dying, at the start of "
        "a turn only by a hero dying then (B-HS-9, ruling 25)."
    ),
    "NO_RANK_PENALTY": "The creature has no (such) rank penalty pending (B-HS-5).",
    "SURPRISE_ROUND_ONE_ACTION": "In the surprise round a creature takes one action.",
    "SURGE_HEALING_USED": "A hero's surge was already spent for healing within the hour (HS-15, B-HS-14).",
    "WRONG_ATTEMPT": (
        "The attempt is of the wrong kind, creature or success level for this, or came too early."
    ),
    "WRONG_ROUND": (
        "An initiative check names a round other than the one it is for (the next round while the "
        "encounter runs; HS-2)."
    ),
    "WRONG_DICE": (
        "The dice do not fit the rule: Hit Dice of another size or count, a 1-1 reroll sequence that does "
        "not end on a non-1, an additional die of another kind, a luck roll without its advantage die."
    ),
}
"""The refusal codes the hero's-surge rules add to the core's (``domain.errors.CORE_CODES``)."""


class HeroSurge:
    id = "hero-surge"
    title = "Hero's surge"
    version = "2"  # 2: encounters through the core engine (a v1 snapshot is discarded and refolded)
    catalogue = CATALOGUE
    flag_defaults = DEFAULTS
    error_codes = ERROR_CODES
    encounter_rules = encounter.RULES  # its hooks into the core encounter engine

    @property
    def fact_types(self) -> frozenset[str]:
        return frozenset(HANDLERS)

    def flags_doc(self) -> list[dict[str, Any]]:
        return flags_doc()

    def narrator(self, markup: Markup) -> HeroSurgeNarrator:
        return HeroSurgeNarrator(markup)

    def initial_state(self, flags: dict[str, Any]) -> HSState:
        return HSState(flags)

    def dump_state(self, state: HSState) -> dict[str, Any]:
        """The state as JSON for persisted snapshots: the core's slotted-state dump."""
        return dump_table(state)

    def load_state(self, data: dict[str, Any]) -> HSState:
        return load_table(HSState, data, creature=Creature, encounter=core_encounters.Encounter)

    def validate_flag(self, flag: str, value: Any) -> Any:
        return validate_flag(flag, value)

    def apply(self, state: HSState, fact_type: str, payload: dict[str, Any], ctx: Any) -> dict[str, Any]:
        handler = HANDLERS.get(fact_type)
        if handler is None:
            raise InvalidInput(f"{self.title} does not fold the fact {fact_type} (yet)", field="type")
        if "rulings" in payload:
            # a cited ruling's value replaced a field: it must still fit the field (an overturned
            # ruling without a new decision reads as false), else the fact is orphaned
            payload = self.catalogue.validate(fact_type, payload)
        state.fact_seq, state.fact_effects = ctx.seq, 0
        result: dict[str, Any] = handler(state, payload, ctx)
        return result

    def pending_rolls(self, state: HSState) -> list[tuple[str, dict[str, Any]]]:
        return encounter.pending_rolls(state)

    # ---------------------------------------------------------------- views
    def creature_view(self, state: HSState, creature_id: str) -> dict[str, Any]:
        c: Creature = state.creatures[creature_id]
        out = creature_view(c)
        out["initiative"], out["next_round_initiative"] = _initiative(state, creature_id)
        return out

    def encounter_view(self, state: HSState, encounter_id: str) -> dict[str, Any]:
        return encounter.encounter_view(state, state.encounters[encounter_id])

    def campaign_view(self, state: HSState) -> dict[str, Any]:
        return {
            "clock_minutes": state.minutes,
            "flags": dict(state.flags),
            "active_encounter": state.active_encounter,
        }

    def tracks(self, view: dict[str, Any]) -> list[Track]:
        """Hit points (negative included, with the death line) and, for heroes, hero's surges."""
        hp = view["hit_points"]
        out = [
            Track(
                "hp",
                "HP",
                hp["current"],
                ceiling=hp["max"],
                floor=None,
                thresholds=(("unconscious", 0), ("dead below", -view["death_threshold"])),
            )
        ]
        if view["hero"]:
            out.append(
                Track(
                    "hero_surges",
                    "Hero's surges",
                    view["hero_surges"],
                    ceiling=view["hero_surges_max"],
                    floor=None,
                    thresholds=(("negative", 0),),
                )
            )
        return out


def _initiative(state: HSState, cid: str) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """C2.1 ``initiative_this_round`` (and the next round's check, once recorded) from the active
    encounter's entries: the ruled level, the band after knock-backs, the die (B-HS-18)."""
    enc = state.encounter
    if enc is None:
        return None, None

    def shown(entry: dict[str, Any] | None, rnd: int) -> dict[str, Any] | None:
        if entry is None or "band" not in entry:
            return None
        return {
            "encounter": enc.id,
            "round": rnd,
            "success_level": entry["success_level"],
            "band": entry["band"],
            "die": entry["die"],
            "knocked_back": entry.get("knocked_back", 0),
        }

    first = enc.round if enc.state == core_encounters.RUNNING else (0 if enc.surprised else 1)
    return shown(enc.initiative.get(cid), first), shown(enc.upcoming.get(cid), enc.round + 1)


def _effects(c: Creature) -> list[dict[str, Any]]:
    out = []
    if c.defend is not None:
        out.append(
            {
                "effect_id": c.defend["id"],
                "name": "defend",
                "source": c.id,
                "components": [{"advantage": "defense"}, {"extra_blocks": 1}],
                "duration": {"kind": "until_start_of_turn", "creature": c.id},
            }
        )
    for x in c.rank_penalties:
        out.append(
            {
                "effect_id": x["id"],
                "name": "rank penalty",
                "source": x["source"],
                "components": [{"rank_penalty": x["amount"], "attempt": x["by"]}],
                "duration": {"kind": "next_attempt_or_end_of_round", "round": x["until_round"]},
            }
        )
    return out


def creature_view(c: Creature) -> dict[str, Any]:
    """One creature (C2.1): the core keys, then the system's own."""
    conditions = []
    if c.unconscious and not c.dead:
        conditions.append("unconscious")
    if c.dying:
        conditions.append("dying")
    if c.stable:
        conditions.append("stable")
    if c.defend is not None:
        conditions.append("defending")
    return {
        "id": c.id,
        "name": c.name,
        "kind": c.kind,
        "level": c.level,
        "life": c.life,
        "conditions": sorted(conditions),
        "effects": _effects(c),
        "hit_points": {"current": c.hp, "max": c.max_hp, "temporary": c.temp_hp},
        "hero": c.hero,
        "con_score": c.con_score,
        "con_mod": c.con_mod,
        "hit_die": c.hit_die,
        "temp_hp_until": ("long_rest" if c.temp_until is None else c.temp_until) if c.temp_hp else None,
        "damage_reduction": c.damage_reduction,
        "extra_blocks": c.extra_blocks + (1 if c.defend is not None else 0),
        "hero_surges": c.surges,
        "hero_surges_max": c.surges_max,
        "negative_hero_surges": -min(0, c.surges) if c.surges is not None else 0,
        "fortune_dice": c.fortune_dice,
        "conscious": not c.unconscious,
        "dying": c.dying,
        "stable": c.stable,
        "dead": c.dead,
        "death_threshold": c.death_threshold,
        "luck_rolls_owed": [o["context"] for o in c.luck_owed],
        "luck_advantage_pending": c.luck_advantage,
        "rank_penalties": [dict(x) for x in c.rank_penalties],
        "rank_penalty_total": sum(x["amount"] for x in c.rank_penalties),
        "defend": dict(c.defend) if c.defend else None,
        "initiative": dict(c.initiative) if c.initiative else None,
        "knockback_pending": c.knockback_pending,
        "class_feature_surge_round": c.class_feature_round,
        "heroism_used_this_turn": c.heroism_used,
        "last_surge_heal_minute": c.last_surge_heal,
        "full_round_action": dict(c.full_round) if c.full_round else None,
        "movement_forfeited": c.movement_forfeited,
        "next_attack_broken_up": c.broken_up,
    }


HERO_SURGE = HeroSurge()
"""The ruleset object the ``chronicle.rulesets`` entry point ``hero-surge`` names."""
__all__ = ["ERROR_CODES", "HERO_SURGE", "HeroSurge"]
