"""Fact catalogues: what can be recorded in a campaign, with the shape of each payload.

Facts are data: they record what happened at the table (who did what, every die face,
every choice and GM judgement), never the numbers that follow from it. Payloads are plain
JSON (lists and dicts; no tuples or sets) so a stored fact folds exactly like a live one.

The **core** catalogue (:data:`CORE`) holds what every game system shares: the corrections
and rulings of RULES.md C0.4 (handled by the ruleset-neutral ledger), notes and free dice
rolls, and the encounter, turn and time facts the core encounter engine folds. Each
ruleset declares its own fact types on top (:meth:`Catalogue.extend`), with their payload
versions and upcasters; a campaign validates against its ruleset's catalogue only, so two
systems may use the same fact name with different payloads.

``Catalogue.validate(fact_type, payload)`` checks the shape and fills defaults; the
ruleset checks meaning (does the creature exist, is it dying, ...) when it folds the fact.
``Catalogue.upcast`` turns a stored older payload version into the current one, so old
campaigns keep folding after a schema change.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from domain import dice
from domain.core.limits import MAX_POSITION, MAX_TEXT, json_problem
from domain.errors import InvalidInput

_MISSING = object()
Check = Callable[[str, str, Any], Any]  # (where, field name, value) -> normalised value


@dataclass(frozen=True)
class Field:
    """One payload field: its kind (``str``, ``int``, ``bool``, ``any``, ``roll``, ``list_str``,
    ``dict``, ``dict_int``, ``list_dict``, ``enum``, or ``custom`` with its own ``check``)."""

    kind: str
    required: bool = True
    default: Any = None
    choices: tuple[str, ...] = ()
    minimum: int | None = None
    maximum: int | None = None
    nullable: bool = False
    check: Check | None = None


def opt(kind: str, default: Any = None, **kw: Any) -> Field:
    return Field(kind, required=False, default=default, **kw)


def req(kind: str, **kw: Any) -> Field:
    return Field(kind, **kw)


Schema = dict[str, Field]
Upcaster = Callable[[dict[str, Any]], dict[str, Any]]


# --- meta facts: corrections, rulings, notes; handled by the ruleset-neutral ledger ---
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
    # proposals (issue 19; domain/core/proposals.py): a player's command awaiting the GM
    "ProposalSubmitted": {
        "mutation": req("str"),
        "input": req("dict"),
        "character": opt("str", None, nullable=True),
        "characters": opt("list_str", []),
        "proposed_by": req("str"),
        "proposer": opt("str", ""),
        "note": opt("str", ""),
        "rolls": opt("list_dict", []),
    },
    "ProposalDecided": {
        "proposal": req("int", minimum=1, maximum=MAX_POSITION),
        "decision": req("enum", choices=("approved", "approved_with_changes", "rejected")),
        "reason": opt("str", ""),
        "input": opt("dict", None, nullable=True),
        "changed": opt("list_dict", []),  # with changes: each input field changed, before and after
        "facts": opt("int", 0, minimum=0, maximum=10_000),
    },
    "ProposalWithdrawn": {
        "proposal": req("int", minimum=1, maximum=MAX_POSITION),
        "reason": opt("str", ""),
    },
    "ProposalPolicySet": {
        "mutation": req("str"),
        "mode": req("enum", choices=("direct", "approval", "forbidden")),
    },
    "DiceRolled": {
        "roll": req("roll"),
        "purpose": opt("str", ""),
        "creature": opt("str", None, nullable=True),
    },
}

# --- core table facts: encounters, turns and time, shared by every system ---
# (Folded by the core encounter engine, ``domain/core/encounters.py``, with the ruleset's hooks;
# a ruleset may refine a field, e.g. the action kinds it knows, by declaring the same fact type
# with its own schema.)
CORE_TABLE: dict[str, Schema] = {
    "EncounterStarted": {
        "encounter_id": req("str"),
        "name": opt("str", ""),
        "participants": req("list_str"),
    },
    "CreatureJoinedEncounter": {
        "encounter_id": req("str"),
        "creature": req("str"),
        "roll": opt("roll", None, nullable=True),
    },
    "SurpriseDetermined": {"encounter_id": req("str"), "surprised": opt("list_str", [])},
    # v2: a creature OR a group (``group`` + its ``creatures`` in the order they act);
    # ``start_turn`` (v1 facts: true) starts the first turn when this roll settles the order.
    "InitiativeRolled": {
        "encounter_id": req("str"),
        "creature": opt("str", None, nullable=True),
        "group": opt("str", None, nullable=True),
        "creatures": opt("list_str", []),
        "roll": req("roll"),
        "start_turn": opt("bool", False),
    },
    "InitiativeTieBroken": {
        "encounter_id": req("str"),
        "creatures": req("list_str"),
        "method": req("enum", choices=("bonus", "die", "coin")),
        "rolls": opt("list_dict", None, nullable=True),
        "start_turn": opt("bool", False),
    },
    # The table's choice of an order: tied creatures or groups (players / GM decide, OR-5,
    # HS-2), or the members of a group (B-OR-14).
    "InitiativeOrderChosen": {
        "encounter_id": req("str"),
        "creatures": req("list_str"),
        "decided_by": opt("str", ""),
    },
    "TurnStarted": {"encounter_id": req("str"), "creature": opt("str", None, nullable=True)},
    # v2 (ruling 18): ending a turn does not start the next; ``start_next`` (v1 facts: true) does.
    "TurnEnded": {"encounter_id": req("str"), "start_next": opt("bool", False)},
    "TurnDelayed": {"encounter_id": req("str"), "creature": req("str"), "start_next": opt("bool", False)},
    # v2: the delaying creature re-enters after the turn that just ended and acts at once;
    # ``queued`` (v1 facts: true) re-enters after the turn in progress, once it ends.
    "DelayedTurnTaken": {"encounter_id": req("str"), "creature": req("str"), "queued": opt("bool", False)},
    "ActionReadied": {
        "encounter_id": req("str"),
        "creature": req("str"),
        "action": req("str"),
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
        "action": req("str"),
        "name": opt("str", ""),
        "substitutes_for": opt("str", None, nullable=True),
        "gm_exception": opt("bool", False),
    },
    "EncounterEnded": {"encounter_id": req("str"), "outcome": opt("str", "")},
    "TimeAdvanced": {"minutes": req("int", minimum=1, maximum=10_000_000)},
    "TimeSet": {
        "day": req("int", minimum=1, maximum=1_000_000),
        "hour": req("int", minimum=0, maximum=23),
        "minute": opt("int", 0, minimum=0, maximum=59),
    },
}


def _flag_v1(name: str) -> Upcaster:
    """An upcaster for a turn fact whose v1 meaning included a start of turn (ruling 18 split it)."""

    def upcast(payload: dict[str, Any]) -> dict[str, Any]:
        return {**payload, name: True}

    upcast.__doc__ = f"v1 -> v2: the v1 fact also did what ``{name}: true`` does now."
    return upcast


# Turn boundaries became facts of their own (RULES.md ruling 18). A stored v1 fact keeps its
# v1 meaning through the flag the upcaster sets, so an old campaign folds as it always did.
CORE_VERSIONS: dict[str, int] = {
    "InitiativeRolled": 2,
    "InitiativeTieBroken": 2,
    "TurnEnded": 2,
    "TurnDelayed": 2,
    "DelayedTurnTaken": 2,
}
CORE_UPCASTERS: dict[tuple[str, int], Upcaster] = {
    ("InitiativeRolled", 1): _flag_v1("start_turn"),
    ("InitiativeTieBroken", 1): _flag_v1("start_turn"),
    ("TurnEnded", 1): _flag_v1("start_next"),
    ("TurnDelayed", 1): _flag_v1("start_next"),
    ("DelayedTurnTaken", 1): _flag_v1("queued"),
}


class Catalogue:
    """A set of fact types with their payload schemas, current versions and upcasters.

    ``meta`` names the types the ledger itself interprets (corrections, rulings, notes);
    every other type is folded by the ruleset.
    """

    def __init__(
        self,
        schemas: Mapping[str, Schema],
        *,
        versions: Mapping[str, int] | None = None,
        upcasters: Mapping[tuple[str, int], Upcaster] | None = None,
        meta: Iterable[str] = (),
    ) -> None:
        self.schemas: dict[str, Schema] = dict(schemas)
        self.versions: dict[str, int] = {name: 1 for name in self.schemas} | dict(versions or {})
        self.upcasters: dict[tuple[str, int], Upcaster] = dict(upcasters or {})
        self.meta_types: frozenset[str] = frozenset(meta)

    def extend(
        self,
        schemas: Mapping[str, Schema],
        *,
        versions: Mapping[str, int] | None = None,
        upcasters: Mapping[tuple[str, int], Upcaster] | None = None,
    ) -> Catalogue:
        """A new catalogue: this one plus (or, for the same name, replaced by) ``schemas``.

        Meta types cannot be replaced: corrections mean the same in every system.
        """
        clash = set(schemas) & self.meta_types
        if clash:
            raise ValueError(f"meta fact types cannot be redefined: {', '.join(sorted(clash))}")
        out = Catalogue(
            {**self.schemas, **schemas},
            versions={**self.versions, **{n: 1 for n in schemas}, **dict(versions or {})},
            upcasters={**self.upcasters, **dict(upcasters or {})},
            meta=self.meta_types,
        )
        return out

    @property
    def types(self) -> frozenset[str]:
        return frozenset(self.schemas)

    @property
    def table_types(self) -> frozenset[str]:
        return frozenset(self.schemas) - self.meta_types

    def __contains__(self, fact_type: object) -> bool:
        return fact_type in self.schemas

    def version(self, fact_type: str) -> int:
        return self.versions.get(fact_type, 1)

    def upcast(self, fact_type: str, version: int, payload: dict[str, Any]) -> dict[str, Any]:
        """Bring a stored payload up to the current version of its type."""
        current = self.versions.get(fact_type, version)
        while version < current:
            payload = self.upcasters[(fact_type, version)](payload)
            version += 1
        return payload

    def validate(self, fact_type: str, payload: Any) -> dict[str, Any]:
        """Check a payload's shape; return a normalised copy with defaults filled in."""
        schema = self.schemas.get(fact_type)
        if schema is None:
            raise InvalidInput(f"unknown fact type {fact_type!r}", field="type")
        return validate_payload(fact_type, schema, payload)


def validate_payload(fact_type: str, schema: Schema, payload: Any) -> dict[str, Any]:
    """First the whole payload must be storable JSON within the input limits
    (``domain.core.limits.json_problem``), then each field its type and range."""
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


def copy_json(value: Any) -> Any:
    """A deep copy of plain JSON data (dicts and lists)."""
    if isinstance(value, dict):
        return {k: copy_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [copy_json(v) for v in value]
    return value


_copy = copy_json


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
    if kind == "custom" and spec.check is not None:
        return spec.check(where, name, value)
    if kind == "dict":
        if not isinstance(value, dict):
            raise InvalidInput(f"{where} must be an object", field=name)
        return _copy(value)
    if kind == "dict_int":
        if not isinstance(value, dict):
            raise InvalidInput(f"{where} must be an object of whole numbers", field=name)
        return {str(k): _int(f"{where}.{k}", name, v, -1000, 100_000) for k, v in value.items()}
    raise AssertionError(f"unknown field kind {kind}")  # pragma: no cover


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


CORE = Catalogue({**META, **CORE_TABLE}, versions=CORE_VERSIONS, upcasters=CORE_UPCASTERS, meta=META)
"""The ruleset-neutral catalogue every ruleset extends."""
META_TYPES = CORE.meta_types
