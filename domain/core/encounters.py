"""The core encounter engine: encounters, initiative, rounds, turns and time for every ruleset.

The engine folds the core table facts of ``domain/core/catalogue.py`` (``EncounterStarted``,
``CreatureJoinedEncounter``, ``SurpriseDetermined``, ``InitiativeRolled``,
``InitiativeTieBroken``, ``InitiativeOrderChosen``, ``TurnStarted``, ``TurnEnded``,
``TurnDelayed``, ``DelayedTurnTaken``, ``ActionReadied``, ``ReadiedActionTriggered``,
``ActionTaken``, ``EncounterEnded``, ``TimeAdvanced``, ``TimeSet``) into an :class:`Encounter`
(RULES.md C1.1 encounter projection) kept in ``TableState.encounters``. Everything that differs
between game systems comes from one small hook object the ruleset supplies.

Using it (a ruleset)::

    from domain.core import encounters as core

    class MyRules(core.Rules):          # defaults for every hook; override what differs
        actions = core.ActionTable(kinds=(...), turn_bound=(...), budgets=(...))
        def initiative_entry(self, state, enc, creatures, payload, ctx):
            return {"rank": [total], "score": total}

    RULES = MyRules()
    HANDLERS = {**my_handlers, **core.handlers(RULES)}   # the ledger stays unchanged

and on the ruleset object: ``encounter_rules = RULES`` (the command service reads the dice of
owed rolls there), ``pending_rolls(state) -> core.pending_rolls(state, RULES)`` and
``encounter_view(state, eid) -> core.view(state, state.encounters[eid], RULES)`` plus its own
keys. The state is the core ``TableState`` (``state.encounters``, ``state.active_encounter``,
``state.minutes``).

Turn boundaries (RULES.md ruling 18, C0.6)
------------------------------------------
An encounter is ``setup`` until every participant has an initiative and no tie is open; then
it is ``running`` and its ``phase`` is ``between_turns`` or ``in_turn``. Nothing starts a turn
but ``TurnStarted``: ending a turn (``TurnEnded``) or delaying (``TurnDelayed``) leaves the
encounter *between turns*, a moment that can be read (``view``: ``turn_of`` is null,
``next_turn_of`` names who starts next) and in which a delaying creature re-enters
(``DelayedTurnTaken``: after the turn that just ended, acting at once). The round number
advances at the first ``TurnStarted`` of the new round. The start and the end of a turn run
the ruleset's derived steps (``turn_started`` / ``turn_ended`` hooks: ongoing damage, saves'
consequences, expiries ...); they are never stored, so a correction refolds them.

``TurnStarted`` starts the next creature in the order that takes a turn: dead creatures
(ruling 8 / 20) and surprised creatures in the surprise round (round 0) are skipped, as is
anyone the ruleset's ``skip_turn`` names; a delaying creature whose old place comes round
again loses its delayed turn (its end-of-turn steps run) and takes its regular turn. A creature
killed by its own start-of-turn steps loses the turn and the next one starts.

Rolls owed (no silent dice). A turn cannot end while the ruleset's ``rolls_owed_at_turn_end``
lists anything, and the first ``TurnStarted`` of a new round is refused while
``rolls_owed_between_rounds`` does (e.g. d20 stabilisation rolls, ruling 26): both refuse
with ``ROLLS_PENDING`` and ``details = {"owed": [...]}`` (see :func:`describe`). Owed rolls are
facts the table records with their dice; :func:`pending_rolls` lists what is owed now.

Initiative. ``initiative_entry`` turns an ``InitiativeRolled`` payload into an entry with a
``rank`` (a list of whole numbers; the higher rank acts first, compared item by item: e.g.
``[score, bonus]`` for RULES.md A1 and A3 (SW-4, DH-3), ``[band, hero, die]`` for A2 (HS-2,
B-HS-18), ``[score]`` for A4 (OR-5)) plus any keys the ruleset shows. Equal ranks are a tie the table
settles with ``InitiativeTieBroken`` (a die or a coin, with the rolls) or
``InitiativeOrderChosen`` (players or GM choose). A group rolls once (``InitiativeRolled``
with ``group`` and its ``creatures``; B-OR-14): its members share the entry and act
consecutively in the order listed (``InitiativeOrderChosen`` naming exactly the members
re-orders them). With ``reroll_each_round`` (A2: HS-2) rolls recorded while the
encounter runs are for the next round, whose order is settled when it starts.

The hook protocol (:class:`EncounterRules`; :class:`Rules` gives every default)
-----------------------------------------------------------------------------
Data:

* ``actions``: the :class:`ActionTable` (kinds; which are turn-bound; the allowed per-turn
  budgets; substitutions; free kinds; triggered kinds limited once per round / once per other
  creature's turn, with their refusal codes; the surprise-round limit; what readying costs).
* ``reroll_each_round``: initiative re-rolled every round (False: fixed for the encounter).
* ``owed_rolls``: fact type -> ``(label, dice)`` for the rolls a ruleset owes.
* ``skip_texts``: the words for skipped turns (``dead``, ``surprised``).

Questions (pure, no change):

* ``initiative_entry(state, enc, creatures, payload, ctx) -> dict`` with ``rank``.
* ``is_dead(state, cid)``; ``skip_turn(state, enc, cid) -> reason | None``.
* ``cannot_delay(state, enc, cid) -> reason | None``.
* ``action_limit(state, enc, cid) -> (ActionLimit, reason | None)``: what its conditions allow.
* ``enforce_turns(state) -> bool``: False records refused actions with a note instead.
* ``rolls_owed_at_turn_end(state, enc, cid)`` and ``rolls_owed_between_rounds(state, enc)``:
  lists of ``(fact_type, payload without its roll)``.

Derived steps (may change state; return a JSON report merged into the fact's outcome):

* ``encounter_started``, ``surprise_determined``, ``round_started``, ``encounter_ended``:
  ``(state, enc, ctx)``;
* ``turn_started``, ``turn_ended``, ``turn_delayed``: ``(state, enc, cid, ctx)``.

The engine checks every precondition of a core fact before its first change (a refused command
stores nothing; during a refold the same refusal orphans the fact), so the derived-step hooks
must not refuse once they have changed something. ``ActionLimit`` (from ``action_limit`` and
the table's surprise-round limit) caps the number of turn-bound actions (``turn_actions``),
which kinds are allowed at all (``kinds``), free and triggered actions, with its refusal code.

For a ruleset's own facts: :func:`with_action` (a fact that uses an action through the
economy), :func:`check_action` / :func:`commit_action`, :func:`running_for`,
:func:`encounter_of`, :func:`require` (a precondition a GM override may waive),
:func:`next_turn_passed` (durations), :func:`resort_remaining` (an initiative changed for the
current round, e.g. B-HS-18 knock-back). They may read and write ``enc.turn_log`` (per-turn
bookkeeping: ``actions``, ``acted``, ``extra`` actions granted e.g. by an action point, and
anything of their own) and ``enc.round_log`` (bookkeeping between two rounds, cleared when a
round starts; e.g. which stabilisation rolls were made).

Facts stored before ruling 18 (payload v1) keep their meaning through flags the catalogue's
upcasters set: ``TurnEnded.start_next`` / ``TurnDelayed.start_next`` (the next turn started
too), ``InitiativeRolled.start_turn`` / ``InitiativeTieBroken.start_turn`` (the fact that
settled the order started the first turn), ``DelayedTurnTaken.queued`` (re-entry after the
turn in progress). New facts leave them false.

Turn numbers. ``enc.turn_log["turn_no"]`` counts the turns started in the encounter;
``enc.turn_started[cid]`` is the number of ``cid``'s last (not resumed) start. "Until the
start / end of X's next turn" means the first turn of X that starts after the effect was
applied (:func:`next_turn_passed`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from domain import dice
from domain.core.catalogue import copy_json
from domain.errors import InvalidInput, Lazy, NotFound, RuleViolation

SETUP, RUNNING, ENDED = "setup", "running", "ended"
IN_TURN, BETWEEN = "in_turn", "between_turns"

Handler = Callable[[Any, dict[str, Any], Any], dict[str, Any]]
Owed = tuple[str, dict[str, Any]]
MINUTES_PER_DAY = 1440


# ------------------------------------------------------------------ the hook protocol
@dataclass(frozen=True)
class ActionLimit:
    """What a creature may do under a condition (or in the surprise round).

    ``turn_actions``: None = the table's budgets; n = at most n turn-bound actions per turn (plus
    extra actions granted this turn, when n > 0). ``code`` / ``text`` make the refusal."""

    turn_actions: int | None = None
    free: bool = True
    triggered: bool = True
    code: str = "NO_ACTION_LEFT"
    text: str = ""
    kinds: tuple[str, ...] | None = None  # the turn-bound kinds allowed at all (None: every one)


NO_LIMIT = ActionLimit()


@dataclass(frozen=True)
class ActionTable:
    """A ruleset's action economy, as data."""

    kinds: tuple[str, ...]  # every action kind
    turn_bound: tuple[str, ...]  # only on the creature's own turn, counted against the budgets
    budgets: tuple[Mapping[str, int], ...]  # the allowed sets of turn-bound actions in one turn
    free: tuple[str, ...] = ("free",)
    substitutions: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # kind -> taken instead of
    once_per_round: Mapping[str, str] = field(default_factory=dict)  # kind -> refusal code (own turn start..)
    once_per_turn: Mapping[str, str] = field(default_factory=dict)  # kind -> code (per other creature's turn)
    surprise_round: ActionLimit | None = None  # the limit for aware creatures in round 0
    ready_cost: str = "standard"  # readying an action takes one of these
    readied_kind: str = "immediate"  # a triggered readied action is taken as this kind
    budget_text: str = ""  # appended to NO_ACTION_LEFT refusals

    @property
    def triggered(self) -> tuple[str, ...]:
        return (*self.once_per_round, *self.once_per_turn)


class EncounterRules(Protocol):
    """What a ruleset tells the engine (see the module docstring). :class:`Rules` has defaults."""

    @property
    def actions(self) -> ActionTable: ...

    @property
    def reroll_each_round(self) -> bool: ...

    @property
    def owed_rolls(self) -> Mapping[str, tuple[str, str]]: ...

    @property
    def skip_texts(self) -> Mapping[str, str]: ...

    def initiative_entry(
        self, state: Any, enc: Encounter, creatures: list[str], payload: dict[str, Any], ctx: Any
    ) -> dict[str, Any]: ...

    def is_dead(self, state: Any, cid: str) -> bool: ...

    def skip_turn(self, state: Any, enc: Encounter, cid: str) -> str | None: ...

    def cannot_delay(self, state: Any, enc: Encounter, cid: str) -> str | None: ...

    def action_limit(self, state: Any, enc: Encounter | None, cid: str) -> tuple[ActionLimit, str | None]: ...

    def enforce_turns(self, state: Any) -> bool: ...

    def triggered_window(self, state: Any) -> str: ...

    def surprised_take_turns(self, state: Any) -> bool: ...

    def rolls_owed_at_turn_end(self, state: Any, enc: Encounter, cid: str) -> list[Owed]: ...

    def rolls_owed_between_rounds(self, state: Any, enc: Encounter) -> list[Owed]: ...

    def encounter_started(self, state: Any, enc: Encounter, ctx: Any) -> dict[str, Any]: ...

    def surprise_determined(self, state: Any, enc: Encounter, ctx: Any) -> dict[str, Any]: ...

    def round_started(self, state: Any, enc: Encounter, ctx: Any) -> dict[str, Any]: ...

    def turn_started(self, state: Any, enc: Encounter, cid: str, ctx: Any) -> dict[str, Any]: ...

    def turn_ended(self, state: Any, enc: Encounter, cid: str, ctx: Any) -> dict[str, Any]: ...

    def turn_delayed(self, state: Any, enc: Encounter, cid: str, ctx: Any) -> dict[str, Any]: ...

    def encounter_ended(self, state: Any, enc: Encounter, ctx: Any) -> dict[str, Any]: ...


class Rules:
    """Defaults for every hook: a d20 initiative (``rank = [total]``), no derived steps, nothing
    owed, no conditions. Subclass and override what the system needs."""

    actions: ActionTable = ActionTable(
        kinds=("standard", "move", "free"),
        turn_bound=("standard", "move"),
        budgets=({"standard": 1, "move": 1},),
    )
    reroll_each_round: bool = False
    owed_rolls: Mapping[str, tuple[str, str]] = {}
    skip_texts: Mapping[str, str] = {
        "dead": "dead (adopted ruling 8)",
        "surprised": "surprised: no turn in the surprise round",
    }

    def initiative_entry(
        self, state: Any, enc: Encounter, creatures: list[str], payload: dict[str, Any], ctx: Any
    ) -> dict[str, Any]:
        total = dice.roll_total(payload["roll"])
        return {"rank": [total], "score": total}

    def is_dead(self, state: Any, cid: str) -> bool:
        return getattr(state.creatures[cid], "life", None) == "dead"

    def skip_turn(self, state: Any, enc: Encounter, cid: str) -> str | None:
        return None

    def cannot_delay(self, state: Any, enc: Encounter, cid: str) -> str | None:
        return None

    def action_limit(self, state: Any, enc: Encounter | None, cid: str) -> tuple[ActionLimit, str | None]:
        return NO_LIMIT, None

    def enforce_turns(self, state: Any) -> bool:
        return True

    def triggered_window(self, state: Any) -> str:
        """When a once-per-round kind (``ActionTable.once_per_round``) is open again: ``own_turn``
        (at the start of the creature's own turn) or ``round`` (at the start of each round)."""
        return "own_turn"

    def surprised_take_turns(self, state: Any) -> bool:
        """Whether a surprised creature has its turn in the surprise round (its conditions then say
        what it may do); by default it has none."""
        return False

    def rolls_owed_at_turn_end(self, state: Any, enc: Encounter, cid: str) -> list[Owed]:
        return []

    def rolls_owed_between_rounds(self, state: Any, enc: Encounter) -> list[Owed]:
        return []

    def encounter_started(self, state: Any, enc: Encounter, ctx: Any) -> dict[str, Any]:
        return {}

    def surprise_determined(self, state: Any, enc: Encounter, ctx: Any) -> dict[str, Any]:
        return {}

    def round_started(self, state: Any, enc: Encounter, ctx: Any) -> dict[str, Any]:
        return {}

    def turn_started(self, state: Any, enc: Encounter, cid: str, ctx: Any) -> dict[str, Any]:
        return {}

    def turn_ended(self, state: Any, enc: Encounter, cid: str, ctx: Any) -> dict[str, Any]:
        return {}

    def turn_delayed(self, state: Any, enc: Encounter, cid: str, ctx: Any) -> dict[str, Any]:
        return {}

    def encounter_ended(self, state: Any, enc: Encounter, ctx: Any) -> dict[str, Any]:
        return {}


# ------------------------------------------------------------------ the encounter
class Encounter:
    """One encounter's order of play (RULES.md C1.1 encounter projection). Plain data."""

    __slots__ = (
        "id",
        "name",
        "participants",
        "state",  # setup | running | ended
        "phase",  # between_turns | in_turn
        "initiative",  # cid -> entry ({"rank": [...], ...}) for the current round's order
        "upcoming",  # cid -> entry for the next round (initiative re-rolled each round)
        "order",
        "round",  # 0 = the surprise round
        "turn_index",  # in a turn: whose; between turns: whose turn ended last (-1: none yet)
        "surprised",
        "surprise_round",
        "delayed",
        "resuming",  # re-entered delaying creatures waiting for the current turn to end (v1 facts)
        "readied",
        "turn_log",  # this (or the last) turn's bookkeeping; "turn_no" counts turns started
        "round_log",  # bookkeeping between two rounds (cleared when a round starts)
        "turn_started",  # cid -> number of its last (not resumed) turn start
        "windows",  # cid -> once-per-round kinds used since its own turn started
        "started_at",
    )

    id: str
    name: str
    participants: list[str]
    state: str
    phase: str
    initiative: dict[str, dict[str, Any]]
    upcoming: dict[str, dict[str, Any]]
    order: list[str]
    round: int
    turn_index: int
    surprised: list[str]
    surprise_round: bool
    delayed: list[str]
    resuming: list[str]
    readied: dict[str, dict[str, Any]]
    turn_log: dict[str, Any]
    round_log: dict[str, Any]
    turn_started: dict[str, int]
    windows: dict[str, list[str]]
    started_at: int

    @classmethod
    def new(cls, eid: str, name: str, participants: list[str], seq: int) -> Encounter:
        e = object.__new__(cls)
        e.id, e.name, e.participants = eid, name, list(participants)
        e.state, e.phase = SETUP, BETWEEN
        e.initiative, e.upcoming, e.order = {}, {}, []
        e.round, e.turn_index = 0, -1
        e.surprised, e.surprise_round, e.delayed, e.resuming, e.readied = [], False, [], [], {}
        e.turn_log, e.round_log, e.turn_started, e.windows = {"turn_no": 0}, {}, {}, {}
        e.started_at = seq
        return e

    def clone(self) -> Encounter:
        e = object.__new__(type(self))
        for name in Encounter.__slots__:
            object.__setattr__(e, name, copy_json(getattr(self, name)))
        return e

    @property
    def current(self) -> str | None:
        """The creature whose turn is in progress (None between turns, in setup, after the end)."""
        if self.state != RUNNING or self.phase != IN_TURN or not 0 <= self.turn_index < len(self.order):
            return None
        return self.order[self.turn_index]

    @property
    def turn_no(self) -> int:
        return int(self.turn_log.get("turn_no", 0))


def next_turn_passed(enc: Encounter, cid: str, applied_turn: int | None) -> bool:
    """Whether ``cid``'s "next turn" after a moment numbered ``applied_turn`` has started."""
    return int(enc.turn_started.get(cid, 0)) > (-1 if applied_turn is None else int(applied_turn))


# ------------------------------------------------------------------ small helpers
def require(ok: bool, message: str, code: str, ctx: Any, field: str | None = None, **details: Any) -> None:
    """A rule's precondition: refuse (or orphan) unless the GM waived it with an override."""
    if not ok and not getattr(ctx, "waived", False):
        raise RuleViolation(message, field=field, code=code, details=details or None)


def _name(state: Any, cid: str) -> str:
    c = state.creatures.get(cid)
    return str(getattr(c, "name", None) or cid)


def encounter_of(state: Any, eid: str, *, running: bool = False) -> Encounter:
    enc: Encounter | None = state.encounters.get(eid)
    if enc is None:
        raise NotFound(f"no encounter {eid!r} in this campaign", field="encounter_id")
    if enc.state == ENDED or state.active_encounter != eid:
        raise RuleViolation(
            f"encounter {enc.name or eid!r} has ended", field="encounter_id", code="ENCOUNTER_ENDED"
        )
    if running and enc.state != RUNNING:
        raise RuleViolation(
            f"encounter {enc.name or eid!r} has no turns yet: every participant needs an initiative "
            f"and every tie a tie-break (waiting for: {_missing(enc, enc.initiative) or 'none'}; "
            f"unresolved: {unresolved_ties(enc.initiative, enc.participants) or 'none'})",
            field="encounter_id",
            code="ENCOUNTER_NOT_RUNNING",
        )
    return enc


def participant(state: Any, enc: Encounter, cid: str, field: str = "creature") -> Any:
    if cid not in state.creatures:
        raise NotFound(f"no creature {cid!r} in this campaign", field=field)
    if cid not in enc.participants:
        raise RuleViolation(
            f"{_name(state, cid)} is not in encounter {enc.name or enc.id!r}",
            field=field,
            code="NOT_IN_ENCOUNTER",
        )
    return state.creatures[cid]


def running_for(state: Any, cid: str) -> Encounter | None:
    """The running encounter this creature takes part in, if any."""
    enc: Encounter | None = state.encounter
    if enc is None or enc.state != RUNNING or cid not in enc.participants:
        return None
    return enc


def _not_dead(state: Any, rules: EncounterRules, cid: str, ctx: Any, field: str = "creature") -> None:
    if rules.is_dead(state, cid):  # (the message is built only when it is needed)
        require(False, f"{_name(state, cid)} is dead", "CREATURE_DEAD", ctx, field)


# ------------------------------------------------------------------ ordering
def _unit(entries: Mapping[str, dict[str, Any]], cid: str) -> str:
    return str(entries[cid].get("group") or cid)


def _units(entries: Mapping[str, dict[str, Any]], participants: Sequence[str]) -> dict[str, list[str]]:
    """Each unit (a creature, or a group) with its members in the order they act."""
    out: dict[str, list[str]] = {}
    for cid in participants:
        if cid in entries:
            out.setdefault(_unit(entries, cid), []).append(cid)
    for members in out.values():
        members.sort(key=lambda m: int(entries[m].get("member_rank", 0)))
    return out


def _rank(entry: dict[str, Any]) -> tuple[int, ...]:
    return tuple(int(x) for x in entry["rank"])


def unresolved_ties(entries: Mapping[str, dict[str, Any]], participants: Sequence[str]) -> list[list[str]]:
    """Units (creatures or groups) with equal ranks whose order the table has not recorded."""
    by: dict[tuple[int, ...], list[str]] = {}
    for unit, members in _units(entries, participants).items():
        by.setdefault(_rank(entries[members[0]]), []).append(unit)
    out = []
    for units in by.values():
        if len(units) > 1 and any(
            entries[_units(entries, participants)[u][0]].get("tie_with") != sorted(units) for u in units
        ):
            out.append(sorted(units))
    return out


def sort_order(entries: Mapping[str, dict[str, Any]], participants: Sequence[str]) -> list[str]:
    """Highest rank first, then the recorded tie order; a group's members consecutively.
    Participants without an entry (dead ones, when initiative is re-rolled) come last."""
    units = _units(entries, participants)
    first = {u: i for i, u in enumerate(units)}
    ordered = sorted(
        units,
        key=lambda u: (
            tuple(-x for x in _rank(entries[units[u][0]])),
            int(entries[units[u][0]].get("tie_rank", 0)),
            first[u],
        ),
    )
    order = [m for u in ordered for m in units[u]]
    return order + [cid for cid in participants if cid not in entries]


def _missing(
    enc: Encounter, entries: Mapping[str, dict[str, Any]], rules: Any = None, state: Any = None
) -> list[str]:
    return [
        cid
        for cid in enc.participants
        if cid not in entries and not (rules is not None and rules.is_dead(state, cid))
    ]


def _settled(enc: Encounter, entries: Mapping[str, dict[str, Any]], rules: Any, state: Any) -> bool:
    return not _missing(enc, entries, rules, state) and not unresolved_ties(entries, enc.participants)


def resort_remaining(enc: Encounter) -> None:
    """Re-sort, by their entries as they are now, the creatures still to act this round (e.g. an
    initiative knocked back for the current round, B-HS-18); those who acted keep their places."""
    done = enc.order[: enc.turn_index + 1]
    enc.order = done + [cid for cid in sort_order(enc.initiative, enc.participants) if cid not in done]


def _move(enc: Encounter, cid: str, index_of: Callable[[list[str]], int]) -> None:
    """Move ``cid`` in the order; ``turn_index`` keeps pointing at the same creature."""
    anchor = enc.order[enc.turn_index] if 0 <= enc.turn_index < len(enc.order) else None
    order = [x for x in enc.order if x != cid]
    order.insert(index_of(order), cid)
    enc.order = order
    if anchor is not None:
        enc.turn_index = order.index(anchor)


# ------------------------------------------------------------------ the turn machinery
def peek(state: Any, enc: Encounter, rules: EncounterRules) -> tuple[str | None, bool]:
    """Who would start the next turn, and whether that start begins a new round. Changes nothing.

    (A creature killed by its own start-of-turn steps is not foreseen.)"""
    if enc.state != RUNNING or enc.phase == IN_TURN or not enc.order:
        return None, False
    order, i, rnd, wraps = enc.order, enc.turn_index, enc.round, False
    for _ in range(2 * len(order) + 2):
        i += 1
        if i >= len(order):
            if rules.reroll_each_round:
                if not _settled(enc, enc.upcoming, rules, state):
                    return None, True
                order = sort_order(enc.upcoming, enc.participants)
            i, rnd, wraps = 0, rnd + 1, True
        cid = order[i]
        if cid in enc.resuming:
            return cid, wraps
        if (
            rules.is_dead(state, cid)
            or (rnd == 0 and cid in enc.surprised and not rules.surprised_take_turns(state))
            or rules.skip_turn(state, enc, cid)
        ):
            continue
        return cid, wraps
    return None, wraps


def _new_round(state: Any, enc: Encounter, rules: EncounterRules, ctx: Any, report: dict[str, Any]) -> None:
    if rules.reroll_each_round:
        enc.initiative, enc.upcoming = enc.upcoming, {}
        enc.order = sort_order(enc.initiative, enc.participants)
    if enc.round == 0:
        enc.surprise_round = False  # the surprise round ends once every aware creature has acted
    enc.round += 1
    enc.round_log = {}
    if rules.triggered_window(state) == "round":
        enc.windows = {}  # every once-per-round window reopens with the round
    report.setdefault("rounds", []).append({"round": enc.round, **rules.round_started(state, enc, ctx)})


def _begin(
    state: Any, enc: Encounter, rules: EncounterRules, cid: str, resume: bool, ctx: Any
) -> dict[str, Any]:
    enc.turn_log = {"turn_no": enc.turn_no + 1, "creature": cid}
    enc.phase = IN_TURN
    if resume:  # a delayed turn resumed: its start-of-turn steps happened when it delayed
        return {"creature": cid, "round": enc.round, "resumed_delayed_turn": True}
    if rules.triggered_window(state) == "own_turn":
        enc.windows.pop(cid, None)  # its once-per-round window reopens (e.g. B-SW-31)
    enc.turn_started[cid] = enc.turn_no
    enc.readied.pop(cid, None)  # an untriggered readied action is lost at its next turn
    return {"creature": cid, "round": enc.round, **rules.turn_started(state, enc, cid, ctx)}


def _advance(state: Any, enc: Encounter, rules: EncounterRules, ctx: Any, report: dict[str, Any]) -> None:
    """Start the next turn that can be taken (see the module docstring)."""
    if enc.turn_no == 0 and enc.turn_index < 0:  # the encounter's first turn: its first round begins
        first = rules.round_started(state, enc, ctx)
        if any(first.values()):
            report.setdefault("rounds", []).append({"round": enc.round, **first})
    for _ in range(2 * len(enc.order) + 2):
        i = enc.turn_index + 1
        if i >= len(enc.order):
            _new_round(state, enc, rules, ctx, report)
            i = 0
        enc.turn_index = i
        cid = enc.order[i]
        resume = cid in enc.resuming
        if resume:
            enc.resuming = [x for x in enc.resuming if x != cid]
        if rules.is_dead(state, cid):
            report["turns"].append({"creature": cid, "skipped": rules.skip_texts["dead"]})
            continue
        if enc.round == 0 and cid in enc.surprised and not rules.surprised_take_turns(state):
            report["turns"].append({"creature": cid, "skipped": rules.skip_texts["surprised"]})
            continue
        reason = rules.skip_turn(state, enc, cid)
        if reason:
            report["turns"].append({"creature": cid, "skipped": reason})
            continue
        if cid in enc.delayed:  # its old place came round: the delayed turn is lost
            enc.delayed = [d for d in enc.delayed if d != cid]
            enc.phase = IN_TURN
            lost = rules.turn_ended(state, enc, cid, ctx)
            report["turns"].append({"creature": cid, "lost_delayed_turn": True, **lost})
        report["turns"].append(_begin(state, enc, rules, cid, resume, ctx))
        if rules.is_dead(state, cid):  # its start of turn killed it: the turn is over
            enc.phase = BETWEEN
            continue
        return
    enc.phase = BETWEEN  # nobody can take a turn


def describe(rules: EncounterRules, owed: Sequence[Owed], state: Any = None) -> list[dict[str, Any]]:
    """Owed rolls as plain JSON: ``type`` (the fact to record), ``kind`` (its label), ``creature``,
    ``effect_id`` (or None), ``dice`` (the expression: the ruleset's ``owed_dice`` for this
    state when it has one, else ``owed_rolls``) and the ``payload`` without its roll."""
    out = []
    dice_of = getattr(rules, "owed_dice", None) if state is not None else None
    for fact_type, payload in owed:
        label, expression = rules.owed_rolls.get(fact_type, (fact_type, "1d20"))
        if dice_of is not None:
            expression = dice_of(state, fact_type, payload) or expression
        out.append(
            {
                "type": fact_type,
                "kind": label,
                "creature": payload.get("creature"),
                "effect_id": payload.get("effect_id"),
                "dice": expression,
                "payload": dict(payload),
            }
        )
    return out


def _owed_refusal(state: Any, rules: EncounterRules, owed: list[Owed], what: str, ctx: Any) -> None:
    """Refuse (ROLLS_PENDING) while rolls are owed. In a refold after a far-reaching correction
    most turn ends are orphaned this way and nobody reads the details then: the message is
    written at once from the labels, names and effect ids alone (the orphan log keeps it), the
    details (``describe``) are made when read (:class:`~domain.errors.Lazy`; ``owed`` is this
    refusal's own list) -- unless the ruleset's dice depend on the state (``owed_dice``)."""
    if not owed or getattr(ctx, "waived", False):
        return
    labels, creatures = rules.owed_rolls, state.creatures
    parts = []
    for fact_type, payload in owed:
        cid, eid = payload.get("creature"), payload.get("effect_id")
        who = str(getattr(creatures.get(cid), "name", None) or cid) if cid else "the table"
        label = labels[fact_type][0] if fact_type in labels else fact_type
        parts.append(f"a {label} for {who} against {eid}" if eid else f"a {label} for {who}")
    details: dict[str, Any] | Lazy
    if getattr(rules, "owed_dice", None) is not None:
        details = {"owed": describe(rules, owed, state)}
    else:
        details = Lazy(lambda: {"owed": describe(rules, owed)})
    raise RuleViolation(
        f"{what} still owes {', '.join(parts)}", field="encounter_id", code="ROLLS_PENDING", details=details
    )


def pending_rolls(state: Any, rules: EncounterRules) -> list[Owed]:
    """What the table owes now: the rolls of the turn in progress before it can end, or between
    turns, the rolls owed before the next round can start."""
    enc: Encounter | None = state.encounter
    if enc is None or enc.state != RUNNING:
        return []
    cid = enc.current
    if cid is not None:
        return rules.rolls_owed_at_turn_end(state, enc, cid)
    _, wraps = peek(state, enc, rules)
    return rules.rolls_owed_between_rounds(state, enc) if wraps else []


# ------------------------------------------------------------------ the action economy
def action_problem(
    state: Any, enc: Encounter, rules: EncounterRules, cid: str, action: str
) -> tuple[str, str] | None:
    """Why ``cid`` may not take an ``action`` now (own turn, budgets, triggered windows, its
    conditions' limits, the surprise round), as (message, code); None if it may."""
    table = rules.actions
    limit, why = rules.action_limit(state, enc, cid)
    if action in table.free:
        return None if limit.free else (f"{_name(state, cid)} is {why} and cannot act", limit.code)
    if action in table.triggered:
        if not limit.triggered:
            return (f"{_name(state, cid)} is {why}: no {action} actions", limit.code)
        if action in table.once_per_round and action in enc.windows.get(cid, ()):
            return (
                f"{_name(state, cid)} has already taken an {action} action since the start of its last turn",
                table.once_per_round[action],
            )
        if action in table.once_per_turn:
            if enc.current == cid:
                return (f"{action} actions are taken on other creatures' turns", "OWN_TURN")
            if cid in enc.turn_log.get("triggered", {}).get(action, ()):
                return (
                    f"{_name(state, cid)} has already taken an {action} action this turn",
                    table.once_per_turn[action],
                )
        return None
    if enc.current != cid:
        if enc.current is None:
            return (
                f"no turn is in progress: {_name(state, cid)} takes a {action} action on its own turn",
                "NO_TURN",
            )
        return (
            f"{_name(state, cid)} can take a {action} action only on its own turn "
            f"(it is {_name(state, enc.current)}'s turn)",
            "NOT_YOUR_TURN",
        )
    taken: dict[str, int] = {}  # action kind -> how many this turn, this one included
    for k in (*enc.turn_log.get("actions", ()), action):
        taken[k] = taken.get(k, 0) + 1
    extra: dict[str, int] = enc.turn_log.get("extra", {})
    count = sum(taken.values())
    surprise = table.surprise_round
    if (
        enc.round == 0
        and surprise is not None
        and (
            count > (surprise.turn_actions or 0)
            or (surprise.kinds is not None and action not in surprise.kinds)
        )
    ):
        return (surprise.text or "the surprise round allows no more actions", surprise.code)
    if limit.kinds is not None and action not in limit.kinds:
        return (f"{_name(state, cid)} is {why}: {limit.text or f'no {action} action'}", limit.code)
    if limit.turn_actions is not None:
        allowed = limit.turn_actions + (sum(extra.values()) if limit.turn_actions else 0)
        if count > allowed:
            return (f"{_name(state, cid)} is {why}: {limit.text or 'no more actions'}", limit.code)
        return None
    if not _within_a_budget(taken, extra, table):
        return (
            f"{_name(state, cid)} has no {action} action left this turn {table.budget_text}".strip(),
            "NO_ACTION_LEFT",
        )
    return None


def _within_a_budget(taken: Mapping[str, int], extra: Mapping[str, int], table: ActionTable) -> bool:
    """Whether the turn-bound actions ``taken`` fit one of the table's budgets (each kind raised
    by its ``extra`` actions): ``any(all(...))`` as loops (every attack asks)."""
    kinds = table.turn_bound
    for budget in table.budgets:
        for k in kinds:
            if taken.get(k, 0) > budget.get(k, 0) + extra.get(k, 0):
                break
        else:
            return True
    return False


def check_action(
    state: Any,
    enc: Encounter,
    rules: EncounterRules,
    cid: str,
    action: str,
    ctx: Any,
    *,
    gm_exception: bool = False,
) -> dict[str, Any]:
    """Refuse an action the economy does not allow, unless the GM makes an exception (recorded
    in the fact) or the ruleset does not enforce turns (noted in the outcome)."""
    problem = action_problem(state, enc, rules, cid, action)
    if problem is None:
        return {}
    message, code = problem
    if not rules.enforce_turns(state):
        return {"not_enforced": message}
    if gm_exception:
        return {"gm_exception": message}
    require(False, message, code, ctx, "action")
    return {"waived": message}


def commit_action(enc: Encounter, rules: EncounterRules, cid: str, action: str) -> None:
    """Count an action that was allowed (call after every other check of the fact passed)."""
    table, log = rules.actions, enc.turn_log
    if action in table.turn_bound:
        log["actions"] = [*log.get("actions", ()), action]
    if enc.current == cid:
        log["acted"] = True
    if action in table.once_per_round:
        enc.windows[cid] = [*enc.windows.get(cid, ()), action]
    if action in table.once_per_turn:
        used = log.setdefault("triggered", {})
        used[action] = [*used.get(action, ()), cid]


def before_turns(
    state: Any, rules: EncounterRules, cid: str, action: str, ctx: Any, *, gm_exception: bool
) -> None:
    """Turn-bound actions need a turn: none while the order is not settled."""
    enc: Encounter | None = state.encounter
    if (
        enc is None
        or enc.state != SETUP
        or cid not in enc.participants
        or action not in rules.actions.turn_bound
    ):
        return
    if gm_exception or not rules.enforce_turns(state):
        return
    require(
        False,
        f"encounter {enc.name or enc.id!r} has no turns yet: initiative or a tie-break is missing "
        f"(unresolved: {unresolved_ties(enc.initiative, enc.participants) or 'none'})",
        "ENCOUNTER_NOT_RUNNING",
        ctx,
        "action",
    )


def with_action(rules: EncounterRules, handler: Handler, *, field: str, fixed: str | None = None) -> Handler:
    """Wrap a ruleset handler so that, in a running encounter, it uses an action (``fixed``, or
    the payload's ``action``) through the economy. The check runs before the handler and the
    budget changes only after it succeeds, so a refused or orphaned fact changes nothing. When no
    action is counted (none declared, or no running encounter), a creature whose conditions allow
    no action at all is still refused."""

    def wrapped(state: Any, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
        action = fixed or p.get("action")
        cid = p.get(field, "")
        known = cid in state.creatures
        if action is not None and action not in rules.actions.kinds:
            raise InvalidInput(f"action must be one of {', '.join(rules.actions.kinds)}", field="action")
        enc = running_for(state, cid) if known and action is not None else None
        note: dict[str, Any] = {}
        if known and action is not None:
            before_turns(state, rules, cid, action, ctx, gm_exception=False)
        if enc is not None and action is not None:
            _not_dead(state, rules, cid, ctx, field)
            note = check_action(state, enc, rules, cid, action, ctx)
        if known and enc is None and rules.enforce_turns(state):  # no action counted: still an act
            limit, why = rules.action_limit(state, state.encounter, cid)
            if not limit.free:
                require(False, f"{_name(state, cid)} is {why} and cannot act", limit.code, ctx, field)
        result = handler(state, p, ctx)
        if enc is not None and action is not None:
            commit_action(enc, rules, cid, action)
            result = {**result, "action": action, **note}
        return result

    wrapped.__doc__ = handler.__doc__
    return wrapped


# ------------------------------------------------------------------ the handlers
def handlers(rules: EncounterRules) -> dict[str, Handler]:
    """The core facts' handlers, bound to a ruleset's hooks (merge them into its HANDLERS)."""

    def encounter_started(state: Any, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
        """SW-1 / OR-3 / DH-1: the encounter begins; it is set up until every initiative is known."""
        eid, who = p["encounter_id"], p["participants"]
        if eid in state.encounters:
            raise RuleViolation(
                f"encounter {eid!r} already exists", field="encounter_id", code="ALREADY_EXISTS"
            )
        if state.active_encounter is not None:
            raise RuleViolation(
                f"encounter {state.active_encounter!r} is still running; end it first",
                field="encounter_id",
                code="ENCOUNTER_RUNNING",
            )
        if not who:
            raise InvalidInput("an encounter needs participants", field="participants")
        if len(set(who)) != len(who):
            raise InvalidInput("a creature takes part in an encounter only once", field="participants")
        for cid in who:
            if cid not in state.creatures:
                raise NotFound(f"no creature {cid!r} in this campaign", field="participants")
        enc = Encounter.new(eid, p["name"], who, ctx.seq)
        state.encounters[eid] = enc
        state.active_encounter = eid
        return {
            "encounter_id": eid,
            "participants": list(who),
            "state": enc.state,
            **rules.encounter_started(state, enc, ctx),
        }

    def creature_joined(state: Any, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
        """A creature joins an encounter. In setup it rolls initiative like everyone (the roll may
        come with it). Once turns run with a fixed order, it brings its initiative roll and takes
        its place by rank, after those of equal rank (if that place has passed, it first acts next
        round). With initiative re-rolled each round it acts last this round and rolls for the next."""
        enc = encounter_of(state, p["encounter_id"])
        cid = p["creature"]
        if cid not in state.creatures:
            raise NotFound(f"no creature {cid!r} in this campaign", field="creature")
        if cid in enc.participants:
            raise RuleViolation(
                f"{_name(state, cid)} is already in the encounter", field="creature", code="ALREADY_EXISTS"
            )
        _not_dead(state, rules, cid, ctx)
        fixed = enc.state == RUNNING and not rules.reroll_each_round
        if fixed and p["roll"] is None:
            raise InvalidInput(
                "joining a running encounter takes the creature's initiative roll", field="roll"
            )
        entry = rules.initiative_entry(state, enc, [cid], p, ctx) if p["roll"] is not None else None
        if entry is not None:
            _check_entry(entry)
        enc.participants = [*enc.participants, cid]
        out: dict[str, Any] = {"creature": cid, **(entry or {})}
        if enc.state == SETUP:
            if entry is not None:
                enc.initiative[cid] = entry
            return {**out, **_settle(state, enc, ctx, start=False)}
        if fixed:
            assert entry is not None
            enc.initiative[cid] = entry
            rank = _rank(entry)
            _move(enc, cid, lambda order: sum(1 for x in order if _rank(enc.initiative[x]) >= rank))
        else:
            if entry is not None:
                enc.upcoming[cid] = entry
            enc.order = [*enc.order, cid]
        return {**out, "order": list(enc.order)}

    def surprise_determined(state: Any, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
        """SW-5 / HS-3 / DH-1 / OR-4: the GM's surprise ruling; surprised creatures get no turn in round 0."""
        enc = encounter_of(state, p["encounter_id"])
        if enc.state != SETUP:
            raise RuleViolation(
                "surprise is determined before the first turn", field="surprised", code="ENCOUNTER_RUNNING"
            )
        surprised = p["surprised"]
        if len(set(surprised)) != len(surprised):
            raise InvalidInput("a creature is listed twice", field="surprised")
        for cid in surprised:
            participant(state, enc, cid, "surprised")
        enc.surprised = list(surprised)
        enc.surprise_round = bool(surprised)
        report = rules.surprise_determined(state, enc, ctx)
        return {
            "encounter_id": enc.id,
            "surprised": list(surprised),
            "surprise_round": enc.surprise_round,
            **report,
        }

    def _entries(state: Any, enc: Encounter, field: str) -> dict[str, dict[str, Any]]:
        """The entries initiative facts address: this order in setup, the next round's while running."""
        if enc.state == SETUP:
            return enc.initiative
        if rules.reroll_each_round:
            return enc.upcoming
        raise RuleViolation(
            "initiative is settled once, at the start of the encounter; the order changes only by "
            "delaying or readying",
            field=field,
            code="ENCOUNTER_RUNNING",
        )

    def _settle(state: Any, enc: Encounter, ctx: Any, *, start: bool) -> dict[str, Any]:
        """Once every initiative is known and no tie is open, the encounter runs (between turns)."""
        waiting = _missing(enc, enc.initiative)
        if waiting:
            return {"waiting_for": waiting}
        ties = unresolved_ties(enc.initiative, enc.participants)
        if ties:
            return {"unresolved_ties": ties}
        enc.order = sort_order(enc.initiative, enc.participants)
        enc.state, enc.phase, enc.turn_index = RUNNING, BETWEEN, -1
        enc.round = 0 if enc.surprised else 1
        enc.surprise_round = bool(enc.surprised)
        out: dict[str, Any] = {"order": list(enc.order), "round": enc.round}
        if start:  # v1 facts: settling the order started the first turn
            report: dict[str, Any] = {"turns": []}
            _advance(state, enc, rules, ctx, report)
            return {**out, "turn_of": enc.current, **report}
        return {**out, "turn_of": None, "next_turn_of": peek(state, enc, rules)[0]}

    def _after_order_fact(state: Any, enc: Encounter, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
        if enc.state == SETUP:
            return _settle(state, enc, ctx, start=bool(p.get("start_turn")))
        waiting = _missing(enc, enc.upcoming, rules, state)
        ties = unresolved_ties(enc.upcoming, enc.participants)
        return {
            "for_round": enc.round + 1,
            **({"waiting_for": waiting} if waiting else {}),
            **({"unresolved_ties": ties} if ties else {}),
        }

    def initiative_rolled(state: Any, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
        """SW-2/3, DH-3, OR-5, HS-2: one roll per creature (or per group, B-OR-14); the ruleset
        turns it into an entry with a rank."""
        enc = encounter_of(state, p["encounter_id"])
        group, creature = p.get("group"), p.get("creature")
        members = list(p.get("creatures") or [])
        field = "creatures" if group is not None else "creature"
        entries = _entries(state, enc, field)
        if (creature is None) == (group is None):
            raise InvalidInput(
                "an initiative roll names a creature, or a group with its creatures", field="creature"
            )
        if group is None and members:
            raise InvalidInput("'creatures' belong to a group roll: name the group", field="creatures")
        who = [creature] if creature is not None else members
        if not who or len(set(who)) != len(who):
            raise InvalidInput(
                "a group roll lists its creatures once each, in the order they act", field="creatures"
            )
        if group is not None and (group in enc.participants or group in state.creatures):
            raise InvalidInput("a group's id must not be a creature's", field="group")
        if group is not None and any(e.get("group") == group for e in entries.values()):
            raise RuleViolation(
                f"group {group!r} has already rolled initiative", field="group", code="ALREADY_ROLLED"
            )
        for cid in who:
            participant(state, enc, cid, field)
        for cid in who:
            if cid in entries:
                raise RuleViolation(
                    f"{_name(state, cid)} has already rolled initiative"
                    + (" for the next round" if enc.state == RUNNING else "")
                    + "; amend that fact to correct it",
                    field=field,
                    code="ALREADY_ROLLED",
                )
        entry = rules.initiative_entry(state, enc, who, p, ctx)
        _check_entry(entry)
        for rank, cid in enumerate(who):
            entries[cid] = {**entry, **({"group": group, "member_rank": rank} if group is not None else {})}
        head = {"creature": creature} if group is None else {"group": group, "creatures": who}
        return {**head, **entry, **_after_order_fact(state, enc, p, ctx)}

    def _tie_units(
        state: Any, enc: Encounter, entries: dict[str, dict[str, Any]], names: list[str]
    ) -> list[str]:
        if len(names) < 2 or len(set(names)) != len(names):
            raise InvalidInput("an order names two or more different creatures or groups", field="creatures")
        units = []
        groups = {e.get("group") for e in entries.values() if e.get("group")}
        for name in names:
            if name in groups:
                units.append(name)
                continue
            participant(state, enc, name, "creatures")
            if name not in entries:
                raise RuleViolation(
                    f"{_name(state, name)} has not rolled initiative", field="creatures", code="NOT_ROLLED"
                )
            units.append(_unit(entries, name))
        if len(set(units)) != len(units):
            raise InvalidInput("name a group once (by its id)", field="creatures")
        return units

    def _record_tie(
        enc: Encounter, entries: dict[str, dict[str, Any]], units: list[str], method: str
    ) -> None:
        members = _units(entries, enc.participants)
        for rank, unit in enumerate(units):
            for cid in members[unit]:
                entries[cid] = {
                    **entries[cid],
                    "tie_rank": rank,
                    "tie_with": sorted(units),
                    "tie_method": method,
                }

    def _whole_tie(state: Any, enc: Encounter, entries: dict[str, dict[str, Any]], units: list[str]) -> None:
        members = _units(entries, enc.participants)
        rank = _rank(entries[members[units[0]][0]])
        group = sorted(u for u, ms in members.items() if _rank(entries[ms[0]]) == rank)
        if sorted(units) != group:
            raise InvalidInput(f"the tie is among {', '.join(group)}: order all of them", field="creatures")

    def tie_broken(state: Any, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
        """SW-4, DH-3 / B-DH-10: equal scores go by the higher bonus (the rank decides: ``bonus``
        only confirms it); equal ranks by a die or a coin, recorded here with the rolls."""
        enc = encounter_of(state, p["encounter_id"])
        entries = _entries(state, enc, "creatures")
        units = _tie_units(state, enc, entries, p["creatures"])
        members = _units(entries, enc.participants)
        ranks = [_rank(entries[members[u][0]]) for u in units]
        if len({r[:1] for r in ranks}) != 1:
            raise RuleViolation("these do not have the same initiative", field="creatures", code="NOT_TIED")
        if p["method"] == "bonus":
            if any(a <= b for a, b in zip(ranks, ranks[1:], strict=False)):
                raise RuleViolation(
                    "by bonus, the higher initiative bonus goes first; equal bonuses need a die or a coin",
                    field="creatures",
                    code="TIE_ORDER_WRONG",
                )
        else:
            if len(set(ranks)) != 1:
                raise RuleViolation(
                    "the higher initiative bonus goes first: no die or coin is needed",
                    field="method",
                    code="BONUS_DECIDES",
                )
            _whole_tie(state, enc, entries, units)
            if p["rolls"] is not None:
                if p["method"] != "die" or len(p["rolls"]) != len(units):
                    raise InvalidInput(
                        "rolls: one die roll per creature, in the same order, for method 'die'", field="rolls"
                    )
                totals = [dice.roll_total(dice.validate_roll(r)) for r in p["rolls"]]
                if any(a <= b for a, b in zip(totals, totals[1:], strict=False)):
                    raise RuleViolation(
                        "the order does not follow the tie-break rolls (highest first, no ties)",
                        field="rolls",
                        code="TIE_ORDER_WRONG",
                    )
            _record_tie(enc, entries, units, p["method"])
        return {
            "creatures": list(p["creatures"]),
            "method": p["method"],
            **_after_order_fact(state, enc, p, ctx),
        }

    def order_chosen(state: Any, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
        """OR-5, HS-2 / B-HS-18, B-OR-14: the table chooses an order: among tied creatures or groups,
        or (naming exactly a group's members) the order in which a group's members act."""
        enc = encounter_of(state, p["encounter_id"])
        entries = _entries(state, enc, "creatures")
        names = list(p["creatures"])
        gids = {entries[n].get("group") if n in entries else None for n in names}
        if len(gids) == 1 and None not in gids:
            gid = gids.pop()
            group = [cid for cid in enc.participants if cid in entries and entries[cid].get("group") == gid]
            if sorted(names) != sorted(group) or len(set(names)) != len(names):
                raise InvalidInput(
                    f"order all of group {gid}'s members: {', '.join(group)}", field="creatures"
                )
            for rank, cid in enumerate(names):
                entries[cid] = {**entries[cid], "member_rank": rank}
            return {"group": gid, "creatures": names, **_after_order_fact(state, enc, p, ctx)}
        units = _tie_units(state, enc, entries, names)
        members = _units(entries, enc.participants)
        if len({_rank(entries[members[u][0]]) for u in units}) != 1:
            raise RuleViolation("these do not have the same initiative", field="creatures", code="NOT_TIED")
        _whole_tie(state, enc, entries, units)
        _record_tie(enc, entries, units, "choice")
        return {"creatures": names, "decided_by": p["decided_by"], **_after_order_fact(state, enc, p, ctx)}

    def turn_started(state: Any, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
        """Ruling 18 / C0.6: the next creature that takes a turn starts it (its start-of-turn steps
        run); the first start of a new round advances the round."""
        enc = encounter_of(state, p["encounter_id"], running=True)
        if enc.phase == IN_TURN:
            raise RuleViolation(
                f"{_name(state, enc.current or '')}'s turn is in progress: end it first",
                field="encounter_id",
                code="TURN_IN_PROGRESS",
            )
        nxt, wraps = peek(state, enc, rules)
        if nxt is None:
            if wraps and rules.reroll_each_round and not _settled(enc, enc.upcoming, rules, state):
                raise RuleViolation(
                    f"round {enc.round + 1} needs its initiative first (waiting for: "
                    f"{_missing(enc, enc.upcoming, rules, state) or 'none'}; unresolved: "
                    f"{unresolved_ties(enc.upcoming, enc.participants) or 'none'})",
                    field="encounter_id",
                    code="INITIATIVE_PENDING",
                )
            raise RuleViolation("no creature can take a turn", field="encounter_id", code="NO_TURN")
        if p.get("creature") is not None and p["creature"] != nxt:
            raise RuleViolation(
                f"it is {_name(state, nxt)}'s turn to start, not {_name(state, p['creature'])}'s",
                field="creature",
                code="NOT_YOUR_TURN",
            )
        if wraps:
            _owed_refusal(
                state, rules, rules.rolls_owed_between_rounds(state, enc), f"round {enc.round}", ctx
            )
        report: dict[str, Any] = {"turns": []}
        _advance(state, enc, rules, ctx, report)
        return {**report, "turn_of": enc.current, "round_now": enc.round}

    def turn_ended(state: Any, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
        """The end of the turn in progress (its end-of-turn steps run). It cannot end while a roll
        it owes is missing (ROLLS_PENDING). The next turn starts with TurnStarted (ruling 18)."""
        enc = encounter_of(state, p["encounter_id"], running=True)
        cid = enc.current
        if cid is None:
            nxt = peek(state, enc, rules)[0]
            raise RuleViolation(
                "no turn is in progress" + (f": start {_name(state, nxt)}'s turn first" if nxt else ""),
                field="encounter_id",
                code="NO_TURN",
            )
        owed = rules.rolls_owed_at_turn_end(state, enc, cid)
        if owed:  # (the label is written only for a refusal)
            _owed_refusal(state, rules, owed, f"{_name(state, cid)}'s turn", ctx)
        out: dict[str, Any] = {"ended": cid, "round": enc.round, **rules.turn_ended(state, enc, cid, ctx)}
        enc.phase = BETWEEN
        return {**out, **_then(state, enc, p, ctx)}

    def _then(state: Any, enc: Encounter, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
        """After a turn ended or was delayed: between turns, or (``start_next``, v1) the next starts."""
        if p.get("start_next"):
            report: dict[str, Any] = {"turns": []}
            _advance(state, enc, rules, ctx, report)
            return {**report, "turn_of": enc.current, "round_now": enc.round}
        return {"turn_of": None, "next_turn_of": peek(state, enc, rules)[0], "round_now": enc.round}

    def turn_delayed(state: Any, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
        """SW-11: delay at the start of its own turn, before acting; the start-of-turn steps have
        happened; its end-of-turn steps wait until it acts (or loses the turn)."""
        enc = encounter_of(state, p["encounter_id"], running=True)
        cid = p["creature"]
        participant(state, enc, cid)
        if enc.current != cid:
            raise RuleViolation(
                f"{_name(state, cid)} can delay only at the start of its own turn",
                field="creature",
                code="NOT_YOUR_TURN",
            )
        require(
            not enc.turn_log.get("acted"),
            f"{_name(state, cid)} has already acted this turn and cannot delay",
            "ALREADY_ACTED",
            ctx,
            "creature",
        )
        why = rules.cannot_delay(state, enc, cid)
        require(why is None, f"{_name(state, cid)} cannot delay while {why}", "CANNOT_DELAY", ctx, "creature")
        out = rules.turn_delayed(state, enc, cid, ctx)
        enc.delayed = [*enc.delayed, cid]
        enc.phase = BETWEEN
        return {"creature": cid, **out, **_then(state, enc, p, ctx)}

    def delayed_turn_taken(state: Any, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
        """SW-11 (4E-DEFAULT), ruling 18: between turns, a delaying creature re-enters after the turn
        that just ended and acts now; that place becomes its initiative."""
        enc = encounter_of(state, p["encounter_id"], running=True)
        cid = p["creature"]
        participant(state, enc, cid)
        if cid not in enc.delayed:
            raise RuleViolation(f"{_name(state, cid)} is not delaying", field="creature", code="NOT_DELAYED")
        _not_dead(state, rules, cid, ctx)
        if p.get("queued"):  # v1: re-enter after the turn in progress, once it ends
            current = enc.current
            if current is None:
                raise RuleViolation("no turn is in progress", field="encounter_id", code="NO_TURN")
            enc.delayed = [d for d in enc.delayed if d != cid]
            enc.resuming = [*enc.resuming, cid]

            def after_current(order: list[str]) -> int:
                i = order.index(current) + 1
                while i < len(order) and order[i] in enc.resuming:
                    i += 1  # several re-entries after one turn keep the order they were recorded in
                return i

            _move(enc, cid, after_current)
            return {"creature": cid, "acts_after": current, "order": list(enc.order)}
        if enc.phase == IN_TURN:
            raise RuleViolation(
                f"{_name(state, cid)} re-enters after {_name(state, enc.current or '')}'s turn ends "
                "(SW-11, ruling 18)",
                field="creature",
                code="TURN_IN_PROGRESS",
            )
        after = enc.order[enc.turn_index]
        enc.delayed = [d for d in enc.delayed if d != cid]
        if after != cid:
            _move(enc, cid, lambda order: order.index(after) + 1)
            enc.turn_index = enc.order.index(cid)
        start = _begin(state, enc, rules, cid, True, ctx)
        return {
            "creature": cid,
            "acts_after": after,
            "order": list(enc.order),
            "turns": [start],
            "turn_of": cid,
        }

    def action_readied(state: Any, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
        """SW-12: readying uses an action on your own turn (the table's ``ready_cost``)."""
        enc = encounter_of(state, p["encounter_id"], running=True)
        cid = p["creature"]
        participant(state, enc, cid)
        _not_dead(state, rules, cid, ctx)
        if p["action"] not in rules.actions.kinds:
            raise InvalidInput(f"action must be one of {', '.join(rules.actions.kinds)}", field="action")
        cost = rules.actions.ready_cost
        note = check_action(state, enc, rules, cid, cost, ctx)
        commit_action(enc, rules, cid, cost)
        enc.readied[cid] = {"action": p["action"], "trigger": p["trigger"], "turn_no": enc.turn_no}
        return {"creature": cid, "readied": p["action"], "trigger": p["trigger"], **note}

    def readied_triggered(state: Any, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
        """SW-12 (4E-DEFAULT): the readied action is taken (as the table's ``readied_kind``) during
        another creature's turn; the initiative moves to just before the trigger's."""
        enc = encounter_of(state, p["encounter_id"], running=True)
        cid, trigger = p["creature"], p["trigger_creature"]
        participant(state, enc, cid)
        participant(state, enc, trigger, "trigger_creature")
        _not_dead(state, rules, cid, ctx)
        if cid not in enc.readied:
            raise RuleViolation(
                f"{_name(state, cid)} has no readied action", field="creature", code="NOTHING_READIED"
            )
        if trigger == cid or enc.current == cid:
            raise RuleViolation(
                "a readied action is triggered by another creature, on another turn",
                field="trigger_creature",
                code="OWN_TURN",
            )
        if enc.current is None:
            raise RuleViolation(
                "a readied action is triggered during a turn; none is in progress",
                field="encounter_id",
                code="NO_TURN",
            )
        kind = rules.actions.readied_kind
        note = check_action(state, enc, rules, cid, kind, ctx)
        commit_action(enc, rules, cid, kind)
        readied = enc.readied.pop(cid)
        _move(enc, cid, lambda order: order.index(trigger))
        return {
            "creature": cid,
            "action": readied["action"],
            "acts_before": trigger,
            "order": list(enc.order),
            **note,
        }

    def action_taken(state: Any, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
        """An action through the economy (own turn, budgets, triggered windows, conditions, the
        surprise round); a GM exception is recorded in the fact."""
        cid = p["creature"]
        if cid not in state.creatures:
            raise NotFound(f"no creature {cid!r} in this campaign", field="creature")
        _not_dead(state, rules, cid, ctx)
        action, sub = p["action"], p.get("substitutes_for")
        table = rules.actions
        if action not in table.kinds:
            raise InvalidInput(f"action must be one of {', '.join(table.kinds)}", field="action")
        if sub is not None and sub not in table.substitutions.get(action, ()):
            raise InvalidInput(
                f"a {action} action cannot be taken instead of a {sub} action", field="substitutes_for"
            )
        if p.get("encounter_id") is not None:
            participant(state, encounter_of(state, p["encounter_id"]), cid)
        before_turns(state, rules, cid, action, ctx, gm_exception=p["gm_exception"])
        enc = running_for(state, cid)
        note: dict[str, Any] = {}
        if enc is not None:
            note = check_action(state, enc, rules, cid, action, ctx, gm_exception=p["gm_exception"])
            commit_action(enc, rules, cid, action)
        own = (
            {"actions_this_turn": list(enc.turn_log.get("actions", ()))} if enc and enc.current == cid else {}
        )
        return {"creature": cid, "action": action, "name": p["name"], **note, **own}

    def encounter_ended(state: Any, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
        """The GM ends the encounter (B-SW-24); the ruleset's end-of-encounter steps run."""
        enc = encounter_of(state, p["encounter_id"])
        enc.state, enc.phase = ENDED, BETWEEN
        state.active_encounter = None
        report = rules.encounter_ended(state, enc, ctx)
        return {"encounter_id": enc.id, "outcome": p["outcome"], "rounds": enc.round, **report}

    return {
        "EncounterStarted": encounter_started,
        "CreatureJoinedEncounter": creature_joined,
        "SurpriseDetermined": surprise_determined,
        "InitiativeRolled": initiative_rolled,
        "InitiativeTieBroken": tie_broken,
        "InitiativeOrderChosen": order_chosen,
        "TurnStarted": turn_started,
        "TurnEnded": turn_ended,
        "TurnDelayed": turn_delayed,
        "DelayedTurnTaken": delayed_turn_taken,
        "ActionReadied": action_readied,
        "ReadiedActionTriggered": readied_triggered,
        "ActionTaken": action_taken,
        "EncounterEnded": encounter_ended,
        **TIME_HANDLERS,
    }


def _check_entry(entry: Any) -> None:
    rank = entry.get("rank") if isinstance(entry, dict) else None
    if (
        not isinstance(rank, list)
        or not rank
        or not all(isinstance(x, int) and not isinstance(x, bool) for x in rank)
    ):
        raise AssertionError(f"initiative_entry must give a 'rank' list of whole numbers, not {rank!r}")


# ------------------------------------------------------------------ the clock
def clock(minutes: int) -> dict[str, int]:
    """The in-game clock: day 1 is the campaign's first day."""
    day, rest = divmod(int(minutes), MINUTES_PER_DAY)
    return {"day": day + 1, "hour": rest // 60, "minute": rest % 60}


def time_advanced(state: Any, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """In-game time passes."""
    state.minutes += p["minutes"]
    return {"clock": state.minutes, **clock(state.minutes)}


def time_set(state: Any, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """The clock is set to an absolute day and hour (issue 14); it never goes back."""
    minutes = (p["day"] - 1) * MINUTES_PER_DAY + p["hour"] * 60 + p["minute"]
    if minutes < state.minutes:
        now = clock(state.minutes)
        raise RuleViolation(
            f"the clock is already at day {now['day']}, {now['hour']:02d}:{now['minute']:02d}",
            field="day",
            code="CLOCK_BACKWARDS",
        )
    before = state.minutes
    state.minutes = minutes
    return {"clock": minutes, "advanced_minutes": minutes - before, **clock(minutes)}


TIME_HANDLERS: dict[str, Handler] = {"TimeAdvanced": time_advanced, "TimeSet": time_set}


# ------------------------------------------------------------------ the view
def view(state: Any, enc: Encounter, rules: EncounterRules) -> dict[str, Any]:
    """The encounter as JSON (RULES.md C1.1 encounter projection, plus the moment between turns)."""
    running = enc.state == RUNNING
    nxt, wraps = peek(state, enc, rules) if running else (None, False)
    active = running and state.active_encounter == enc.id
    out = {
        "id": enc.id,
        "name": enc.name,
        "state": enc.state,
        "phase": enc.phase if running else enc.state,
        "round": enc.round,
        "surprise_round": enc.surprise_round,
        "turn_of": enc.current,
        "next_turn_of": nxt,
        "next_turn_starts_round": enc.round + 1 if wraps else None,
        "order": list(enc.order),
        "initiative": {
            k: {**v, **({"turn_started": enc.turn_started[k]} if k in enc.turn_started else {})}
            for k, v in enc.initiative.items()
        },
        "participants": list(enc.participants),
        "surprised": list(enc.surprised),
        "delayed": list(enc.delayed),
        "readied": {k: dict(v) for k, v in enc.readied.items()},
        "turn_number": enc.turn_no,
        "actions_this_turn": list(enc.turn_log.get("actions", ())) if enc.current else [],
        "unresolved_ties": unresolved_ties(enc.initiative, enc.participants) if enc.state == SETUP else [],
        "pending_rolls": describe(rules, pending_rolls(state, rules), state) if active else [],
    }
    if rules.reroll_each_round:
        out["next_round_initiative"] = {k: dict(v) for k, v in enc.upcoming.items()}
    return out
