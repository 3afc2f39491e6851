"""Output types: Campaign, Character, Encounter, Fact, connections, what-if results."""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any
from uuid import UUID

import strawberry
from strawberry.scalars import JSON
from strawberry.types import Info

from api.graphql import context as ctx
from api.graphql import data, ids
from api.graphql.enums import (
    CreatureKind,
    FactStatus,
    LifeState,
    ProposalMode,
    ProposalStatus,
    Role,
    TimeAxis,
)
from api.graphql.errors import ChronicleError
from api.graphql.inputs import CorrectionInput, correction_fact
from api.service.application import CampaignView
from domain import rulesets
from domain.core import proposals as book
from domain.core.rolls import roll_purpose

MAX_PAGE = 100
DEFAULT_PAGE = 50


@strawberry.interface(description="An object with a global ID (Relay).")
class Node:
    id: strawberry.ID


@strawberry.type
class PageInfo:
    has_next_page: bool
    has_previous_page: bool
    start_cursor: str | None
    end_cursor: str | None


# ------------------------------------------------------------------ pagination
def encode_cursor(position: int) -> str:
    return base64.b64encode(f"position:{position}".encode()).decode()


def decode_cursor(cursor: str, field: str) -> int:
    try:
        kind, _, value = base64.b64decode(cursor.encode(), validate=True).decode().partition(":")
        if kind != "position":
            raise ValueError
        return int(value)
    except (ValueError, UnicodeDecodeError):
        raise ChronicleError(
            "INVALID_CURSOR", f"{cursor!r} is not a cursor of this connection", field
        ) from None


def check_page_size(first: int | None, last: int | None) -> None:
    for name, value in (("first", first), ("last", last)):
        if value is not None and not 1 <= value <= MAX_PAGE:
            raise ChronicleError(
                "PAGE_SIZE_OUT_OF_RANGE", f"{name} must be from 1 to {MAX_PAGE}; got {value}", name
            )


def paginate(
    items: list[Any],
    position: Any,
    first: int | None,
    after: str | None,
    last: int | None,
    before: str | None,
) -> tuple[list[Any], PageInfo]:
    """Cursor pagination on store positions (stable when facts are added)."""
    check_page_size(first, last)
    if first is None and last is None:
        first = DEFAULT_PAGE
    lo = decode_cursor(after, "after") if after is not None else None
    hi = decode_cursor(before, "before") if before is not None else None
    window = [x for x in items if (lo is None or position(x) > lo) and (hi is None or position(x) < hi)]
    has_next = has_prev = False
    if first is not None and len(window) > first:
        window, has_next = window[:first], True
    if last is not None and len(window) > last:
        window, has_prev = window[-last:], True
    if lo is not None and any(position(x) <= lo for x in items):
        has_prev = has_prev or True
    if hi is not None and any(position(x) >= hi for x in items):
        has_next = has_next or True
    info = PageInfo(
        has_next_page=has_next,
        has_previous_page=has_prev,
        start_cursor=encode_cursor(position(window[0])) if window else None,
        end_cursor=encode_cursor(position(window[-1])) if window else None,
    )
    return window, info


def paginate_positions(
    a: int, b: int, first: int | None, after: str | None, last: int | None, before: str | None
) -> tuple[range, PageInfo]:
    """:func:`paginate` over the gap-free positions ``a..b`` without listing them: the page's
    positions and its PageInfo, exactly as ``paginate(list(range(a, b + 1)), ...)`` gives them
    (tests/unit/test_paginate_positions.py)."""
    check_page_size(first, last)
    if first is None and last is None:
        first = DEFAULT_PAGE
    lo = decode_cursor(after, "after") if after is not None else None
    hi = decode_cursor(before, "before") if before is not None else None
    window = range(a if lo is None else max(a, lo + 1), (b if hi is None else min(b, hi - 1)) + 1)
    has_next = has_prev = False
    if first is not None and len(window) > first:
        window, has_next = window[:first], True
    if last is not None and len(window) > last:
        window, has_prev = window[-last:], True
    if lo is not None and a <= b and a <= lo:
        has_prev = True
    if hi is not None and a <= b and b >= hi:
        has_next = True
    info = PageInfo(
        has_next_page=has_next,
        has_previous_page=has_prev,
        start_cursor=encode_cursor(window[0]) if window else None,
        end_cursor=encode_cursor(window[-1]) if window else None,
    )
    return window, info


# ------------------------------------------------------------------ small value types
@strawberry.type
class Modifier:
    source: str
    value: int


@strawberry.type(description="Hit points, in every system that has them.")
class HitPoints:
    current: int
    max: int
    temporary: int


@strawberry.type
class EffectDuration:
    kind: str
    anchor: str | None
    details: JSON = strawberry.field(description="The whole duration record (round applied, ...).")


@strawberry.type(
    description="An effect on a creature: conditions, ongoing damage, modifiers; with its duration."
)
class Effect:
    effect_id: str
    name: str | None
    source: str | None
    target: str | None
    components: JSON
    conditions: list[str]
    duration: EffectDuration
    pending: bool
    aftereffect: JSON | None


def effect_from(raw: dict[str, Any], target: str | None = None) -> Effect:
    duration = dict(raw.get("duration") or {})
    comps = raw.get("components") or []
    return Effect(
        effect_id=str(raw.get("effect_id")),
        name=raw.get("name"),
        source=raw.get("source"),
        target=raw.get("target", target),
        components=comps,
        conditions=[c["condition"] for c in comps if isinstance(c, dict) and c.get("condition")],
        duration=EffectDuration(
            kind=str(duration.get("kind", "until_removed")), anchor=duration.get("anchor"), details=duration
        ),
        pending=bool(raw.get("pending")),
        aftereffect=raw.get("aftereffect"),
    )


@strawberry.type(
    description="A labelled value on a track's axis that the game system cares about (e.g. dying at 0)."
)
class TrackThreshold:
    label: str
    value: int


@strawberry.type(
    description="One number the game system tracks for a creature, with its bounds: hit points, and the "
    "system's own. The same tracks the exports chart; a client can draw any system's creature as bars "
    "from these without knowing the system."
)
class Track:
    key: str = strawberry.field(description="Stable id within the system, e.g. `hp`.")
    label: str = strawberry.field(description="What to call it, e.g. `HP`.")
    value: int = strawberry.field(description="The current value.")
    ceiling: int | None = strawberry.field(description="The usual maximum (null if unbounded).")
    floor: int | None = strawberry.field(description="The lowest value it can take (null if unbounded).")
    thresholds: list[TrackThreshold] = strawberry.field(
        description="Labelled values the system cares about (e.g. dying at 0)."
    )


def tracks_of(ruleset_id: str, view: dict[str, Any]) -> list[Track]:
    """The ruleset's tracks (``Ruleset.tracks``) of one creature view, as GraphQL values."""
    return [
        Track(
            key=t.key,
            label=t.label,
            value=int(t.value),
            ceiling=t.ceiling,
            floor=t.floor,
            thresholds=[TrackThreshold(label=label, value=int(v)) for label, v in t.thresholds],
        )
        for t in rulesets.get_ruleset(ruleset_id).tracks(view)
    ]


# ------------------------------------------------------------------ Character
@strawberry.interface(
    description="A creature of a campaign (player character, monster or NPC) at one position, in any "
    "game system. Each system's concrete type adds its own resources (ask `__typename`); "
    "a system without an API plug-in is served as `GenericCharacter`."
)
class Character(Node):
    campaign_id_: strawberry.Private[UUID]
    ruleset_: strawberry.Private[str]
    view_: strawberry.Private[dict[str, Any]]
    at_: strawberry.Private[int]
    axis_: strawberry.Private[str]

    @strawberry.field(description="The creature's id inside its campaign (used in facts).")
    def creature_id(self) -> str:
        return str(self.view_["id"])

    @strawberry.field
    def name(self) -> str:
        return str(self.view_["name"])

    @strawberry.field
    def kind(self) -> CreatureKind:
        return CreatureKind(self.view_["kind"])

    @strawberry.field
    def level(self) -> int:
        return int(self.view_["level"])

    @strawberry.field(description="Its life state in the vocabulary every system shares.")
    def life_state(self) -> LifeState:
        return LifeState(self.view_["life"])

    @strawberry.field(description="Hit points (null in a system without them).")
    def hit_points(self) -> HitPoints | None:
        hp = self.view_.get("hit_points")
        if not isinstance(hp, dict):
            return None
        return HitPoints(
            current=int(hp["current"]), max=int(hp["max"]), temporary=int(hp.get("temporary") or 0)
        )

    @strawberry.field(
        description="The numbers the game system tracks for it (its hit points among them, where it has "
        "them), in the system's drawing order, with bounds and thresholds."
    )
    def tracks(self) -> list[Track]:
        return tracks_of(self.ruleset_, self.view_)

    @strawberry.field
    def conditions(self) -> list[str]:
        return list(self.view_.get("conditions") or [])

    @strawberry.field
    def effects(self) -> list[Effect]:
        return [effect_from(e, self.view_["id"]) for e in self.view_.get("effects") or []]

    @strawberry.field(description="The game system (ruleset id) this creature is played in.")
    def ruleset(self) -> str:
        return self.ruleset_

    @strawberry.field(description="The position this state is at.")
    def position(self) -> int:
        return self.at_

    @strawberry.field(description="Everything as one JSON object (the ruleset's creature view).")
    def raw(self) -> JSON:
        return self.view_

    @strawberry.field(description="This creature at an earlier position (null if it did not exist yet).")
    async def as_of(self, info: Info, position: int, view: TimeAxis = TimeAxis.CORRECTED) -> Character | None:
        then = await ctx.view(info, self.campaign_id_, position, view.value)
        found = then.creature(self.view_["id"])
        return None if found is None else build_character(then, found)


@strawberry.type(
    description="A creature of a game system that has no API plug-in: the shared fields and `raw`."
)
class GenericCharacter(Character):
    pass


def character_type(ruleset_id: str) -> type[Character]:
    """The concrete ``Character`` type of a game system (its plug-in's, else ``GenericCharacter``)."""
    from api.rulesets import plugin_for

    plugin = plugin_for(ruleset_id)
    return plugin.character_type if plugin is not None else GenericCharacter


def build_character(view: CampaignView, creature: dict[str, Any]) -> Character:
    """A creature as its system's ``Character`` type, from a campaign view and the creature's view."""
    cls = character_type(view.ruleset.id)
    return cls(
        id=strawberry.ID(ids.encode("Character", view.campaign_id, creature["id"])),
        campaign_id_=view.campaign_id,
        ruleset_=view.ruleset.id,
        view_=creature,
        at_=view.position,
        axis_=view.axis,
    )


def characters_of(view: CampaignView, creature_ids: list[str]) -> list[Character]:
    """These creatures (those that exist at the view's position), each viewed once."""
    out = []
    for cid in creature_ids:
        found = view.creature(cid)
        if found is not None:
            out.append(build_character(view, found))
    return out


# ------------------------------------------------------------------ Encounter
@strawberry.type
class InitiativeEntry:
    creature_id: str
    total: int | None
    details: JSON


@strawberry.type
class ReadiedAction:
    creature_id: str
    action: str | None
    trigger: str | None


@strawberry.type(description="An encounter's order of play at one position.")
class Encounter(Node):
    campaign_: strawberry.Private[CampaignView]
    view_: strawberry.Private[dict[str, Any]]

    @classmethod
    def build(cls, campaign: CampaignView, view: dict[str, Any]) -> Encounter:
        return cls(
            id=strawberry.ID(ids.encode("Encounter", campaign.campaign_id, view["id"])),
            campaign_=campaign,
            view_=view,
        )

    async def _characters(self, info: Info, cids: list[str]) -> list[Character]:
        return characters_of(self.campaign_, cids)

    @strawberry.field
    def encounter_id(self) -> str:
        return str(self.view_["id"])

    @strawberry.field
    def name(self) -> str:
        return str(self.view_.get("name") or "")

    @strawberry.field(description="setup, running or ended.")
    def state(self) -> str:
        return str(self.view_["state"])

    @strawberry.field
    def round(self) -> int:
        return int(self.view_["round"] or 0)

    @strawberry.field
    def surprise_round(self) -> bool:
        return bool(self.view_["surprise_round"])

    @strawberry.field
    def turn_number(self) -> int:
        return int(self.view_.get("turn_number") or 0)

    @strawberry.field(description="Whose turn it is (null before the order is settled or after the end).")
    async def turn_of(self, info: Info) -> Character | None:
        current = self.view_.get("turn_of")
        if not current:
            return None
        found = await self._characters(info, [current])
        return found[0] if found else None

    @strawberry.field
    def turn_of_creature_id(self) -> str | None:
        return self.view_.get("turn_of")

    @strawberry.field(description="Creature ids in initiative order.")
    def order(self) -> list[str]:
        return list(self.view_["order"])

    @strawberry.field(description="The initiative order as characters.")
    async def initiative_order(self, info: Info) -> list[Character]:
        return await self._characters(info, list(self.view_["order"]))

    @strawberry.field
    def initiative(self) -> list[InitiativeEntry]:
        out = []
        for cid, rec in self.view_["initiative"].items():
            total = rec.get("total") if isinstance(rec, dict) else None
            out.append(
                InitiativeEntry(creature_id=cid, total=total if isinstance(total, int) else None, details=rec)
            )
        return out

    @strawberry.field
    async def participants(self, info: Info) -> list[Character]:
        return await self._characters(info, list(self.view_["participants"]))

    @strawberry.field
    def surprised(self) -> list[str]:
        return list(self.view_["surprised"])

    @strawberry.field
    def delayed(self) -> list[str]:
        return list(self.view_["delayed"])

    @strawberry.field
    def readied(self) -> list[ReadiedAction]:
        return [
            ReadiedAction(creature_id=cid, action=r.get("action"), trigger=r.get("trigger"))
            for cid, r in self.view_["readied"].items()
        ]

    @strawberry.field
    def actions_this_turn(self) -> list[str]:
        return list(self.view_["actions_this_turn"])

    @strawberry.field(description="Initiative ties still to break (setup only).")
    def unresolved_ties(self) -> JSON:
        return self.view_["unresolved_ties"]

    @strawberry.field(description="Active effects on the participants, with durations.")
    def effects(self) -> list[Effect]:
        return [effect_from(e) for e in self.view_.get("effects", [])]

    @strawberry.field
    def position(self) -> int:
        return self.campaign_.position

    @strawberry.field
    def raw(self) -> JSON:
        return self.view_

    @strawberry.field
    async def as_of(self, info: Info, position: int, view: TimeAxis = TimeAxis.CORRECTED) -> Encounter | None:
        then = await ctx.view(info, self.campaign_.campaign_id, position, view.value)
        found = then.encounter(self.view_["id"])
        return None if found is None else Encounter.build(then, found)


# ------------------------------------------------------------------ facts
@strawberry.type(description="A die expression as rolled: every face.")
class DiceRoll:
    expression: str
    faces: list[int]
    total: int
    manual: bool = strawberry.field(description="True when the faces were read off physical dice.")
    terms: JSON
    path: str | None = strawberry.field(
        default=None,
        description="Where the roll is in the fact's payload (`roll`, `targets.0.damage`): what "
        "amendFact's `roll` names.",
    )
    purpose: str | None = strawberry.field(
        default=None, description="What the roll is for (`attack roll`, `damage roll`, `saving throw`...)."
    )


def rolls_in(value: Any, purpose_of: Callable[[tuple[str, ...]], str] | None = None) -> list[DiceRoll]:
    from domain import dice

    found: list[DiceRoll] = []

    def walk(v: Any, path: tuple[str, ...] = ()) -> None:
        if isinstance(v, dict):
            if "terms" in v and "expression" in v:
                faces = [f for t in v["terms"] if isinstance(t, dict) for f in t.get("faces", [])]
                try:
                    total = dice.roll_total(v)
                except Exception:  # noqa: BLE001 - a malformed stored roll still shows its faces
                    total = 0
                found.append(
                    DiceRoll(
                        expression=str(v["expression"]),
                        faces=faces,
                        total=total,
                        manual=bool(v.get("manual")),
                        terms=v["terms"],
                        path=".".join(path) if purpose_of else None,
                        purpose=purpose_of(path) if purpose_of else None,
                    )
                )
                return
            for k, x in v.items():
                walk(x, (*path, str(k)))
        elif isinstance(v, list):
            for i, x in enumerate(v):
                walk(x, (*path, str(i)))

    walk(value)
    return found


@strawberry.type(description="One stored fact of play or correction.")
class Fact(Node):
    record_: strawberry.Private[data.FactRecord]

    @classmethod
    def build(cls, rec: data.FactRecord) -> Fact:
        return cls(id=strawberry.ID(ids.encode("Fact", rec.campaign_id, rec.position)), record_=rec)

    @strawberry.field(description="The store position (1 is the campaign's creation).")
    def position(self) -> int:
        return self.record_.position

    @strawberry.field
    def type(self) -> str:
        return self.record_.type

    @strawberry.field(description="The effective payload (amendments applied).")
    def payload(self) -> JSON:
        return self.record_.payload

    @strawberry.field(description="The payload as first recorded.")
    def original_payload(self) -> JSON:
        return self.record_.original_payload

    @strawberry.field(
        description="What the fold made of it (null for corrections, revoked or orphaned facts)."
    )
    async def outcome(self, info: Info) -> JSON | None:
        await _filled(info, self.record_)
        return self.record_.outcome

    @strawberry.field
    def status(self) -> list[FactStatus]:
        return [FactStatus(s) for s in self.record_.status]

    @strawberry.field
    def orphan_reason(self) -> str | None:
        return self.record_.orphan_reason

    @strawberry.field
    def recorded_at(self) -> str:
        return self.record_.recorded_at

    @strawberry.field
    def correlation_id(self) -> str | None:
        return self.record_.meta.get("correlation_id")

    @strawberry.field
    def recorded_by(self) -> str | None:
        v = self.record_.meta.get("recorded_by")
        return None if v is None else str(v)

    @strawberry.field(description="Every die rolled in this fact, with its faces.")
    def dice(self) -> list[DiceRoll]:
        rec = self.record_
        return rolls_in(rec.payload, lambda path: roll_purpose(rec.ruleset, rec.type, rec.payload, path))

    @strawberry.field(
        description="How the fact came to be when a player proposed it: "
        "`proposed by Ana (player), approved with changes by the GM (proposal #12)`; null otherwise."
    )
    def provenance(self) -> str | None:
        return None if self.record_.type in book.TYPES else book.provenance(self.record_.meta)

    @strawberry.field(description="The proposal this fact was approved from (its position), if any.")
    def proposal_position(self) -> int | None:
        v = self.record_.meta.get("proposal")
        return v if isinstance(v, int) and "proposed_by" in self.record_.meta else None

    @strawberry.field(description="One line of narration.")
    async def line(self, info: Info) -> str:
        await _filled(info, self.record_)
        return self.record_.line


async def _filled(info: Info, rec: data.FactRecord) -> None:
    """Give the record (and the page it is shown with) its outcome and narrated line, once per
    operation: they fold the stretch the page spans, from the checkpoint before it (at 100k
    facts, rebuilding a stored checkpoint costs most of a page), so a page that asks for neither
    (positions, types, statuses, payloads) costs only its own facts."""
    if rec.filled:
        return
    group = rec.page if rec.page is not None else [rec]
    key = ("fill", rec.campaign_id, id(group))
    # the group lives as long as the operation's cache: its id is never reused by another group
    # (a Fact by id has a one-record list of its own, freed after its fill; the next Fact's list
    # took its id, found that fill done and was never filled)
    ctx.cache_of(info).setdefault(("fill-group", id(group)), group)
    await ctx.cached(info, key, data.fill, ctx.app_of(info), rec.campaign_id, group)


@strawberry.type
class FactEdge:
    cursor: str
    node: Fact


@strawberry.type
class FactConnection:
    edges: list[FactEdge]
    page_info: PageInfo
    total_count: int

    @strawberry.field
    def nodes(self) -> list[Fact]:
        return [e.node for e in self.edges]


@strawberry.type
class LogLine:
    position: int
    type: str
    text: str
    status: list[FactStatus]


@strawberry.type
class LogLineEdge:
    cursor: str
    node: LogLine


@strawberry.type
class LogLineConnection:
    edges: list[LogLineEdge]
    page_info: PageInfo
    total_count: int

    @strawberry.field
    def nodes(self) -> list[LogLine]:
        return [e.node for e in self.edges]


@strawberry.input(description="Narrow a campaign's history. All given filters must hold.")
class HistoryFilter:
    character_id: strawberry.ID | None = strawberry.field(
        default=None, description="Facts naming this character."
    )
    encounter_id: strawberry.ID | None = None
    types: list[str] | None = strawberry.field(default=None, description="Fact types, e.g. AttackMade.")
    status: list[FactStatus] | None = strawberry.field(default=None, description="Facts with any of these.")
    from_position: int | None = None
    to_position: int | None = None


CREATURE_KEYS = ("creature", "target", "attacker", "healer", "creature_id", "trigger_creature", "caregiver")


def mentions(payload: dict[str, Any], creature: str) -> bool:
    if any(payload.get(k) == creature for k in CREATURE_KEYS):
        return True
    for k in ("creatures", "participants", "surprised"):
        v = payload.get(k)
        if isinstance(v, list) and creature in v:
            return True
    targets = payload.get("targets")
    return isinstance(targets, list) and any(
        isinstance(t, dict) and t.get("target") == creature for t in targets
    )


def by_position_only(f: HistoryFilter) -> bool:
    """Whether a filter narrows by position alone (a page of it needs no scan of the facts)."""
    return f.character_id is None and f.encounter_id is None and not f.types and not f.status


def filter_history(
    records: list[data.FactRecord], campaign_id: UUID, f: HistoryFilter | None
) -> list[data.FactRecord]:
    if f is None:
        return records
    out = records
    if f.character_id is not None:
        _, cid, creature = ids.decode(f.character_id, "Character", "filter.characterId")
        out = [r for r in out if cid == campaign_id and mentions(r.payload, creature)]
    if f.encounter_id is not None:
        _, cid, enc = ids.decode(f.encounter_id, "Encounter", "filter.encounterId")
        out = [r for r in out if cid == campaign_id and r.payload.get("encounter_id") == enc]
    if f.types:
        wanted = set(f.types)
        out = [r for r in out if r.type in wanted]
    if f.status:
        statuses = {s.value for s in f.status}
        out = [r for r in out if statuses & set(r.status)]
    if f.from_position is not None:
        out = [r for r in out if r.position >= f.from_position]
    if f.to_position is not None:
        out = [r for r in out if r.position <= f.to_position]
    return out


@strawberry.type
class Orphan:
    position: int
    reason: str


@strawberry.type
class FieldChange:
    field: str
    before: JSON | None
    after: JSON | None


@strawberry.type
class CharacterChange:
    creature_id: str
    fields: list[FieldChange]


def character_changes(changes: list[dict[str, Any]]) -> list[CharacterChange]:
    return [
        CharacterChange(
            creature_id=c["creature_id"],
            fields=[FieldChange(field=f["field"], before=f["before"], after=f["after"]) for f in c["fields"]],
        )
        for c in changes
    ]


@strawberry.type(description="What proposed corrections would do. Nothing is stored.")
class WhatIfResult:
    view_: strawberry.Private[CampaignView]
    position: int
    orphans: list[Orphan]
    changes: list[CharacterChange]
    newly_orphaned: list[int]
    no_longer_orphaned: list[int]

    @strawberry.field(description="The characters as they would be.")
    def characters(self) -> list[Character]:
        return characters_of(self.view_, self.view_.creature_ids())

    @strawberry.field
    def encounters(self) -> list[Encounter]:
        return [
            Encounter.build(self.view_, self.view_.encounter(e) or {}) for e in self.view_.encounter_ids()
        ]

    @strawberry.field(description="The whole state as it would be, as one JSON object (costs the campaign).")
    def state(self) -> JSON:
        return rulesets.summary(self.view_.ruleset, self.view_.state)


# ------------------------------------------------------------------ proposals (issue 19)
@strawberry.type(description="A command a player proposed, and what the GM decided.")
class Proposal(Node):
    campaign_id_: strawberry.Private[UUID]
    p_: strawberry.Private[book.Proposal]

    @classmethod
    def build(cls, campaign_id: UUID, p: book.Proposal) -> Proposal:
        return cls(
            id=strawberry.ID(ids.encode("Proposal", campaign_id, p.position)), campaign_id_=campaign_id, p_=p
        )

    @strawberry.field(description="The position of its ProposalSubmitted fact.")
    def position(self) -> int:
        return self.p_.position

    @strawberry.field(description="The mutation proposed, e.g. `attack` or `d20Attack`.")
    def mutation(self) -> str:
        return self.p_.mutation

    @strawberry.field(description="The mutation's input as proposed (exactly as sent).")
    def input(self) -> JSON:
        return self.p_.input

    @strawberry.field(description="The input as approved with changes (null otherwise).")
    def amended_input(self) -> JSON | None:
        return self.p_.amended_input

    @strawberry.field(description="The input fields the GM changed: before and after.")
    def changes(self) -> list[FieldChange]:
        if self.p_.amended_input is None:
            return []
        return [
            FieldChange(field=c["field"], before=c["before"], after=c["after"])
            for c in book.diff(self.p_.input, self.p_.amended_input)
        ]

    @strawberry.field(description="The character it is for (local id).")
    def character_id(self) -> str | None:
        return self.p_.character

    @strawberry.field(description="The characters the command names (local ids).")
    def character_ids(self) -> list[str]:
        return list(self.p_.characters)

    @strawberry.field(description="Who proposed it, for people: `Ana (player)`.")
    def proposer(self) -> str:
        return book.who(self.p_.proposed_by, self.p_.proposer)

    @strawberry.field(description="The proposing token: `role:tokenId`.")
    def proposed_by(self) -> str:
        return self.p_.proposed_by

    @strawberry.field
    def note(self) -> str:
        return self.p_.note

    @strawberry.field
    def submitted_at(self) -> str:
        return self.p_.submitted_at

    @strawberry.field
    def status(self) -> ProposalStatus:
        return ProposalStatus(self.p_.status)

    @strawberry.field(description="The reason given with the decision or withdrawal.")
    def reason(self) -> str:
        return self.p_.reason

    @strawberry.field(description="The position of its decision or withdrawal.")
    def decided_at(self) -> int | None:
        return self.p_.decided_at

    @strawberry.field(description="Who decided it: `role:tokenId`.")
    def decided_by(self) -> str | None:
        return self.p_.decided_by

    @strawberry.field(description="The positions of the facts its approval stored.")
    def applied_positions(self) -> list[int]:
        return list(self.p_.applied)

    @strawberry.field(description="The dice the server rolled for it (approving applies these same dice).")
    def dice(self) -> list[DiceRoll]:
        return rolls_in([r.get("roll") for r in self.p_.rolls])


@strawberry.type
class ProposalEdge:
    cursor: str
    node: Proposal


@strawberry.type
class ProposalConnection:
    edges: list[ProposalEdge]
    page_info: PageInfo
    total_count: int

    @strawberry.field
    def nodes(self) -> list[Proposal]:
        return [e.node for e in self.edges]


@strawberry.type(description="A campaign's trust setting for one command (commands not listed: DIRECT).")
class ProposalPolicy:
    mutation: str
    mode: ProposalMode


@strawberry.type(description="Why a pending proposal could not be approved now.")
class ProposalRefusal:
    proposal_id: strawberry.ID
    position: int
    code: str
    message: str
    field: str | None


@strawberry.type(description="The present if pending proposals were approved, in order. Nothing is stored.")
class ProposalPreview:
    view_: strawberry.Private[CampaignView]
    position: int
    changes: list[CharacterChange]
    applied: list[int] = strawberry.field(description="The positions of the proposals that would apply.")
    refusals: list[ProposalRefusal] = strawberry.field(
        description="The proposals that would be refused (left out), with the command's own error."
    )

    @strawberry.field(description="The characters as they would be.")
    def characters(self) -> list[Character]:
        return characters_of(self.view_, self.view_.creature_ids())


def _proposals_page(
    campaign_id: UUID,
    found: list[book.Proposal],
    first: int | None,
    after: str | None,
    last: int | None,
    before: str | None,
) -> ProposalConnection:
    page, page_info = paginate(found, lambda p: p.position, first, after, last, before)
    return ProposalConnection(
        edges=[
            ProposalEdge(cursor=encode_cursor(p.position), node=Proposal.build(campaign_id, p)) for p in page
        ],
        page_info=page_info,
        total_count=len(found),
    )


@strawberry.type(description="A token that may use this campaign (the token itself is shown only once).")
class AccessToken(Node):
    token_id: str
    role: Role
    character_ids: list[str]
    label: str
    issued_at: str
    revoked_at: str | None

    @classmethod
    def build(cls, campaign_id: UUID, t: dict[str, Any]) -> AccessToken:
        return cls(
            id=strawberry.ID(ids.encode("AccessToken", campaign_id, t["token_id"])),
            token_id=t["token_id"],
            role=Role(t["role"]),
            character_ids=list(t["characters"]),
            label=t["label"],
            issued_at=t["issued_at"],
            revoked_at=t["revoked_at"],
        )


@strawberry.type(description="Who the caller is in this campaign.")
class Viewer:
    role: Role
    character_ids: list[str]
    token_id: str


# ------------------------------------------------------------------ Campaign
@strawberry.type(description="A campaign (one table) at one position: now, or as of an earlier one.")
class Campaign(Node):
    campaign_id_: strawberry.Private[UUID]
    at_: strawberry.Private[int | None]  # None: now
    axis_: strawberry.Private[str]

    async def _view(self, info: Info) -> CampaignView:
        return await ctx.view(info, self.campaign_id_, self.at_, self.axis_)

    @strawberry.field(description="The campaign's UUID.")
    def campaign_id(self) -> str:
        return str(self.campaign_id_)

    @strawberry.field
    async def name(self, info: Info) -> str:
        return str((await ctx.campaign_info(info, self.campaign_id_))["name"])

    @strawberry.field
    async def ruleset(self, info: Info) -> str:
        return str((await ctx.campaign_info(info, self.campaign_id_))["ruleset"])

    @strawberry.field
    async def created_at(self, info: Info) -> str:
        return str((await ctx.campaign_info(info, self.campaign_id_))["created_at"])

    @strawberry.field(description="The position of this state (the latest fact's, for now).")
    async def position(self, info: Info) -> int:
        return (await self._view(info)).position

    @strawberry.field(description="CORRECTED or RECORDED (for asOf states).")
    def view(self) -> TimeAxis:
        return TimeAxis.RECORDED if self.axis_ == "recorded" else TimeAxis.CORRECTED

    @strawberry.field(description="In-world minutes elapsed.")
    async def clock_minutes(self, info: Info) -> int:
        return int((await self._view(info)).campaign()["clock_minutes"])

    @strawberry.field(description="The rules flags in force.")
    async def flags(self, info: Info) -> JSON:
        return (await self._view(info)).campaign()["flags"]

    @strawberry.field(
        description="The creatures, in the order they joined (optionally only given ids or kinds). "
        "Each is viewed on demand: asking for a few by id costs those few."
    )
    async def characters(
        self, info: Info, kind: CreatureKind | None = None, ids: list[strawberry.ID] | None = None
    ) -> list[Character]:
        v = await self._view(info)
        wanted = v.creature_ids() if ids is None else [_local_creature(g, self.campaign_id_) for g in ids]
        found = characters_of(v, wanted)
        return [c for c in found if kind is None or c.view_["kind"] == kind.value]

    @strawberry.field
    async def encounters(self, info: Info) -> list[Encounter]:
        v = await self._view(info)
        return [Encounter.build(v, v.encounter(e) or {}) for e in v.encounter_ids()]

    @strawberry.field
    async def active_encounter(self, info: Info) -> Encounter | None:
        v = await self._view(info)
        eid = v.campaign().get("active_encounter")
        found = v.encounter(eid) if eid else None
        return None if found is None else Encounter.build(v, found)

    @strawberry.field(description="Facts skipped by the fold because their preconditions no longer hold.")
    async def orphans(self, info: Info) -> list[Orphan]:
        v = await self._view(info)
        found = await ctx.call(ctx.app_of(info).orphans, self.campaign_id_, self.at_, self.axis_)
        return [Orphan(position=int(k), reason=r) for k, r in sorted(found.items()) if k <= v.position]

    @strawberry.field(description="The facts, oldest first, as a cursor connection on store positions.")
    async def history(
        self,
        info: Info,
        first: int | None = None,
        after: str | None = None,
        last: int | None = None,
        before: str | None = None,
        filter: HistoryFilter | None = None,
    ) -> FactConnection:
        check_page_size(first, last)
        if filter is None or by_position_only(filter):
            page, page_info, total = await self._page(info, filter, first, after, last, before)
        else:
            records = filter_history(await ctx.history(info, self.campaign_id_), self.campaign_id_, filter)
            if self.at_ is not None:
                records = [r for r in records if r.position <= self.at_]
            page, page_info = paginate(records, lambda r: r.position, first, after, last, before)
            total = len(records)
        for r in page:  # filled on the first outcome or line asked for (_filled)
            r.page = page
        return FactConnection(
            edges=[FactEdge(cursor=encode_cursor(r.position), node=Fact.build(r)) for r in page],
            page_info=page_info,
            total_count=total,
        )

    async def _page(
        self,
        info: Info,
        filter: HistoryFilter | None,  # noqa: A002
        first: int | None,
        after: str | None,
        last: int | None,
        before: str | None,
    ) -> tuple[list[data.FactRecord], PageInfo, int]:
        """A page of the history by position alone: only its own facts are read (positions are
        gap-free from 1, the creation, to the campaign's last)."""
        app = ctx.app_of(info)
        a, b = 1, await ctx.call(data.latest_position, app, self.campaign_id_)
        if filter is not None and filter.from_position is not None:
            a = max(a, filter.from_position)
        if filter is not None and filter.to_position is not None:
            b = min(b, filter.to_position)
        if self.at_ is not None:
            b = min(b, self.at_)
        window, page_info = paginate_positions(a, b, first, after, last, before)
        page = await ctx.call(data.history_records, app, self.campaign_id_, window)
        return page, page_info, max(0, b - a + 1)

    @strawberry.field(description="One narrated line per fact.")
    async def log(
        self,
        info: Info,
        first: int | None = None,
        after: str | None = None,
        last: int | None = None,
        before: str | None = None,
    ) -> LogLineConnection:
        check_page_size(first, last)
        page, page_info, total = await self._page(info, None, first, after, last, before)
        await ctx.call(data.fill, ctx.app_of(info), self.campaign_id_, page)
        return LogLineConnection(
            edges=[
                LogLineEdge(
                    cursor=encode_cursor(r.position),
                    node=LogLine(
                        position=r.position,
                        type=r.type,
                        text=r.line,
                        status=[FactStatus(s) for s in r.status],
                    ),
                )
                for r in page
            ],
            page_info=page_info,
            total_count=total,
        )

    @strawberry.field(description="The campaign as it was after the fact at this position.")
    async def as_of(self, info: Info, position: int, view: TimeAxis = TimeAxis.CORRECTED) -> Campaign:
        await ctx.view(info, self.campaign_id_, position, view.value)  # validates the position
        return Campaign(id=self.id, campaign_id_=self.campaign_id_, at_=position, axis_=view.value)

    @strawberry.field(
        description="Preview corrections: the state they would give and how it differs. Stores nothing."
    )
    async def what_if(self, info: Info, corrections: list[CorrectionInput]) -> WhatIfResult:
        ledger = ctx.app_of(info).ledger
        items = await ctx.call(
            lambda: [correction_fact(c, ledger(self.campaign_id_).effective_payload) for c in corrections]
        )
        if not items:
            raise ChronicleError("INVALID_INPUT", "give at least one correction", "corrections")
        if len(items) > 50:
            raise ChronicleError("INVALID_INPUT", "at most 50 corrections at once", "corrections")
        result = await ctx.call(ctx.app_of(info).what_if, self.campaign_id_, items)
        return WhatIfResult(
            view_=result["view"],
            position=result["view"].position,
            orphans=[Orphan(position=int(k), reason=v) for k, v in result["orphans"].items()],
            changes=character_changes(
                [
                    {
                        "creature_id": cid,
                        "fields": [{"field": k, "before": v[0], "after": v[1]} for k, v in f.items()],
                    }
                    for cid, f in result["changes"].items()
                ]
            ),
            newly_orphaned=list(result["newly_orphaned"]),
            no_longer_orphaned=list(result["no_longer_orphaned"]),
        )

    @strawberry.field(
        description="The proposals awaiting the GM, oldest first (a cursor connection on positions)."
    )
    async def pending_proposals(
        self,
        info: Info,
        first: int | None = None,
        after: str | None = None,
        last: int | None = None,
        before: str | None = None,
    ) -> ProposalConnection:
        await ctx.reader(info, self.campaign_id_)
        found = await ctx.call(ctx.app_of(info).pending_proposals, self.campaign_id_)
        return _proposals_page(self.campaign_id_, found, first, after, last, before)

    @strawberry.field(description="Every proposal (optionally only those with one status), oldest first.")
    async def proposals(
        self,
        info: Info,
        status: ProposalStatus | None = None,
        first: int | None = None,
        after: str | None = None,
        last: int | None = None,
        before: str | None = None,
    ) -> ProposalConnection:
        await ctx.reader(info, self.campaign_id_)
        found = list((await ctx.call(ctx.app_of(info).proposals, self.campaign_id_)).proposals.values())
        if status is not None:
            found = [p for p in found if p.status == status.value]
        return _proposals_page(self.campaign_id_, found, first, after, last, before)

    @strawberry.field(description="The trust settings that differ from DIRECT (setProposalPolicy).")
    async def proposal_policies(self, info: Info) -> list[ProposalPolicy]:
        await ctx.reader(info, self.campaign_id_)
        b = await ctx.call(ctx.app_of(info).proposals, self.campaign_id_)
        return [ProposalPolicy(mutation=m, mode=ProposalMode(v)) for m, v in sorted(b.policies.items())]

    @strawberry.field(
        description="What-if: the present if these pending proposals were approved as proposed, in the "
        "order given. Each that would be refused is left out and listed with its error. Stores nothing."
    )
    async def proposal_preview(self, info: Info, proposal_ids: list[strawberry.ID]) -> ProposalPreview:
        from api.graphql.proposals import preview

        return await preview(info, self.campaign_id_, proposal_ids)

    @strawberry.field(description="The campaign's access tokens (GM only).")
    async def access_tokens(self, info: Info) -> list[AccessToken]:
        who = await ctx.reader(info, self.campaign_id_)
        if not who.is_gm:
            raise ChronicleError("FORBIDDEN", "only the GM sees the campaign's tokens")
        tokens = await ctx.call(ctx.access_of(info).tokens, self.campaign_id_)
        return [AccessToken.build(self.campaign_id_, t) for t in tokens]

    @strawberry.field(description="Who the caller is here.")
    async def viewer(self, info: Info) -> Viewer:
        who = await ctx.reader(info, self.campaign_id_)
        return Viewer(role=Role(who.role), character_ids=sorted(who.characters), token_id=who.token_id)


def _local_creature(gid: Any, campaign_id: UUID) -> str:
    _, cid, local = ids.decode(gid, "Character", "ids")
    if cid != campaign_id:
        raise ChronicleError("NOT_FOUND", "no such character in this campaign", "ids")
    return local


async def load_campaign(info: Info, campaign_id: UUID) -> Campaign:
    await ctx.reader(info, campaign_id)
    await ctx.campaign_info(info, campaign_id)  # NOT_FOUND if it does not exist
    return Campaign(
        id=strawberry.ID(ids.campaign_gid(campaign_id)), campaign_id_=campaign_id, at_=None, axis_="corrected"
    )
