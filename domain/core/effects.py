"""Effects with durations: the mechanism every 4e-derived ruleset shares.

An effect is a plain dict kept on its target creature (``creature.effects``)::

    {"effect_id": "e57", "source": "<creature id or a name>", "target": "<creature id>",
     "name": "...", "components": [{...}, ...],
     "duration": {"kind": "<a kind of the ruleset's timing table>", "anchor": "<creature id>",
                  "applied_turn": 12, "applied_round": 3, ...},
     "pending": True}          # an aftereffect waiting for the end of its turn's saves

What the components mean (conditions, ongoing or persistent damage, modifiers) is the ruleset's
business; what is shared is the bookkeeping:

* effect ids come from the position of the fact that created them (``TableState.new_effect_id``),
  so a correction elsewhere never renames an effect;
* :func:`add`, :func:`find`, :func:`remove`, :func:`drop` put effects on, find and take them off
  (copy-on-write: the carrier is the state's own copy before anything changes);
* durations are read through a ruleset's **timing table** (duration kind -> :class:`Timing`):
  which turn boundary of which creature ends it, whether a save ends it, whether it must be
  kept up (sustained / maintained) on each of its anchor's turns. :func:`stamp` fixes a new
  effect's anchor and the moment it began; :func:`due` says whether a boundary ends it;
* "until the start / end of X's next turn" means the first turn of X that *starts after* the
  effect was applied (``applied_turn``: the encounter's turn counter then; ``started``: the
  number of X's last turn start), so an effect applied during X's own turn lasts through X's
  following turn (4e, RULES.md SW-44 and OR-17);
* an aftereffect that begins after a save waits ``pending`` until the end of that turn's saves
  (SW-46, B-OR-13): :func:`begin_pending` starts them;
* :func:`highest_per_type`: when several effects deal ongoing (persistent) damage of one type,
  only the highest amount is taken, and each effect keeps its own save (adopted rulings 7, 20).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from domain.errors import NotFound

Effect = dict[str, Any]
Report = dict[str, Any]

START, END = "start", "end"
TARGET, SOURCE = "target", "source"


@dataclass(frozen=True)
class Timing:
    """How one kind of duration ends.

    ``boundary``: the anchor's turn boundary that ends it (``"start"`` / ``"end"``; None: no turn
    boundary does). ``anchor``: whose turn (``"target"`` / ``"source"``: the effect's target or
    its source creature; None: the duration names it in ``"anchor"``). ``next_turn``: the
    anchor's *next* turn (False: the turn in progress may end it). ``save_ends``: a save ends
    it. ``kept_up``: it ends at the end of its anchor's turn unless kept up that turn.
    """

    boundary: str | None = None
    anchor: str | None = None
    next_turn: bool = True
    save_ends: bool = False
    kept_up: bool = False


Timings = Mapping[str, Timing]


def stamp(
    duration: dict[str, Any],
    timings: Timings,
    *,
    target: str,
    source: str,
    turn: int | None,
    round_: int | None,
) -> dict[str, Any]:
    """A copy of ``duration`` with its anchor and the moment it began (turn counter, round)."""
    out = dict(duration)
    timing = timings[out["kind"]]
    if timing.anchor == TARGET:
        out["anchor"] = target
    elif timing.anchor == SOURCE:
        out.setdefault("anchor", source)
    out.setdefault("applied_turn", turn)
    out.setdefault("applied_round", round_)
    return out


def add(state: Any, target: Any, effect: Effect) -> Effect:
    """Put ``effect`` on ``target`` (the state's own copy) with a new effect id; returns it."""
    effect = {"effect_id": state.new_effect_id(), **effect, "target": target.id}
    target.effects = [*target.effects, effect]
    state.hold(target.id, effect)
    return effect


def find(state: Any, effect_id: str) -> tuple[Any, Effect]:
    """The creature carrying an effect (the state's own copy, safe to change) and the effect."""
    c = state.carrier(effect_id)
    if c is not None:
        for i, e in enumerate(c.effects):
            if e["effect_id"] == effect_id:
                owned = state.own(c.id)
                return owned, owned.effects[i]
    raise NotFound(f"no active effect {effect_id!r}", field="effect_id")


def remove(c: Any, effect_ids: set[str]) -> list[Effect]:
    """Take effects off a creature (a new list: checkpoints share nothing); the removed ones."""
    gone = [e for e in c.effects if e["effect_id"] in effect_ids]
    if gone:
        c.effects = [e for e in c.effects if e["effect_id"] not in effect_ids]
    return gone


def report(e: Effect) -> Report:
    return {"effect_id": e["effect_id"], "target": e["target"], "name": e.get("name", "effect")}


def drop(state: Any, c: Any, pred: Callable[[Effect], bool]) -> list[Effect]:
    """Take off ``c`` every effect ``pred`` selects (owning ``c`` only if one is); the removed ones."""
    ids = {e["effect_id"] for e in c.effects if pred(e)} if c.effects else set()
    if not ids:
        return []
    return remove(state.own(c.id), ids)


def begin_pending(state: Any, c: Any) -> list[str]:
    """Start the aftereffects waiting on ``c`` (SW-46, B-OR-13); their ids."""
    if not c.effects:  # (no effect: nothing waits; every turn end asks)
        return []
    started = [e["effect_id"] for e in c.effects if e.get("pending")]
    if started:
        owned = state.own(c.id)
        owned.effects = [{k: v for k, v in e.items() if k != "pending"} for e in owned.effects]
    return started


def active(e: Effect) -> bool:
    """Whether an effect is in force (an aftereffect waiting for its turn's end is not yet)."""
    return not e.get("pending")


def components(c: Any, key: str) -> list[tuple[Effect, Any]]:
    """Every ``key`` component of the effects in force on ``c``, with its effect."""
    if not c.effects:  # (no effect: no component; every turn start asks)
        return []
    return [(e, comp[key]) for e in c.effects if active(e) for comp in e["components"] if key in comp]


def highest_per_type(c: Any, key: str) -> dict[str, tuple[int, str]]:
    """Per damage type, the highest ``amount`` among the ``key`` components in force and the effect
    carrying it (adopted rulings 7 and 20); untyped damage is the type ``"untyped"``."""
    worst: dict[str, tuple[int, str]] = {}
    for e, value in components(c, key):
        kind = value.get("type") or "untyped"
        if value["amount"] > worst.get(kind, (-1, ""))[0]:
            worst[kind] = (int(value["amount"]), e["effect_id"])
    return worst


def anchored_to(c: Any, cid: str) -> bool:
    """Whether any of ``c``'s effects is timed by ``cid``'s turns (a cheap pre-check)."""
    return any(e["duration"].get("anchor") == cid for e in c.effects)


def due(e: Effect, cid: str, boundary: str, timings: Timings, started: int) -> bool:
    """Whether the ``boundary`` of ``cid``'s turn ends ``e`` by its duration.

    ``started`` is the number of ``cid``'s last turn start (see the module docstring)."""
    d = e["duration"]
    timing = timings.get(d.get("kind", ""))
    if timing is None or timing.boundary != boundary or d.get("anchor") != cid:
        return False
    if boundary == END and d.get("next", timing.next_turn):
        applied = d.get("applied_turn")
        return started > (-1 if applied is None else int(applied))
    return True


def with_implied(names: Iterable[str], conditions: Mapping[str, Any]) -> set[str]:
    """``names`` and every condition they bring, directly or through others: each entry of the
    ruleset's ``conditions`` table lists what it ``implies`` (a name the table does not know
    brings nothing)."""
    found = set(names)
    stack = list(found)
    while stack:
        spec = conditions.get(stack.pop())
        for implied in spec.implies if spec else ():
            if implied not in found:
                found.add(implied)
                stack.append(implied)
    return found
