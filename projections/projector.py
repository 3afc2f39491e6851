"""The projector: stored events in, view rows out, all derived from the one fold.

It keeps one in-memory :class:`~domain.campaign.Campaign` (and so one
:class:`~domain.ledger.Ledger`) per campaign it has seen, loaded lazily from the store at
the version just before the first notification it meets for that campaign (through the
source's ``campaign_at`` where it has one: from a persisted snapshot). For a batch
of notifications it appends each fact to its campaign's ledger, then asks each touched
ledger to :meth:`~domain.ledger.Ledger.refold`: the ledger reports the reading of every
fact that may read differently now (the new facts; after a correction, every fact from
the earliest one it affects). From those readings it derives the ``facts`` and ``log``
rows and writes those that differ from the ones last written (a digest per position).
The ``creatures`` and ``encounters`` rows are incremental (:class:`_Shown`): only the
creatures and encounters whose view changed are viewed and written, and those a correction
removed are deleted. Which may have changed is what the fold's state journaled since the rows
were last derived (:meth:`~domain.core.state.TableState.journal_changes`, read from
:meth:`~domain.ledger.Ledger.present`: the present is not handed out, so not cloned before the
next fold; :func:`_changed_since` for a fold a correction took back), plus the views that read what changed
besides the object (:func:`_context`: every view when the flags change; when the active
encounter or its participants change, those participants' and the encounters active before and
after), plus the ended encounters whose participants changed (their views list the
participants' effects); a view equal to the one last written is not written again. A row's
``position`` is where it was last written.

Rows are written for a projection only when its tracking position is behind the
batch, so projections at different positions (after ``chronicle rebuild --projection``)
are brought up together from the lowest one.

A fact that cannot be projected stops only its own campaign: any error while applying a
campaign's notification or deriving its rows (other than the store being unavailable,
:data:`STORE_UNAVAILABLE`, which stops the batch so it is retried) drops that campaign's rows
from the batch and records a :class:`Failure` in ``batch.failed``; the storage quarantines it
with the batch. Notifications of campaigns already quarantined are skipped.
"""

from __future__ import annotations

import json
import marshal
import sqlite3
from array import array
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from hashlib import blake2b
from typing import Any, Protocol
from uuid import UUID

import psycopg
from eventsourcing.domain import OriginatorVersionError
from eventsourcing.persistence import Notification, PersistenceError

from domain.campaign import Campaign
from domain.core.narration import Narrator
from domain.core.state import Journal
from domain.ledger import PAUSE_EVERY, Entry, Ledger
from domain.rulesets import narrator_for
from projections.narrate import FactStatus, annotate

__all__ = [
    "PROJECTIONS",
    "STORE_UNAVAILABLE",
    "Batch",
    "Failure",
    "Projector",
    "describe",
    "involved_creatures",
]

PROJECTIONS: tuple[str, ...] = ("creatures", "encounters", "facts", "log")
# The projections whose rows a streamed batch commits part by part (one row a fact): the creature
# and encounter rows (the state at the end) and those projections' tracking go with the last part.
STREAMED = frozenset({"facts", "log"})

# Errors of the event store itself (reading the log or loading a campaign): the batch is
# retried later, no campaign is blamed.
STORE_UNAVAILABLE: tuple[type[BaseException], ...] = (
    PersistenceError,
    psycopg.OperationalError,
    psycopg.InterfaceError,
    sqlite3.OperationalError,
    sqlite3.InterfaceError,
    OSError,
    MemoryError,
)

# Payload keys that name one creature, and keys that hold lists of creatures.
_ONE = ("target", "creature", "attacker", "healer", "caregiver", "creature_id", "trigger_creature")
_MANY = ("creatures", "participants", "surprised")
_POINTS_AT = frozenset({"FactRevoked", "FactAmended", "OutcomeOverridden"})


class Source(Protocol):
    """What the projections need from the application: the log, decoding, loading aggregates."""

    @property
    def mapper(self) -> Any: ...

    @property
    def repository(self) -> Any: ...

    @property
    def recorder(self) -> Any: ...


def describe(exc: BaseException) -> str:
    """One line naming an error: ``Type: message`` (whitespace collapsed, at most 1,000 characters)."""
    text = " ".join(str(exc).split())
    line = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    return line[:1000]


@dataclass(frozen=True)
class Failure:
    """A campaign whose projection stopped: at which fact (its position in the campaign and
    its notification id, where known) and why (``Type: message``)."""

    campaign_id: str
    position: int | None
    notification_id: int | None
    error: str


@dataclass
class Batch:
    """The view writes of one batch, and the tracking moves to commit with them."""

    tracking: dict[str, tuple[int, int]] = field(default_factory=dict)  # projection -> (expected, new)
    # campaign -> the creature / encounter rows that changed (all of them for a campaign in
    # ``replaced``: its other rows are deleted first), and the ids whose rows are deleted
    creatures: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    encounters: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    creatures_gone: dict[str, list[str]] = field(default_factory=dict)
    encounters_gone: dict[str, list[str]] = field(default_factory=dict)
    replaced: dict[str, set[str]] = field(default_factory=dict)  # projection -> campaigns written whole
    facts: dict[tuple[str, int], dict[str, Any]] = field(default_factory=dict)  # (campaign, position) -> row
    log: dict[tuple[str, int], dict[str, Any]] = field(default_factory=dict)
    events: int = 0
    quarantined: frozenset[str] = frozenset()  # the quarantined campaigns this batch was computed with
    failed: dict[str, Failure] = field(default_factory=dict)  # campaigns to quarantine with this batch
    starts: dict[str, tuple[int, int]] = field(default_factory=dict)  # campaign -> its first (position, nid)

    @property
    def last(self) -> int:
        return max((new for _, new in self.tracking.values()), default=0)

    def campaigns(self) -> list[str]:
        """The campaigns with rows in this batch."""
        found = dict.fromkeys(
            [*self.creatures, *self.encounters, *self.creatures_gone, *self.encounters_gone]
        )
        found.update(dict.fromkeys(cid for cid, _ in [*self.facts, *self.log]))
        return list(found)

    def only(self, campaign_id: str) -> Batch:
        """The rows of one campaign (no tracking moves)."""
        part = Batch()
        for mine, theirs in (
            (part.creatures, self.creatures),
            (part.encounters, self.encounters),
            (part.creatures_gone, self.creatures_gone),
            (part.encounters_gone, self.encounters_gone),
        ):
            if campaign_id in theirs:
                mine[campaign_id] = theirs[campaign_id]
        part.replaced = {p: {campaign_id} & ids for p, ids in self.replaced.items()}
        part.facts = {k: v for k, v in self.facts.items() if k[0] == campaign_id}
        part.log = {k: v for k, v in self.log.items() if k[0] == campaign_id}
        return part

    def split(self, ids: Sequence[int], size: int) -> list[Batch]:
        """This batch as consecutive batches of at most ``size`` of its notifications (``ids``:
        the notification ids it was projected from, in order), each moving the tracking over its
        own notifications, so each can commit on its own (a transaction per ``size``
        notifications) though all were folded at once.

        Each fact's history and log rows go with the batch of its notification; everything
        else goes with the first: the rows of earlier facts a correction in the batch rewrote,
        the creature and encounter rows (the state after the last notification: the first
        commit may show a state up to the last of ``ids``, never one behind its tracking), the
        deletions and the quarantines. The batches after the first expect those quarantines.
        A batch whose projections were not all at one position is not split."""
        starts = {expected for expected, _ in self.tracking.values()}
        if len(ids) <= size or len(starts) != 1:
            return [self]
        floor = next(iter(starts))
        ids = [i for i in ids if i > floor]
        bounds = [ids[min(k + size, len(ids)) - 1] for k in range(0, len(ids), size)]
        if len(bounds) < 2:
            return [self]
        names = list(self.tracking)
        parts: list[Batch] = []
        later = frozenset(self.quarantined | set(self.failed))
        before = floor
        for k, bound in enumerate(bounds):
            part = Batch(
                tracking={p: (before, bound) for p in names},
                events=min(size, len(ids) - k * size),
                quarantined=self.quarantined if k == 0 else later,
            )
            before = bound
            parts.append(part)
        first = parts[0]
        first.creatures, first.encounters = self.creatures, self.encounters
        first.creatures_gone, first.encounters_gone = self.creatures_gone, self.encounters_gone
        first.replaced, first.failed, first.starts = self.replaced, self.failed, self.starts
        first.events += self.events - len(ids)  # duplicates at or below the tracking, if any

        def part_of(nid: int | None) -> Batch:
            if nid is None or nid <= bounds[0]:
                return first
            lo, hi = 0, len(bounds) - 1  # the first bound at or above nid
            while lo < hi:
                mid = (lo + hi) // 2
                if bounds[mid] < nid:
                    lo = mid + 1
                else:
                    hi = mid
            return parts[lo]

        for key, row in self.facts.items():
            part_of(row.get("notification_id")).facts[key] = row
        for key, row in self.log.items():
            part_of(row.get("notification_id")).log[key] = row
        return parts

    def drop(self, campaign_id: str) -> None:
        """Forget one campaign's rows."""
        for rows in (self.creatures, self.encounters, self.creatures_gone, self.encounters_gone):
            rows.pop(campaign_id, None)
        for ids in self.replaced.values():
            ids.discard(campaign_id)
        for rows in (self.facts, self.log):
            for key in [k for k in rows if k[0] == campaign_id]:
                del rows[key]


def involved_creatures(fact_type: str, payload: Mapping[str, Any]) -> list[str]:
    """The creature ids a fact names (in order, without repeats)."""
    found: list[str] = []
    for key in _ONE:
        value = payload.get(key)
        if isinstance(value, str) and value:
            found.append(value)
    for key in _MANY:
        value = payload.get(key)
        if isinstance(value, list):
            found.extend(v for v in value if isinstance(v, str))
    if fact_type == "EffectApplied" and isinstance(payload.get("source"), str):
        found.append(payload["source"])
    for t in payload.get("targets") or ():
        if isinstance(t, dict) and isinstance(t.get("target"), str):
            found.append(t["target"])
    return list(dict.fromkeys(found))


class _AtFact(Exception):
    """Deriving a campaign's rows failed at this fact (``None``: not known)."""

    def __init__(self, position: int | None, cause: BaseException) -> None:
        super().__init__(str(cause))
        self.position = position
        self.cause = cause


@dataclass(slots=True)
class _Reading:
    """What the fold said about one fact, captured while its state was current."""

    entry: Entry
    outcome: dict[str, Any] | None
    orphan: str | None
    encounter_id: str | None
    round: int | None
    sentence: str  # the ruleset narrator's sentence, read while the state was current


@dataclass
class _Shown:
    """What a campaign's creature (encounter) rows in the view store hold: whether they are
    known (False: the next rows replace the campaign's rows whole), the journal token of the
    fold's state they were derived from (:meth:`~domain.core.state.TableState.journal_changes`),
    what their views read besides their object (:func:`_context`) and the views written, so
    only the changes are viewed and written."""

    known: bool = False
    # (creatures, encounters) the store holds none of the campaign's rows: it was started after
    # their tracking, and none were written since; the next ones are all new (``batch.replaced``)
    empty: bool = False
    token: int = 0
    context: tuple[Any, ...] = ()
    views: dict[str, dict[str, Any]] = field(default_factory=dict)
    member_of: dict[str, set[str]] = field(default_factory=dict)  # creature -> its encounters
    # facts / log: a digest of each position's row as last written (0: not known), 8 bytes a fact
    written: array[int] = field(default_factory=lambda: array("q"))

    def forget(self) -> None:
        self.known = False
        self.empty = False
        self.token = 0
        self.context = ()
        self.views.clear()
        self.member_of.clear()
        del self.written[:]

    def shows(self, journal: Journal, context: tuple[Any, ...]) -> None:
        """The rows now hold the views of the state ``journal`` was taken of."""
        self.known, self.token, self.context = True, journal.token, context

    def new(self, seq: int) -> bool:
        """The row of a position never written is written, its digest not taken (0: not known)."""
        written = self.written
        if seq == len(written) + 1:
            written.append(0)
        else:
            written.extend([0] * (seq - len(written)))
        return True

    def changed(self, seq: int, digest: int) -> bool:
        """Whether the row of ``seq`` differs from the one last written (then it is noted as written)."""
        i = seq - 1
        if i >= len(self.written):
            self.written.extend([0] * (i + 1 - len(self.written)))
        elif self.written[i] == digest:
            return False
        self.written[i] = digest
        return True


def _digest(row: Mapping[str, Any], own_payload: bool = False) -> int:
    """A 63-bit digest of a fact or log row without its notification id (which a rewrite keeps),
    never 0. ``own_payload``: the row's payload is the fact's own (not amended), which never
    changes for a position, so it is left out (it is most of the row's text).

    The values are serialised with :mod:`marshal` (format 2: no back-references, so equal values
    give equal bytes whatever their identity; about half the cost of JSON text) and hashed with
    BLAKE2b, so a digest is the same in every process and Python run (``hash()`` of text is
    salted per process). Digests live in memory only (:class:`_Shown`), but a persisted one
    would stay valid. Equal rows digest equal when their dictionaries were built in the same
    key order (as the projector builds them); a row whose digest differs is only written again.
    A value marshal cannot write (not plain data) is digested through its JSON text (``repr``
    for what JSON cannot write)."""
    rest = dict(row)  # (a copy and two deletions in C: a generator over the items cost 2x this digest)
    rest.pop("notification_id", None)
    if own_payload:
        rest.pop("payload", None)
    values = tuple(rest.values())
    try:
        data = marshal.dumps(values, 2)
    except ValueError:
        data = b"J" + _dump_digest(list(values)).encode("utf-8", "surrogatepass")
    return (int.from_bytes(blake2b(data, digest_size=8).digest(), "little") & 0x7FFFFFFFFFFFFFFF) or 1


_dump_digest = json.JSONEncoder(default=repr, check_circular=False).encode


def _context(state: Any) -> tuple[Any, ...]:
    """What a ruleset's views read besides the creature or encounter itself: the flags (levels,
    thresholds), and the active encounter with its participants. When the flags change, every
    view may have changed; when the active encounter or its participants change, the views of
    the creatures taking part before or after (a creature's view may show the encounter it is
    in) and of the encounter active before or after (an encounter's view shows whether it is
    the active one). A copy: the fold changes the flags in place."""
    enc = getattr(state, "encounter", None)
    participants = tuple(getattr(enc, "participants", ()) or ()) if enc is not None else ()
    flags = getattr(state, "flags", None)
    return (
        dict(flags) if isinstance(flags, dict) else flags,
        getattr(state, "active_encounter", None),
        participants,
    )


def _touched_by_context(kind: str, before: tuple[Any, ...], after: tuple[Any, ...]) -> list[str] | None:
    """The ids of ``kind`` whose views may have changed with the context (:func:`_context`):
    None for every one (the flags changed)."""
    if before[0] != after[0]:
        return None
    if kind == "creatures":
        return list(dict.fromkeys([*before[2], *after[2]]))
    return [eid for eid in dict.fromkeys([before[1], after[1]]) if isinstance(eid, str)]


def _journal(state: Any) -> Journal:
    """The state's journal of changes (a state without one: nothing known, compare everything)."""
    take = getattr(state, "journal_changes", None)
    return take() if take is not None else Journal(0, 0, (), ())


def _changed_since(
    shown: _Shown, journal: Journal, history: Mapping[int, Journal]
) -> tuple[list[str], list[str]] | None:
    """The creatures and encounters whose views may differ from those ``shown`` holds, from the
    journal just taken (None: not known, compare every view). The journal reports the changes
    since the state it continues; when that is older than the one the rows show (the fold
    taken back to a checkpoint for a correction), the journals of the batches between are added."""
    if not shown.known or not shown.token or not journal.since:
        return None
    creatures, encounters = dict.fromkeys(journal.creatures), dict.fromkeys(journal.encounters)
    t = shown.token
    while t != journal.since:
        j = history.get(t)
        if j is None or not j.since:
            return None
        creatures.update(dict.fromkeys(j.creatures))
        encounters.update(dict.fromkeys(j.encounters))
        t = j.since
    return list(creatures), list(encounters)


@dataclass
class _Stream:
    """A batch handed out in parts while its campaign folds (:meth:`Projector.project` with
    ``emit``): part ``k`` moves the :data:`STREAMED` tracking from ``before`` to ``bounds[k]``
    over ``sizes[k]`` notifications; the last part stays in the batch."""

    emit: Callable[[Batch], None]
    bounds: list[int]
    sizes: list[int]
    before: int
    k: int = 0

    @property
    def open(self) -> bool:
        """Whether a part is still to be handed out (all but the last)."""
        return self.k < len(self.bounds) - 1

    @property
    def bound(self) -> int:
        return self.bounds[self.k]


JOURNALS_KEPT = 64  # per campaign: how far back a fold taken back's journal can be joined to the rows


class Projector:
    """Turns notifications into :class:`Batch` es of view rows (no I/O except lazy loads)."""

    def __init__(
        self,
        source: Source,
        *,
        max_campaigns: int = 1024,
        pause: Callable[[], object] | None = None,
        digest_new: bool = True,
    ) -> None:
        self.source = source
        # False (a rebuild, which folds each fact once): the history and log rows of a position
        # never written are written without taking their digest (0: not known), so a later
        # refold over them writes them again, the same rows, instead of only those that changed
        self.digest_new = digest_new
        self.max_campaigns = max_campaigns
        # called every PAUSE_EVERY facts a batch refolds or derives rows of (may block: the
        # in-process follower gives way to the server's commands there; Follower)
        self.pause = pause
        self._campaigns: OrderedDict[UUID, Campaign] = OrderedDict()
        self._notification_ids: dict[UUID, dict[int, int]] = {}
        # campaign -> what its rows in the view store hold, per projection (creatures, encounters)
        self._shown: dict[UUID, dict[str, _Shown]] = {}
        # campaign -> the journals taken for its batches, by token (see _changed_since)
        self._journals: dict[UUID, OrderedDict[int, Journal]] = {}
        self._positions: Mapping[str, int] = {}

    def reset(self) -> None:
        """Forget every in-memory ledger (after a failed write or a tracking change)."""
        self._campaigns.clear()
        self._notification_ids.clear()
        self._shown.clear()
        self._journals.clear()

    def forget(self, campaign_id: str | UUID) -> None:
        """Forget one campaign's in-memory ledger (it failed, or is quarantined)."""
        cid = campaign_id if isinstance(campaign_id, UUID) else UUID(str(campaign_id))
        self._campaigns.pop(cid, None)
        self._notification_ids.pop(cid, None)
        self._shown.pop(cid, None)
        self._journals.pop(cid, None)

    # ------------------------------------------------------------------ batches
    def project(
        self,
        notifications: Iterable[Notification],
        positions: Mapping[str, int],
        quarantined: frozenset[str] = frozenset(),
        *,
        emit: Callable[[Batch], None] | None = None,
        size: int = 0,
    ) -> Batch:
        """The rows and tracking moves for ``notifications`` (in notification order; any iterable:
        they are decoded and applied as they come).

        ``positions`` are the projections' tracking positions; a projection already at
        or beyond the batch's last notification gets no rows and no tracking move.
        Notifications of ``quarantined`` campaigns are skipped; a campaign that fails here
        lands in ``batch.failed`` (with no rows) and the others go on.

        ``emit`` and ``size``: when the batch folds one campaign and is more than ``size``
        notifications, its parts of ``size`` notifications (as :meth:`Batch.split` cuts them)
        but the last are handed to ``emit`` while the fold goes on, each as soon as the fold has
        reported its last fact: the history and log rows of its facts, moving only the
        ``facts`` and ``log`` tracking (:data:`STREAMED`) over its notifications (the first part
        also the rows of earlier facts a correction rewrote: the fold reports them first). The
        batch returned is the last part: its facts' rows and the creature and encounter rows
        (the state after the last notification), moving the ``creatures`` and ``encounters``
        tracking over the whole batch -- so no projection's rows are ever behind its tracking,
        and the creature rows are derived once per batch, as without ``emit``. A caller may so
        commit the first parts while the rest folds (the follower's writer thread). A fold that
        fails after some parts were handed out quarantines the campaign with the last part: the
        parts before hold its history and log rows up to theirs. Otherwise (several campaigns,
        projections at different positions) nothing is emitted and the whole batch is returned.
        """
        batch = Batch(quarantined=frozenset(quarantined))
        self._positions = positions
        floor = min(positions.get(p, 0) for p in PROJECTIONS)
        touched: dict[UUID, Campaign] = {}
        ids: list[int] = []
        for n in notifications:  # (may be pages still being read: Follower's read-ahead)
            ids.append(n.id)
            if n.id <= floor:
                continue  # already folded: a duplicate or a replay
            batch.events += 1
            key = str(n.originator_id)
            if key in batch.quarantined or key in batch.failed:
                continue
            batch.starts.setdefault(key, (n.originator_version, n.id))
            try:
                campaign = self._apply(n)
            except STORE_UNAVAILABLE:
                raise
            except Exception as exc:  # this fact cannot be folded: stop its campaign only
                self._fail(batch, key, n.originator_version, n.id, exc)
                touched.pop(n.originator_id, None)
                continue
            if campaign is not None:
                touched[campaign.id] = campaign
        if not ids:
            return batch
        last = ids[-1]
        wanted = [p for p in PROJECTIONS if positions.get(p, 0) < last]
        batch.tracking = {p: (positions.get(p, 0), last) for p in wanted}
        stream = None
        if emit is not None and size > 0 and len(touched) == 1 and not batch.failed:
            stream = _stream(batch, ids, size, emit)
        for campaign in touched.values():
            key = str(campaign.id)
            try:
                self._rows(campaign, batch, wanted, stream)
            except STORE_UNAVAILABLE:
                raise
            except Exception as exc:
                position, nid = batch.starts.get(key, (None, None))
                cause: BaseException = exc
                if isinstance(exc, _AtFact):
                    cause = exc.cause
                    # not known: the batch's first fact (the creation at 1 is no fact of the ledger)
                    at = exc.position or max(position or 0, campaign.ledger.first_seq)
                    if at != position:
                        position = at
                        nid = self._notification_ids.get(campaign.id, {}).get(position)
                self._fail(batch, key, position, nid, cause)
        return batch

    def _fail(
        self, batch: Batch, key: str, position: int | None, nid: int | None, exc: BaseException
    ) -> None:
        batch.drop(key)
        batch.failed[key] = Failure(key, position, nid, describe(exc))
        try:
            self.forget(key)
        except ValueError:  # not a UUID: nothing was kept for it
            pass

    def _apply(self, n: Notification) -> Campaign | None:
        stored_fact = getattr(self.source, "stored_fact", None)
        entry = stored_fact(n.topic, n.originator_version, n.state) if stored_fact is not None else None
        if entry is not None:  # a recorded fact, decoded without its library event object
            version = entry.seq
            campaign = self._load(n.originator_id, version - 1, n.id)
            if campaign.version >= version:
                return campaign  # already folded
            if campaign.version != version - 1:  # (what the event's mutate would refuse)
                raise OriginatorVersionError(version, campaign.version + 1)
            campaign.ledger.append(entry)
            campaign.version = version
            campaign.modified_on = datetime.fromisoformat(entry.timestamp)
            self._notification_ids.setdefault(campaign.id, {})[version] = n.id
            return campaign
        event = self.source.mapper.to_domain_event(n)
        cid = event.originator_id
        if isinstance(event, Campaign.Started):
            if cid not in self._campaigns:
                campaign = event.mutate(None)
                assert isinstance(campaign, Campaign)
                self._remember(campaign)
                self._showing(campaign, n.id, started=True)
            return self._campaigns[cid]
        if not isinstance(event, Campaign.FactRecorded):
            return None  # some other aggregate: nothing to project
        version = event.originator_version
        campaign = self._load(cid, version - 1, n.id)
        if campaign.version >= version:
            return campaign  # already folded
        event.mutate(campaign)
        self._notification_ids.setdefault(cid, {})[version] = n.id
        return campaign

    def _load(self, cid: UUID, version: int, notification_id: int) -> Campaign:
        """The campaign at ``version`` or later (later: the caller skips what it has folded)."""
        campaign = self._campaigns.get(cid)
        if campaign is not None and campaign.version >= version:
            self._campaigns.move_to_end(cid)
            return campaign
        at = getattr(self.source, "campaign_at", None)  # from a persisted snapshot, where it has one
        loaded = at(cid, version) if at is not None else self.source.repository.get(cid, version=version)
        assert isinstance(loaded, Campaign)
        loaded.ledger.present()  # fold silently: the rows of earlier facts are already written
        self._remember(loaded)
        self._showing(loaded, notification_id)
        return loaded

    def _showing(self, campaign: Campaign, notification_id: int, started: bool = False) -> None:
        """A campaign met at notification ``notification_id`` (its state now is the one just
        before it): a projection whose rows are behind that notification holds exactly this
        state's rows (nothing of this campaign lies between its tracking and the notification);
        one at or past it holds a later state's, unknown here (its next rows replace them all).
        ``started``: met at its start, so the first holds none of its rows (``_Shown.empty``)."""
        state = campaign.ledger.present()
        journal = _journal(state)
        self._journals[campaign.id] = OrderedDict({journal.token: journal})
        context = _context(state)
        self._shown[campaign.id] = shown = {p: _Shown() for p in PROJECTIONS}
        for p, known in shown.items():
            if self._positions.get(p, 0) < notification_id:
                known.shows(journal, context)
                known.empty = started

    def _remember(self, campaign: Campaign) -> None:
        self._campaigns[campaign.id] = campaign
        self._campaigns.move_to_end(campaign.id)
        while len(self._campaigns) > self.max_campaigns:
            old, _ = self._campaigns.popitem(last=False)
            self._notification_ids.pop(old, None)
            self._shown.pop(old, None)
            self._journals.pop(old, None)

    # --------------------------------------------------------------------- rows
    def _rows(
        self, campaign: Campaign, batch: Batch, wanted: Iterable[str], stream: _Stream | None = None
    ) -> None:
        """Refold the campaign and put its rows into ``batch``. With ``stream``, every part of the
        batch but the last is handed to ``stream.emit`` as soon as the fold has passed its last
        notification (:class:`_Stream`), and ``batch`` keeps the rest."""
        wanted = set(wanted)
        ledger = campaign.ledger
        pending: list[_Reading] = []
        last_seq: list[int] = []  # the last fact reported (where a failure of the fold lies beyond)
        # a fresh narrator per campaign and batch: a narrator remembers the names it has seen, and
        # a name from another campaign, or from a history a correction has since undone (a
        # revoked arrival), must not name a creature in this one
        narrator = narrator_for(ledger.ruleset)
        nids = self._notification_ids.get(campaign.id, {})
        shown = self._shown.get(campaign.id)
        if shown is None:  # (not built per call: four _Shown and their arrays per campaign and batch)
            shown = self._shown[campaign.id] = {p: _Shown() for p in PROJECTIONS}

        def sink(e: Entry, outcome: dict[str, Any] | None, orphan: str | None, state: Any) -> None:
            pending.append(_read(e, outcome, orphan, state, narrator, ledger.payload_as_read(e.seq)))
            last_seq[:] = (e.seq,)

        def streaming(e: Entry, outcome: dict[str, Any] | None, orphan: str | None, state: Any) -> None:
            assert stream is not None
            nid = nids.get(e.seq)
            while nid is not None and stream.open and nid > stream.bound:  # the part ended before it
                self._emit(campaign, batch, wanted, shown, pending, stream)
            sink(e, outcome, orphan, state)
            if nid is not None and stream.open and nid == stream.bound:
                self._emit(campaign, batch, wanted, shown, pending, stream)

        try:
            ledger.refold(sink if stream is None else streaming, pause=self.pause)
        except STORE_UNAVAILABLE:
            raise
        except _AtFact:
            raise
        except Exception as exc:  # the fold failed on the fact after the last one it reported
            raise _AtFact(last_seq[0] + 1 if last_seq else None, exc) from exc
        self._fact_rows(campaign, batch, wanted, shown, pending)
        # the present, not handed out (read here, kept nowhere): the next batch folds into this
        # very state, no copy-on-write clone; its journal says what changed since these rows
        state = ledger.present()
        position = ledger.last_seq if ledger.entries else campaign.version
        self._state_rows(campaign, batch, wanted, shown, state, position)

    def _emit(
        self,
        campaign: Campaign,
        batch: Batch,
        wanted: set[str],
        shown: dict[str, _Shown],
        pending: list[_Reading],
        stream: _Stream,
    ) -> None:
        """Hand the stream's next part to ``stream.emit``: the history and log rows of the facts
        ``pending`` (then emptied), moving those projections' tracking over the part; ``batch``
        (the rest) then moves theirs from the part's end."""
        k = stream.k
        bound = stream.bounds[k]
        part = Batch(
            tracking={p: (stream.before, bound) for p in batch.tracking if p in STREAMED},
            events=stream.sizes[k],
            quarantined=batch.quarantined,
        )
        if k == 0:
            part.starts = dict(batch.starts)
        elif pending:
            seq = pending[0].entry.seq
            nid = self._notification_ids.get(campaign.id, {}).get(seq, 0)
            part.starts = {str(campaign.id): (seq, nid)}
        self._fact_rows(campaign, part, wanted, shown, pending)
        del pending[:]
        batch.tracking.update({p: (bound, batch.tracking[p][1]) for p in part.tracking})
        batch.events -= part.events
        stream.k, stream.before = k + 1, bound
        stream.emit(part)

    def _fact_rows(
        self,
        campaign: Campaign,
        batch: Batch,
        wanted: set[str],
        shown: dict[str, _Shown],
        readings: list[_Reading],
    ) -> None:
        """The history and log rows of ``readings`` that read differently from the ones last
        written (a digest of each row as last written): after a correction the fold reports every
        fact from the earliest one it reaches, and only those whose rows changed are written."""
        facts, log = shown["facts"], shown["log"]
        if wanted & {"facts", "log"} and readings:
            ledger = campaign.ledger
            cid = str(campaign.id)
            nids = self._notification_ids.get(campaign.id, {})
            res = ledger.resolution_as_read()  # (safe in a fold's sink: the resolution being folded)
            pause = self.pause
            skip = not self.digest_new
            for k, r in enumerate(readings, 1):
                if pause is not None and k % PAUSE_EVERY == 0:
                    pause()
                seq = r.entry.seq
                fresh = skip and seq > len(facts.written) and seq > len(log.written)
                try:
                    fact, line = fact_rows(cid, ledger, res, r, nids.get(seq))
                    own = seq not in res.amended  # then the payload is the fact's own
                    if "facts" in wanted and (
                        facts.new(seq) if fresh else facts.changed(seq, _digest(fact, own))
                    ):
                        batch.facts[(cid, seq)] = fact
                    if "log" in wanted and (log.new(seq) if fresh else log.changed(seq, _digest(line))):
                        batch.log[(cid, seq)] = line
                except Exception as exc:
                    raise _AtFact(seq, exc) from exc
        for p, known in (("facts", facts), ("log", log)):
            if p not in wanted:
                known.forget()  # its rows are at or past this batch: not known here

    def _state_rows(
        self,
        campaign: Campaign,
        batch: Batch,
        wanted: set[str],
        shown: dict[str, _Shown],
        state: Any,
        position: int,
    ) -> None:
        """The creature and encounter rows of ``state`` that changed since the rows last derived."""
        ledger = campaign.ledger
        cid = str(campaign.id)
        journal = _journal(state)
        history = self._journals.setdefault(campaign.id, OrderedDict())
        history[journal.token] = journal
        while len(history) > JOURNALS_KEPT:
            history.popitem(last=False)
        context = _context(state)
        creatures, encounters = shown["creatures"], shown["encounters"]
        # what changed since the creature rows (or, unknown, the encounter rows) were derived
        since = _changed_since(creatures, journal, history) or _changed_since(encounters, journal, history)
        if "creatures" in wanted:
            if not creatures.known or creatures.empty:  # every row is in this batch
                batch.replaced.setdefault("creatures", set()).add(cid)
                creatures.empty = False
            views, gone = _changes(
                creatures,
                "creatures",
                state,
                context,
                None if since is None else since[0],
                lambda c: ledger.ruleset.creature_view(state, c),
            )
            creatures.shows(journal, context)
            if views or cid in batch.replaced.get("creatures", ()):
                batch.creatures[cid] = [creature_row(cid, position, v, ledger.ruleset.id) for v in views]
            if gone:
                batch.creatures_gone[cid] = gone
        else:
            creatures.forget()  # its rows are at or past this batch: not known here
        if "encounters" in wanted:
            maybe = None
            mine = _changed_since(encounters, journal, history)
            if mine is not None and since is not None:
                # an encounter's view shows its participants' effects: one whose participant
                # changed may have changed
                maybe = dict.fromkeys(mine[1])
                for c in since[0]:
                    maybe.update(dict.fromkeys(encounters.member_of.get(c, ())))
            if not encounters.known or encounters.empty:
                batch.replaced.setdefault("encounters", set()).add(cid)
                encounters.empty = False
            views, gone = _changes(
                encounters,
                "encounters",
                state,
                context,
                None if maybe is None else list(maybe),
                lambda e: ledger.ruleset.encounter_view(state, e),
            )
            for eid in state.encounters if maybe is None else maybe:
                e = state.encounters.get(eid)
                for c in getattr(e, "participants", ()) or ():
                    encounters.member_of.setdefault(c, set()).add(eid)
            encounters.shows(journal, context)
            if views or cid in batch.replaced.get("encounters", ()):
                batch.encounters[cid] = [encounter_row(cid, position, v) for v in views]
            if gone:
                batch.encounters_gone[cid] = gone
        else:
            encounters.forget()


def _stream(batch: Batch, ids: Sequence[int], size: int, emit: Callable[[Batch], None]) -> _Stream | None:
    """The parts ``batch`` streams in (:meth:`Batch.split`'s cut of its notifications), or None
    when it is one part, or it moves no :data:`STREAMED` projection, or those start at different
    positions."""
    starts = {expected for p, (expected, _) in batch.tracking.items() if p in STREAMED}
    if len(ids) <= size or len(starts) != 1:
        return None
    floor = next(iter(starts))
    ids = [i for i in ids if i > floor]
    bounds = [ids[min(k + size, len(ids)) - 1] for k in range(0, len(ids), size)]
    if len(bounds) < 2:
        return None
    sizes = [min(size, len(ids) - k * size) for k in range(len(bounds))]
    sizes[0] += batch.events - len(ids)  # duplicates at or below the tracking, if any
    return _Stream(emit, bounds, sizes, floor)


def _changes(
    shown: _Shown,
    kind: str,
    state: Any,
    context: tuple[Any, ...],
    candidates: list[str] | None,
    view: Any,
) -> tuple[list[dict[str, Any]], list[str]]:
    """The views of ``kind`` (``creatures`` | ``encounters``) to write, changed since what
    ``shown`` holds, and the ids gone; updates ``shown.views``.

    ``candidates`` are the ids that may have changed, new ones included, gone ones allowed
    (None: every id, as when the rows are not known or the views' context changed)."""
    now: Mapping[str, Any] = getattr(state, kind)
    gone: list[str] = []
    if not shown.known:
        shown.views.clear()
        shown.member_of.clear()
        candidates = None
    else:
        old = shown.views
        new = 0 if candidates is None else sum(1 for k in candidates if k in now and k not in old)
        if candidates is None or len(now) - new != len(old):  # some disappeared (a correction)
            gone = [k for k in old if k not in now]
        if candidates is not None and shown.context != context:
            extra = _touched_by_context(kind, shown.context, context)
            candidates = None if extra is None else list(dict.fromkeys([*candidates, *extra]))
    out = []
    for key in now if candidates is None else candidates:
        if key in now:
            v = view(key)
            if shown.views.get(key) != v:
                shown.views[key] = v
                out.append(v)
    for key in gone:
        shown.views.pop(key, None)
    return out, gone


def _read(
    e: Entry,
    outcome: dict[str, Any] | None,
    orphan: str | None,
    state: Any,
    narrator: Narrator,
    payload: dict[str, Any],
) -> _Reading:
    """Capture what a row needs from the live state: the encounter and round it happened in, and
    its sentence (the narrator names only the creatures the fact names)."""
    encounters = getattr(state, "encounters", None) or {}
    eid = e.payload.get("encounter_id") if isinstance(e.payload.get("encounter_id"), str) else None
    if eid is None and e.type not in _POINTS_AT:
        eid = getattr(state, "active_encounter", None)
    enc = encounters.get(eid) if eid else None
    sentence = narrator.sentence(e.type, payload, outcome, state)
    return _Reading(e, outcome, orphan, eid, getattr(enc, "round", None), sentence)


def fact_rows(
    cid: str, ledger: Ledger, res: Any, r: _Reading, notification_id: int | None
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The history row and the log row of one fact, from its reading and the resolution."""
    e = r.entry
    seq = e.seq
    payload = res.amended.get(seq) or e.payload
    revoked_at = res.revoked.get(seq)
    amended_by = res.amended_by.get(seq)
    overrides = res.overrides.get(seq)
    if revoked_at is None and not amended_by and r.orphan is None and not overrides:
        # no correction touches it (most facts): its status, flags and line without FactStatus
        flags, line_text = _ACTIVE, r.sentence
    else:
        amended_at = tuple(amended_by or ())
        status = FactStatus(
            revoked_at=revoked_at,
            revoked_reason=_reason(ledger, res, revoked_at) if revoked_at is not None else "",
            amended_at=amended_at,
            amended_reasons=tuple(_reason(ledger, res, s) for s in amended_at),
            orphan_reason=r.orphan,
            overrides=dict(overrides or {}),
        )
        flags, line_text = status.flags, annotate(r.sentence, status)
    creatures = involved_creatures(e.type, payload)
    if e.type in _POINTS_AT and ledger.has(int(payload.get("target", 0))):
        target = ledger.entry(int(payload["target"]))
        creatures = involved_creatures(target.type, res.amended.get(target.seq) or target.payload)
    fact = {
        "campaign_id": cid,
        "position": seq,
        "notification_id": notification_id,
        "fact_type": e.type,
        "recorded_at": str(e.meta.get("recorded_at") or e.timestamp),
        "creatures": creatures,
        "encounter_id": r.encounter_id,
        "round": r.round,
        "active": flags == ["active"],
        "revoked": "revoked" in flags,
        "amended": "amended" in flags,
        "orphaned": "orphaned" in flags,
        "overridden": "overridden" in flags,
        "revoked_by": revoked_at,
        "orphan_reason": r.orphan,
        "payload": payload,
        "outcome": r.outcome,
    }
    line = {
        "campaign_id": cid,
        "position": seq,
        "notification_id": notification_id,
        "fact_type": e.type,
        "line": line_text,
        "struck": revoked_at is not None,
    }
    return fact, line


_ACTIVE = ["active"]  # FactStatus().flags (read only)


def _reason(ledger: Ledger, res: Any, seq: int) -> str:
    if not ledger.has(seq):
        return ""
    e = ledger.entry(seq)
    return str((res.amended.get(seq) or e.payload).get("reason") or "")


def creature_row(
    cid: str, position: int, view: Mapping[str, Any], ruleset: str | None = None
) -> dict[str, Any]:
    """One creature's row: the columns every system shares (``hit_points`` as ``hp`` / ``max_hp``,
    NULL in a system without them) and the ruleset's whole view as ``state``."""
    points = view.get("hit_points")
    points = points if isinstance(points, Mapping) else {}
    return {
        "campaign_id": cid,
        "creature_id": str(view["id"]),
        "ruleset": ruleset,
        "name": view.get("name"),
        "kind": view.get("kind"),
        "level": view.get("level"),
        "life": view.get("life"),
        "hp": points.get("current"),
        "max_hp": points.get("max"),
        "position": position,
        "state": dict(view),
    }


def encounter_row(cid: str, position: int, view: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "campaign_id": cid,
        "encounter_id": str(view["id"]),
        "round": view.get("round"),
        "turn_of": view.get("turn_of"),
        "position": position,
        "state": dict(view),
    }
