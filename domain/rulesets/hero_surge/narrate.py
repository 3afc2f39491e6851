"""The hero's-surge narrator: one sentence per fact, the turn-start steps, the per-encounter
columns and the timeline marks (``domain.core.narration``). Pure.

A sentence reads the fact's effective payload and the outcome the fold gave it (None when the
fact is revoked or orphaned: it then tells what was recorded, not what followed); the core
narrates corrections, rulings, notes, encounters, turns and time.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from domain.core.narration import Change, Narrator, Step

EVENTS: dict[str, Callable[[Mapping[str, Any]], str]] = {
    "fell_unconscious": lambda e: "falls unconscious",
    "surge_lost": lambda e: f"loses a hero's surge ({e['hero_surges']} left)",
    "hp_lost": lambda e: (
        f"has no surge to lose: loses {e['amount']} HP and gains a negative surge ({e['hero_surges']})"
    ),
    "started_dying": lambda e: "begins dying",
    "died": lambda e: f"dies ({e['cause']})",
    "dying_ended": lambda e: f"stops dying ({e['why']})",
    "regained_consciousness": lambda e: "regains consciousness",
    "luck_roll_owed": lambda e: "must make a luck roll",
    "healed": lambda e: f"is at {e['hp']} HP",
    "surges_restored": lambda e: f"regains {e['amount']} hero's surge(s) ({e['hero_surges']})",
    "surge_spent": lambda e: f"spends a hero's surge on {_words(e['purpose'])} ({e['hero_surges']} left)",
    "surge_gained": lambda e: f"gains a hero's surge ({e['hero_surges']})",
    "luck_advantage_granted": lambda e: "gains advantage on the next luck roll",
    "temporary_hp_ended": lambda e: f"loses {e['amount']} temporary HP",
    "restored_to_life": lambda e: f"is restored to life ({e['means']})",
}
REST_MARKS = {"long": "long rest", "short": "short rest"}


def _words(name: Any) -> str:
    return str(name).replace("_", " ")


class HeroSurgeNarrator(Narrator):
    """Sentences, turn-start steps, summary columns and marks for the hero's-surge system."""

    columns = (
        ("dealt", "Damage dealt"),
        ("taken", "Damage taken"),
        ("healed", "Healing"),
        ("surges", "Hero's surges lost or spent"),
    )

    # ------------------------------------------------------------ helpers
    def then(self, o: Mapping[str, Any] | None) -> str:
        """The consequences an outcome lists, in order (``; falls unconscious, begins dying``)."""
        said = [EVENTS[e["event"]](e) for e in (o or {}).get("events", []) if e.get("event") in EVENTS]
        return ("; " + ", ".join(self.m.esc(x) for x in said)) if said else ""

    def _on(self, p: Mapping[str, Any], s: Any) -> str:
        return f" on {self.name(p['target'], s)}" if p.get("target") else ""

    # ------------------------------------------------------------ creatures
    def _CreatureRegistered(self, p: dict[str, Any], o: Any, s: Any) -> str:
        what = "hero" if (o or {}).get("hero", p.get("kind") == "pc") else p["kind"]
        return f"{self.m.esc(p['name'])} joins ({what}, level {p['level']}, {p['max_hp']} HP)."

    def _SheetUpdated(self, p: dict[str, Any], o: Any, s: Any) -> str:
        changed = ", ".join(sorted(p["changes"]))
        return f"{self.name(p['creature_id'], s)}'s sheet changes: {self.m.esc(changed)}."

    # ------------------------------------------------------------ rounds
    def _InitiativeCheckRolled(self, p: dict[str, Any], o: Any, s: Any) -> str:
        text = (
            f"{self.name(p['creature'], s)} checks initiative for round {p['round']} "
            f"({self.roll(p['roll'])}): {_words(p['success_level'])}"
        )
        if o and o.get("knocked_back"):
            text += f", knocked back to {_words(o['band'])}"
        return text + "."

    def _InitiativeRolled(self, p: dict[str, Any], o: Any, s: Any) -> str:
        who = self.name(p["creature"], s) if p.get("creature") else self.names_of(p.get("creatures") or [], s)
        text = f"{who} checks initiative ({self.roll(p['roll'])}): {_words(p['success_level'])}"
        if o and o.get("knocked_back"):
            text += f", knocked back to {_words(o['band'])}"
        if o and o.get("for_round"):
            text += f" (for round {o['for_round']})"
        return text + "."

    def _InitiativeOrderChosen(self, p: dict[str, Any], o: Any, s: Any) -> str:
        where = f" in the {_words(o['band'])} band" if o and o.get("band") else ""
        side = o["side"] if o and o.get("side") else "tied"
        return f"Order among the {side}{where}: {self.names_of(p['creatures'], s)}."

    def _ActionTaken(self, p: dict[str, Any], o: Any, s: Any) -> str:
        """HS-4: a move, an action or a free action through the turn economy."""
        who = self.name(p["creature"], s)
        kind = str(p["action"])
        what = {"action": "the action", "move": "a move", "free": "a free action"}.get(
            kind, f"a {kind} action"
        )
        instead = " (with the action: HS-4's second move)" if p.get("substitutes_for") else ""
        name = f": {self.m.esc(p['name'])}" if p.get("name") else ""
        return f"{who} takes {what}{instead}{name}."

    def _DefendDeclared(self, p: dict[str, Any], o: Any, s: Any) -> str:
        whom = f" {self.name(p['target'], s)} ({p['mode']})" if p.get("target") else ""
        return f"{self.name(p['creature'], s)} defends{whom}."

    def _FullRoundActionStarted(self, p: dict[str, Any], o: Any, s: Any) -> str:
        return f"{self.name(p['creature'], s)} begins a full-round action: {self.m.esc(p['action'])}."

    def _FullRoundActionMaintained(self, p: dict[str, Any], o: Any, s: Any) -> str:
        return f"{self.name(p['creature'], s)} maintains the full-round action."

    def _FullRoundActionAborted(self, p: dict[str, Any], o: Any, s: Any) -> str:
        return f"{self.name(p['creature'], s)} aborts the full-round action."

    def _FullRoundActionCompleted(self, p: dict[str, Any], o: Any, s: Any) -> str:
        lost = " (no movement this turn)" if o and o.get("movement_forfeited") else ""
        return f"{self.name(p['creature'], s)} completes the full-round action{lost}."

    # ------------------------------------------------------------ attempts
    def _AttemptRolled(self, p: dict[str, Any], o: Any, s: Any) -> str:
        level = (o or {}).get("success_level", p["success_level"])
        against = f" against {self.names_of(p['targets'], s)}" if p.get("targets") else ""
        who = self.name(p["creature"], s)
        text = f"{who}'s {p['kind']} attempt{against} ({self.roll(p['roll'])}): {_words(level)}"
        if o and o.get("natural_1_critical_failure"):
            text += " (a natural 1 on a failure)"
        return text + "."

    def _FortuneDieExchanged(self, p: dict[str, Any], o: Any, s: Any) -> str:
        return f"Attempt {self.m.esc(p['attempt_id'])} is downgraded to a normal success for a Fortune Die."

    def _FortuneDieSpent(self, p: dict[str, Any], o: Any, s: Any) -> str:
        return f"{self.name(p['creature'], s)} spends a Fortune Die: {self.m.esc(p['effect'])}."

    def _DevastatingEffectChosen(self, p: dict[str, Any], o: Any, s: Any) -> str:
        return f"Devastating Effect of {self.m.esc(p['attempt_id'])}: {_words(p['option'])}{self._on(p, s)}."

    def _HamperingEffectChosen(self, p: dict[str, Any], o: Any, s: Any) -> str:
        return f"Hampering Effect of {self.m.esc(p['attempt_id'])}: {_words(p['option'])}{self._on(p, s)}."

    def _RankPenaltyConsumed(self, p: dict[str, Any], o: Any, s: Any) -> str:
        amount = f" ({o['rank_penalty']})" if o else ""
        attempt = self.m.esc(p["attempt_id"])
        return f"{self.name(p['target'], s)}'s attempt {attempt} suffers its rank penalty{amount}."

    def _MultiAttackDefenseResolved(self, p: dict[str, Any], o: Any, s: Any) -> str:
        if not o:
            return f"A defense against {len(p['incoming'])} attacks is resolved."
        blocked, incoming = len(o["blocked"]), len(p["incoming"])
        text = f"{self.name(o['defender'], s)}'s defense blocks {blocked} of {incoming} attacks"
        if o.get("critical_hits"):
            text += f"; critical hits: {self.m.esc(', '.join(o['critical_hits']))}"
        elif o.get("bypass_armor"):
            text += f"; bypassing armor: {self.m.esc(', '.join(o['bypass_armor']))}"
        return text + "."

    def _DamageRolled(self, p: dict[str, Any], o: Any, s: Any) -> str:
        text = f"Damage {self.m.esc(p['damage_id'])}: {self.roll(p['roll'])}"
        if o and o.get("maximized"):
            text += f", maximised to {o['dice']}"
        if o and o.get("additional_die") is not None:
            text += f", + additional die {o['additional_die']}"
        return text + "."

    def _DiceRerolled(self, p: dict[str, Any], o: Any, s: Any) -> str:
        kept = (" (higher: kept)" if o["replaced"] else " (not higher)") if o else ""
        die = f"die {p['die_index']} of {self.m.esc(p['roll_id'])}"
        return f"Brutal Damage rerolls {die}: {p['new_face']}{kept}."

    # ------------------------------------------------------------ damage, healing, dying
    def _DamageApplied(self, p: dict[str, Any], o: Any, s: Any) -> str:
        who = self.name(p["target"], s)
        if not o:
            return f"{who} is dealt damage."
        crit = " critical" if o.get("critical") else ""
        bypass = " (armor bypassed)" if o.get("bypass_dr") else ""
        return f"{who} takes {o['taken']} of {o['amount']}{crit} damage{bypass}{self.then(o)}."

    def _TemporaryHitPointsGranted(self, p: dict[str, Any], o: Any, s: Any) -> str:
        kept = " (keeps the larger pool)" if o and o.get("kept") == "old" else ""
        amount = o["granted"] if o else p["amount"]
        return f"{self.name(p['target'], s)} gains {amount} temporary hit points{kept}."

    def _HealingApplied(self, p: dict[str, Any], o: Any, s: Any) -> str:
        amount = o["amount"] if o else p["amount"]
        return f"{self.name(p['target'], s)} is healed for {amount}{self.then(o)}."

    def _LuckRollMade(self, p: dict[str, Any], o: Any, s: Any) -> str:
        result = (o or {}).get("result", p.get("result") or "not ruled")
        return (
            f"{self.name(p['creature'], s)} makes a luck roll ({_words(p['context'])}, "
            f"{self.roll(p['roll'])}): {result}{self.then(o)}."
        )

    def _MedicalAttemptMade(self, p: dict[str, Any], o: Any, s: Any) -> str:
        level = f" ({_words(o['success_level'])})" if o else ""
        return f"{self.name(p['healer'], s)} tends {self.name(p['target'], s)}{level}{self.then(o)}."

    def _HealersKitUsed(self, p: dict[str, Any], o: Any, s: Any) -> str:
        return (
            f"{self.name(p['healer'], s)} uses a healer's kit on {self.name(p['target'], s)}{self.then(o)}."
        )

    def _InstantKillRuled(self, p: dict[str, Any], o: Any, s: Any) -> str:
        return f"Instagib! {self.name(p['target'], s)} is slain outright."

    def _RestoredToLife(self, p: dict[str, Any], o: Any, s: Any) -> str:
        return f"{self.name(p['creature'], s)} is restored to life by {self.m.esc(p['means'])}{self.then(o)}."

    # ------------------------------------------------------------ surges, rests, levels
    def _HeroSurgeSpent(self, p: dict[str, Any], o: Any, s: Any) -> str:
        who = self.name(p["creature"], s)
        if o and not o.get("surge_spent", True):
            return f"{who} has no hero's surge to spend: nothing happens."
        return f"{who} spends a hero's surge ({_words(p['purpose'])}){self.then(o)}."

    def _HeroSurgeDrained(self, p: dict[str, Any], o: Any, s: Any) -> str:
        by = f" by {self.m.esc(p['source'])}" if p.get("source") else ""
        return f"{self.name(p['creature'], s)} is drained of a hero's surge{by}{self.then(o)}."

    def _HeroSurgesRestored(self, p: dict[str, Any], o: Any, s: Any) -> str:
        return f"{self.name(p['creature'], s)} regains up to {p['amount']} hero's surge(s){self.then(o)}."

    def _RestTaken(self, p: dict[str, Any], o: Any, s: Any) -> str:
        hours = f" of {p['hours']} hours" if p.get("hours") is not None else ""
        who = f": {self.names_of(list(o['participants']), s)}" if o and o.get("participants") else ""
        return f"A {p['kind']} rest{hours}{who}."

    def _LevelGained(self, p: dict[str, Any], o: Any, s: Any) -> str:
        text = f"{self.name(p['creature'], s)} reaches level {p['new_level']}"
        if o:
            text += f": +{o['gain']} hit points ({self.m.esc(o['how'])}), max HP {o['max_hp']}"
        return text + "."

    # ------------------------------------------------------------ boundaries and summaries
    def turn_start_steps(self, turn: Mapping[str, Any], s: Any) -> list[Step]:
        out: list[Step] = []
        who = self.name(turn["creature"], s)
        if turn.get("defend_ended"):
            out.append(("derived", f"{who}'s defend ends."))
        if turn.get("luck_roll_owed"):
            out.append(("derived", f"{who} is dying and must make a luck roll."))
        return out

    def tally(
        self,
        fact_type: str,
        p: dict[str, Any],
        o: dict[str, Any] | None,
        changes: Mapping[str, Change],
        s: Any = None,
    ) -> list[tuple[str, str, int]]:
        """Damage dealt (by the attempt's creature), and from the views: damage taken (temporary
        HP and HP lost to damage), healing (HP gained), hero's surges lost or spent."""
        out: list[tuple[str, str, int]] = []
        if o is not None and fact_type == "DamageApplied" and o.get("by") and o.get("taken"):
            out.append((o["by"], "dealt", int(o["taken"])))
        for cid, (before, after) in changes.items():
            if before is None or after is None:
                continue
            hp0, hp1 = before["hit_points"], after["hit_points"]
            lost = (hp0["current"] + hp0["temporary"]) - (hp1["current"] + hp1["temporary"])
            if fact_type == "DamageApplied" and lost > 0:
                out.append((cid, "taken", lost))
            if hp1["current"] > hp0["current"] and fact_type != "DamageApplied":
                out.append((cid, "healed", hp1["current"] - hp0["current"]))
            s0, s1 = before.get("hero_surges"), after.get("hero_surges")
            if s0 is not None and s1 is not None and s1 < s0:
                out.append((cid, "surges", s0 - s1))
        return out

    def marks(
        self, fact_type: str, p: dict[str, Any], o: dict[str, Any] | None, changes: Mapping[str, Change]
    ) -> list[tuple[str, str]]:
        out = super().marks(fact_type, p, o, changes)
        if o is not None and fact_type == "RestTaken" and p["kind"] in REST_MARKS:
            out += [(cid, REST_MARKS[p["kind"]]) for cid in o.get("participants", {})]
        for cid, (before, after) in changes.items():
            if before and after and (before.get("hero_surges") or 0) >= 0 > (after.get("hero_surges") or 0):
                out.append((cid, "negative surges"))
        return out
