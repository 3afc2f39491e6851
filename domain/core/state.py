"""The state every ruleset folds into: creatures shared copy-on-write, encounters, the clock.

A long campaign accumulates creatures, and the fold clones its state for every command and
every checkpoint: a clone must not copy each creature. :class:`TableState` therefore shares
creature objects between clones until one side changes one (:meth:`TableState.own` gives a
state its private copy first). Two consequences every layer relies on:

* cloning costs one dictionary copy, not a copy of the campaign;
* "which creatures did these facts change" is an identity comparison
  (:func:`changed_creatures`): a creature a fact did not touch is the very same object in the
  state before and after it. Views, payloads and read models use it to build only what
  changed.

A ruleset subclasses :class:`CreatureBase` (its sheet and tracks as slots) and
:class:`TableState` (anything campaign-wide it tracks). Tests set :data:`GUARD` so that a
handler that changes a shared creature without :meth:`TableState.own` fails loudly instead of
silently corrupting a checkpoint.
"""

from __future__ import annotations

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
_SLOTS: dict[type, tuple[str, ...]] = {}
_GUARDED: dict[type, type] = {}


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

        found = type(f"Guarded{cls.__name__}", (cls,), {"__slots__": (), "__setattr__": __setattr__})
        _SLOTS[found] = _slots(cls)
        _GUARDED[cls] = found
    return found


def new_creature(cls: type[C], cid: str) -> C:
    """A fresh, unshared creature of ``cls`` (guarded against shared changes when tests ask)."""
    c = object.__new__(_guarded(cls) if GUARD else cls)
    object.__setattr__(c, "shared", False)
    object.__setattr__(c, "id", cid)
    return c


class TableState:
    """The campaign-wide state of any ruleset at one position.

    ``encounters`` holds encounter objects (``state`` = ``setup`` | ``running`` | ``ended``;
    ended ones are shared between clones: nothing changes them); ``holders`` lists, in the
    order they first got one, the creatures that may carry effects, so turn boundaries scan
    these rather than every creature the campaign ever met.
    """

    __slots__ = (
        "flags",
        "creatures",
        "encounters",
        "active_encounter",
        "minutes",
        "holders",
        "fact_seq",
        "fact_effects",
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

    def clone(self: S) -> S:
        """A copy that shares creatures until one side changes them (copy-on-write)."""
        s = object.__new__(type(self))
        put = object.__setattr__
        for c in self.creatures.values():
            if not c.shared:
                put(c, "shared", True)
        for name in _slots(type(self)):
            value = getattr(self, name)
            if name == "encounters":
                value = {k: (e if e.state == "ended" else e.clone()) for k, e in value.items()}
            elif isinstance(value, dict):
                value = dict(value)
            elif isinstance(value, list):
                value = list(value)
            setattr(s, name, value)
        return s

    def own(self, cid: str) -> Any:
        """This state's own copy of a creature, safe to change."""
        c = self.creatures[cid]
        if c.shared:
            c = c.clone()
            self.creatures[cid] = c
        return c

    def new_effect_id(self) -> str:
        self.fact_effects += 1
        return f"e{self.fact_seq}" if self.fact_effects == 1 else f"e{self.fact_seq}.{self.fact_effects}"

    def with_effects(self) -> list[Any]:
        """The living creatures that carry any effect (forgetting those that no longer do)."""
        found = []
        for cid in list(self.holders):
            c = self.creatures.get(cid)
            if c is None or not getattr(c, "effects", None) or getattr(c, "life", None) == "dead":
                del self.holders[cid]
            else:
                found.append(c)
        return found

    @property
    def encounter(self) -> Any:
        return self.encounters.get(self.active_encounter) if self.active_encounter else None


S = TypeVar("S", bound=TableState)


def changed_creatures(before: TableState, after: TableState) -> list[str]:
    """The creatures whose state differs between two states of one fold (new ones included),
    in ``after``'s order. An identity test per creature: copy-on-write keeps untouched
    creatures the same object."""
    old = before.creatures
    return [cid for cid, c in after.creatures.items() if old.get(cid) is not c]
