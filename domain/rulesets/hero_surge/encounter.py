"""The hero's-surge system in the core encounter engine (``domain/core/encounters.py``): its hooks
and its facts' use of the action economy.

The engine folds encounters, initiative, surprise, turns, rounds, delay and ready for every
ruleset. The hero's-surge system gives it:

* initiative re-rolled every round (HS-2, ``reroll_each_round``): a check recorded while the
  encounter runs is for the next round, whose order is settled when it starts; the surprise
  round has its own check and round 1 checks again (HS-3 PROPOSAL). A check is the engine's
  ``InitiativeRolled`` carrying the success level the table ruled (B-HS-1, ruling 4); its rank is
  ``[band, hero, die]`` (HS-2, B-HS-18: bands by success level, heroes before foes in a band,
  then the higher die). ``InitiativeOrderChosen`` names one side of one band in the order the
  players (heroes: "decide between yourselves", even over the die) or the GM (foes) choose;
* the turn economy as data (HS-4: a move and an action, or two moves; HS-3: a single action in
  the surprise round); an unconscious creature takes no action;
* the derived steps of :mod:`~domain.rulesets.hero_surge.rounds` at the start of a round and of
  a turn (defend ends, HS-5; a dying hero owes a luck roll, B-HS-9 / ruling 25) and at the end of
  the encounter, and the luck rolls a turn owes before it ends (``ROLLS_PENDING``, ruling 18).

Hero's-surge facts that take an action in a running encounter (an attack, spell or maneuver
attempt, a medical attempt, defend, a full-round action, surge healing (B-HS-14), a healer's
kit) go through the economy: checked before anything changes, counted after the fact succeeded.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from domain.core import encounters as engine
from domain.core.encounters import ActionLimit, ActionTable, Encounter
from domain.errors import InvalidInput, RuleViolation
from domain.rulesets.hero_surge import attempts, rounds, rules
from domain.rulesets.hero_surge.tables import (
    ACTION_BUDGETS,
    ACTION_KINDS,
    ATTEMPT_ACTIONS,
    BAND,
    SURGE_PURPOSES,
    TURN_ACTIONS,
)

ACTIONS = ActionTable(
    kinds=ACTION_KINDS,
    turn_bound=TURN_ACTIONS,
    budgets=ACTION_BUDGETS,
    free=("free",),
    substitutions={"move": ("action",)},
    surprise_round=ActionLimit(
        turn_actions=1,
        code="SURPRISE_ROUND_ONE_ACTION",
        text="in the surprise round a creature takes a single action (HS-3)",
    ),
    ready_cost="action",
    readied_kind="free",
    budget_text="(HS-4: a move and an action, or two moves)",
)
NO_ACTIONS = ActionLimit(
    turn_actions=0, free=False, triggered=False, code="NOT_CONSCIOUS", text="no actions while unconscious"
)


class HeroSurgeEncounters(engine.Rules):
    """The hooks the hero's-surge system gives the core encounter engine."""

    actions = ACTIONS
    reroll_each_round = True  # HS-2: "At the start of each round, combatants determine their initiative"
    owed_rolls = {"LuckRollMade": ("luck roll", "1d20")}

    def owed_dice(self, state: Any, fact_type: str, payload: dict[str, Any]) -> str | None:
        """A luck roll's dice follow the flags and the hero's advantage (B-HS-3)."""
        if fact_type != "LuckRollMade":
            return None
        return rules.luck_roll_dice(state, str(payload.get("creature")), str(payload.get("context")))

    skip_texts = {
        "dead": "dead (rulings 8, 20)",
        "surprised": "surprised: no action in the surprise round (HS-3)",
    }

    def initiative_entry(
        self, state: Any, enc: Encounter, creatures: list[str], payload: dict[str, Any], ctx: Any
    ) -> dict[str, Any]:
        return rounds.initiative_entry(state, enc, creatures, payload, ctx)

    def is_dead(self, state: Any, cid: str) -> bool:
        return bool(state.creatures[cid].dead)

    def action_limit(self, state: Any, enc: Encounter | None, cid: str) -> tuple[ActionLimit, str | None]:
        c = state.creatures[cid]
        if c.unconscious and not c.dead:
            return NO_ACTIONS, ("dying" if c.dying else "unconscious")
        return engine.NO_LIMIT, None

    def enforce_turns(self, state: Any) -> bool:
        return bool(state.flags["hs.enforce_turns"])

    def rolls_owed_at_turn_end(self, state: Any, enc: Encounter, cid: str) -> list[engine.Owed]:
        return rounds.rolls_owed_at_turn_end(state, enc, cid)

    def rolls_owed_between_rounds(self, state: Any, enc: Encounter) -> list[engine.Owed]:
        return rounds.rolls_owed_at_turn_end(state, enc, "")

    def round_started(self, state: Any, enc: Encounter, ctx: Any) -> dict[str, Any]:
        return rounds.round_started(state, enc, ctx)

    def turn_started(self, state: Any, enc: Encounter, cid: str, ctx: Any) -> dict[str, Any]:
        return rounds.turn_started(state, enc, cid, ctx)

    def turn_ended(self, state: Any, enc: Encounter, cid: str, ctx: Any) -> dict[str, Any]:
        return rounds.turn_ended(state, enc, cid, ctx)

    def encounter_ended(self, state: Any, enc: Encounter, ctx: Any) -> dict[str, Any]:
        return rounds.encounter_ended(state, enc, ctx)


RULES = HeroSurgeEncounters()
"""The hero's-surge hooks of the core encounter engine."""

CORE = engine.handlers(RULES)


# ------------------------------------------------------------------ initiative facts
def initiative_rolled(state: Any, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """HS-2 / HS-3 / B-HS-18: the engine's roll with the ruled success level; a knock-back that was
    waiting for this check is used up by it."""
    who = [p["creature"]] if p.get("creature") is not None else list(p.get("creatures") or [])
    for cid in who:
        c = state.creatures.get(cid)
        if c is not None and c.dead:
            engine.require(
                False, f"{c.name} is dead: no initiative check (HS-1)", "CREATURE_DEAD", ctx, "creature"
            )
    out = CORE["InitiativeRolled"](state, p, ctx)
    for cid in who:
        if state.creatures[cid].knockback_pending:
            state.own(cid).knockback_pending = 0
    return out


def initiative_check_rolled(state: Any, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """The check as recorded before the engine folded hero's-surge encounters: the engine's
    ``InitiativeRolled`` for the round it names (the next round while the encounter runs)."""
    if p["encounter_id"] is None:
        raise InvalidInput("an initiative check names its encounter", field="encounter_id")
    enc = engine.encounter_of(state, p["encounter_id"])
    due = {enc.round + 1} if enc.state == engine.RUNNING else {0, 1}
    if p["round"] not in due:
        raise RuleViolation(
            f"initiative checks recorded now are for round {min(due)}"
            + (" (or 0 when surprise is determined)" if len(due) > 1 else ""),
            field="round",
            code="WRONG_ROUND",
        )
    roll = {
        "encounter_id": p["encounter_id"],
        "creature": p["creature"],
        "group": None,
        "creatures": [],
        "roll": p["roll"],
        "success_level": p["success_level"],
        "start_turn": False,
    }
    return {**initiative_rolled(state, roll, ctx), "round": p["round"]}


def order_chosen(state: Any, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """HS-2 / B-HS-18: inside one band, the heroes decide their order between themselves (over the
    die too), the GM orders the foes; the choice names exactly that side of that band. (It is the
    engine's tie order once their ranks are made equal; a group's members are the engine's.)"""
    enc = engine.encounter_of(state, p["encounter_id"])
    names = list(p["creatures"])
    entries = enc.initiative if enc.state == engine.SETUP else enc.upcoming
    this_round = (
        enc.state == engine.RUNNING
        and not all(n in enc.upcoming for n in names)
        and all(n in enc.initiative for n in names)
    )
    if this_round:  # the current round's order, before any of them has acted
        entries = enc.initiative
        for cid in names:
            require_not_acted(state, enc, cid)
    if any(entries.get(n, {}).get("group") for n in names):
        return CORE["InitiativeOrderChosen"](state, p, ctx)
    if len(names) < 2 or len(set(names)) != len(names):
        raise InvalidInput("an order names two or more different creatures", field="creatures")
    for cid in names:
        engine.participant(state, enc, cid, "creatures")
        if cid not in entries:
            raise RuleViolation(
                f"{state.creatures[cid].name} has not checked initiative"
                + (f" for round {enc.round + 1}" if enc.state == engine.RUNNING else ""),
                field="creatures",
                code="NOT_ROLLED",
            )
    first = entries[names[0]]
    band, hero = first["band"], state.creatures[names[0]].hero
    side = [
        cid
        for cid in enc.participants
        if cid in entries and entries[cid]["band"] == band and state.creatures[cid].hero == hero
    ]
    if sorted(side) != sorted(names):
        raise RuleViolation(
            f"the {'heroes' if hero else 'foes'} in the {band.replace('_', ' ')} band are "
            f"{', '.join(sorted(side))}: order all of them, and only them",
            field="creatures",
            code="TIE_ORDER_WRONG",
        )
    top = max(int(entries[cid]["die"]) for cid in names)
    for cid in names:
        entries[cid] = {**entries[cid], "rank": rounds.rank(BAND[band], hero, top), "chosen": True}
    where = {"band": band, "side": "heroes" if hero else "foes"}
    if not this_round:
        return {**CORE["InitiativeOrderChosen"](state, p, ctx), **where}
    for i, cid in enumerate(names):
        entries[cid] = {**entries[cid], "tie_rank": i, "tie_with": sorted(names), "tie_method": "choice"}
    engine.resort_remaining(enc)
    return {
        "creatures": names,
        "decided_by": p["decided_by"],
        "round": enc.round,
        "order": list(enc.order),
        **where,
    }


def require_not_acted(state: Any, enc: Encounter, cid: str) -> None:
    if state.creatures[cid].acted_round == [enc.id, enc.round]:
        raise RuleViolation(
            f"{state.creatures[cid].name} has already acted in round {enc.round}: the order of this "
            f"round can no longer change for it",
            field="creatures",
            code="ALREADY_ACTED",
        )


# ------------------------------------------------------------------ facts that take an action
def uses_action(
    handler: Callable[..., dict[str, Any]], field: str, action_of: Callable[[dict[str, Any]], str | None]
) -> Any:
    """Wrap a hero's-surge handler so that, in a running encounter, it takes ``action_of(payload)``
    (None: no action) through the economy: checked before the handler, counted after it."""

    def wrapped(state: Any, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
        action = action_of(p)
        cid = str(p.get(field) or "")
        if action is None or cid not in state.creatures:
            return handler(state, p, ctx)
        engine.before_turns(state, RULES, cid, action, ctx, gm_exception=False)
        enc = engine.running_for(state, cid)
        note = engine.check_action(state, enc, RULES, cid, action, ctx) if enc is not None else {}
        result = handler(state, p, ctx)
        if enc is not None:
            engine.commit_action(enc, RULES, cid, action)
            result = {**result, "takes_action": action, **note}
        return result

    wrapped.__doc__ = handler.__doc__
    return wrapped


def _attempt_action(p: dict[str, Any]) -> str | None:
    if p.get("action") is not None:
        return None if p["action"] == "none" else str(p["action"])
    return ATTEMPT_ACTIONS.get(p["kind"])


HANDLERS: dict[str, Any] = {
    **{k: v for k, v in CORE.items() if k not in rules.HANDLERS},
    "InitiativeRolled": initiative_rolled,
    "InitiativeCheckRolled": initiative_check_rolled,
    "InitiativeOrderChosen": order_chosen,
    "AttemptRolled": uses_action(attempts.HANDLERS["AttemptRolled"], "creature", _attempt_action),
    "DefendDeclared": uses_action(attempts.HANDLERS["DefendDeclared"], "creature", lambda p: "action"),
    "FullRoundActionStarted": uses_action(
        attempts.HANDLERS["FullRoundActionStarted"], "creature", lambda p: "action"
    ),
    "HeroSurgeSpent": uses_action(
        rules.HANDLERS["HeroSurgeSpent"],
        "creature",
        lambda p: "action" if SURGE_PURPOSES[p["purpose"]].action else None,
    ),
    "HealersKitUsed": uses_action(rules.HANDLERS["HealersKitUsed"], "healer", lambda p: "action"),
}
"""The engine's core facts (the hero's-surge clock keeps its own ``TimeAdvanced``: timed temporary
HP end), the initiative facts, and the hero's-surge facts that take an action."""


def pending_rolls(state: Any) -> list[engine.Owed]:
    """In a running encounter the engine's answer (the luck rolls a turn owes before it ends, or
    before the next round starts); outside one, every luck roll owed."""
    enc = state.encounter
    if enc is not None and enc.state == engine.RUNNING:
        return engine.pending_rolls(state, RULES)
    return rounds.luck_owed(state)


def encounter_view(state: Any, e: Encounter) -> dict[str, Any]:
    """The core encounter view plus the order by band (this round, and the next one's checks)."""
    view = engine.view(state, e, RULES)
    view["bands"] = rounds.bands(state, e, e.initiative)
    view["next_round_bands"] = rounds.bands(state, e, e.upcoming)
    return view
