"""Orcus (RULES.md A4, B-OR, C4; adopted rulings 1, 3, 5, 7, 8, 20-24): ruleset id ``orcus``.

Orcus is a 4e-derived open game of which the seed holds about a fifth (ruling 5): its XP table,
action points, attack modifiers, durations and saves are RULE; hit points, dying, healing,
persistent damage, rests and conditions are the flagged placeholders of A4.9
(``or.placeholder.*``). The modules:

* ``facts`` (C4.2 catalogue), ``state`` (C4.1), ``tables`` (A4.6, conditions, the action
  economy, durations, rests), ``flags`` (C5 and the A4.9 placeholders);
* ``rules``: sheets, XP and levels, powers and recharge, action points, the placeholder HP
  pack and rests; ``attacks``: attack resolution; ``effects``: effect specs;
* ``turns``: the turn-boundary steps for the core encounter engine's hooks, the rolls a turn
  owes, saves, maintain; ``narrate``: the sentences.
"""

from __future__ import annotations

from typing import Any

from domain.core import effects as core_effects
from domain.core import encounters as core_encounters
from domain.core import encounters as engine
from domain.core.flags import document
from domain.core.narration import Markup
from domain.core.state import dump_table, load_table
from domain.errors import InvalidInput
from domain.rulesets import Track
from domain.rulesets.orcus import attacks, encounter, rules, turns
from domain.rulesets.orcus.facts import CATALOGUE
from domain.rulesets.orcus.flags import DEFAULTS, FLAGS, validate_flag
from domain.rulesets.orcus.life import dies_at
from domain.rulesets.orcus.narrate import OrcusNarrator
from domain.rulesets.orcus.state import Creature, OrcusState, current_level, surge_value, xp_level
from domain.rulesets.orcus.tables import DEFENSES

HANDLERS: dict[str, Any] = {**rules.HANDLERS, **attacks.HANDLERS, **turns.HANDLERS, **encounter.HANDLERS}

ERROR_CODES: dict[str, str] = {
    "ACTION_POINT_SPENT_THIS_ENCOUNTER": "The hero already spent an action point in this encounter (OR-7).",
    "ACTION_POINT_SPENT_THIS_ROUND": (
        "The monster (elite or boss) already spent an action point this round (OR-7)."
    ),
    "ALREADY_MAINTAINED": "The effect was already maintained this turn (OR-18).",
    "ALREADY_SAVED": "The creature already saved against this effect this turn.",
    "CANNOT_ACT": "The creature's conditions allow no action.",
    "CREATURE_DYING": "The creature is dying.",
    "DAZED_ONE_ACTION": "A dazed creature takes one action per turn.",
    "IMMEDIATE_USED": "The creature's immediate action is used until its next turn.",
    "NOT_CONSCIOUS": "The creature is not conscious.",
    "NOT_DYING": "The creature is not dying.",
    "NOT_EXPENDED": "The power is not expended: there is nothing to recharge (ruling 24).",
    "NOT_MAINTAINED": "The effect is not maintained (OR-18): no maintain action or choice to end it.",
    "NOT_SAVE_ENDS": "The effect does not end on a save.",
    "NO_ACTION_POINT": "The creature has no action point.",
    "NO_HEALING_SURGE": "The creature has no healing surge left.",
    "OPPORTUNITY_USED": "The creature's opportunity action is used this turn.",
    "POWER_EXPENDED": "The power is expended until a rest or a recharge regains it (OR-9, SW-49).",
    "RALLY_USED": (
        "The creature already rallied in this encounter (OR-9: Rally is usable once per encounter)."
    ),
    "SURPRISE_ROUND_ONE_ACTION": "In the surprise round a creature takes one action.",
    "WRONG_FREQUENCY": (
        "The power's frequency does not allow this: a recharge roll for a power without 'Recharge "
        "X-Y', or a recharge condition for one without 'Recharge if' (OR-9)."
    ),
}
"""The refusal codes Orcus's rules add to the core's (``domain.errors.CORE_CODES``)."""


def _defenses_now(c: Creature, mode: str) -> dict[str, dict[str, Any]]:
    """Each defense now with its parts (the sheet's first), as an attack meets it (A4.9 conditions,
    effects)."""
    out = {}
    for d in DEFENSES:
        value, parts = attacks.defense_of(c, d, mode)
        out[d] = {"value": value, "parts": parts}
    return out


class Orcus:
    id = "orcus"
    title = "Orcus"
    version = "1"
    catalogue = CATALOGUE
    flag_defaults = DEFAULTS
    error_codes = ERROR_CODES
    encounter_rules = encounter.RULES  # its hooks into the core encounter engine

    @property
    def fact_types(self) -> frozenset[str]:
        return frozenset(HANDLERS)

    def flags_doc(self) -> list[dict[str, Any]]:
        return document(FLAGS)

    def initial_state(self, flags: dict[str, Any]) -> OrcusState:
        return OrcusState(flags)

    def dump_state(self, state: OrcusState) -> dict[str, Any]:
        """The state as JSON for persisted snapshots: the core's slotted-state dump."""
        return dump_table(state)

    def load_state(self, data: dict[str, Any]) -> OrcusState:
        return load_table(OrcusState, data, creature=Creature, encounter=core_encounters.Encounter)

    def validate_flag(self, flag: str, value: Any) -> Any:
        return validate_flag(flag, value)

    def apply(self, state: OrcusState, fact_type: str, payload: dict[str, Any], ctx: Any) -> dict[str, Any]:
        handler = HANDLERS.get(fact_type)
        if handler is None:
            raise InvalidInput(
                f"{self.title} does not fold {fact_type}",
                field="type",
            )
        state.fact_seq, state.fact_effects = ctx.seq, 0
        result: dict[str, Any] = handler(state, payload, ctx)
        return result

    def narrator(self, markup: Markup) -> OrcusNarrator:
        return OrcusNarrator(markup)

    def pending_rolls(self, state: OrcusState) -> list[tuple[str, dict[str, Any]]]:
        """What the table owes now: the turn in progress before it can end (recharge rolls, saves,
        a dying hero's death save)."""
        return encounter.pending_rolls(state)

    # ---------------------------------------------------------------- views
    def creature_view(self, state: OrcusState, creature_id: str) -> dict[str, Any]:
        c: Creature = state.creatures[creature_id]
        flags = state.flags
        enc = state.encounter
        active_id = enc.id if enc is not None and c.id in getattr(enc, "participants", ()) else None
        spent = c.ap_spent or {}
        return {
            "id": c.id,
            "name": c.name,
            "kind": c.kind,
            "level": current_level(c, flags),
            "life": c.life,
            "conditions": sorted(c.conditions(flags["or.placeholder.conditions"])),
            "effects": [dict(e) for e in c.effects],
            "hit_points": {"current": c.hp, "max": c.max_hp, "temporary": c.temp_hp},
            # Orcus's own keys (C4.1)
            "rank": c.rank,
            "xp": c.xp,
            "xp_level": xp_level(c, flags),
            "level_pinned": c.level_pinned,
            "action_points": c.ap,
            "action_points_stat_block": c.ap_stat,
            "action_point_spent_this_encounter": active_id is not None
            and spent.get("encounter") == active_id,
            "action_point_spent": dict(spent) if spent else None,
            "encounters_since_long_rest": c.encounters_since_long_rest,
            "powers": {
                pid: {
                    **dict(power),
                    "expended": pid in c.expended,
                    **({"used": dict(c.expended[pid])} if pid in c.expended else {}),
                }
                for pid, power in sorted(c.powers.items())
            },
            "defenses": dict(c.defenses),
            "defenses_now": _defenses_now(c, flags["or.placeholder.conditions"]),
            "resist": dict(c.resist),
            "vuln": dict(c.vuln),
            # the A4.9 placeholder pack
            "hp": c.hp,
            "max_hp": c.max_hp,
            "temp_hp": c.temp_hp,
            "bloodied": c.bloodied,
            "bloodied_value": c.bloodied_value,
            "dies_at": dies_at(state, c),
            "surges": c.surges,
            "surges_per_day": c.surges_per_day,
            "surge_value": surge_value(c, flags),
            "death_save_failures": c.death_fails,
            "rallied": c.rally_used is not None and c.rally_used == (active_id or ""),
            "persistent_damage": {
                t: {"amount": amount, "effect_id": eid}
                for t, (amount, eid) in sorted(core_effects.highest_per_type(c, "persistent").items())
            },
        }

    def encounter_view(self, state: OrcusState, encounter_id: str) -> dict[str, Any]:
        return encounter.encounter_view(state, state.encounters[encounter_id])

    def campaign_view(self, state: OrcusState) -> dict[str, Any]:
        return {
            "clock_minutes": state.minutes,
            "clock": engine.clock(state.minutes),
            "flags": dict(state.flags),
            "active_encounter": state.active_encounter,
        }

    def tracks(self, view: dict[str, Any]) -> list[Track]:
        """Hit points (below 0 while dying; the bloodied, dying and death lines of A4.9) and action
        points (OR-7)."""
        lines: list[tuple[str, int]] = [("bloodied", view["bloodied_value"]), ("dying", 0)]
        if view["dies_at"] is not None and view["dies_at"] < 0:
            lines.append(("dead", view["dies_at"]))
        return [
            Track("hp", "HP", view["hp"], ceiling=view["max_hp"], floor=None, thresholds=tuple(lines)),
            Track("action_points", "Action points", view["action_points"], ceiling=None, floor=0),
        ]


ORCUS = Orcus()
"""The ruleset object the ``chronicle.rulesets`` entry point ``orcus`` names."""
__all__ = ["ERROR_CODES", "ORCUS", "Orcus"]
