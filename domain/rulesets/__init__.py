"""Rulesets: each game system is a plug-in that owns every number that differs between systems.

The core (``domain.core``, ``domain.ledger``) owns what every system shares: the fact
envelope, corrections and rulings, the core fact catalogue (encounters, turns, time, notes),
the copy-on-write table state and the one fold. A ruleset declares the rest:

* ``catalogue``: the core catalogue extended with its own fact types, payload versions and
  upcasters (:meth:`domain.core.catalogue.Catalogue.extend`);
* ``flag_defaults`` / ``validate_flag`` / ``flags_doc``: its named rules flags (RULES.md ruling 1);
* ``error_codes``: the refusal codes its rules raise, each with one line of meaning;
* ``initial_state`` and ``apply``: the fold of one fact (raising ``RuleViolation`` *before*
  changing anything when the fact's preconditions fail);
* views, all plain JSON and all per object so a request builds only what it shows:
  ``creature_view``, ``encounter_view``, ``campaign_view``; ``pending_rolls`` (what the
  current turn owes before it can end); ``tracks`` (the numbers an export charts);
* ``dump_state`` / ``load_state``: the state as JSON and back, exactly (persisted snapshots
  of the fold, so a restarted process does not refold a long campaign);
* optionally ``narrator(markup)``: its :class:`~domain.core.narration.Narrator` (sentences for
  its facts, turn-boundary steps, per-encounter summary columns, timeline marks); without one
  the core narrator reads its facts generically.

Rulesets are discovered through the Python entry-point group ``chronicle.rulesets`` (each
entry names an object satisfying :class:`Ruleset`), so a ruleset can ship as its own
package. :func:`register` adds one at run time (used by tests of the registry itself).
:func:`get_ruleset` imports only the plug-in of the id asked for until something needs them all
(:func:`available`, an unknown id): a ``chronicle rebuild`` of one system's campaigns does not
import the other systems (about 0.08 s of CPU at its start).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from importlib import metadata
from typing import Any, Protocol, runtime_checkable

from domain.core.catalogue import Catalogue
from domain.core.narration import PLAIN, Markup, Narrator
from domain.core.state import TableState, changed_creatures
from domain.errors import InvalidInput

ENTRY_POINT_GROUP = "chronicle.rulesets"

# The life states every ruleset's views speak (``creature_view(...)["life"]``), so clients of
# any system can branch on them; a system's finer states go in its own view keys.
LIFE_STATES: dict[str, str] = {
    "active": "Up and acting.",
    "disabled": "Conscious but barely able to act (e.g. at 0 hit points in the d20 rules).",
    "knocked_out": "Unconscious but not dying (knocked out instead of killed).",
    "unconscious": "Unconscious for another reason (e.g. a monster at exactly 0 hit points).",
    "dying": "Dying: losing ground each round until stabilised, healed or dead.",
    "stabilized": "Dying no more, but not yet conscious.",
    "dead": "Dead.",
}


class State(Protocol):
    flags: dict[str, Any]

    def clone(self) -> State: ...


class Context(Protocol):
    """What the fold tells a rule handler about the fact being applied."""

    seq: int
    meta: dict[str, Any]
    overrides: dict[str, Any]
    waived: bool

    def ruling_holds(self, ruling_id: str) -> bool: ...

    def ruling_value(self, ruling_id: str) -> Any: ...


@dataclass(frozen=True)
class Track:
    """One number an export charts for a creature over time (hit points, or a system's own tracks).

    ``floor`` / ``ceiling`` bound the axis when known; ``thresholds`` are labelled lines drawn
    across it (e.g. "dying" at -1); ``value`` is the current number in this view."""

    key: str
    label: str
    value: int
    ceiling: int | None = None
    floor: int | None = 0
    thresholds: tuple[tuple[str, int], ...] = ()


@runtime_checkable
class Ruleset(Protocol):
    id: str
    title: str
    version: str  # the rules pack's version: persisted snapshots fold under one version only

    @property
    def catalogue(self) -> Catalogue: ...

    @property
    def flag_defaults(self) -> Mapping[str, Any]: ...

    @property
    def error_codes(self) -> Mapping[str, str]: ...

    def initial_state(self, flags: dict[str, Any]) -> Any: ...

    def apply(self, state: Any, fact_type: str, payload: dict[str, Any], ctx: Context) -> dict[str, Any]:
        """Apply one fact to ``state`` in place and return its outcome.

        Raises ``RuleViolation`` *before mutating anything* when the fact's
        preconditions do not hold: the command is refused, or during a refold
        the fact is orphaned.
        """
        ...

    def validate_flag(self, flag: str, value: Any) -> Any: ...

    def flags_doc(self) -> list[dict[str, Any]]:
        """Every flag: ``{"name", "default", "ref", "doc"}`` (for docs and ``chronicle rulesets``)."""
        ...

    # Optional: ``check_override(fact_type, payload, field, value) -> value``. A ruleset that has it
    # lists the derived results its fold honours (RULES.md C0.4); the ledger asks it when a GM's
    # ``OutcomeOverridden`` is recorded, so an override the fold would not read is refused (any
    # ruleset may keep an orphan: ``orphan: "keep"``). Without it every field is accepted.

    # Optional: ``roll_purposes``, per fact type a path pattern of its rolls (``targets.*.damage``)
    # and what the roll is for (C0.3 ``purpose``, read by ``domain.core.rolls.roll_purpose``).

    # ---------------------------------------------------------------- views
    def creature_view(self, state: Any, creature_id: str) -> dict[str, Any]:
        """One creature as JSON. Keys every ruleset gives: ``id``, ``name``, ``kind``
        (``pc`` | ``npc`` | ``monster``), ``level``, ``life`` (one of :data:`LIFE_STATES`), ``conditions``
        (names), ``effects``, ``hit_points`` (``{"current", "max", "temporary"}``, or None for a
        system without them); then its own keys."""
        ...

    def encounter_view(self, state: Any, encounter_id: str) -> dict[str, Any]: ...

    def campaign_view(self, state: Any) -> dict[str, Any]:
        """Campaign-wide values: ``clock_minutes``, ``flags``, ``active_encounter``, and the
        ruleset's own."""
        ...

    def pending_rolls(self, state: Any) -> list[tuple[str, dict[str, Any]]]:
        """Facts (without their dice) the current turn owes before it can end."""
        ...

    def tracks(self, view: dict[str, Any]) -> list[Track]:
        """The numbers an export charts for one creature view, in drawing order."""
        ...

    # ------------------------------------------------------------ persisted snapshots
    def dump_state(self, state: Any) -> dict[str, Any]:
        """The state as JSON data (persisted snapshots and checkpoints, issue 21).

        The contract: ``load_state(json.loads(json.dumps(dump_state(s))))`` is the same state as
        ``s`` -- every slot, with its type (tuples stay tuples), so the fold continues from it
        exactly as from ``s``. It must also work for a state holding only some creatures and
        encounters (checkpoint deltas are dumped that way) and give back exactly those.
        ``domain.core.state.dump_table`` / ``load_table`` do all of it for a ``TableState``
        whose creatures and encounters are slotted objects of plain values. Persisted
        snapshots are keyed by the ruleset's ``version``: change it whenever a rules change
        would fold the same facts differently, and every snapshot is rebuilt."""
        ...

    def load_state(self, data: dict[str, Any]) -> Any:
        """The state ``dump_state`` wrote (raise ``ValueError`` or ``KeyError`` on data it did not)."""
        ...


def narrator_for(ruleset: Ruleset, markup: Markup = PLAIN) -> Narrator:
    """The ruleset's narrator in ``markup`` (the core's when the ruleset brings none)."""
    make = getattr(ruleset, "narrator", None)
    found = make(markup) if make is not None else Narrator(markup)
    return found if isinstance(found, Narrator) else Narrator(markup)


# ------------------------------------------------------------------ views built on the protocol
def creature_ids(state: TableState) -> list[str]:
    return sorted(state.creatures)


def summary(ruleset: Ruleset, state: Any) -> dict[str, Any]:
    """The whole state as one JSON object (exports, what-if ``state``, debugging): every
    creature and encounter. Costs the campaign: per-request code asks for single views."""
    out = dict(ruleset.campaign_view(state))
    out["creatures"] = {cid: ruleset.creature_view(state, cid) for cid in sorted(state.creatures)}
    out["encounters"] = {eid: ruleset.encounter_view(state, eid) for eid in sorted(state.encounters)}
    return out


def diff_views(
    ruleset: Ruleset, before: Any, after: Any, only: list[str] | None = None
) -> dict[str, dict[str, list[Any]]]:
    """Per creature that changed between two states of one fold: ``{field: [before, after]}``.

    Only creatures whose object changed are viewed (copy-on-write identity), so the cost is
    that of the changes, not of the campaign."""
    out: dict[str, dict[str, list[Any]]] = {}
    for cid in changed_creatures(before, after) if only is None else only:
        a = ruleset.creature_view(before, cid) if cid in before.creatures else {}
        b = ruleset.creature_view(after, cid) if cid in after.creatures else {}
        changed = {k: [a.get(k), b.get(k)] for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)}
        if changed:
            out[cid] = changed
    return out


# ------------------------------------------------------------------ registry
_REGISTRY: dict[str, Ruleset] = {}
_PROBLEMS: dict[str, str] = {}
_MANUAL: set[str] = set()
_DISCOVERED = False


def register(ruleset: Ruleset) -> Ruleset:
    """Add a ruleset at run time (entry points are the normal way; see the module docstring)."""
    _REGISTRY[ruleset.id] = ruleset
    _MANUAL.add(ruleset.id)
    return ruleset


def _discover() -> None:
    global _DISCOVERED
    if _DISCOVERED:
        return
    _DISCOVERED = True
    for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
        _load(ep)


def _load(ep: metadata.EntryPoint) -> bool:
    """Register the ruleset of one entry point (or note why it cannot be one); whether it is."""
    try:
        found = ep.load()
    except Exception as exc:  # a broken plug-in must not take the product down
        _PROBLEMS[ep.name] = f"cannot load {ep.value}: {type(exc).__name__}: {exc}"
        return False
    if not isinstance(found, Ruleset):
        _PROBLEMS[ep.name] = f"{ep.value} is not a ruleset (missing parts of domain.rulesets.Ruleset)"
        return False
    if found.id != ep.name:
        _PROBLEMS[ep.name] = f"{ep.value} has id {found.id!r}, not the entry point's name {ep.name!r}"
        return False
    _REGISTRY.setdefault(found.id, found)
    return True


def rediscover() -> None:
    """Forget what was discovered (after the set of installed packages changed), keeping rulesets
    added with :func:`register`."""
    global _DISCOVERED
    for name in [n for n, r in _REGISTRY.items() if n not in _MANUAL]:
        del _REGISTRY[name]
    _PROBLEMS.clear()
    _DISCOVERED = False


def get_ruleset(ruleset_id: str) -> Ruleset:
    if ruleset_id not in _REGISTRY and not _DISCOVERED:
        # only the plug-ins of that name (a ruleset's id is its entry point's name): a process that
        # folds one system's campaigns (a rebuild, a worker, an export) imports that system only
        for ep in metadata.entry_points(group=ENTRY_POINT_GROUP, name=ruleset_id):
            if _load(ep):
                break
    if ruleset_id not in _REGISTRY:
        _discover()
    try:
        return _REGISTRY[ruleset_id]
    except KeyError:
        known = ", ".join(sorted(_REGISTRY))
        raise InvalidInput(f"unknown ruleset {ruleset_id!r} (known: {known})", field="ruleset") from None


def available() -> list[str]:
    _discover()
    return sorted(_REGISTRY)


def default_ruleset() -> str:
    """The ruleset a campaign gets when none is named: the installed one that declares itself the
    product's default (``default = True``), else the only one installed."""
    _discover()
    marked = sorted(r.id for r in _REGISTRY.values() if getattr(r, "default", False))
    if marked:
        return marked[0]
    if len(_REGISTRY) == 1:
        return next(iter(_REGISTRY))
    raise InvalidInput("name a ruleset: none is marked as the default", field="ruleset")


def problems() -> dict[str, str]:
    """Entry points that could not be loaded, with the reason (shown by ``chronicle rulesets``)."""
    _discover()
    return dict(_PROBLEMS)
