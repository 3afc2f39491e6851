"""Stellar Winds: the default ruleset (RULES.md A1, B-SW, C1)."""

from __future__ import annotations

from typing import Any

from domain.core import encounters as core_encounters
from domain.core.narration import Markup
from domain.core.state import dump_table, load_table
from domain.errors import InvalidInput
from domain.rulesets import Track
from domain.rulesets.stellar_winds import actions, attacks, encounters, overrides, powers, rules, skills
from domain.rulesets.stellar_winds.facts import CATALOGUE, ROLL_PURPOSES
from domain.rulesets.stellar_winds.flags import DEFAULTS, FLAGS, validate_flag
from domain.rulesets.stellar_winds.narrate import StellarWindsNarrator
from domain.rulesets.stellar_winds.state import (
    Creature,
    SWState,
    current_level,
    initiative_bonus,
    level_for_xp,
    xp_table,
)
from domain.rulesets.stellar_winds.tables import CONDITIONS

HANDLERS: dict[str, Any] = {
    **rules.HANDLERS,
    # an attack uses the attacker's standard action unless it names another (or none)
    "AttackMade": encounters.with_action(attacks.attack_made, field="attacker"),
    # B-SW-10: first aid is the healer's standard action unless it names another (or none)
    "StabilizationAttempted": encounters.with_action(rules.stabilization, field="healer"),
    # B-SW-23: second wind is a standard action when used in a running encounter
    "SecondWindUsed": encounters.with_action(rules.second_wind, field="creature", fixed="standard"),
    **encounters.HANDLERS,
    "TableActionTaken": actions.table_action,  # SW-13, A1.10: total defense, prone
}
# C1.1 / C1.2: powers, a sheet's action points, ammunition, grenades, autofire (powers.py);
# Bluff for combat advantage, escape, falling (skills.py)
HANDLERS.update(
    {
        "CreatureRegistered": powers.registered(HANDLERS["CreatureRegistered"]),
        "SheetUpdated": powers.sheet_updated(HANDLERS["SheetUpdated"]),
        "AttackMade": powers.attack(HANDLERS["AttackMade"]),
        "ShortRestTaken": powers.rest("short", HANDLERS["ShortRestTaken"]),
        "ExtendedRestTaken": powers.rest("extended", HANDLERS["ExtendedRestTaken"]),
        "EncounterEnded": powers.encounter_ended(HANDLERS["EncounterEnded"]),
        "PowerUsed": encounters.with_action(powers.power_used, field="creature"),
        "AmmunitionExpended": powers.ammunition_expended,
        "EquipmentChanged": powers.equipment_changed,
        "GrenadeThrown": encounters.with_action(powers.grenade_thrown, field="creature"),
        "BluffForCombatAdvantageRolled": encounters.with_action(skills.bluff, field="creature"),
        "EscapeAttempted": encounters.with_action(skills.escape, field="creature"),
        "FallTaken": skills.fall,
    }
)


ERROR_CODES: dict[str, str] = {
    "ACTION_POINT_LOCKED": "An action point was already spent since the last rest or in this encounter.",
    "ALREADY_CARED_TODAY": "Long-term care was already given today.",
    "ALREADY_PRONE": "The creature is already prone.",
    "ALREADY_SAVED": "The creature already saved against this effect this turn.",
    "ALREADY_SUSTAINED": "The effect was already sustained this turn.",
    "BLUFF_USED": "The creature already bluffed for combat advantage in this encounter.",
    "CANNOT_ACT": "The creature's conditions allow no action.",
    "CREATURE_DYING": "The creature is dying.",
    "DAZED": "A dazed creature cannot do this.",
    "DAZED_ONE_ACTION": "A dazed creature takes one action per turn.",
    "EFFECT_KEY_TAKEN": "An active effect already has this key (an effect's key is unique while it lasts).",
    "EXTENDED_REST_TOO_SOON": "Too soon after the last extended rest.",
    "FREE_ACTIONS_ONLY": "Only free actions are allowed now.",
    "IMMEDIATE_USED": "The creature's immediate action is used until its next turn.",
    "NOT_CONSCIOUS": "The creature is not conscious.",
    "NOT_A_GRAB": "An escape is from a grab (grabbed, immobilized, restrained) held by another creature.",
    "NOT_DEAD": "The creature is not dead (raising needs a dead creature).",
    "NOT_DYING": "The creature is not dying.",
    "NOT_HELPLESS": "A coup de grace needs a helpless target.",
    "NOT_OVERRIDABLE": "The fold does not read an override of this field on this fact (C0.4).",
    "NOT_PRONE": "The creature is not prone (nothing to stand up from).",
    "NOT_SAVE_ENDS": "The effect does not end on a save.",
    "NOT_SUSTAINED": "The effect is not sustained.",
    "NO_ACTION_POINT": "The creature has no action point.",
    "NO_AMMUNITION": "The creature has not enough rounds (or grenades) of that weapon.",
    "NO_HEALING_SURGE": "The creature has no healing surge left.",
    "OPPORTUNITY_USED": "The creature's opportunity action is used this turn.",
    "POWER_EXPENDED": "The power is expended until a rest or a recharge regains it (OR-9, SW-49).",
    "SECOND_WIND_USED": "Second wind is already used in this encounter.",
    "SURPRISE_ROUND_ONE_ACTION": "In the surprise round a creature takes one action.",
    "SUSTAINING": "The effect is being sustained.",
}
"""The refusal codes Stellar Winds' rules add to the core's (``domain.errors.CORE_CODES``)."""


def _defenses_now(c: Creature, flags: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Each defense now, as ``attacks.defense_of`` gives it: against a melee attack (with its
    parts, the sheet's first) and against a ranged attack from a non-adjacent attacker."""
    out = {}
    differs = attacks.ranged_differs(c)  # else the ranged value is the melee one: half the work
    for d in ("ac", "fort", "ref", "will"):
        value, parts = attacks.defense_of(c, d, "melee", flags=flags)
        ranged = attacks.defense_of(c, d, "ranged", adjacent=False, flags=flags)[0] if differs else value
        out[d] = {"value": value, "against_ranged": ranged, "parts": parts}
    return out


class StellarWinds:
    id = "stellar-winds"
    title = "Stellar Winds"
    default = True  # the product's default ruleset (DESIGN.md "Rulesets", RULES.md ruling 2)
    version = "2"  # 2: powers, ammunition, a sheet's action points, bluff (old snapshots refold)
    catalogue = CATALOGUE
    flag_defaults = DEFAULTS
    error_codes = ERROR_CODES
    roll_purposes = ROLL_PURPOSES  # what each roll of a fact is for (C0.3; domain.core.rolls)
    encounter_rules = encounters.RULES  # its hooks into the core encounter engine

    @property
    def fact_types(self) -> frozenset[str]:
        return frozenset(HANDLERS)

    def narrator(self, markup: Markup) -> StellarWindsNarrator:
        return StellarWindsNarrator(markup)

    def flags_doc(self) -> list[dict[str, Any]]:
        return [{"name": n, "default": f.default, "ref": f.ref, "doc": f.doc} for n, f in FLAGS.items()]

    def initial_state(self, flags: dict[str, Any]) -> SWState:
        return SWState(flags)

    def validate_flag(self, flag: str, value: Any) -> Any:
        return validate_flag(flag, value)

    def check_override(self, fact_type: str, payload: dict[str, Any], field: str, value: Any) -> Any:
        """C0.4: only the overrides the fold honours (``overrides.OVERRIDABLE``)."""
        return overrides.check(fact_type, payload, field, value)

    def apply(self, state: SWState, fact_type: str, payload: dict[str, Any], ctx: Any) -> dict[str, Any]:
        handler = HANDLERS.get(fact_type)
        if handler is None:
            raise InvalidInput(f"{self.title} does not know the fact {fact_type}", field="type")
        state.fact_seq, state.fact_effects = ctx.seq, 0
        result: dict[str, Any] = handler(state, payload, ctx)
        return result

    def pending_rolls(self, state: SWState) -> list[tuple[str, dict[str, Any]]]:
        """Facts (without their dice) the table owes now: the turn in progress before it can end
        (saves, a death save), or between turns before the next round can start."""
        return encounters.pending_rolls(state)

    # ---------------------------------------------------------------- views
    def creature_view(self, state: SWState, creature_id: str) -> dict[str, Any]:
        c: Creature = state.creatures[creature_id]
        flags = state.flags
        level = current_level(c, flags)
        return {
            "id": c.id,
            "name": c.name,
            "kind": c.kind,
            "level": level,
            "hit_points": {"current": c.hp, "max": c.max_hp, "temporary": c.temp_hp},
            "xp": c.xp,
            "xp_level": level_for_xp(c.xp, xp_table(flags)) if c.xp is not None else None,
            "hp": c.hp,
            "max_hp": c.max_hp,
            "temp_hp": c.temp_hp,
            "bloodied": c.bloodied(flags),
            "bloodied_value": c.bloodied_value(flags),
            "wounds": c.wounds,
            "max_wounds": c.max_wounds(flags),
            "surges": c.surges,
            "surges_per_day": c.surges_per_day,
            "surge_value": c.surge_value(flags),
            "second_wind_used": c.second_wind_used,
            "life": c.life,
            "death_save_failures": c.death_fails,
            "action_points": c.ap,
            "action_point_spent_since_rest": c.ap_locked,
            "encounters_since_extended_rest": c.encounters_since_rest,
            "initiative_bonus": initiative_bonus(c, flags),
            "conditions": sorted(c.conditions()),
            "effects": [dict(e) for e in c.effects],
            "defenses": {d: c.defenses[d] for d in ("ac", "fort", "ref", "will")},
            "defenses_now": _defenses_now(c, flags),
            "speed": {"base": c.speed, "current": c.speed_now()[0], "limited_by": c.speed_now()[1]},
            "perception_modifier": c.perception_mod(),
            **powers.view(c),
        }

    def encounter_view(self, state: SWState, encounter_id: str) -> dict[str, Any]:
        return encounter_view(state.encounters[encounter_id], state)

    def campaign_view(self, state: SWState) -> dict[str, Any]:
        return {
            "clock_minutes": state.minutes,
            "clock": core_encounters.clock(state.minutes),
            "flags": dict(state.flags),
            "active_encounter": state.active_encounter,
        }

    # ------------------------------------------------------------ persisted snapshots
    def dump_state(self, state: SWState) -> dict[str, Any]:
        return dump_table(state)

    def load_state(self, data: dict[str, Any]) -> SWState:
        return load_table(SWState, data, creature=Creature, encounter=core_encounters.Encounter)

    def tracks(self, view: dict[str, Any]) -> list[Track]:
        """Hit points (bloodied at half), wounds (dying at 0, B-SW-1..4) and healing surges."""
        return [
            Track(
                "hp",
                "HP",
                view["hp"],
                ceiling=view["max_hp"],
                thresholds=(("bloodied", view["bloodied_value"]),),
            ),
            Track(
                "wounds",
                "Wounds",
                view["wounds"],
                ceiling=view["max_wounds"],
                floor=None,
                thresholds=(("dying", 0),),
            ),
            Track("surges", "Surges", view["surges"], ceiling=view["surges_per_day"]),
        ]


def encounter_view(e: core_encounters.Encounter, state: SWState) -> dict[str, Any]:
    """The core encounter view (order, round, phase, whose turn, who is next, owed rolls), plus
    the active effects on the participants with their durations (anchor per B-X-2)."""
    view = core_encounters.view(state, e, encounters.RULES)
    view["effects"] = [
        {
            "effect_id": x["effect_id"],
            "target": cid,
            "source": x.get("source"),
            "name": x.get("name"),
            "components": [dict(comp) for comp in x["components"]],
            "duration": dict(x["duration"]),
            **({"pending": True} if x.get("pending") else {}),
        }
        for cid in e.participants
        if cid in state.creatures
        for x in state.creatures[cid].effects
    ]
    return view


STELLAR_WINDS = StellarWinds()
"""The ruleset object the ``chronicle.rulesets`` entry point ``stellar-winds`` names."""
__all__ = ["STELLAR_WINDS", "CONDITIONS", "StellarWinds"]
