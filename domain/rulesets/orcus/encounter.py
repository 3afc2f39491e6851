"""Orcus in the core encounter engine (``domain/core/encounters.py``): its hooks and its facts'
use of the action economy.

The engine folds encounters, initiative, surprise, turns, rounds, delay and ready for every
ruleset. Orcus gives it:

* the action economy as data (OR-6: one standard, one move, one swift, free actions; a standard
  may be taken as a move or a swift, a move as a swift; OR-8 / B-OR-9: one immediate action,
  counter or reaction, between two of its own turns; OR-8 / B-OR-10: one opportunity attack per
  other creature's turn; OR-4: a single standard, move or swift action in the surprise round,
  free actions too, B-OR-6), and the limits of the 4e placeholder conditions (A4.9);
* initiative (OR-5, B-OR-2): the roll carries its modifier as the table gives it; the higher
  total acts first; a group of identical creatures rolls once and its members act one after
  another in the order the GM records (B-OR-14: the group roll's ``creatures``, re-ordered with
  ``InitiativeOrderChosen``); ties are ordered by the players and the GM
  (``InitiativeOrderChosen``); the order is fixed for the encounter;
* the derived steps of ``domain/rulesets/orcus/turns.py`` at the start and the end of each turn
  and at the end of the encounter, and the rolls a turn owes before it ends.

Orcus facts that take an action in a running encounter (an attack, a power, Rally, a maintain)
go through the economy: checked before anything changes, counted after the fact succeeded.
"""

from __future__ import annotations

from typing import Any

from domain import dice
from domain.core import effects as core_effects
from domain.core import encounters as engine
from domain.core.encounters import ActionLimit, ActionTable, Encounter
from domain.errors import InvalidInput
from domain.rulesets.orcus import attacks, rules, turns
from domain.rulesets.orcus.tables import (
    ACTION_BUDGETS,
    ACTION_KINDS,
    CONDITIONS,
    ONCE_PER_ROUND,
    ONCE_PER_TURN,
    SUBSTITUTIONS,
    SURPRISE_ROUND_ACTIONS,
    TURN_ACTIONS,
)

ACTIONS = ActionTable(
    kinds=ACTION_KINDS,
    turn_bound=TURN_ACTIONS,
    budgets=ACTION_BUDGETS,
    free=("free",),
    substitutions=SUBSTITUTIONS,
    once_per_round=ONCE_PER_ROUND,
    once_per_turn=ONCE_PER_TURN,
    surprise_round=ActionLimit(
        turn_actions=SURPRISE_ROUND_ACTIONS,
        code="SURPRISE_ROUND_ONE_ACTION",
        text="in the surprise round a creature takes a single standard action, or a move or swift "
        "action instead (OR-4)",
    ),
    ready_cost="standard",
    readied_kind="immediate",
    budget_text="(OR-6: one standard, one move and one swift action; a move or swift instead of the "
    "standard, a swift instead of the move)",
)
# What the placeholder conditions allow (A4.9; ``tables.CONDITIONS``), strictest last.
LIMITS: dict[str, ActionLimit] = {
    "all": engine.NO_LIMIT,
    "one": ActionLimit(
        turn_actions=1, triggered=False, code="DAZED_ONE_ACTION", text="one standard, move or swift action"
    ),
    "none": ActionLimit(turn_actions=0, free=False, triggered=False, code="CANNOT_ACT", text="no actions"),
}


class OrcusEncounters(engine.Rules):
    """The hooks Orcus gives the core encounter engine."""

    actions = ACTIONS
    reroll_each_round = False  # OR-5: "The initiative order remains the same from round to round."
    owed_rolls = {
        "RechargeRolled": ("recharge roll", "1d6"),
        "SavingThrowRolled": ("saving throw", "1d20"),
        "DeathSavingThrowRolled": ("death saving throw", "1d20"),
    }
    skip_texts = {
        "dead": "dead (rulings 8, 20)",
        "surprised": "surprised: no turn in the surprise round (OR-4)",
    }

    def initiative_entry(
        self, state: Any, enc: Encounter, creatures: list[str], payload: dict[str, Any], ctx: Any
    ) -> dict[str, Any]:
        """OR-5 / B-OR-2: an initiative check is a d20 plus the modifier the table gives in the roll."""
        roll = payload["roll"]
        natural = dice.natural(roll)
        if natural is None:
            raise InvalidInput("an initiative check is a single d20 plus its modifier", field="roll")
        total = dice.roll_total(roll)
        return {"score": total, "natural": natural, "rank": [total]}

    def action_limit(self, state: Any, enc: Encounter | None, cid: str) -> tuple[ActionLimit, str | None]:
        mode = state.flags["or.placeholder.conditions"]
        table = CONDITIONS[mode]
        ranks = list(LIMITS)
        worst, why = "all", None
        for name in sorted(state.creatures[cid].conditions(mode)):
            spec = table.get(name)
            if spec and ranks.index(spec.actions) > ranks.index(worst):
                worst, why = spec.actions, name
        return LIMITS[worst], why

    def enforce_turns(self, state: Any) -> bool:
        return bool(state.flags["or.enforce_turns"])

    def rolls_owed_at_turn_end(self, state: Any, enc: Encounter, cid: str) -> list[engine.Owed]:
        return turns.rolls_owed_at_turn_end(state, enc, cid)

    def turn_started(self, state: Any, enc: Encounter, cid: str, ctx: Any) -> dict[str, Any]:
        return turns.turn_started(state, enc, cid, ctx)

    def turn_ended(self, state: Any, enc: Encounter, cid: str, ctx: Any) -> dict[str, Any]:
        return turns.turn_ended(state, enc, cid, ctx)

    def encounter_ended(self, state: Any, enc: Encounter, ctx: Any) -> dict[str, Any]:
        return turns.encounter_ended(state, enc, ctx)


RULES = OrcusEncounters()
"""The Orcus hooks of the core encounter engine."""


def rally(state: Any, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """Rally takes the action ``or.placeholder.rally_action`` in a running encounter (A4.9)."""
    action = state.flags["or.placeholder.rally_action"]
    return engine.with_action(RULES, rules.rally_used, field="creature", fixed=action)(state, p, ctx)


def maintain(state: Any, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """OR-18: maintaining an effect takes its stated action on the user's turn."""
    _, e = core_effects.find(state, p["effect_id"])
    user = turns.maintainer(state, e)
    enc = engine.running_for(state, user.id)
    note: dict[str, Any] = {}
    if enc is not None and p["action"] == e["duration"].get("action", "swift"):
        note = engine.check_action(state, enc, RULES, user.id, p["action"], ctx)
    result = turns.effect_maintained(state, p, ctx)
    if enc is not None:
        engine.commit_action(enc, RULES, user.id, p["action"])
    return {**result, **note}


HANDLERS: dict[str, Any] = {
    **engine.handlers(RULES),
    "AttackMade": engine.with_action(RULES, attacks.attack_made, field="attacker"),
    "PowerUsed": engine.with_action(RULES, rules.power_used, field="creature"),
    "RallyUsed": rally,
    "EffectMaintained": maintain,
}
"""The engine's core facts, and the Orcus facts that use an action."""


def pending_rolls(state: Any) -> list[engine.Owed]:
    return engine.pending_rolls(state, RULES)


def encounter_view(state: Any, e: Encounter) -> dict[str, Any]:
    """The core encounter view plus the effects in force on the participants (OR-17 durations)."""
    view = engine.view(state, e, RULES)
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
