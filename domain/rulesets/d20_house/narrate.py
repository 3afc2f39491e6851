"""d20 house-rules sentences: what its facts read like in the log, the story and the exports.

One narrator (``domain.core.narration.Narrator``) serves every output; this adds the d20
facts (every number is the fold's outcome, never recomputed here), the derived steps of its
turn boundaries (flat-footed ending, the count of attacks of opportunity starting again, the
stabilisation rolls a round owes), its per-encounter summary columns and its timeline marks
(rests that return ability scores, massive damage).

A fact the fold did not apply (revoked, orphaned) has no outcome (``o is None``): its sentence
tells its inputs only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from domain import dice
from domain.core.narration import Change, Narrator, Step
from domain.rulesets.d20_house.tables import ABILITY_NAMES, SAVE_NAMES

KINDS = {"pc": "player character", "npc": "non-player character", "monster": "monster"}
DEATHS = {
    "hp_threshold": "below -Stamina hit points",
    "massive_damage": "massive damage",
    "stamina_zero": "Stamina 0",
    "declared": "declared by the GM",
}
LIFE_WORDS = {
    "active": "fully functional",
    "disabled": "disabled",
    "dying": "dying",
    "stabilized": "stable",
    "dead": "dead",
}
DEFENSES = {
    "ac": "AC",
    "touch": "touch AC",
    "flat_footed": "flat-footed AC",
    "flat_footed_touch": "flat-footed touch AC",
}
REST_MARKS = {"sleep": "sleep", "rest": "rest"}


def _signed(v: int) -> str:
    return f"+ {v}" if v >= 0 else f"- {-v}"


class D20Narrator(Narrator):
    """Sentences, boundary steps, summary columns and marks for the d20 house rules."""

    columns = (
        ("dealt", "Damage dealt"),
        ("taken", "HP lost"),
        ("healed", "HP healed"),
        ("criticals", "Critical hits"),
        ("opportunity", "Attacks of opportunity"),
        ("ability", "Ability points lost"),
    )

    # ------------------------------------------------------------ helpers
    def parts(self, parts: list[dict[str, Any]]) -> str:
        """``14 + 6 (base attack bonus) + 3 (Strength)``: a breakdown, first term bare."""
        out = ""
        for i, part in enumerate(parts):
            v = int(part["value"])
            label = "" if part["source"] == "d20" else f" ({self.m.esc(str(part['source']))})"
            out += (str(v) if i == 0 else f" {_signed(v)}") + label
        return out

    def hp(self, o: Mapping[str, Any]) -> str:
        if "hp_before" in o and "hp_after" in o:
            return f" (HP {o['hp_before']} to {o['hp_after']})"
        return ""

    def fate(self, who: str, o: Mapping[str, Any]) -> str:
        """`` Gnoll is dying.`` / `` Gnoll dies (massive damage).`` when the life state changed."""
        if o.get("died"):
            return f" {who} dies ({DEATHS.get(str(o['died']), str(o['died']))})."
        before, after = o.get("life_before"), o.get("life_after")
        if after and before and after != before:
            return f" {who} is {LIFE_WORDS.get(str(after), str(after))}."
        return ""

    def strain(self, who: str, o: Mapping[str, Any]) -> str:
        """B-DH-8: what a disabled creature's strenuous action cost it."""
        strain = o.get("strenuous")
        if not isinstance(strain, Mapping):
            return ""
        return f" The strain costs {who} {strain['amount']} HP{self.hp(strain)}.{self.fate(who, strain)}"

    # ------------------------------------------------------------ sheets
    def _CreatureRegistered(self, p: dict[str, Any], o: Any, s: Any) -> str:
        if o is not None:  # a registration in force (a revoked one never named anybody)
            self.names[p["creature_id"]] = p["name"]
        a = p["abilities"]
        klass = f" {self.m.esc(p['class'])}" if p.get("class") else ""
        bab = "/".join(f"{b:+d}" for b in p["bab"])
        scores = ", ".join(f"{ABILITY_NAMES[k]} {a[k]}" for k in ("str", "stamina", "agility", "spirit"))
        thresholds = f"; S {o['S']}, B {o['B']}" if o else ""
        return (
            f"{self.name(p['creature_id'])} joins the campaign: level {p['level']}{klass} "
            f"{KINDS[p['kind']]}; {p['max_hp']} HP, BAB {bab}, {scores}{thresholds}."
        )

    def _SheetUpdated(self, p: dict[str, Any], o: Any, s: Any) -> str:
        changes = ", ".join(f"{k} {self.m.esc(str(v))}" for k, v in sorted(p["changes"].items()))
        why = f" ({self.m.esc(p['reason'])})" if p.get("reason") else ""
        tail = self.hp(o) if o and o.get("hp_before") != o.get("hp_after") else ""
        return f"{self.name(p['creature_id'], s)}'s sheet changes: {changes}{why}{tail}."

    # ------------------------------------------------------------ encounters
    def _InitiativeRolled(self, p: dict[str, Any], o: Any, s: Any) -> str:
        """DH-3: d20 + Agility modifier + initiative modifiers (the bonus signed)."""
        if not o or "bonus" not in o or p.get("group"):
            return super()._InitiativeRolled(p, o, s)
        who, rolled = self.name(p["creature"], s), self.roll(p["roll"])
        return f"{who} rolls initiative: {rolled} {_signed(o['bonus'])} = {o['score']}."

    # ------------------------------------------------------------ hit points
    def _DamageTaken(self, p: dict[str, Any], o: Any, s: Any) -> str:
        who = self.name(p["target"], s)
        rolled = self.roll(p.get("roll"))
        extra = f" + {p['amount']}" if rolled and p["amount"] else ""
        how = f"{rolled}{extra}" if rolled else str(p["amount"])
        src = f" from {self.m.esc(p['source'])}" if p.get("source") else ""
        if o is None:
            return f"{who} takes damage{src}: {how}."
        how = f" ({how})" if rolled else ""
        return f"{who} takes {o['amount']} damage{src}{how}{self.hp(o)}.{self.fate(who, o)}"

    def _HealingApplied(self, p: dict[str, Any], o: Any, s: Any) -> str:
        who = self.name(p["target"], s)
        head = f"{self.name(p['healer'], s)} heals {who}" if p.get("healer") else f"{who} is healed"
        src = f" ({self.m.esc(p['source'])})" if p.get("source") else ""
        rolled = self.roll(p.get("roll"))
        extra = f" + {p['amount']}" if rolled and p["amount"] else ""
        how = f"{rolled}{extra}" if rolled else str(p["amount"])
        if o is None:
            return f"{head}{src}: {how}."
        stable = " and stops dying" if o.get("band_before") == "dying" and o.get("stable") else ""
        how = f"{how}, " if rolled else ""
        return f"{head}{src}: {how}{o['healed']} HP restored{self.hp(o)}{stable}.{self.fate(who, o)}"

    def _HealCheckRolled(self, p: dict[str, Any], o: Any, s: Any) -> str:
        healer, who = self.name(p["healer"], s), self.name(p["target"], s)
        head = f"{healer} treats {who} (Heal check): {self.roll(p['roll'])}"
        if o is None:
            return head + "."
        verdict = f"{who} is stable" if o["success"] else f"{who} is still dying"
        return f"{head}, total {o['total']} vs DC {o['dc']} (10 + |HP|): {verdict}."

    def _StabilizationRolled(self, p: dict[str, Any], o: Any, s: Any) -> str:
        who = self.name(p["creature"], s)
        when = f" after round {p['round']}" if p.get("round") is not None else ""
        head = f"{who} rolls to stabilise{when}: d% {dice.percentile(p['roll'])}"
        if o is None:
            return head + "."
        if o["success"]:
            return f"{head} against Stamina {o['chance']}: {who} is stable."
        return f"{head} against Stamina {o['chance']}: {who} loses 1 HP{self.hp(o)}.{self.fate(who, o)}"

    # ------------------------------------------------------------ saves, abilities
    def _SavingThrowRolled(self, p: dict[str, Any], o: Any, s: Any) -> str:
        who = self.name(p["creature"], s)
        what = f" against {self.m.esc(p['effect'])}" if p.get("effect") else ""
        head = f"{who} makes a {SAVE_NAMES[p['save']]} save{what}: {self.roll(p['roll'])}"
        if o is None:
            return f"{head} vs DC {p['dc']}."
        nat = {1: " (natural 1)", 20: " (natural 20)"}.get(o.get("natural") or 0, "")
        result = "success" if o["success"] else "failure"
        return f"{head}, {self.parts(o['parts'])} = {o['total']} vs DC {o['dc']}{nat}: {result}."

    def _AbilityDamaged(self, p: dict[str, Any], o: Any, s: Any) -> str:
        who = self.name(p["creature"], s)
        kind = "drain" if p.get("drain") else "damage"
        src = f" from {self.m.esc(p['source'])}" if p.get("source") else ""
        head = f"{who} takes {p['amount']} {ABILITY_NAMES[p['ability']]} {kind}{src}"
        if o is None:
            return head + "."
        text = f"{head}: {o['score_before']} to {o['score_after']}"
        if (o["S_before"], o["B_before"]) != (o["S_after"], o["B_after"]):
            text += f"; S {o['S_after']}, B {o['B_after']}, HP {o['hp_after']} unchanged"
        return f"{text}.{self.fate(who, o)}"

    def _AbilityRecoveredByRest(self, p: dict[str, Any], o: Any, s: Any) -> str:
        who = self.names_of(p["creatures"], s)
        verb = "sleep" if p["kind"] == "sleep" else "rest"
        clean = "" if p["clean"] else " (not a clean rest)"
        head = f"{who} {verb} {p['hours']} hours{clean}"
        if o is None:
            return head + "."
        back = []
        for cid, r in o["creatures"].items():
            if r["restored"]:
                lost = ", ".join(f"{n} {ABILITY_NAMES[a]}" for a, n in r["restored"].items())
                back.append(f"{self.name(cid, s)} regains {lost} (S {r['S_after']}, B {r['B_after']})")
        return f"{head}: " + ("; ".join(back) if back else "no ability score was lost") + "."

    # ------------------------------------------------------------ death and life
    def _DeathDeclared(self, p: dict[str, Any], o: Any, s: Any) -> str:
        return f"{self.name(p['creature'], s)} dies: {self.m.esc(p['cause'])}."

    def _Resurrected(self, p: dict[str, Any], o: Any, s: Any) -> str:
        who = self.name(p["creature"], s)
        hp = o["hp"] if o else p["hp"]
        tail = f", {LIFE_WORDS.get(o['life_after'], o['life_after'])}" if o else ""
        return f"{who} is brought back to life by {self.m.esc(p['means'])} at {hp} HP (no level lost){tail}."

    # ------------------------------------------------------------ attacks
    def _AttackRolled(self, p: dict[str, Any], o: Any, s: Any) -> str:
        attacker, target = self.name(p["attacker"], s), self.name(p["target"], s)
        weapon = self.m.esc(str((p.get("weapon") or {}).get("name") or "a weapon"))
        aoo = " (attack of opportunity)" if p.get("opportunity") else ""
        which = f" (attack {p['iterative'] + 1})" if p.get("iterative") else ""
        hand = f" ({p['two_weapon']} hand)" if p.get("two_weapon") else ""
        head = f"{attacker} attacks {target} with {weapon}{aoo}{which}{hand}"
        if o is None:
            return f"{head}: {self.roll(p['roll'])}."
        defense = DEFENSES.get(o["defense"], o["defense"])
        lost = (
            f" ({', '.join(self.m.esc(x) for x in o['agility_lost'])}: no Agility)"
            if o["agility_lost"]
            else ""
        )
        if o["threat"]:
            result = "a natural 20, a hit that threatens a critical"
        elif o["natural"] == 1:
            result = "a natural 1, a miss"
        else:
            result = "a hit" if o["hit"] else "a miss"
        total = f"{self.parts(o['attack_parts'])} = {o['attack_total']}"
        text = f"{head}: {total} vs {defense} {o['ac']}{lost}: {result}"
        if o.get("overridden"):
            text += f" [GM override: {', '.join(o['overridden'])}]"
        text += "."
        return text + self.strain(attacker, o)

    def _CriticalConfirmationRolled(self, p: dict[str, Any], o: Any, s: Any) -> str:
        head = f"Confirmation roll for the attack at #{p['attack']}: {self.roll(p['roll'])}"
        if o is None:
            return head + "."
        result = "a critical hit" if o["critical"] else "a regular hit"
        return (
            f"{self.name(o['attacker'], s)} rolls to confirm: total {o['total']} vs AC {o['ac']}: {result}."
        )

    def _DamageRolled(self, p: dict[str, Any], o: Any, s: Any) -> str:
        dice_text = self.roll(p["weapon"])
        if p.get("crit_weapon"):
            dice_text += f" and {self.roll(p['crit_weapon'])}"
        if o is None:
            return f"Damage for the attack at #{p['attack']}: {dice_text}."
        attacker, target = self.name(o["attacker"], s), self.name(o["target"], s)
        crit = " critical" if o["critical"] else ""
        raw = sum(int(x["value"]) for x in o["parts"])
        minimum = " (at least 1)" if o["amount"] > raw else ""
        text = (
            f"{attacker} deals {o['amount']}{crit} damage to {target}: {self.parts(o['parts'])}{minimum}"
            f"{self.hp(o)}."
        )
        text += self.fate(target, o)
        owed = o.get("massive_damage_save_owed")
        if owed:
            text += f" Massive damage: {target} owes a DC {owed['dc']} Fortitude save."
        return text

    def _MassiveDamageSaveRolled(self, p: dict[str, Any], o: Any, s: Any) -> str:
        who = self.name(p["creature"], s)
        head = f"{who} saves against massive damage (the attack at #{p['attack']}): {self.roll(p['roll'])}"
        if o is None:
            return head + "."
        verdict = f"{who} survives" if o["success"] else f"{who} dies of massive damage"
        return f"{head}, Fortitude {o['total']} vs DC {o['dc']}: {verdict}."

    # ------------------------------------------------------------ actions
    def _ActionTaken(self, p: dict[str, Any], o: Any, s: Any) -> str:
        who = self.name(p["creature"], s)
        kind = str(p["action"]).replace("_", " ")
        article = "an" if kind[0] in "aeiou" else "a"
        name = f": {self.m.esc(p['name'])}" if p.get("name") else ""
        run = " (runs)" if p.get("run") else ""
        return f"{who} takes {article} {kind} action{run}{name}." + self.strain(who, o or {})

    def _DefensiveCastingRolled(self, p: dict[str, Any], o: Any, s: Any) -> str:
        who = self.name(p["creature"], s)
        head = f"{who} casts a level {p['spell_level']} spell defensively: {self.roll(p['roll'])}"
        if o is None:
            return head + "."
        result = "no attack of opportunity" if o["success"] else "it provokes attacks of opportunity"
        return f"{head}, Concentration {o['total']} vs DC {o['dc']}: {result}."

    # ------------------------------------------------------------ boundaries
    def turn_start_steps(self, turn: Mapping[str, Any], s: Any) -> list[Step]:
        """What the d20 hooks report at the start of a turn: flat-footed ends (DH-2), the
        surprise round's one action (B-DH-11)."""
        out: list[Step] = []
        who = self.name(turn["creature"], s)
        if turn.get("no_longer_flat_footed"):
            out.append(("derived", f"{who} is no longer flat-footed."))
        if turn.get("surprise_round"):
            out.append(("derived", f"{who} takes one standard or one move action this surprise round."))
        return out

    def turn_end_steps(self, o: Mapping[str, Any], s: Any) -> list[Step]:
        """The stabilisation rolls the round owes after its last turn (ruling 26)."""
        owed = o.get("stabilization_owed") or []
        if not owed:
            return []
        return [("derived", f"The round is over: {self.names_of(owed, s)} must roll to stabilise (d%).")]

    # ------------------------------------------------------------ summaries
    def tally(
        self,
        fact_type: str,
        p: dict[str, Any],
        o: dict[str, Any] | None,
        changes: Mapping[str, Change],
        s: Any = None,
    ) -> list[tuple[str, str, int]]:
        """Damage dealt by attacks and critical hits (from the outcomes), attacks of
        opportunity; HP lost and healed and ability points lost (from the views)."""
        out: list[tuple[str, str, int]] = []
        if o is not None and fact_type == "DamageRolled":
            out.append((o["attacker"], "dealt", int(o["amount"])))
            out.append((o["attacker"], "criticals", 1 if o["critical"] else 0))
        if o is not None and fact_type == "AttackRolled" and o.get("opportunity"):
            out.append((o["attacker"], "opportunity", 1))
        for cid, (before, after) in changes.items():
            if before is None or after is None:
                continue
            out.append((cid, "taken", max(0, before["hp"] - after["hp"])))
            out.append((cid, "healed", max(0, after["hp"] - before["hp"])))
            eb, ea = before["effective_abilities"], after["effective_abilities"]
            out.append((cid, "ability", sum(max(0, eb[a] - ea[a]) for a in eb)))
        return [x for x in out if x[2]]

    def marks(
        self, fact_type: str, p: dict[str, Any], o: dict[str, Any] | None, changes: Mapping[str, Change]
    ) -> list[tuple[str, str]]:
        """Life changes (the core's), rests that return ability scores, a massive-damage save owed."""
        out = super().marks(fact_type, p, o, changes)
        if o is not None and fact_type == "AbilityRecoveredByRest":
            out += [(cid, REST_MARKS[p["kind"]]) for cid in p["creatures"]]
        if o is not None and fact_type == "DamageRolled" and o.get("massive_damage_save_owed"):
            out.append((o["target"], "massive damage"))
        return out
