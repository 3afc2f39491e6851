"""Orcus effects: conditions, persistent damage and modifiers with the durations of OR-17/18.

An effect (the bookkeeping is ``domain/core/effects.py``)::

    {"effect_id": "e7", "source": "ogre", "target": "mira", "name": "crushing grip",
     "components": [{"condition": "grappled"}, {"persistent": {"type": "fire", "amount": 5}},
                    {"attack_mod": {"value": -2}}, {"defense_mod": {"defense": "ac", "value": -2}},
                    {"resist": {"type": "fire", "value": 5}}, {"vuln": {"type": "cold", "value": 5}}],
     "duration": {"kind": "end_of_target_next" | "end_of_user_next" | "start_of_target_next"
                          | "start_of_user_next" | "save_ends" | "maintain" | "until_removed",
                  "anchor": "<whose turn>", "action": "swift" (maintain), ...},
     "aftereffect": {<an effect spec>, "damage": {"amount": 3, "types": ["psychic"]}},
     "first_failed_save": {"components": [...], "instead": true, "duration": {...}},
     "maintained_turn": 14}

* Durations name their anchor explicitly (OR-17): the target's or the user's (the source
  creature's) next turn; "next turn" is the first turn of the anchor that starts after the
  effect began (``core.effects.due``).
* A save (d20 + bonuses, 10 or higher, OR-19) ends the whole effect, one save per effect
  (rulings 7, 20). Its aftereffect begins after all of that turn's saves, so it is not saved
  against that turn (B-OR-13, ruling 23); a timed effect's aftereffect begins when it expires
  (ruling 23). An aftereffect may carry one-off ``damage`` (OR-19's example).
* First Failed Save (B-OR-12, ruling 23): the first failed save against the effect applies its
  rider once: ``instead`` replaces the components, else adds to them; the effect keeps its id
  and stays save-ends unless the rider gives a duration.
* Maintain (OR-18, B-OR-8, ruling 24): the user pays the stated action on its turn
  (``EffectMaintained``); at the end of its first turn without it, the effect ends (the creation
  turn included unless ``or.maintain_on_creation_turn`` is false). The user may end it any time
  as a free action (``EffectEndedByChoice``).
"""

from __future__ import annotations

from typing import Any

from domain.core import effects as core
from domain.errors import InvalidInput
from domain.rulesets.orcus.tables import (
    CONDITION_NAMES,
    DEFENSES,
    DURATIONS,
    EFFECT_WHEN,
    MAINTAIN_ACTIONS,
    USER_ANCHORED,
)

COMPONENT_KEYS = ("condition", "persistent", "attack_mod", "defense_mod", "resist", "vuln")
SPEC_KEYS = {"name", "components", "duration", "aftereffect", "first_failed_save", "on", "damage"}


def _whole(v: Any, negative: bool = False) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and (negative or v >= 0) and abs(v) <= 100_000


def damage_types(state: Any) -> list[str]:
    return list(state.flags["or.placeholder.damage_types"])


def check_types(state: Any, types: Any, field: str) -> list[str]:
    """Damage types the campaign knows (OR-16 placeholder flag); an unknown one is refused so it
    cannot slip past a resistance."""
    known = damage_types(state)
    if not isinstance(types, list) or not all(isinstance(t, str) for t in types):
        raise InvalidInput("damage types are a list of names", field=field)
    unknown = [t for t in types if t not in known]
    if unknown:
        raise InvalidInput(
            f"unknown damage type(s) {', '.join(unknown)}; known: {', '.join(known)} "
            "(flag or.placeholder.damage_types)",
            field=field,
        )
    return list(types)


def check_spec(spec: Any, state: Any, field: str = "effect", *, aftereffect: bool = False) -> dict[str, Any]:
    """Validate an effect specification; return it with its duration defaulted."""
    if not isinstance(spec, dict):
        raise InvalidInput("an effect is an object with components and a duration", field=field)
    unknown = set(spec) - SPEC_KEYS
    if unknown:
        raise InvalidInput(f"an effect has unknown field(s) {', '.join(sorted(unknown))}", field=field)
    if "damage" in spec and not aftereffect:
        raise InvalidInput("one-off damage belongs to an aftereffect (OR-19)", field=f"{field}.damage")
    comps = spec.get("components", [])
    if not isinstance(comps, list) or not comps and not (aftereffect and spec.get("damage")):
        raise InvalidInput("an effect needs at least one component", field=f"{field}.components")
    for comp in comps:
        check_component(comp, state, f"{field}.components")
    out = dict(spec)
    out["components"] = [dict(c) for c in comps]
    duration = spec.get("duration", {"kind": "until_removed"})
    if not isinstance(duration, dict) or duration.get("kind") not in DURATIONS:
        raise InvalidInput(
            f"duration.kind must be one of {', '.join(DURATIONS)} (OR-17, OR-18)", field=f"{field}.duration"
        )
    extra = set(duration) - {"kind", "anchor", "action"}
    if extra:
        raise InvalidInput(
            f"duration has unknown field(s) {', '.join(sorted(extra))}", field=f"{field}.duration"
        )
    anchor = duration.get("anchor")
    if anchor is not None and anchor not in state.creatures:
        raise InvalidInput(f"duration anchor {anchor!r} is not a creature here", field=f"{field}.duration")
    if duration["kind"] == "maintain":
        if duration.get("action", "swift") not in MAINTAIN_ACTIONS:
            raise InvalidInput(
                f"a maintained effect is maintained with a {', '.join(MAINTAIN_ACTIONS)} action",
                field=f"{field}.duration.action",
            )
        duration = {"action": "swift", **duration}
    elif "action" in duration:
        raise InvalidInput("only a maintained effect names an action", field=f"{field}.duration.action")
    out["duration"] = dict(duration)
    if spec.get("on", "hit") not in EFFECT_WHEN:
        raise InvalidInput(
            "an attack's effect applies on 'hit', 'miss' or 'effect' (OR-12)", field=f"{field}.on"
        )
    if spec.get("aftereffect") is not None:
        out["aftereffect"] = check_spec(spec["aftereffect"], state, f"{field}.aftereffect", aftereffect=True)
    if spec.get("damage") is not None:
        d = spec["damage"]
        if not isinstance(d, dict) or not _whole(d.get("amount")) or set(d) - {"amount", "types"}:
            raise InvalidInput("damage is {amount, types}", field=f"{field}.damage")
        out["damage"] = {"amount": d["amount"], "types": check_types(state, d.get("types", []), field)}
    ffs = spec.get("first_failed_save")
    if ffs is not None:
        if duration["kind"] != "save_ends":
            raise InvalidInput(
                "a First Failed Save rider belongs to a save-ends effect (OR-19)",
                field=f"{field}.first_failed_save",
            )
        if not isinstance(ffs, dict) or set(ffs) - {"components", "instead", "duration", "name"}:
            raise InvalidInput(
                "first_failed_save is {components, instead, duration?, name?}",
                field=f"{field}.first_failed_save",
            )
        rider_comps = ffs.get("components")
        if not isinstance(rider_comps, list) or not rider_comps:
            raise InvalidInput("a rider needs components", field=f"{field}.first_failed_save.components")
        for comp in rider_comps:
            check_component(comp, state, f"{field}.first_failed_save.components")
        if not isinstance(ffs.get("instead", False), bool):
            raise InvalidInput("instead is true or false", field=f"{field}.first_failed_save.instead")
        rider = {"components": [dict(c) for c in rider_comps], "instead": bool(ffs.get("instead", False))}
        if ffs.get("name"):
            rider["name"] = str(ffs["name"])
        if ffs.get("duration") is not None:
            rd = ffs["duration"]
            if not isinstance(rd, dict) or rd.get("kind") not in DURATIONS or rd["kind"] == "maintain":
                raise InvalidInput(
                    "a rider's duration is one of the OR-17 durations", field=f"{field}.first_failed_save"
                )
            rider["duration"] = dict(rd)
        out["first_failed_save"] = rider
    return out


def check_component(comp: Any, state: Any, field: str) -> None:
    if not isinstance(comp, dict) or len(comp) != 1 or next(iter(comp)) not in COMPONENT_KEYS:
        raise InvalidInput(f"each component is one of {', '.join(COMPONENT_KEYS)}", field=field)
    key, v = next(iter(comp.items()))
    if key == "condition":
        if v not in CONDITION_NAMES:
            raise InvalidInput(
                f"unknown condition {v!r}; known: {', '.join(CONDITION_NAMES)} (A4.9)", field=field
            )
        return
    if key in ("persistent", "resist", "vuln"):
        amount = "amount" if key == "persistent" else "value"
        if not isinstance(v, dict) or set(v) != {"type", amount} or not _whole(v.get(amount)):
            raise InvalidInput(f"{key} is {{type, {amount}}} with a whole number", field=field)
        allowed = damage_types(state) + (["untyped"] if key == "persistent" else ["all"])
        if v["type"] not in allowed:
            raise InvalidInput(f"unknown damage type {v['type']!r}; known: {', '.join(allowed)}", field=field)
        return
    if not isinstance(v, dict) or not _whole(v.get("value"), negative=True):
        raise InvalidInput(f"{key} needs a whole-number value", field=field)
    if key == "defense_mod" and v.get("defense", "all") not in ("all", *DEFENSES):
        raise InvalidInput("defense_mod.defense is all, ac, fort, ref or will", field=field)


def needs_user(spec: dict[str, Any], source: str, state: Any, field: str) -> None:
    """A duration anchored to the user needs the source to be a creature, or a named anchor."""
    d = spec["duration"]
    if d["kind"] in USER_ANCHORED and "anchor" not in d and source not in state.creatures:
        raise InvalidInput(
            f"{d['kind']} is timed by the user's turns, and {source!r} is not a creature here: "
            "name the duration's anchor",
            field=f"{field}.duration.anchor",
        )
    aft = spec.get("aftereffect")
    if aft is not None:
        needs_user(aft, source, state, f"{field}.aftereffect")


def _moment(state: Any) -> tuple[int | None, int | None]:
    enc = state.encounter
    if enc is None or getattr(enc, "state", None) != "running":
        return None, None
    return int(enc.turn_log.get("turn_no", 0)), int(enc.round)


def apply(
    state: Any, target: Any, spec: dict[str, Any], *, source: str, pending: bool = False
) -> dict[str, Any]:
    """Put a checked effect on ``target`` (the state's own copy); return what was applied.

    ``pending``: an aftereffect waiting for the end of its turn's saves (B-OR-13)."""
    turn, round_ = _moment(state)
    duration = core.stamp(
        spec["duration"], DURATIONS, target=target.id, source=source, turn=turn, round_=round_
    )
    effect: dict[str, Any] = {
        "source": source,
        "name": spec.get("name", "effect"),
        "components": [dict(c) for c in spec["components"]],
        "duration": duration,
    }
    for key in ("aftereffect", "first_failed_save"):
        if spec.get(key) is not None:
            effect[key] = spec[key]
    if pending:
        effect["pending"] = True
    out: dict[str, Any] = {}
    if effect["components"]:
        added = core.add(state, target, effect)
        out = {"effect_id": added["effect_id"], "target": target.id, "name": added["name"]}
        out["duration"] = duration["kind"]
        if pending:
            out["pending"] = True
    return out


def defense_mods(c: Any, defense: str) -> list[dict[str, Any]]:
    return [
        {"source": e.get("name", "effect"), "value": v["value"]}
        for e, v in core.components(c, "defense_mod")
        if v.get("defense", "all") in ("all", defense)
    ]


def attack_mods(c: Any) -> list[dict[str, Any]]:
    return [
        {"source": e.get("name", "effect"), "value": v["value"]} for e, v in core.components(c, "attack_mod")
    ]


def first_failed_save(state: Any, e: dict[str, Any]) -> dict[str, Any]:
    """B-OR-12 / ruling 23: the effect with its rider applied (same id; still save ends unless
    the rider gives a duration, which starts now); the rider is spent."""
    rider = e["first_failed_save"]
    out = {k: v for k, v in e.items() if k != "first_failed_save"}
    comps = [dict(c) for c in rider["components"]]
    out["components"] = comps if rider["instead"] else [*e["components"], *comps]
    if rider.get("name"):
        out["name"] = rider["name"]
    if rider.get("duration") is not None:
        turn, round_ = _moment(state)
        out["duration"] = core.stamp(
            rider["duration"], DURATIONS, target=e["target"], source=e["source"], turn=turn, round_=round_
        )
    out["first_failed_save_applied"] = True
    return out
