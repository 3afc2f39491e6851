"""The d20 house rules with Stamina / Agility / Spirit (RULES.md A3, B-DH, C3; adopted
rulings 1, 4, 20 and 26): ruleset id ``d20``.

Sheets with effective Stamina S and the Stamina bonus B, hit points that may go below 0,
the life bands fine / disabled / dying (stable) / dead with how a creature died, attacks with
confirmed criticals, two-weapon and iterative attacks, attacks of opportunity, massive
damage, saves, ability damage and its recovery by rest. Encounter sequencing is the core
engine's; this ruleset's part of it is in :mod:`~domain.rulesets.d20_house.hooks`.
"""

from __future__ import annotations

from typing import Any

from domain.core import encounters as core_encounters
from domain.core.narration import Markup
from domain.core.state import dump_table, load_table
from domain.errors import InvalidInput
from domain.rulesets import Track
from domain.rulesets.d20_house import attacks, hooks, rules
from domain.rulesets.d20_house.actions import allowance
from domain.rulesets.d20_house.attacks import armor_class
from domain.rulesets.d20_house.facts import CATALOGUE
from domain.rulesets.d20_house.flags import DEFAULTS, FLAGS, validate_flag
from domain.rulesets.d20_house.narrate import D20Narrator
from domain.rulesets.d20_house.state import Creature, D20State
from domain.rulesets.d20_house.tables import ABILITIES, SAVES

HANDLERS: dict[str, Any] = {**rules.HANDLERS, **attacks.HANDLERS}

ERROR_CODES: dict[str, str] = {
    "ALREADY_STABLE": (
        "The dying creature is already stable: it rolls no stabilisation and needs no Heal check."
    ),
    "AOO_LIMIT": (
        "The creature has made every attack of opportunity it may make this round (one, counted "
        "from its own turn start; B-DH-14)."
    ),
    "CONFIRMATION_PENDING": (
        "The attack threatens a critical: record its confirmation roll before its damage."
    ),
    "CONFIRMATION_ROLLED": "The threat's confirmation roll is already recorded.",
    "CRITICAL_DICE_MISMATCH": (
        "A confirmed critical rolls the weapon's dice twice (crit_weapon, the same dice); a "
        "regular hit rolls them once (no crit_weapon)."
    ),
    "DISABLED_ONE_ACTION": "A disabled creature takes only a standard or a move action each round (DH-11).",
    "FIVE_FOOT_STEP": "A 5-foot step and any other movement exclude each other in a round (DH-4).",
    "FLAT_FOOTED": "A flat-footed creature makes no attacks of opportunity (B-DH-11).",
    "ITERATIVE_UNAVAILABLE": "The attacker's base attack bonus has no such iterative attack (DH-8).",
    "NOT_A_THREAT": "The attack roll was not a natural 20: there is no critical to confirm (DH-7).",
    "NOT_CONSCIOUS": "The creature is not conscious.",
    "NOT_DEAD": "The creature is not dead (raising needs a dead creature).",
    "NOT_DYING": "The creature is not dying.",
    "NO_MASSIVE_DAMAGE_SAVE_OWED": (
        "The creature owes no massive-damage save for that attack (none dealt it the threshold "
        "and left it alive, or it was already rolled; B-DH-1)."
    ),
    "NO_OPEN_ATTACK": (
        "No attack at that position awaits a confirmation or damage: it missed, its damage is "
        "recorded, or it is not an attack."
    ),
    "REST_NOT_CLEAN": "Ability scores return only after a rest without spells, skills or combat (DH-14).",
    "REST_TOO_SHORT": "Ability scores return after at least 4 hours of sleep or 8 hours of rest (DH-14).",
    "STABILIZATION_NOT_DUE": (
        "In a running encounter a stabilisation roll is made right after the last turn of the round, "
        "for that round (ruling 26)."
    ),
    "STABILIZATION_ROLLED": "The dying creature already rolled its stabilisation for that round (ruling 26).",
    "STILL_DEAD": (
        "The resurrection would leave the creature dead (Stamina 0, or HP below -Stamina): "
        "restore its abilities or give more HP."
    ),
    "SURPRISE_ROUND_ONE_ACTION": "In the surprise round a creature takes one action.",
}
"""The refusal codes the d20 house rules add to the core's (``domain.errors.CORE_CODES``)."""


class D20House:
    id = "d20"
    title = "d20 house rules (Stamina / Agility / Spirit)"
    version = "1"
    catalogue = CATALOGUE
    flag_defaults = DEFAULTS
    error_codes = ERROR_CODES
    encounter_rules = hooks.RULES
    """Its hooks into the core encounter engine (see :mod:`domain.rulesets.d20_house.hooks`)."""

    @property
    def fact_types(self) -> frozenset[str]:
        return frozenset(HANDLERS)

    def narrator(self, markup: Markup) -> D20Narrator:
        return D20Narrator(markup)

    def flags_doc(self) -> list[dict[str, Any]]:
        return [{"name": n, "default": f.default, "ref": f.ref, "doc": f.doc} for n, f in FLAGS.items()]

    def initial_state(self, flags: dict[str, Any]) -> D20State:
        return D20State(flags)

    def validate_flag(self, flag: str, value: Any) -> Any:
        return validate_flag(flag, value)

    def apply(self, state: D20State, fact_type: str, payload: dict[str, Any], ctx: Any) -> dict[str, Any]:
        handler = HANDLERS.get(fact_type)
        if handler is None:
            raise InvalidInput(f"{self.title} does not know the fact {fact_type}", field="type")
        state.fact_seq, state.fact_effects = ctx.seq, 0
        result: dict[str, Any] = handler(state, payload, ctx)
        return result

    def pending_rolls(self, state: D20State) -> list[tuple[str, dict[str, Any]]]:
        """Rolls owed now (without their dice): each massive-damage save a creature owes (B-DH-1)
        and, right after the last turn of a round, each dying creature's stabilisation roll
        (ruling 26)."""
        return hooks.pending_rolls(state)

    # ---------------------------------------------------------------- views
    def creature_view(self, state: D20State, creature_id: str) -> dict[str, Any]:
        c: Creature = state.creatures[creature_id]
        flags = state.flags
        ac = {kind: armor_class(c, kind, flags)[0] for kind in ("ac", "touch", "flat_footed")}
        return {
            "id": c.id,
            "name": c.name,
            "kind": c.kind,
            "level": c.level,
            "life": c.life,
            "conditions": sorted(c.conditions()),
            "effects": [dict(e) for e in c.effects],
            "hit_points": {"current": c.hp, "max": c.max_hp, "temporary": 0},
            "class": c.klass,
            "abilities": {a: c.abilities[a] for a in ABILITIES},
            "ability_damage": dict(c.ability_damage),
            "ability_drain": dict(c.ability_drain),
            "effective_abilities": {a: c.score(a) for a in ABILITIES},
            "modifiers": {a: c.mod(a) for a in ABILITIES},
            "S": c.S,
            "B": c.B,
            "hp": c.hp,
            "max_hp": c.max_hp,
            "band": c.band,
            "stable": c.stable,
            "conscious": c.conscious,
            "dead_by": c.dead_by,
            "thresholds": {
                "disabled_from": 0,
                "disabled_to": -c.B,
                "dying_from": -(c.B + 1),
                "dying_to": -c.S,
                "dead_below": -c.S,
            },
            "bab": list(c.bab),
            "base_saves": dict(c.base_saves),
            "saves": {s: c.save_bonus(s) for s in SAVES},
            "ac": ac,
            "initiative_bonus": c.initiative_bonus(),
            "feats": list(c.feats),
            "flat_footed": c.flat_footed,
            "running": c.running,
            "aoo_used": c.aoo_used,
            "aoo_allowed": c.aoo_per_round,
            "actions_allowed": allowance(c),
            "massive_damage_saves_owed": [dict(s) for s in c.massive_saves],
        }

    def encounter_view(self, state: D20State, encounter_id: str) -> dict[str, Any]:
        """The core engine's view, plus who is flat-footed and who owes a stabilisation roll."""
        e = state.encounters[encounter_id]
        out = core_encounters.view(state, e, hooks.RULES)
        out["flat_footed"] = [
            c for c in e.participants if c in state.creatures and state.creatures[c].flat_footed
        ]
        running = e.state == core_encounters.RUNNING and hooks.round_is_over(state, e)
        out["stabilization_owed"] = (
            [p["creature"] for _, p in hooks.stabilization_owed(state, e)] if running else []
        )
        return out

    def campaign_view(self, state: D20State) -> dict[str, Any]:
        return {
            "clock_minutes": state.minutes,
            "flags": dict(state.flags),
            "active_encounter": state.active_encounter,
            "open_attacks": {
                k: {x: v[x] for x in ("attacker", "target", "threat", "critical")}
                for k, v in sorted(state.attacks.items(), key=lambda kv: int(kv[0]))
            },
        }

    # ------------------------------------------------------------ persisted snapshots
    def dump_state(self, state: D20State) -> dict[str, Any]:
        """The state as JSON (issue 21): the core's slotted-state dump. Encounters join it with
        the core encounter engine (pass their class to ``load_table`` then)."""
        return dump_table(state)

    def load_state(self, data: dict[str, Any]) -> D20State:
        return load_table(D20State, data, creature=Creature, encounter=core_encounters.Encounter)

    def tracks(self, view: dict[str, Any]) -> list[Track]:
        """HP against the disabled / dying / dead thresholds (DH-10; they move with Stamina,
        B-DH-9), and effective Stamina against 0 (DH-13)."""
        t = view["thresholds"]
        return [
            Track(
                "hp",
                "HP",
                view["hp"],
                ceiling=view["max_hp"],
                floor=None,
                thresholds=(("disabled", 0), ("dying", t["dying_from"]), ("dead", t["dead_below"] - 1)),
            ),
            Track(
                "stamina",
                "Stamina",
                view["S"],
                ceiling=view["abilities"]["stamina"],
                floor=0,
                thresholds=(("dead", 0),),
            ),
        ]


D20_HOUSE = D20House()
"""The ruleset object the ``chronicle.rulesets`` entry point ``d20`` names."""
__all__ = ["D20_HOUSE", "D20House", "ERROR_CODES"]
