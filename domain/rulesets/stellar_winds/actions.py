"""Table actions whose effects the engine derives (SW-13 total defense; A1.10 drop prone, stand up,
knocked prone): one fact, ``TableActionTaken {creature, name, source?}``, read through the table
``tables.TABLE_ACTIONS``: the action it costs, the effect it puts on the creature, the condition
it ends. The numbers come from the rules, never from the client.
"""

from __future__ import annotations

from typing import Any

from domain.errors import NotFound, RuleViolation
from domain.rulesets.stellar_winds import effects
from domain.rulesets.stellar_winds import encounters as sw_encounters
from domain.rulesets.stellar_winds.rules import creature, not_dead, require
from domain.rulesets.stellar_winds.state import SWState
from domain.rulesets.stellar_winds.tables import TABLE_ACTIONS


def table_action(state: SWState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """Resolve a table action; in a running encounter it uses the creature's action (the table's)."""
    spec = TABLE_ACTIONS[p["name"]]
    handler = sw_encounters.with_action(_resolve, field="creature", fixed=spec.action)
    return handler(state, p, ctx)


def _resolve(state: SWState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    name = p["name"]
    spec = TABLE_ACTIONS[name]
    c = creature(state, p["creature"])
    not_dead(c, ctx)
    source = p.get("source") or c.id
    if source not in state.creatures:  # read only: the source does not change
        raise NotFound(f"no creature {source!r} in this campaign", field="source")
    if spec.conscious:
        require(c.conscious, f"{c.name} is not conscious", "NOT_CONSCIOUS", ctx)
    conditions = c.conditions()
    if spec.needs is not None:
        wanted, code = spec.needs
        require(wanted in conditions, f"{c.name} is not {wanted}", code, ctx)
    if spec.refuses is not None:
        unwanted, code = spec.refuses
        require(unwanted not in conditions, f"{c.name} is already {unwanted}", code, ctx)
    if spec.effect is not None and spec.effect["duration"]["kind"] in effects.TURN_DURATIONS:
        enc = state.encounter
        if enc is None or c.id not in enc.participants:
            raise RuleViolation(
                f"{name.replace('_', ' ')} lasts until {c.name}'s next turn: it needs a running encounter",
                field="creature",
                code="ENCOUNTER_NOT_RUNNING",
            )
    out: dict[str, Any] = {"creature": c.id, "name": name}
    if spec.ends is not None:
        out["ended"] = end_condition(c, spec.ends)
    if spec.effect is not None:
        brings = {comp["condition"] for comp in spec.effect["components"] if "condition" in comp}
        if brings and brings <= conditions:
            out["note"] = f"{c.name} is already {', '.join(sorted(brings))}: nothing changes"
        else:
            out["effect"] = effects.apply(state, c, spec.effect, source=source, ctx=ctx)
    return out


def end_condition(c: Any, condition: str) -> list[str]:
    """Take a condition off a creature: an effect that is only that condition ends; an effect
    with other components loses that component. Returns the ids of the effects touched."""
    touched, kept = [], []
    for e in c.effects:
        comps = [comp for comp in e["components"] if comp.get("condition") != condition]
        if len(comps) == len(e["components"]):
            kept.append(e)
            continue
        touched.append(e["effect_id"])
        if comps:
            kept.append({**e, "components": comps})
    c.effects = kept
    return touched
