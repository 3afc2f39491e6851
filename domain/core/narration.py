"""Sentences for facts: one narrator per game system, one implementation for every output.

A :class:`Narrator` turns a fact (its effective payload), the outcome the fold gave it and the
state just after it into a sentence, in a :class:`Markup` (plain text for the campaign log and
the GraphQL history, escaped Markdown or HTML for the exports). The core narrates what every
system shares (corrections, rulings, notes, free dice, encounters, turns, time); a ruleset
subclasses it for its own facts (``Ruleset.narrator``), so the log, the story and the
subscriptions all read the same words.

Besides sentences a narrator tells the exports what a fact means for their summaries:
``boundary`` (the derived steps of a turn boundary: rounds, turns, skipped turns, and what the
ruleset adds), ``columns`` / ``tally`` (the per-encounter table) and ``marks`` (labels on a
character's timeline: rests, falling, dying).

Pure: no I/O; the state is only read.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from domain import dice

Step = tuple[str, Any]  # ("round", n) | ("turn", creature id) | ("derived", text)
Change = tuple[dict[str, Any] | None, dict[str, Any] | None]  # a creature's view before and after


@dataclass(frozen=True)
class Markup:
    """How user text and dice are written in the target format."""

    esc: Callable[[str], str]
    dice: Callable[[dict[str, Any]], str]


PLAIN = Markup(lambda text: text.replace("\n", " "), dice.describe)
"""Plain text (the campaign log, the GraphQL history): dice as ``1d20 (14) + 7 = 21``."""

LIFE = {
    "dying": "is dying",
    "dead": "is dead",
    "knocked_out": "is knocked out",
    "unconscious": "falls unconscious",
    "disabled": "is disabled",
    "stabilized": "is stabilised",
    "active": "is back in the fight",
}
"""What a change into each core life state reads like (``domain.rulesets.LIFE_STATES``)."""


def words(fact_type: str) -> str:
    """``AttackMade`` -> ``Attack made`` (for facts a narrator has no sentence for)."""
    out: list[str] = []
    for ch in fact_type:
        if ch.isupper() and out:
            out.append(" ")
        out.append(ch.lower())
    text = "".join(out)
    return text[:1].upper() + text[1:]


class Narrator:
    """The sentences every system shares. Subclass and add ``_<FactType>(p, o, s)`` methods."""

    columns: tuple[tuple[str, str], ...] = ()
    """The per-encounter summary table's columns: (key, title)."""

    def __init__(self, markup: Markup = PLAIN) -> None:
        self.m = markup
        self.names: dict[str, str] = {}

    # ------------------------------------------------------------ helpers
    def name(self, cid: Any, state: Any = None) -> str:
        creatures = getattr(state, "creatures", None)
        if creatures is not None and cid in creatures:
            self.names[cid] = str(creatures[cid].name)
        return self.m.esc(self.names.get(cid, str(cid)))

    def names_of(self, ids: Any, state: Any) -> str:
        items = [self.name(c, state) for c in ids]
        if len(items) <= 2:
            return " and ".join(items)
        return ", ".join(items[:-1]) + " and " + items[-1]

    def roll(self, roll: Any) -> str:
        return self.m.dice(roll) if isinstance(roll, dict) and "terms" in roll else ""

    def life(self, who: str, d: Mapping[str, Any]) -> str:
        """`` Vex is dying.`` when an outcome says the life state changed (else nothing)."""
        before, after = d.get("life_before"), d.get("life_after")
        if after and after != before and after in LIFE:
            return f" {who} {LIFE[after]}."
        return ""

    # ------------------------------------------------------------ per fact
    def sentence(self, fact_type: str, p: dict[str, Any], o: dict[str, Any] | None, state: Any) -> str:
        """The sentence of one fact (``o`` is None for revoked, orphaned and correction facts)."""
        method = getattr(self, "_" + fact_type, None)
        if method is None:
            return f"{words(fact_type)}."
        text: str = method(p, o, state)
        return text

    # --- notes and free dice
    def _NoteAdded(self, p: dict[str, Any], o: Any, s: Any) -> str:
        return f"Note: {self.m.esc(p['text'])}"

    def _DiceRolled(self, p: dict[str, Any], o: Any, s: Any) -> str:
        who = f"{self.name(p['creature'], s)} rolls" if p.get("creature") else "Dice rolled"
        why = f" for {self.m.esc(p['purpose'])}" if p.get("purpose") else ""
        return f"{who}{why}: {self.roll(p['roll'])}."

    # --- corrections and rulings
    def _FactRevoked(self, p: dict[str, Any], o: Any, s: Any) -> str:
        cascade = {
            "fact": "",
            "action": " with its whole table action",
            "consequences": " with everything it caused",
        }[p["cascade"]]
        return f"The GM revokes fact #{p['target']}{cascade}: {self.m.esc(p['reason'])}"

    def _FactRestored(self, p: dict[str, Any], o: Any, s: Any) -> str:
        why = f": {self.m.esc(p['reason'])}" if p.get("reason") else "."
        return f"The GM cancels revocation #{p['revocation']}{why}"

    def _FactAmended(self, p: dict[str, Any], o: Any, s: Any) -> str:
        return f"The GM amends fact #{p['target']}: {self.m.esc(p['reason'])}"

    def _RulingRecorded(self, p: dict[str, Any], o: Any, s: Any) -> str:
        return (
            f"GM ruling {self.m.esc(p['ruling_id'])}: {self.m.esc(p['question'])} {self.m.esc(p['decision'])}"
        )

    def _RulingContested(self, p: dict[str, Any], o: Any, s: Any) -> str:
        by = f"{self.m.esc(p['by'])} contests" if p.get("by") else "Contested:"
        return f"{by} ruling {self.m.esc(p['ruling_id'])}: {self.m.esc(p['argument'])}"

    def _RulingResolved(self, p: dict[str, Any], o: Any, s: Any) -> str:
        decision = f": {self.m.esc(p['decision'])}" if p.get("decision") else "."
        return f"Ruling {self.m.esc(p['ruling_id'])} is {p['outcome']}{decision}"

    def _OutcomeOverridden(self, p: dict[str, Any], o: Any, s: Any) -> str:
        value = self.m.esc(str(p["value"]).lower() if isinstance(p["value"], bool) else str(p["value"]))
        why = self.m.esc(p["reason"])
        return f"The GM overrides fact #{p['target']}: {self.m.esc(p['field'])} = {value} ({why})."

    def _RulesFlagSet(self, p: dict[str, Any], o: Any, s: Any) -> str:
        when = ", retroactively" if p.get("retroactive") else ""
        return f"House rule: {self.m.esc(p['flag'])} = {self.m.esc(str(p['value']))}{when}."

    # --- proposals (issue 19)
    def _ProposalSubmitted(self, p: dict[str, Any], o: Any, s: Any) -> str:
        from domain.core.proposals import who

        by = self.m.esc(who(p["proposed_by"], p.get("proposer", "")))
        what = self.m.esc(p["mutation"])
        also = f" for {self.name(p['character'], s)}" if p.get("character") else ""
        note = f": {self.m.esc(p['note'])}" if p.get("note") else "."
        return f"{by[:1].upper()}{by[1:]} proposes {what}{also}{note}"

    def _ProposalDecided(self, p: dict[str, Any], o: Any, s: Any) -> str:
        verb = {
            "approved": "approves",
            "approved_with_changes": "approves with changes",
            "rejected": "rejects",
        }[p["decision"]]
        changed = "; ".join(
            f"{self.m.esc(str(c.get('field')))} from {self.m.esc(_plain(c.get('before')))} "
            f"to {self.m.esc(_plain(c.get('after')))}"
            for c in p.get("changed") or []
        )
        what = f" ({changed})" if changed else ""
        why = f": {self.m.esc(p['reason'])}" if p.get("reason") else "."
        return f"The GM {verb} proposal #{p['proposal']}{what}{why}"

    def _ProposalWithdrawn(self, p: dict[str, Any], o: Any, s: Any) -> str:
        why = f": {self.m.esc(p['reason'])}" if p.get("reason") else "."
        return f"Proposal #{p['proposal']} is withdrawn{why}"

    def _ProposalPolicySet(self, p: dict[str, Any], o: Any, s: Any) -> str:
        mode = {
            "direct": "players may do it directly",
            "approval": "players propose it, the GM decides",
            "forbidden": "players may not do it",
        }[p["mode"]]
        return f"Trust setting for {self.m.esc(p['mutation'])}: {mode}."

    # --- encounters, turns, time
    def _EncounterStarted(self, p: dict[str, Any], o: Any, s: Any) -> str:
        name = self.m.esc(p["name"] or p["encounter_id"])
        return f"Encounter {name} begins: {self.names_of(p['participants'], s)}."

    def _SurpriseDetermined(self, p: dict[str, Any], o: Any, s: Any) -> str:
        if not p["surprised"]:
            return "Nobody is surprised."
        one = len(p["surprised"]) == 1
        return (
            f"Surprise! {self.names_of(p['surprised'], s)} {'is' if one else 'are'} surprised and "
            f"take{'s' if one else ''} no turn in the surprise round."
        )

    def _InitiativeRolled(self, p: dict[str, Any], o: Any, s: Any) -> str:
        if p.get("group"):  # one roll for a group (B-OR-14)
            who = f"{self.m.esc(p['group'])} ({self.names_of(p['creatures'], s)})"
        else:
            who = self.name(p["creature"], s)
        if not o or "score" not in o:
            return f"{who} rolls initiative: {self.roll(p['roll'])}."
        if "bonus" not in o:
            if o["score"] == dice.roll_total(p["roll"]):  # the die is the score: say it once
                return f"{who} rolls initiative: {self.roll(p['roll'])}."
            return f"{who} rolls initiative: {self.roll(p['roll'])} = {o['score']}."
        return f"{who} rolls initiative: {self.roll(p['roll'])}, + {o['bonus']} = {o['score']}."

    def _InitiativeTieBroken(self, p: dict[str, Any], o: Any, s: Any) -> str:
        return f"Initiative tie broken by {p['method']}: {self.names_of(p['creatures'], s)}, in that order."

    def _InitiativeOrderChosen(self, p: dict[str, Any], o: Any, s: Any) -> str:
        by = f" ({self.m.esc(p['decided_by'])})" if p.get("decided_by") else ""
        return f"Initiative order chosen{by}: {self.names_of(p['creatures'], s)}, in that order."

    def _CreatureJoinedEncounter(self, p: dict[str, Any], o: Any, s: Any) -> str:
        return f"{self.name(p['creature'], s)} joins the encounter."

    def _TurnStarted(self, p: dict[str, Any], o: Any, s: Any) -> str:
        if not o or not o.get("turn_of"):
            return "The next turn starts."
        return f"{self.name(o['turn_of'], s)}'s turn starts."

    def _TurnEnded(self, p: dict[str, Any], o: Any, s: Any) -> str:
        if not o or not o.get("ended"):
            return "The turn ends."
        return f"{self.name(o['ended'], s)}'s turn ends."

    def _TurnDelayed(self, p: dict[str, Any], o: Any, s: Any) -> str:
        return f"{self.name(p['creature'], s)} delays."

    def _DelayedTurnTaken(self, p: dict[str, Any], o: Any, s: Any) -> str:
        after = f" after {self.name(o['acts_after'], s)}" if o and o.get("acts_after") else ""
        return f"{self.name(p['creature'], s)} takes the delayed turn{after}."

    def _ReadiedActionTriggered(self, p: dict[str, Any], o: Any, s: Any) -> str:
        return (
            f"{self.name(p['creature'], s)}'s readied action is triggered by "
            f"{self.name(p['trigger_creature'], s)}."
        )

    def _EncounterEnded(self, p: dict[str, Any], o: Any, s: Any) -> str:
        rounds = f" after {o['rounds']} rounds" if o and "rounds" in o else ""
        return f"The encounter ends{rounds}" + (f": {self.m.esc(p['outcome'])}" if p.get("outcome") else ".")

    def _TimeSet(self, p: dict[str, Any], o: Any, s: Any) -> str:
        return f"The clock is set to day {p['day']}, {p['hour']:02d}:{p['minute']:02d}."

    def _TimeAdvanced(self, p: dict[str, Any], o: Any, s: Any) -> str:
        m = p["minutes"]
        span = f"{m // 60} hours" if m % 60 == 0 and m >= 120 else f"{m} minutes"
        return f"Time passes: {span}."

    # ------------------------------------------------------------ turn boundaries
    def boundary(self, o: Mapping[str, Any], s: Any) -> list[Step]:
        """Derived steps of a turn boundary in order: what ended with the last turn, then each
        turn passed to (a new round, skipped turns, the turn itself and its start)."""
        out: list[Step] = list(self.turn_end_steps(o, s))
        for turn in o.get("turns", []):
            who = self.name(turn["creature"], s)
            if "skipped" in turn:
                out.append(("derived", f"{who}'s turn is skipped: {self.m.esc(turn['skipped'])}."))
                continue
            if turn.get("lost_delayed_turn"):
                out.append(("derived", f"{who} waited too long: the delayed turn is lost."))
            if "round" in turn:
                out.append(("round", turn["round"]))
            out.append(("turn", turn["creature"]))
            out.extend(self.turn_start_steps(turn, s))
        return out

    def turn_end_steps(self, o: Mapping[str, Any], s: Any) -> list[Step]:
        """What the system derives at the end of a turn (a ruleset adds its own)."""
        return []

    def turn_start_steps(self, turn: Mapping[str, Any], s: Any) -> list[Step]:
        """What the system derives at the start of a turn (a ruleset adds its own)."""
        return []

    # ------------------------------------------------------------ summaries
    def tally(
        self,
        fact_type: str,
        p: dict[str, Any],
        o: dict[str, Any] | None,
        changes: Mapping[str, Change],
        s: Any = None,
    ) -> list[tuple[str, str, int]]:
        """Per-encounter table entries this fact adds: (creature, column, amount). ``changes``
        holds the views of the creatures the fact changed, before and after."""
        return []

    def marks(
        self, fact_type: str, p: dict[str, Any], o: dict[str, Any] | None, changes: Mapping[str, Change]
    ) -> list[tuple[str, str]]:
        """Labels for characters' timelines at this fact: (creature, label). The core marks a
        change of life state (falling, dying, death...)."""
        out = []
        for cid, (before, after) in changes.items():
            if before is not None and after is not None and before.get("life") != after.get("life"):
                life = str(after.get("life"))
                if life != "active":
                    out.append((cid, life.replace("_", " ")))
        return out


def _plain(value: Any) -> str:
    """A JSON value in a sentence: ``5``, ``"melee"``, ``none``."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (int, float, str)):
        return str(value)
    return json.dumps(value, sort_keys=True, separators=(",", ":"))
