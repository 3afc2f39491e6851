"""Effects: conditions, ongoing damage and modifiers with durations (A1.10, A1.11).

An effect is a dict kept on its target::

    {"effect_id": "e7", "source": "goblin-1", "target": "traze", "name": "ray of frost",
     "components": [{"condition": "slowed"}, {"ongoing": {"type": "cold", "amount": 5}},
                    {"defense_mod": {"defense": "all", "value": -2}}],
     "duration": {"kind": "save_ends" | "until_start_of_turn" | "until_end_of_turn" | "end_of_encounter"
                        | "sustained" | "until_removed", "anchor": "<creature id>", ...},
     "aftereffect": {...same shape, optional...}}

One saving throw ends every component of an effect (SW-45, adopted ruling 7).
"""

from __future__ import annotations

import re
from typing import Any

from domain.core import effects as core_effects
from domain.errors import InvalidInput, RuleViolation
from domain.rulesets.stellar_winds import bonuses
from domain.rulesets.stellar_winds.tables import CONDITIONS, DAMAGE_TYPES

DURATIONS = (
    "save_ends",
    "until_start_of_turn",
    "until_end_of_turn",
    "end_of_encounter",
    "sustained",
    "until_removed",
    "surprise_round",
)
# Durations tied to an anchor creature's turns (B-X-2); they also end with the encounter.
TURN_DURATIONS = ("until_start_of_turn", "until_end_of_turn", "sustained")
COMPONENT_KEYS = (
    "condition",
    "ongoing",
    "defense_mod",
    "attack_mod",
    "resist",
    "vuln",
    "regeneration",
    "combat_advantage_for",  # C1.2 BluffForCombatAdvantageRolled: this creature has CA against the carrier
)
DEFENSE_KEYS = ("all", "ac", "fort", "ref", "will")


def check_spec(spec: Any, state: Any, field: str = "effects") -> dict[str, Any]:
    """Validate an effect specification (components, duration, aftereffect)."""
    if not isinstance(spec, dict):
        raise InvalidInput("an effect is an object with components and a duration", field=field)
    comps = spec.get("components")
    if not isinstance(comps, list) or not comps:
        raise InvalidInput("an effect needs at least one component", field=f"{field}.components")
    for comp in comps:
        _check_component(comp, state, field)
    duration = spec.get("duration", {"kind": "until_removed"})
    if not isinstance(duration, dict) or duration.get("kind") not in DURATIONS:
        raise InvalidInput(f"duration.kind must be one of {', '.join(DURATIONS)}", field=f"{field}.duration")
    anchor = duration.get("anchor")
    if anchor is not None and anchor not in state.creatures:
        raise InvalidInput(
            f"duration anchor {anchor!r} is not a creature here", field=f"{field}.duration.anchor"
        )
    if duration["kind"] == "sustained" and duration.get("action", "minor") not in (
        "standard",
        "move",
        "minor",
    ):
        raise InvalidInput(
            "a sustained effect is sustained by a standard, move or minor action",
            field=f"{field}.duration.action",
        )
    if spec.get("key") is not None:
        _check_key(spec["key"], f"{field}.key")
    if spec.get("aftereffect") is not None:
        check_spec(spec["aftereffect"], state, f"{field}.aftereffect")
    if spec.get("on", "hit") not in ("hit", "miss", "always"):
        raise InvalidInput("effect 'on' must be hit, miss or always", field=f"{field}.on")
    return spec


def _check_component(comp: Any, state: Any, field: str) -> None:
    if not isinstance(comp, dict) or len(comp) < 1 or not set(comp) & set(COMPONENT_KEYS):
        raise InvalidInput(
            f"each component is one of {', '.join(COMPONENT_KEYS)}", field=f"{field}.components"
        )
    if "condition" in comp:
        if comp["condition"] not in CONDITIONS:
            raise InvalidInput(
                f"unknown condition {comp['condition']!r}; known: {', '.join(CONDITIONS)}",
                field=f"{field}.components",
            )
        marker = comp.get("marker")
        if comp["condition"] == "marked" and marker is not None and marker not in state.creatures:
            raise InvalidInput(f"marker {marker!r} is not a creature here", field=f"{field}.components")
    for key in ("ongoing", "resist", "vuln"):
        if key in comp:
            v = comp[key]
            if not isinstance(v, dict) or not _whole(v.get("amount" if key == "ongoing" else "value")):
                raise InvalidInput(
                    f"{key} needs a type and a whole-number amount", field=f"{field}.components"
                )
            t = v.get("type")
            if (
                t is not None
                and t != "all"
                and t not in DAMAGE_TYPES
                and not (key == "ongoing" and t == "untyped")
            ):
                raise InvalidInput(f"unknown damage type {t!r}", field=f"{field}.components")
    for key in ("defense_mod", "attack_mod"):
        if key in comp:
            v = comp[key]
            if not isinstance(v, dict) or not _whole(v.get("value"), negative=True):
                raise InvalidInput(f"{key} needs a whole-number value", field=f"{field}.components")
            bonuses.check_type(v.get("type"), f"{field}.components")
            if key == "defense_mod" and v.get("defense", "all") not in DEFENSE_KEYS:
                raise InvalidInput(
                    "defense_mod.defense is all, ac, fort, ref or will", field=f"{field}.components"
                )
    if "combat_advantage_for" in comp and comp["combat_advantage_for"] not in state.creatures:
        raise InvalidInput("combat_advantage_for names a creature here", field=f"{field}.components")
    if "regeneration" in comp and not _whole(comp["regeneration"]):
        raise InvalidInput("regeneration is a whole number", field=f"{field}.components")


KEY_PATTERN = re.compile(r"[A-Za-z][A-Za-z0-9_.:-]{0,63}")
GENERATED_ID = re.compile(r"e\d+(\.\d+)?")


def _check_key(key: Any, field: str) -> None:
    """A client-chosen effect key (issue 14): it becomes the effect's id, so it cannot look like
    an id the engine makes (``e12``, ``e12.2``)."""
    if not isinstance(key, str) or not KEY_PATTERN.fullmatch(key) or GENERATED_ID.fullmatch(key):
        raise InvalidInput(
            "an effect key is 1-64 letters, digits, '_', '.', ':' or '-', starting with a letter, "
            "and not of the engine's own form e<number>",
            field=field,
        )


def _effect_id(state: Any, spec: dict[str, Any]) -> str:
    """The effect's id: its client-chosen key (unique among the active effects) or a new one."""
    key = spec.get("key")
    if key is None:
        return str(state.new_effect_id())
    holder = next((c for c in state.with_effects() if any(e["effect_id"] == key for e in c.effects)), None)
    if holder is not None:
        raise RuleViolation(
            f"an active effect on {holder.name} already has the key {key!r}",
            field="effect.key",
            code="EFFECT_KEY_TAKEN",
        )
    return str(key)


def _whole(v: Any, negative: bool = False) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and (negative or v >= 0) and abs(v) <= 100_000


def apply(state: Any, target: Any, spec: dict[str, Any], *, source: str, ctx: Any) -> dict[str, Any]:
    """Put an effect on a target. A new mark replaces an old one (A1.10 Marked)."""
    duration = dict(spec.get("duration", {"kind": "until_removed"}))
    if (
        duration["kind"] in ("until_start_of_turn", "until_end_of_turn", "sustained")
        and "anchor" not in duration
    ):
        default = state.flags.get("sw.duration_default_anchor", "creator")
        duration["anchor"] = source if default == "creator" else target.id  # B-X-2
    enc = state.encounter
    duration.setdefault("applied_round", enc.round if enc else None)
    duration.setdefault("applied_turn_of", enc.current if enc else None)
    # the encounter's turn counter when applied: "next turn" is the anchor's first turn started after it
    running = enc is not None and enc.state == "running"
    duration.setdefault("applied_turn", enc.turn_log.get("turn_no", 0) if enc and running else None)
    effect = {
        "effect_id": _effect_id(state, spec),
        "source": source,
        "target": target.id,
        "name": spec.get("name", "effect"),
        "components": [_with_marker(c, source, state) for c in spec["components"]],
        "duration": duration,
    }
    if spec.get("aftereffect") is not None:
        effect["aftereffect"] = spec["aftereffect"]
    if spec.get("beneficial"):
        effect["beneficial"] = True  # SW-11: ends when its anchor delays, if due at that turn's end
    if any(c.get("condition") == "marked" for c in effect["components"]):
        target.effects = [
            e for e in target.effects if not any(c.get("condition") == "marked" for c in e["components"])
        ]
    target.effects.append(effect)
    state.hold(target.id, effect)
    if any(c.get("condition") in BRINGS_UNCONSCIOUS for c in effect["components"]):
        fall_prone(state, target)  # C1.2 EffectApplied: falls prone when unconscious (derived)
    return {
        "effect_id": effect["effect_id"],
        "target": target.id,
        "name": effect["name"],
        "duration": duration["kind"],
    }


def _with_marker(comp: dict[str, Any], source: str, state: Any) -> dict[str, Any]:
    """A1.10 Marked: without a named marker, the creature that marks is the effect's source."""
    out = dict(comp)
    if out.get("condition") == "marked" and out.get("marker") is None and source in state.creatures:
        out["marker"] = source
    return out


FELL_PRONE = {
    "name": "fell prone",
    "components": [{"condition": "prone"}],
    "duration": {"kind": "until_removed"},
}


def fall_prone(state: Any, target: Any) -> None:
    """A1.10 Unconscious: the creature falls prone, and stays prone until it stands up (SW-40)."""
    if any(comp.get("condition") == "prone" for e in target.effects for comp in e["components"]):
        return
    apply(state, target, FELL_PRONE, source=target.id, ctx=None)


# the conditions that are or bring unconsciousness (A1.10; an index)
BRINGS_UNCONSCIOUS = frozenset(
    n for n in CONDITIONS if "unconscious" in core_effects.with_implied((n,), CONDITIONS)
)

# The bookkeeping every ruleset shares lives in domain/core/effects.py.
find = core_effects.find
remove = core_effects.remove


def defense_mods(c: Any, defense: str) -> list[dict[str, Any]]:
    out = []
    for e in c.effects:
        if e.get("pending"):
            continue
        for comp in e["components"]:
            mod = comp.get("defense_mod")
            if mod and mod.get("defense", "all") in ("all", defense):
                out.append(_part(e, mod))
    return out


def attack_mods(c: Any) -> list[dict[str, Any]]:
    out = []
    for e in c.effects:
        if e.get("pending"):
            continue
        for comp in e["components"]:
            mod = comp.get("attack_mod")
            if mod:
                out.append(_part(e, mod))
    return out


def _part(e: dict[str, Any], mod: dict[str, Any]) -> dict[str, Any]:
    """A modifier part from an effect's component, with its bonus type if it has one (SW-17)."""
    part = {"source": e.get("name", "effect"), "value": mod["value"]}
    if mod.get("type") not in (None, "untyped"):
        part["type"] = mod["type"]
    return part


def markers(c: Any) -> set[str]:
    return {
        comp["marker"]
        for e in c.effects
        if not e.get("pending")
        for comp in e["components"]
        if comp.get("condition") == "marked" and comp.get("marker")
    }
