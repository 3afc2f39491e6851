"""The fact catalogue: what can be recorded, with the shape of each payload.

Facts are ruleset-neutral: they record what happened at the table (who did
what, every die face, every choice and GM judgement), never the numbers that
follow from it. Payloads are plain JSON (lists and dicts; no tuples or sets)
so a stored fact folds exactly like a live one.

``validate(fact_type, payload)`` checks the shape and fills defaults; the
ruleset checks meaning (does the creature exist, is it dying, ...) when it
folds the fact. ``upcast`` turns a stored older payload version into the
current one, so old campaigns keep folding after a schema change.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from domain import dice
from domain.errors import InvalidInput

_MISSING = object()


@dataclass(frozen=True)
class Field:
    kind: str  # str, int, bool, any, roll, list_str, dict, dict_int, list_dict, enum
    required: bool = True
    default: Any = None
    choices: tuple[str, ...] = ()
    minimum: int | None = None
    maximum: int | None = None
    nullable: bool = False


def opt(kind: str, default: Any = None, **kw: Any) -> Field:
    return Field(kind, required=False, default=default, **kw)


def req(kind: str, **kw: Any) -> Field:
    return Field(kind, **kw)


# --- input limits: every payload is checked against these before anything else (docs/errors.md) ---
MAX_TEXT = 2000  # characters in any one string of a payload (free text, ids, strings inside JSON)
MAX_NAME = 200  # a campaign's name, an access token's label, an idempotency key, a JSON object key
MAX_JSON_DEPTH = 20  # nesting of objects and lists (the payload object itself is level 1)
MAX_JSON_VALUES = 5000  # values (objects, lists, strings, numbers, ...) in one JSON input
MAX_JSON_TEXT = 100_000  # characters of all strings and keys of one JSON input together
MAX_SAFE_INTEGER = 2**53 - 1  # the largest integer every JSON reader keeps exactly
MAX_POSITION = 2**31 - 1  # a fact's position
# C0 and C1 control characters and DEL, except tab, line feed and carriage return.
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
# Why a healing surge was spent (HealingSurgeSpent v2). A power or consumable that heals through
# a surge is recorded as HealingApplied with requires_surge; a surge spent on its own is one of these.
SURGE_CAUSES = ("short_rest", "extended_rest", "power", "consumable", "other")
ABILITIES = ("str", "con", "dex", "int", "wis", "cha")
DEFENSES = ("ac", "fort", "ref", "will")

# --- meta facts: corrections and rulings, handled by the ruleset-neutral ledger ---
META: dict[str, dict[str, Field]] = {
    "FactRevoked": {
        "target": req("int", minimum=1, maximum=MAX_POSITION),
        "reason": req("str"),
        "cascade": opt("enum", "fact", choices=("fact", "action", "consequences")),
    },
    "FactRestored": {"revocation": req("int", minimum=1, maximum=MAX_POSITION), "reason": opt("str", "")},
    "FactAmended": {
        "target": req("int", minimum=1, maximum=MAX_POSITION),
        "patch": req("dict"),
        "reason": req("str"),
    },
    "RulingRecorded": {
        "ruling_id": req("str"),
        "question": req("str"),
        "decision": req("str"),
        "value": opt("any", True),
    },
    "RulingContested": {"ruling_id": req("str"), "argument": req("str"), "by": opt("str", "")},
    "RulingResolved": {
        "ruling_id": req("str"),
        "outcome": req("enum", choices=("upheld", "overturned")),
        "decision": opt("str", ""),
        "value": opt("any", _MISSING),
    },
    "OutcomeOverridden": {
        "target": req("int", minimum=1, maximum=MAX_POSITION),
        "field": req("str"),
        "value": req("any"),
        "reason": req("str"),
    },
    "RulesFlagSet": {"flag": req("str"), "value": req("any"), "retroactive": opt("bool", False)},
    "NoteAdded": {"text": req("str")},
    "DiceRolled": {
        "roll": req("roll"),
        "purpose": opt("str", ""),
        "creature": opt("str", None, nullable=True),
    },
}

# --- table facts: folded by the campaign's ruleset ---
TABLE: dict[str, dict[str, Field]] = {
    "CreatureRegistered": {
        "creature_id": req("str"),
        "name": req("str"),
        "kind": req("enum", choices=("pc", "monster", "npc")),
        "level": req("int", minimum=1, maximum=30),
        "abilities": req("dict_int"),
        "max_hp": req("int", minimum=1, maximum=100_000),
        "surges_per_day": opt("int", 0, minimum=0, maximum=100),
        "defenses": req("dict_int"),
        "speed": opt("int", 6, minimum=0, maximum=100),
        "resist": opt("dict_int", {}),
        "vuln": opt("dict_int", {}),
        "regeneration": opt("int", 0, minimum=0, maximum=1000),
        "crit_min": opt("int", 20, minimum=2, maximum=20),
        "heroic": opt("bool", False),
        "xp": opt("int", None, minimum=0, maximum=10_000_000, nullable=True),
        "initiative_misc": opt("int", 0, minimum=-100, maximum=100),
        "max_wounds": opt("int", None, minimum=1, maximum=1000, nullable=True),
        "second_wind": opt("bool", None, nullable=True),
    },
    "SheetUpdated": {"creature_id": req("str"), "changes": req("dict"), "reason": opt("str", "")},
    "DamageTaken": {
        "target": req("str"),
        "roll": opt("roll", None, nullable=True),
        "amount": opt("int", 0, minimum=0, maximum=100_000),
        "types": opt("list_str", []),
        "wounding": opt("bool", False),
        "source": opt("str", "other"),
        "nonlethal": opt("bool", False),
        "half": opt("bool", False),
    },
    "HealingApplied": {
        "target": req("str"),
        "surge_multiplier": opt("int", 0, minimum=0, maximum=10),
        "roll": opt("roll", None, nullable=True),
        "flat": opt("int", 0, minimum=0, maximum=100_000),
        "magical": opt("bool", False),
        "requires_surge": opt("bool", False),
        "source": opt("str", ""),
        "healer": opt("str", None, nullable=True),
    },
    "TemporaryHitPointsGranted": {
        "target": req("str"),
        "amount": opt("int", 0, minimum=0, maximum=100_000),
        "roll": opt("roll", None, nullable=True),
        "source": opt("str", ""),
    },
    # v2: ``cause`` is one of SURGE_CAUSES (v1: free text, default "rest"); ``note`` keeps any words.
    "HealingSurgeSpent": {
        "creature": req("str"),
        "cause": opt("enum", "short_rest", choices=SURGE_CAUSES),
        "note": opt("str", ""),
    },
    "SecondWindUsed": {"creature": req("str")},
    "DeathSavingThrowRolled": {
        "creature": req("str"),
        "roll": req("roll"),
        "modifiers": opt("list_dict", []),
    },
    "StabilizationAttempted": {
        "target": req("str"),
        "healer": opt("str", None, nullable=True),
        "roll": opt("roll", None, nullable=True),
        "dc": opt("int", None, minimum=0, maximum=100, nullable=True),
    },
    "WoundsRestored": {
        "target": req("str"),
        "amount": req("int", minimum=1, maximum=1000),
        "method": req("enum", choices=("magic", "medical", "long_term_care")),
        "caregiver": opt("str", None, nullable=True),
    },
    "DeathDeclared": {"creature": req("str"), "cause": req("str")},
    "CreatureRaised": {
        "creature": req("str"),
        "means": req("str"),
        "hp": opt("int", 1, minimum=1, maximum=100_000),
        "wounds": opt("int", 1, minimum=1, maximum=1000),
    },
    "ShortRestTaken": {
        "participants": opt("list_str", None, nullable=True),
        "minutes": opt("int", 5, minimum=5, maximum=10_000_000),
    },
    "ExtendedRestTaken": {
        "participants": opt("list_str", None, nullable=True),
        "hours": opt("int", 6, minimum=6, maximum=100_000),
    },
    "TimeAdvanced": {"minutes": req("int", minimum=1, maximum=10_000_000)},
    "MilestoneReached": {"creatures": req("list_str")},
    "ActionPointSpent": {
        "creature": req("str"),
        "use": opt("str", "extra_standard"),
    },
    "ExperienceAwarded": {
        "creatures": req("list_str"),
        "amount": req("int", minimum=0, maximum=10_000_000),
        "reason": opt("str", ""),
    },
    "LevelSet": {"creature": req("str"), "level": req("int", minimum=1, maximum=30, nullable=True)},
    "AttackMade": {
        "attacker": req("str"),
        "power": req("dict"),
        "targets": req("targets"),
        "damage": opt("roll", None, nullable=True),
        "extra_crit": opt("roll", None, nullable=True),
        "nonlethal": opt("bool", False),
        "coup_de_grace": opt("bool", False),
        "action": opt("str", None),
    },
    # --- encounters (RULES.md A1.1, A1.2, A1.11; C1.2) ---
    "EncounterStarted": {
        "encounter_id": req("str"),
        "name": opt("str", ""),
        "participants": req("list_str"),
    },
    "SurpriseDetermined": {"encounter_id": req("str"), "surprised": opt("list_str", [])},
    "InitiativeRolled": {"encounter_id": req("str"), "creature": req("str"), "roll": req("roll")},
    "InitiativeTieBroken": {
        "encounter_id": req("str"),
        "creatures": req("list_str"),
        "method": req("enum", choices=("bonus", "die", "coin")),
        "rolls": opt("list_dict", None, nullable=True),
    },
    "TurnEnded": {"encounter_id": req("str")},
    "TurnDelayed": {"encounter_id": req("str"), "creature": req("str")},
    "DelayedTurnTaken": {"encounter_id": req("str"), "creature": req("str")},
    "ActionReadied": {
        "encounter_id": req("str"),
        "creature": req("str"),
        "action": req("enum", choices=("standard", "move", "minor")),
        "trigger": req("str"),
    },
    "ReadiedActionTriggered": {
        "encounter_id": req("str"),
        "creature": req("str"),
        "trigger_creature": req("str"),
    },
    "ActionTaken": {
        "encounter_id": opt("str", None, nullable=True),
        "creature": req("str"),
        "action": req("enum", choices=("standard", "move", "minor", "free", "immediate", "opportunity")),
        "name": opt("str", ""),
        "substitutes_for": opt("enum", None, choices=("standard", "move"), nullable=True),
        "gm_exception": opt("bool", False),
    },
    "EffectApplied": {"target": req("str"), "source": req("str"), "effect": req("dict")},
    "EffectSustained": {
        "effect_id": req("str"),
        "action": req("enum", choices=("standard", "move", "minor")),
    },
    "EffectEnded": {"effect_id": req("str"), "reason": opt("str", "gm")},
    "SavingThrowRolled": {
        "creature": req("str"),
        "effect_id": req("str"),
        "roll": req("roll"),
        "modifiers": opt("list_dict", []),
    },
    "EncounterEnded": {"encounter_id": req("str"), "outcome": opt("str", "")},
}

SCHEMAS: dict[str, dict[str, Field]] = {**META, **TABLE}
META_TYPES = frozenset(META)

# Current payload version of each type. Bump it and add an upcaster when a
# payload changes shape.
VERSIONS: dict[str, int] = {name: 1 for name in SCHEMAS} | {"HealingSurgeSpent": 2}
Upcaster = Callable[[dict[str, Any]], dict[str, Any]]

# v1 causes as they were typed at tables (and by earlier clients), read as v2 causes.
_V1_SURGE_CAUSES = {
    "rest": "short_rest",  # v1's default: surges are spent on their own during a short rest
    "short_rest": "short_rest",
    "shortrest": "short_rest",
    "extended_rest": "extended_rest",
    "long_rest": "extended_rest",
    "power": "power",
    "consumable": "consumable",
    "potion": "consumable",
}


def _surge_spent_v1_v2(payload: dict[str, Any]) -> dict[str, Any]:
    """HealingSurgeSpent v1 -> v2: free-text ``cause`` -> an enum plus a free-text ``note``.

    Known wordings ("rest", "short rest", "Short-Rest", "long rest", "potion", ...) map to their
    cause; anything else becomes ``other`` with the original words kept in ``note``, so nothing
    said at the table is lost.
    """
    out = {k: v for k, v in payload.items() if k != "cause"}
    raw = payload.get("cause", "rest")
    text = raw.strip() if isinstance(raw, str) else ""
    key = "_".join(text.lower().replace("-", " ").split())
    cause = _V1_SURGE_CAUSES.get(key or "rest")
    out["cause"] = cause or "other"
    out["note"] = "" if cause else text
    return out


UPCASTERS: dict[tuple[str, int], Upcaster] = {("HealingSurgeSpent", 1): _surge_spent_v1_v2}


def register(name: str, fields: dict[str, Field], *, version: int = 1) -> None:
    """Add a fact type (used by rulesets and modules that extend the catalogue)."""
    TABLE[name] = fields
    SCHEMAS[name] = fields
    VERSIONS[name] = version


def upcast(fact_type: str, version: int, payload: dict[str, Any]) -> dict[str, Any]:
    """Bring a stored payload up to the current version of its type."""
    current = VERSIONS.get(fact_type, version)
    while version < current:
        payload = UPCASTERS[(fact_type, version)](payload)
        version += 1
    return payload


def text_problem(value: str, limit: int = MAX_TEXT) -> str | None:
    """Why ``value`` cannot be stored as text (too long, a control character, not valid Unicode),
    or None. Tab, line feed and carriage return are allowed."""
    if len(value) > limit:
        return f"is longer than {limit} characters"
    found = _CONTROL.search(value)
    if found:
        return f"contains the control character U+{ord(found.group()):04X}"
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        return f"contains U+{ord(value[exc.start]):04X}, a lone surrogate (not valid Unicode text)"
    return None


def check_text(value: Any, field: str, limit: int = MAX_TEXT, what: str | None = None) -> str:
    """``value`` if it is a string that can be stored (see :func:`text_problem`); else INVALID_INPUT."""
    if not isinstance(value, str):
        raise InvalidInput(f"{what or field} must be a string", field=field)
    problem = text_problem(value, limit)
    if problem:
        raise InvalidInput(f"{what or field} {problem}", field=field)
    return value


def number_problem(value: int | float) -> str | None:
    """Why a number cannot be stored (NaN, infinite, beyond the exact integers of JSON), or None."""
    if isinstance(value, float) and not math.isfinite(value):
        return "is not a finite number"
    if abs(value) > MAX_SAFE_INTEGER:
        return f"is out of range (at most {MAX_SAFE_INTEGER} either way)"
    return None


def json_problem(value: Any, path: str = "", max_depth: int = MAX_JSON_DEPTH) -> tuple[str, str] | None:
    """The first thing in a JSON value that cannot be stored, as (dotted path, problem), or None.

    Checks every string and object key (:func:`text_problem`; keys at most ``MAX_NAME``), every
    number (:func:`number_problem`), the nesting (``max_depth``: ``MAX_JSON_DEPTH`` unless an
    outer layer wraps the JSON in more levels of its own), the number of values
    (``MAX_JSON_VALUES``) and the characters of all strings together (``MAX_JSON_TEXT``). Walks
    without recursion, so no input is too deep to be refused.
    """
    stack: list[tuple[Any, str, int]] = [(value, path, 1)]
    values = chars = 0
    while stack:
        item, where, level = stack.pop()
        values += 1
        if values > MAX_JSON_VALUES:
            return path, f"has more than {MAX_JSON_VALUES} values"
        if isinstance(item, str):
            chars += len(item)
            problem = text_problem(item)
        elif isinstance(item, bool) or item is None:
            problem = None
        elif isinstance(item, (int, float)):
            problem = number_problem(item)
        elif isinstance(item, (dict, list)):
            if level > max_depth:  # named by its outermost field: the inner path is just noise
                outer = ".".join(where.split(".")[: len(path.split(".")) + 1 if path else 1])
                return outer, f"is nested more than {max_depth} levels deep"
            problem = None
            if isinstance(item, list):
                stack.extend((v, f"{where}.{i}" if where else str(i), level + 1) for i, v in enumerate(item))
            else:
                for key, v in item.items():
                    inner = f"{where}.{key}" if where else str(key)
                    if not isinstance(key, str):
                        return where, "has a key that is not a string"
                    chars += len(key)
                    key_problem = text_problem(key, MAX_NAME)
                    if key_problem:
                        return where or path, f"has a key that {key_problem}"
                    stack.append((v, inner, level + 1))
        else:
            problem = f"is not a JSON value ({type(item).__name__})"
        if problem:
            return where, problem
        if chars > MAX_JSON_TEXT:
            return path, f"has more than {MAX_JSON_TEXT} characters of text"
    return None


def check_json(value: Any, field: str) -> Any:
    """``value`` if it is JSON that can be stored (see :func:`json_problem`); else INVALID_INPUT
    naming the innermost field at fault (``field.key.0.key``)."""
    found = json_problem(value, field)
    if found:
        where, problem = found
        raise InvalidInput(f"{where} {problem}", field=where)
    return value


def validate(fact_type: str, payload: Any) -> dict[str, Any]:
    """Check a payload's shape; return a normalised copy with defaults filled in.

    First the whole payload must be storable JSON within the input limits (:func:`json_problem`),
    then each field its type and range.
    """
    schema = SCHEMAS.get(fact_type)
    if schema is None:
        raise InvalidInput(f"unknown fact type {fact_type!r}", field="type")
    if not isinstance(payload, dict):
        raise InvalidInput(f"{fact_type}: payload must be an object", field="payload")
    found = json_problem(payload)
    if found:
        where, problem = found
        raise InvalidInput(f"{fact_type}: {where or 'the payload'} {problem}", field=where or "payload")
    unknown = set(payload) - set(schema) - {"rulings"}
    if unknown:
        raise InvalidInput(
            f"{fact_type}: unknown field(s) {', '.join(sorted(unknown))}", field=sorted(unknown)[0]
        )
    out: dict[str, Any] = {}
    for name, spec in schema.items():
        if name in payload:
            out[name] = check_field(fact_type, name, spec, payload[name])
        elif spec.required:
            raise InvalidInput(f"{fact_type}: missing field {name!r}", field=name)
        elif spec.default is not _MISSING:
            out[name] = _copy(spec.default)
    if "rulings" in payload:
        out["rulings"] = _check_rulings(fact_type, payload["rulings"])
    return out


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


def _check_rulings(fact_type: str, value: Any) -> dict[str, str]:
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise InvalidInput(f"{fact_type}: 'rulings' maps a field name to a ruling id", field="rulings")
    return dict(value)


def check_field(fact_type: str, name: str, spec: Field, value: Any) -> Any:
    where = f"{fact_type}.{name}"
    if value is None:
        if spec.nullable or (not spec.required and spec.default is None):
            return None
        raise InvalidInput(f"{where} must not be null", field=name)
    kind = spec.kind
    if kind == "any":
        return _copy(value)
    if kind == "str":
        if not isinstance(value, str) or not value.strip() and spec.required:
            raise InvalidInput(f"{where} must be a non-empty string", field=name)
        if len(value) > MAX_TEXT:
            raise InvalidInput(f"{where} is longer than {MAX_TEXT} characters", field=name)
        return value
    if kind == "enum":
        if value not in spec.choices:
            raise InvalidInput(f"{where} must be one of {', '.join(spec.choices)}; got {value!r}", field=name)
        return value
    if kind == "bool":
        if not isinstance(value, bool):
            raise InvalidInput(f"{where} must be true or false", field=name)
        return value
    if kind == "int":
        return _int(where, name, value, spec.minimum, spec.maximum)
    if kind == "roll":
        if not isinstance(value, dict):
            raise InvalidInput(f"{where} must be a dice roll record", field=name)
        return dice.validate_roll(value)
    if kind == "list_str":
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise InvalidInput(f"{where} must be a list of strings", field=name)
        return list(value)
    if kind == "list_dict":
        if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
            raise InvalidInput(f"{where} must be a list of objects", field=name)
        return _copy(value)
    if kind == "targets":
        return _check_targets(where, name, value)
    if kind == "dict":
        if not isinstance(value, dict):
            raise InvalidInput(f"{where} must be an object", field=name)
        return _copy(value)
    if kind == "dict_int":
        if not isinstance(value, dict):
            raise InvalidInput(f"{where} must be an object of whole numbers", field=name)
        return {str(k): _int(f"{where}.{k}", name, v, -1000, 100_000) for k, v in value.items()}
    raise AssertionError(f"unknown field kind {kind}")  # pragma: no cover


TARGET_KEYS = {"target", "roll", "damage", "circumstances", "modifiers"}


def _check_targets(where: str, name: str, value: Any) -> list[dict[str, Any]]:
    """Attack targets: who, the d20 as it fell, per-target damage dice, declared circumstances."""
    if not isinstance(value, list) or not value or not all(isinstance(v, dict) for v in value):
        raise InvalidInput(f"{where} must be a non-empty list of targets", field=name)
    out = []
    for i, t in enumerate(value):
        unknown = set(t) - TARGET_KEYS
        if unknown:
            raise InvalidInput(f"{where}[{i}]: unknown field(s) {', '.join(sorted(unknown))}", field=name)
        if not isinstance(t.get("target"), str) or not t["target"]:
            raise InvalidInput(f"{where}[{i}].target must name a creature", field=f"{name}.target")
        if not isinstance(t.get("roll"), dict):
            raise InvalidInput(
                f"{where}[{i}].roll must be the attack's d20 roll record", field=f"{name}.roll"
            )
        entry = {"target": t["target"], "roll": dice.validate_roll(t["roll"])}
        if dice.natural(entry["roll"]) is None:
            raise InvalidInput(f"{where}[{i}].roll must be a single d20 plus modifiers", field=f"{name}.roll")
        if t.get("damage") is not None:
            entry["damage"] = dice.validate_roll(t["damage"])
        for key in ("circumstances", "modifiers"):
            if key in t:
                if not isinstance(t[key], list):
                    raise InvalidInput(f"{where}[{i}].{key} must be a list", field=f"{name}.{key}")
                entry[key] = _copy(t[key])
        out.append(entry)
    return out


def _int(where: str, name: str, value: Any, minimum: int | None, maximum: int | None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidInput(f"{where} must be a whole number; got {value!r}", field=name)
    if minimum is not None and value < minimum:
        raise InvalidInput(f"{where} must be at least {minimum}; got {value}", field=name)
    if maximum is not None and value > maximum:
        raise InvalidInput(f"{where} must be at most {maximum}; got {value}", field=name)
    return int(value)


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7396 JSON merge patch (used by amendments)."""
    if not isinstance(patch, dict):
        return _copy(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result
