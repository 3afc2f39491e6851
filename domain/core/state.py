"""The state every ruleset folds into: creatures shared copy-on-write, encounters, the clock.

A long campaign accumulates creatures, and the fold clones its state for every command and
every checkpoint: a clone must not copy each creature. :class:`TableState` therefore shares
creature objects between clones until one side changes one (:meth:`TableState.own` gives a
state its private copy first). Two consequences every layer relies on:

* cloning costs one dictionary copy, not a copy of the campaign;
* "which creatures did these facts change" is an identity comparison
  (:func:`changed_creatures`): a creature a fact did not touch is the very same object in the
  state before and after it. Views, payloads and read models use it to build only what
  changed. Only the creatures either state owned or added since the newest clone point both
  descend from are compared (each state notes them, :data:`LINEAGE`), so the answer costs the
  changes too, not a walk over every creature of the campaign.

A ruleset subclasses :class:`CreatureBase` (its sheet and tracks as slots) and
:class:`TableState` (anything campaign-wide it tracks). Tests set :data:`GUARD` so that a
handler that changes a shared creature without :meth:`TableState.own` fails loudly instead of
silently corrupting a checkpoint.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from itertools import count, islice
from typing import Any, TypeVar

GUARD = False  # tests turn this on: changing a shared creature raises


class CreatureBase:
    """What every creature has: its id inside the campaign and its copy-on-write mark.

    Subclasses declare their fields in ``__slots__``; ``effects`` (a list of dicts), if a
    ruleset has it, is copied one level deep by :meth:`clone` so that effect dicts may be
    changed on an owned creature.
    """

    __slots__ = ("id", "shared")

    id: str
    shared: bool  # True while two states hold this object: copy it (``TableState.own``) first

    def clone(self: C) -> C:
        c = object.__new__(type(self))
        put = object.__setattr__
        for name in _slots(type(self)):
            if name == "shared":
                continue
            try:
                value = getattr(self, name)
            except AttributeError:
                continue
            if name == "effects":
                value = [dict(e) for e in value]
            put(c, name, value)
        put(c, "shared", False)
        return c


C = TypeVar("C", bound=CreatureBase)
T = TypeVar("T")
_SLOTS: dict[type, tuple[str, ...]] = {}
_GUARDED: dict[type, type] = {}


def slot_names(cls: type) -> tuple[str, ...]:
    """Every slot of ``cls`` and its bases, in declaration order (bases first)."""
    return _slots(cls)


def _slots(cls: type) -> tuple[str, ...]:
    found = _SLOTS.get(cls)
    if found is None:
        names: list[str] = []
        for klass in reversed(cls.__mro__):
            for name in getattr(klass, "__slots__", ()):
                if name not in names:
                    names.append(name)
        found = _SLOTS[cls] = tuple(names)
    return found


def _guarded(cls: type[C]) -> type[C]:
    """A subclass of ``cls`` that refuses any change while the creature is shared."""
    found = _GUARDED.get(cls)
    if found is None:

        def __setattr__(self: Any, name: str, value: Any) -> None:
            if getattr(self, "shared", False):
                raise AssertionError(
                    f"changed creature {self.id!r} while two states share it: use state.own()"
                )
            object.__setattr__(self, name, value)

        def __reduce_ex__(self: Any, protocol: Any) -> tuple[Any, ...]:
            # pickled as the class it guards (a class made here cannot be looked up by name)
            names = _slots(cls)
            return _guarded_copy, (cls, tuple((n, getattr(self, n)) for n in names if hasattr(self, n)))

        found = type(
            f"Guarded{cls.__name__}",
            (cls,),
            {"__slots__": (), "__setattr__": __setattr__, "__reduce_ex__": __reduce_ex__},
        )
        _SLOTS[found] = _slots(cls)
        _GUARDED[cls] = found
    return found


def _guarded_copy(cls: type[C], values: tuple[tuple[str, Any], ...]) -> C:
    """A guarded creature of ``cls`` holding ``values`` (unpickling one)."""
    c = object.__new__(_guarded(cls))
    for name, value in values:
        object.__setattr__(c, name, value)
    return c


def new_creature(cls: type[C], cid: str) -> C:
    """A fresh, unshared creature of ``cls`` (guarded against shared changes when tests ask)."""
    c = object.__new__(_guarded(cls) if GUARD else cls)
    object.__setattr__(c, "shared", False)
    object.__setattr__(c, "id", cid)
    return c


JOURNAL = ("_jtoken", "_jowned", "_jseen", "_jcreatures", "_jopen", "_jeseen", "_jencounters")
"""The slots of :meth:`TableState.journal_changes` (part of ``TRACKING``: never persisted)."""

LINEAGE = ("_ep", "_etouched", "_elen", "_edict", "_chain", "_ranks", "_rn")
"""The slots :func:`changed_creatures` reads (part of ``TRACKING``: never persisted): the clone
point a state is at, the creatures it owned since, the points before it (:data:`LINKS`), and the
ranks of its creatures in its dictionary's order."""

LINKS = 8
"""How many clone points back a state remembers the creatures it owned (a command's check clones
the present once per fact, a checkpoint once more: :func:`changed_creatures` of a command's first
and last state needs a few)."""


@dataclass(frozen=True, slots=True)
class Journal:
    """What :meth:`TableState.journal_changes` reports: the creatures and encounters that may
    differ (a superset, new ones included, in no particular order) from the state this one was
    at when the journal with token ``since`` was taken (``since`` 0: not known -- the state
    was replaced, rebuilt from storage or changed outside a handler; compare everything).
    ``token`` names the state as it is now, for the next journal's ``since``."""

    since: int
    token: int
    creatures: tuple[str, ...]
    encounters: tuple[str, ...]


class TableState:
    """The campaign-wide state of any ruleset at one position.

    ``encounters`` holds encounter objects (``state`` = ``setup`` | ``running`` | ``ended``;
    ended ones are shared between clones: nothing changes them); ``holders`` lists, in the
    order they first got one, the creatures that may carry effects, so turn boundaries scan
    these rather than every creature the campaign ever met.

    A long campaign leaves many creatures holding effects nobody will end (a monster that fled
    still burning, save ends), so a turn boundary must not scan every holder either. Two
    *derived* slots (:data:`DERIVED`: never persisted, rebuilt by :meth:`derive`) keep the cost
    of a boundary independent of the campaign's length, without changing what any rule sees:

    * ``watch``: the holders that may have stopped carrying effects (or died) since they were
      last checked: every holder whose creature object is not shared (it may change in place),
      every holder a handler took as its own (:meth:`own`) or gave an effect (:meth:`hold`).
      A shared creature object never changes (copy-on-write), so a holder checked while shared
      needs no new check until it is owned again. :meth:`with_effects` forgets exactly the
      holders it forgot when it checked every one of them (the order of ``holders``, which
      reports follow, is unchanged).
    * ``anchors``: anchor creature id -> the holders that carry or carried an effect whose
      duration names that anchor (a superset, pruned when read): :meth:`anchored` gives the
      creatures a boundary of that anchor's turn may end effects on.
    * ``kinds``: for the duration kinds somebody asked about (:meth:`holding`), the holders
      that carry or carried an effect of that kind (a superset, pruned when read).
    * ``carriers``: effect id -> the holder it was last given to (:meth:`carrier`: an effect id
      is unique among the effects in force).
    * the *journal* (:meth:`journal_changes`): the creatures owned or added and the encounters
      open or added since the journal was last taken, whatever clones were made meanwhile --
      for a reader that keeps views of the state (the read models) and updates only those.
    * ``memo``: a ruleset's own derived values (immutable ones: a clone copies the dictionary,
      not its values), e.g. the ids of the creatures of a kind that never changes, extended as
      creatures are registered (:meth:`registered`).
    """

    # What changed since a reference clone (see :meth:`clone`): never persisted, never in a delta.
    TRACKING = (
        *("_token", "_base", "_dirty", "_seen", "_ctrack", "_open", "_eseen", "_etrack"),
        *JOURNAL,
        *LINEAGE,
    )
    DERIVED = ("watch", "anchors", "kinds", "carriers", "known", "memo", *TRACKING)

    __slots__ = (
        "flags",
        "creatures",
        "encounters",
        "active_encounter",
        "minutes",
        "holders",
        "fact_seq",
        "fact_effects",
        "watch",
        "anchors",
        "kinds",
        "carriers",
        "known",
        "memo",
        *TRACKING,
    )

    def __init__(self, flags: dict[str, Any]) -> None:
        self.flags = dict(flags)
        self.creatures: dict[str, Any] = {}
        self.encounters: dict[str, Any] = {}
        self.active_encounter: str | None = None
        self.minutes = 0  # game clock, in minutes since the campaign began
        # Effect ids come from the position of the fact that created them ("e57", then "e57.2"
        # for a second effect of the same fact), so a correction elsewhere never renames them.
        self.fact_seq = 0
        self.fact_effects = 0
        self.holders: dict[str, None] = {}
        self.watch: dict[str, None] = {}
        self.anchors: dict[str, tuple[str, ...]] = {}
        self.kinds: dict[str, tuple[str, ...]] = {}
        self.carriers: dict[str, str] = {}
        self.memo: dict[str, Any] = {}
        self.known = 0  # len(holders) as this bookkeeping last saw it (a direct write changes it)
        self.untrack()

    def derive(self) -> None:
        """Rebuild the derived slots from ``holders`` and the creatures (after loading a state)."""
        self.watch = dict.fromkeys(self.holders)
        self.kinds = {}
        self.memo = {}
        self._index_anchors()
        self.known = len(self.holders)
        self.untrack()

    def untrack(self) -> None:
        """Forget what changed since the last clone: the next clone checks every creature and
        encounter (call it after changing the state other than through a handler, e.g. a delta)."""
        self._token = next(_TOKENS)
        self._base = 0
        self._dirty: list[str] = []
        self._seen = 0
        self._ctrack: dict[str, Any] | None = None
        self._open: list[str] = []
        self._eseen = 0
        self._etrack: dict[str, Any] | None = None
        self._jtoken = 0  # changed outside a handler: the journal cannot tell what changed
        self._jowned: dict[str, None] = {}
        self._jseen = 0
        self._jcreatures: dict[str, Any] | None = None
        self._jopen: tuple[str, ...] = ()
        self._jeseen = 0
        self._jencounters: dict[str, Any] | None = None
        self._ep = 0  # changed outside a handler: no clone point is known (see :func:`changed_creatures`)
        self._etouched: dict[str, None] = {}
        self._elen = 0
        self._edict: dict[str, Any] | None = None
        self._chain: tuple[tuple[int, tuple[str, ...], int], ...] = ()
        self._ranks: dict[str, int] | None = None
        self._rn = 0

    def journal_changes(self) -> Journal:
        """The creatures and encounters that may have changed since the journal was last taken
        (:class:`Journal`), and a new journal from here. Clones carry the journal on (the live
        fold clones for checkpoints and lends); a state rebuilt or changed outside a handler
        (:meth:`untrack`), or whose dictionaries were replaced or shrank, reports ``since`` 0.

        Cost: the changes since the last journal, not the campaign. Creatures change only
        through :meth:`own` (or are added at the end of ``creatures``); encounters change only
        while open (an ended one is shared, never changed), so the open ones at the journal's
        start and those added since cover them."""
        creatures, encounters = self.creatures, self.encounters
        since = self._jtoken
        changed: tuple[str, ...]
        touched: tuple[str, ...]
        if (
            not since
            or self._jcreatures is not creatures
            or self._jencounters is not encounters
            or len(creatures) < self._jseen
            or len(encounters) < self._jeseen
        ):
            since, changed, touched = (
                0,
                (),
                tuple(k for k, e in encounters.items() if getattr(e, "state", None) != "ended"),
            )
        else:
            changed = (*self._jowned, *_added(creatures, self._jseen))
            touched = (*self._jopen, *_added(encounters, self._jeseen))
        token = next(_TOKENS)
        journal = Journal(since, token, changed, touched)
        self._jtoken = token
        self._jowned = {}
        self._jseen = len(creatures)
        self._jcreatures = creatures
        # the encounters that may change from here: those open now (only those touched can be)
        self._jopen = tuple(
            k for k in dict.fromkeys(touched) if getattr(encounters.get(k), "state", "ended") != "ended"
        )
        self._jeseen = len(encounters)
        self._jencounters = encounters
        return journal

    def changed_since(self, token: int) -> tuple[list[str], list[str]] | None:
        """The ids of the creatures and of the encounters that may differ from the state whose
        clone token is ``token`` (a superset), or None when this state cannot tell."""
        if not token or self._base != token:
            return None
        return self._candidates()

    def _lineage_known(self) -> bool:
        """Whether the creatures owned since the clone point ``_ep`` are known: a clone point
        was taken and the creatures' dictionary is still the one of that point, never shrunk."""
        return bool(self._ep) and self._edict is self.creatures and len(self.creatures) >= self._elen

    def _timeline(self) -> list[tuple[int, tuple[str, ...] | list[str], int]] | None:
        """The clone points this state descends from, newest first, each with the creatures
        owned or added from it to the next newer one (the first: up to now), or None."""
        if not self._lineage_known():
            return None
        now = [*self._etouched, *_added(self.creatures, self._elen)]
        return [(self._ep, now, self._elen), *self._chain]

    def in_order(self, ids: list[str]) -> list[str]:
        """``ids`` (creatures of this state) in the order of ``creatures``, without walking it:
        each creature keeps the rank it was added at (creatures are only ever added), and
        ``_ranks`` holds the ranks of the first ``_rn`` creatures -- shared by clones and
        extended in place by the state whose ranks are its newest, so it costs the creatures
        added since last asked (a whole walk once, or when another branch of clones extended
        the shared ranks past more than :data:`_TAIL` of this state's own)."""
        if len(ids) < 2:
            return list(ids)
        creatures = self.creatures
        n = len(creatures)
        ranks, mine = self._ranks, self._rn
        if ranks is None or mine > n:
            ranks, mine = {}, 0
        local: dict[str, int] = {}
        if mine < n:
            if len(ranks) == mine:  # the shared ranks end where ours do: extend them in place
                for i, k in enumerate(_added(creatures, mine), mine):
                    ranks[k] = i
                mine = n
            elif n - mine <= _TAIL:  # another branch extended them: rank our few newest here
                local = {k: i for i, k in enumerate(_added(creatures, mine), mine)}
            else:  # our own copy of the common prefix, then ours
                ranks = {k: r for k, r in ranks.items() if r < mine}
                for i, k in enumerate(_added(creatures, mine), mine):
                    ranks[k] = i
                mine = n
            self._ranks, self._rn = ranks, mine
        if local:
            return sorted(ids, key=lambda k: local[k] if k in local else ranks[k])
        return sorted(ids, key=ranks.__getitem__)

    def _candidates(self) -> tuple[list[str], list[str]] | None:
        """The creatures owned or added, and the encounters open or added, since ``_base``
        (None when a dictionary was replaced or shrank: then nothing is known)."""
        creatures, encounters = self.creatures, self.encounters
        if (
            self._ctrack is not creatures
            or self._etrack is not encounters
            or len(creatures) < self._seen
            or len(encounters) < self._eseen
        ):
            return None
        return self._dirty + _added(creatures, self._seen), self._open + _added(encounters, self._eseen)

    def _index_anchors(self) -> None:
        anchors: dict[str, tuple[str, ...]] = {}
        kinds: dict[str, tuple[str, ...]] = {k: () for k in self.kinds}
        carriers: dict[str, str] = {}
        creatures = self.creatures
        for hid in self.holders:
            c = creatures.get(hid)
            for e in getattr(c, "effects", None) or ():
                carriers[e["effect_id"]] = hid
                d = e.get("duration")
                if not isinstance(d, dict):
                    continue
                a = d.get("anchor")
                if a is not None:
                    ids = anchors.get(a, ())
                    if hid not in ids:
                        anchors[a] = (*ids, hid)
                for k in (d.get("kind"), PENDING if e.get("pending") else None):
                    tracked = kinds.get(k)  # type: ignore[arg-type]
                    if tracked is not None and hid not in tracked:
                        kinds[k] = (*tracked, hid)  # type: ignore[index]
        self.anchors = anchors
        self.kinds = kinds
        self.carriers = carriers

    def clone(self: S) -> S:
        """A copy that shares creatures until one side changes them (copy-on-write).

        Its cost does not grow with the campaign: only the creatures owned (:meth:`own`) or
        added since this state was last cloned can be unshared, and only the encounters open or
        added since then can be open (the others ended: shared). Both are tracked (the
        ``TRACKING`` slots), and the clone remembers them as what differs from the state this
        one was cloned into last (:meth:`changed_since`: a checkpoint delta reads only those)."""
        s = object.__new__(type(self))
        put = object.__setattr__
        creatures, encounters = self.creatures, self.encounters
        known = self._candidates()
        if known is None:
            cids = None
            for c in creatures.values():
                if not c.shared:
                    put(c, "shared", True)
            copied = {k: (e if e.state == "ended" else e.clone()) for k, e in encounters.items()}
            still_open = [k for k, e in copied.items() if e is not encounters[k]]
        else:
            cids, eids = known
            for cid in cids:
                c = creatures.get(cid)
                if c is not None and not c.shared:
                    put(c, "shared", True)
            copied = dict(encounters)
            still_open = []
            for k in eids:
                e = copied.get(k)
                if e is not None and e.state != "ended":
                    copied[k] = e.clone()
                    still_open.append(k)
        if GUARD:
            _check_marked(self, copied)
        tracking = TableState.TRACKING
        for name in _slots(type(self)):
            if name in tracking:
                continue
            if name == "encounters":
                value: Any = copied
            else:
                value = getattr(self, name)
                if isinstance(value, dict):
                    value = dict(value)
                elif isinstance(value, list):
                    value = list(value)
            setattr(s, name, value)
        # the clone: what differs from this state's reference clone (when known)
        s._token = next(_TOKENS)
        s._base = self._base if known is not None else 0
        s._dirty = list(cids) if cids is not None else []
        s._seen = len(creatures)
        s._ctrack = s.creatures
        s._open = list(known[1]) if known is not None else still_open
        s._eseen = len(encounters)
        s._etrack = copied
        # the journal goes on in the clone (tracking the clone's own dictionaries)
        s._jtoken = self._jtoken
        s._jowned = dict(self._jowned)
        s._jseen = self._jseen
        s._jcreatures = s.creatures if self._jcreatures is creatures else None
        s._jopen = self._jopen
        s._jeseen = self._jeseen
        s._jencounters = copied if self._jencounters is encounters else None
        # the clone point: both read alike here; each remembers what it owned before, as a link
        point = next(_TOKENS)
        if self._lineage_known():
            link = (self._ep, (*self._etouched, *_added(creatures, self._elen)), self._elen)
            chain: tuple[tuple[int, tuple[str, ...], int], ...] = (link, *self._chain[: LINKS - 1])
        else:
            chain = ()
        n = len(creatures)
        s._ep, s._etouched, s._elen, s._edict, s._chain = point, {}, n, s.creatures, chain
        s._ranks, s._rn = self._ranks, self._rn  # the same keys in the same order: shared
        self._ep, self._etouched, self._elen, self._edict, self._chain = point, {}, n, creatures, chain
        # this state now reads as the clone: it is the reference from here on
        self._base = s._token
        self._dirty = []
        self._seen = len(creatures)
        self._ctrack = creatures
        self._open = still_open
        self._eseen = len(encounters)
        self._etrack = encounters
        return s

    def own(self, cid: str) -> Any:
        """This state's own copy of a creature, safe to change."""
        c = self.creatures[cid]
        if c.shared:
            c = c.clone()
            self.creatures[cid] = c
            self._dirty.append(cid)
        self._jowned[cid] = None
        self._etouched[cid] = None
        if cid in self.holders:
            self.watch[cid] = None
        return c

    def hold(self, cid: str, effect: dict[str, Any]) -> None:
        """``cid`` (this state's own copy) was given ``effect``: list it among the holders."""
        holders = self.holders
        if len(holders) != self.known:
            self.derive()  # someone wrote ``holders`` directly (a ruleset plugin): take it as it is
        if cid not in holders:
            holders[cid] = None
            self.known += 1
        self.watch[cid] = None
        carriers = self.carriers
        carriers[effect["effect_id"]] = cid
        d = effect.get("duration")
        if isinstance(d, dict):
            a = d.get("anchor")
            if a is not None:
                anchors = self.anchors
                ids = anchors.get(a, ())
                if cid not in ids:
                    anchors[a] = (*ids, cid)
            tracked = self.kinds.get(d.get("kind"))  # type: ignore[arg-type]
            if tracked is not None and cid not in tracked:
                self.kinds[d["kind"]] = (*tracked, cid)
        if effect.get("pending"):
            tracked = self.kinds.get(PENDING)
            if tracked is not None and cid not in tracked:
                self.kinds[PENDING] = (*tracked, cid)
        if len(carriers) > 4 * len(holders) + 64 or len(self.anchors) > 2 * len(holders) + 32:
            self._index_anchors()  # forget effects that ended, anchors whose turns end nothing

    def new_effect_id(self) -> str:
        self.fact_effects += 1
        return f"e{self.fact_seq}" if self.fact_effects == 1 else f"e{self.fact_seq}.{self.fact_effects}"

    def with_effects(self) -> list[Any]:
        """The living creatures that carry any effect (forgetting those that no longer do)."""
        self._prune()
        creatures = self.creatures
        return [creatures[cid] for cid in self.holders]

    def _prune(self) -> None:
        """Forget the holders that no longer carry an effect or died, as a check of every
        holder would: only the watched ones can have changed since they were last checked."""
        holders = self.holders
        if len(holders) != self.known:
            self.derive()
        watch = self.watch
        if not watch:
            return
        creatures = self.creatures
        for cid in list(watch):
            if cid not in holders:
                del watch[cid]
                continue
            c = creatures.get(cid)
            if c is None or not getattr(c, "effects", None) or getattr(c, "life", None) == "dead":
                del holders[cid]
                del watch[cid]
            elif c.shared:
                del watch[cid]  # it cannot change until owned again (which watches it)
        self.known = len(holders)

    def carrier(self, effect_id: str) -> Any:
        """What ``next((c for c in self.with_effects() if effect_id is on c), None)`` gives,
        without reading every holder -- for an effect that is not in force too (a save against
        an effect a correction orphaned: the commonest question of an orphan-heavy refold).

        ``carriers`` lists every effect in force under the holder that carries it (effects are
        only ever given through :meth:`hold`, never moved to another creature, and
        :meth:`derive` rebuilds the index from the creatures), so where it does not point to a
        holder carrying the effect, no holder does (checked against the scan under GUARD)."""
        self._prune()
        found = None
        hid = self.carriers.get(effect_id)
        if hid is not None and hid in self.holders:
            c = self.creatures.get(hid)
            if c is not None and any(e["effect_id"] == effect_id for e in c.effects):
                found = c
        if GUARD:
            _check_carrier(self, effect_id, found)
        return found

    def registered(self, name: str, pred: Callable[[Any], bool]) -> tuple[str, ...]:
        """The ids of the creatures ``pred`` selects, in the creatures' order, for a ``pred``
        of what a creature is from its registration on (its kind: never changed). Creatures
        are only ever added to a state, so this reads only those registered since last asked."""
        creatures = self.creatures
        seen, ids = self.memo.get(name, (0, ()))
        if seen > len(creatures):
            seen, ids = 0, ()
        if seen < len(creatures):
            # the newest ones, read from the end: no walk over every creature before them
            tail = list(islice(reversed(creatures.items()), len(creatures) - seen))
            tail.reverse()
            ids = (*ids, *(cid for cid, c in tail if pred(c)))
            self.memo[name] = (len(creatures), ids)
        return ids  # type: ignore[no-any-return]

    def holding(self, *kinds: str) -> list[Any]:
        """What ``[c for c in self.with_effects() if c carries an effect of one of these
        duration kinds]`` gives (in the holders' order, forgetting the holders that no longer
        carry any effect), without reading every holder once a kind has been asked about."""
        self._prune()
        holders, creatures, index = self.holders, self.creatures, self.kinds
        found: dict[str, Any] = {}
        for k in kinds:
            ids = index.get(k)
            if ids is None:  # first time asked: from now on :meth:`hold` keeps it
                ids = tuple(h for h in holders if any(_is(e, k) for e in creatures[h].effects))
            keep = []
            for hid in ids:
                c = creatures.get(hid) if hid in holders else None
                if c is not None and any(_is(e, k) for e in c.effects):
                    keep.append(hid)
                    found[hid] = c
            index[k] = tuple(keep)
        if len(found) > 1:
            rank = {h: i for i, h in enumerate(holders)}
            return sorted(found.values(), key=lambda c: rank[c.id])
        return list(found.values())

    def anchored(self, cid: str) -> list[Any]:
        """What ``[c for c in self.with_effects() if effects.anchored_to(c, cid)]`` gives (the
        living creatures carrying an effect timed by ``cid``'s turns, in the holders' order,
        forgetting the holders that no longer carry any), without reading every holder."""
        self._prune()
        ids = self.anchors.get(cid)
        if not ids:
            return []
        holders, creatures = self.holders, self.creatures
        found, keep = [], []
        for hid in ids:
            c = creatures.get(hid) if hid in holders else None
            if c is None:
                continue
            for e in c.effects:
                if e["duration"].get("anchor") == cid:
                    found.append(c)
                    keep.append(hid)
                    break
        if len(keep) != len(ids):
            if keep:
                self.anchors[cid] = tuple(keep)
            else:
                del self.anchors[cid]
        if len(found) > 1:
            rank = {h: i for i, h in enumerate(holders)}
            found.sort(key=lambda c: rank[c.id])
        return found

    @property
    def encounter(self) -> Any:
        return self.encounters.get(self.active_encounter) if self.active_encounter else None


S = TypeVar("S", bound=TableState)
_TOKENS = count(1)
_TAIL = 64  # see TableState.in_order


def _check_marked(state: TableState, copied: dict[str, Any]) -> None:
    """Under :data:`GUARD`: the tracked clone marked every creature shared and cloned every
    open encounter, as checking all of them would."""
    for cid, c in state.creatures.items():
        if not c.shared:
            raise AssertionError(f"clone left creature {cid!r} unshared: it changed untracked")
    for k, e in state.encounters.items():
        if e.state != "ended" and copied[k] is e:
            raise AssertionError(f"clone shared the open encounter {k!r}: it was added untracked")


def _check_carrier(state: TableState, effect_id: str, found: Any) -> None:
    """Under :data:`GUARD`: the index found what a scan of every holder finds."""
    scanned = next(
        (c for c in state.with_effects() if any(e["effect_id"] == effect_id for e in c.effects)), None
    )
    if scanned is not found:
        raise AssertionError(
            f"carrier index: effect {effect_id!r} is on {getattr(scanned, 'id', None)!r}, "
            f"the index found {getattr(found, 'id', None)!r}"
        )


PENDING = "(pending)"
"""For :meth:`TableState.holding`: the holders of an aftereffect waiting for its turn's end
(an effect marked ``pending``; give it to :meth:`TableState.hold` once marked)."""


def _kind(e: dict[str, Any]) -> Any:
    d = e.get("duration")
    return d.get("kind") if isinstance(d, dict) else None


def _is(e: dict[str, Any], k: str) -> bool:
    """Whether effect ``e`` is of duration kind ``k`` (or pending, for :data:`PENDING`)."""
    return bool(e.get("pending")) if k == PENDING else _kind(e) == k


def changed_creatures(before: TableState, after: TableState) -> list[str]:
    """The creatures whose state differs between two states of one fold (new ones included),
    in ``after``'s order. An identity test (copy-on-write keeps untouched creatures the same
    object) of the creatures either state owned or added since the newest clone point both
    descend from (:func:`touched_between`): the cost of the changes, not of the campaign. When
    no such point is known (a state rebuilt, or changed outside a handler, or more than
    :data:`LINKS` clones apart), every creature of ``after`` is tested."""
    old, new = before.creatures, after.creatures
    ids = touched_between(before, after)
    if ids is None:
        return [cid for cid, c in new.items() if old.get(cid) is not c]
    found = [cid for cid in ids if (c := new.get(cid)) is not None and old.get(cid) is not c]
    found = after.in_order(found)
    if GUARD:
        scanned = [cid for cid, c in new.items() if old.get(cid) is not c]
        if scanned != found:
            raise AssertionError(f"changed creatures: the scan finds {scanned}, the lineage {found}")
    return found


def touched_between(before: Any, after: Any) -> list[str] | None:
    """The creatures that may differ between two states (a superset, in no particular order):
    those either one owned (:meth:`TableState.own`) or added since the newest clone point both
    descend from -- at a clone, the state and its clone read alike, and each goes on from there
    noting what it owns. None when the two share no known point. Costs the points remembered
    (:data:`LINKS`) and the creatures noted since the common one."""
    timeline = getattr(before, "_timeline", None)
    a = timeline() if timeline is not None else None
    b = after._timeline() if a is not None and hasattr(after, "_timeline") else None
    if a is None or b is None:
        return None
    at = {point: i for i, (point, _, _) in enumerate(a)}
    for j, (point, _, _) in enumerate(b):
        i = at.get(point)
        if i is not None:
            ids: dict[str, None] = {}
            for _, touched, _ in (*a[: i + 1], *b[: j + 1]):
                ids.update(dict.fromkeys(touched))
            return list(ids)
    return None


# ---------------------------------------------------------------------------- persisted form
# A ruleset's ``dump_state`` / ``load_state`` (see ``domain.rulesets.Ruleset``) must round-trip a
# state exactly through JSON. For a state made of slotted objects holding plain values (ints,
# strings, booleans, None, lists, tuples, dicts, sets), these helpers do it.
_TUPLE, _SET, _ITEMS = "__tuple__", "__set__", "__items__"
_MARKERS = frozenset({_TUPLE, _SET, _ITEMS})


def to_plain(value: Any) -> Any:
    """``value`` as JSON data, tuples, sets and non-string dictionary keys tagged so that
    :func:`from_plain` gives back the same types."""
    t = type(value)
    if t is str or t is int or t is bool or t is float or value is None:
        return value
    if t is list:
        return [to_plain(v) for v in value]
    if t is dict:
        if all(type(k) is str for k in value) and not (_MARKERS & value.keys()):
            return {k: to_plain(v) for k, v in value.items()}
        return {_ITEMS: [[to_plain(k), to_plain(v)] for k, v in value.items()]}
    if t is tuple:
        return {_TUPLE: [to_plain(v) for v in value]}
    if t is set or t is frozenset:
        return {_SET: sorted((to_plain(v) for v in value), key=repr)}
    raise TypeError(f"cannot persist a {t.__name__} in a state (keep state plain: see domain.core.state)")


def _pure(value: Any) -> bool:
    """Whether ``value`` is JSON as it is (no tuple, set, non-string key or marker key)."""
    t = type(value)
    if t is str or t is int or t is bool or t is float or value is None:
        return True
    if t is list:
        return all(_pure(v) for v in value)
    if t is dict:
        return (
            all(type(k) is str for k in value)
            and not (_MARKERS & value.keys())
            and all(_pure(v) for v in value.values())
        )
    return False


_TAGGED = "~"  # in a dumped object: the slots whose values carry tags (the others are JSON as they are)


def from_plain(value: Any) -> Any:
    """The inverse of :func:`to_plain`."""
    t = type(value)
    if t is list:
        return [from_plain(v) for v in value]
    if t is dict:
        if len(value) == 1:
            if _TUPLE in value:
                return tuple(from_plain(v) for v in value[_TUPLE])
            if _SET in value:
                return {from_plain(v) for v in value[_SET]}
            if _ITEMS in value:
                return {from_plain(k): from_plain(v) for k, v in value[_ITEMS]}
        return {k: from_plain(v) for k, v in value.items()}
    return value


def dump_object(obj: Any) -> dict[str, Any]:
    """Every slot of ``obj`` that is set (the copy-on-write mark excepted) as JSON data. Values
    that are JSON as they are go in as they are (serialise the result before the object
    changes); the others are tagged (:func:`to_plain`) and listed under ``"~"``, so loading
    walks only those."""
    out: dict[str, Any] = {}
    tagged = []
    for name in _slots(type(obj)):
        if name == "shared":
            continue
        try:
            value = getattr(obj, name)
        except AttributeError:
            continue
        if _pure(value):
            out[name] = value
        else:
            out[name] = to_plain(value)
            tagged.append(name)
    if tagged:
        out[_TAGGED] = tagged
    return out


def load_object(cls: type[T], data: dict[str, Any]) -> T:
    """An object of ``cls`` with the slots :func:`dump_object` wrote (a creature unshared, and
    guarded when :data:`GUARD` is on). ``data`` must be freshly decoded JSON: the object keeps
    its containers."""
    if issubclass(cls, CreatureBase):
        obj: Any = object.__new__(_guarded(cls) if GUARD else cls)
        object.__setattr__(obj, "shared", False)
    else:
        obj = object.__new__(cls)
    slots = _SLOT_SETS.get(cls)
    if slots is None:
        slots = _SLOT_SETS[cls] = frozenset(_slots(cls))
    put = object.__setattr__
    tagged = data.get(_TAGGED, ())
    for name, value in data.items():
        if name not in slots:
            if name == _TAGGED:
                continue
            raise ValueError(f"{cls.__name__} has no slot {name!r}")
        put(obj, name, from_plain(value) if name in tagged else value)
    return obj  # type: ignore[no-any-return]


_SLOT_SETS: dict[type, frozenset[str]] = {}


def dump_table(state: TableState) -> dict[str, Any]:
    """A :class:`TableState` (and its subclass' slots) as JSON data: ``table`` (every slot but
    the creatures and encounters), ``creatures`` and ``encounters`` (by id, in order). Each
    creature and encounter is dumped on its own, so a state holding only some of them (a
    checkpoint delta) dumps just those."""
    table = {}
    derived = getattr(state, "DERIVED", ())
    for name in _slots(type(state)):
        if name not in ("creatures", "encounters") and name not in derived:
            table[name] = to_plain(getattr(state, name))  # a few small values: always tagged form
    return {
        "table": table,
        "creatures": {cid: dump_object(c) for cid, c in state.creatures.items()},
        "encounters": {eid: dump_object(e) for eid, e in state.encounters.items()},
    }


def load_table(
    cls: type[S], data: dict[str, Any], *, creature: type[Any], encounter: type[Any] | None = None
) -> S:
    """The inverse of :func:`dump_table` for a state class and its creature and encounter classes."""
    state: Any = object.__new__(cls)
    slots = _slots(cls)
    for name, value in data["table"].items():
        if name not in slots:
            raise ValueError(f"{cls.__name__} has no slot {name!r}")
        object.__setattr__(state, name, from_plain(value))
    state.creatures = {cid: load_object(creature, c) for cid, c in data["creatures"].items()}
    if data["encounters"] and encounter is None:
        raise ValueError(f"{cls.__name__} has no encounter class but the data holds encounters")
    state.encounters = (
        {eid: load_object(encounter, e) for eid, e in data["encounters"].items()} if encounter else {}
    )
    if hasattr(state, "derive"):
        state.derive()  # the derived slots are never persisted (``TableState.DERIVED``)
    missing = [n for n in slots if not hasattr(state, n)]
    if missing:
        raise ValueError(f"{cls.__name__} data lacks {', '.join(missing)}")
    return state  # type: ignore[no-any-return]


def _added(keys: dict[str, Any], seen: int) -> list[str]:
    """The keys added to ``keys`` after its first ``seen``, in order, read from the end."""
    tail = list(islice(reversed(keys), len(keys) - seen))
    tail.reverse()
    return tail
