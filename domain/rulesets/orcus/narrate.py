"""Orcus sentences: what its facts read like in the log, the story and the exports.

One narrator (``domain.core.narration.Narrator``) serves every output; this adds Orcus's facts,
its turn-boundary steps (persistent damage, effects ending, aftereffects beginning), its
per-encounter summary columns and its timeline marks (rests). Numbers come from the fold's
outcome, never recomputed here; a fact without an outcome (revoked, orphaned) reads from its
payload.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from domain import dice
from domain.core.narration import Change, Narrator, Step
from domain.rulesets.orcus.tables import DEFENSE_NAMES

DURATIONS = {
    "save_ends": "save ends",
    "end_of_target_next": "until the end of its next turn",
    "end_of_user_next": "until the end of {user}'s next turn",
    "start_of_target_next": "until the start of its next turn",
    "start_of_user_next": "until the start of {user}'s next turn",
    "maintain": "maintained by {user}",
    "until_removed": "until removed",
}
RANKS = {"hero": "hero", "monster": "monster", "elite": "elite monster", "boss": "boss monster"}
REST_MARKS = {"ShortRestTaken": "short rest", "LongRestTaken": "long rest"}


def _component(comp: Mapping[str, Any]) -> str:
    if "condition" in comp:
        return str(comp["condition"]).replace("_", "-")
    if "persistent" in comp:
        return f"persistent {comp['persistent']['amount']} {comp['persistent']['type']} damage"
    for key, word in (("attack_mod", "attack"), ("defense_mod", "defenses")):
        if key in comp:
            target = comp[key].get("defense", "all")
            word = DEFENSE_NAMES.get(target, word) if key == "defense_mod" else word
            return f"{comp[key]['value']:+d} {word}"
    for key, word in (("resist", "resist"), ("vuln", "vulnerable")):
        if key in comp:
            return f"{word} {comp[key]['value']} {comp[key]['type']}"
    return "effect"


class OrcusNarrator(Narrator):
    """Sentences, boundary steps, summary columns and marks for Orcus."""

    columns = (
        ("dealt", "Damage dealt"),
        ("taken", "Damage taken"),
        ("healed", "Healing"),
        ("surges", "Surges spent"),
        ("action_points", "Action points spent"),
        ("xp", "XP"),
    )

    def duration(self, duration: Mapping[str, Any], source: Any, s: Any) -> str:
        kind = str(duration.get("kind", "until_removed"))
        user = duration.get("anchor") or source
        return DURATIONS.get(kind, kind).format(user=self.name(user, s) if user else "its user")

    def damage_text(self, d: Mapping[str, Any]) -> str:
        """``17 fire, 5 resisted: 12 damage (12 HP)``."""
        steps = d.get("steps", [])
        notes = []
        for step in steps[1:]:
            label = step["step"]
            if label.startswith("resist"):
                notes.append(f"{-step['value']} resisted")
            elif label.startswith("vulnerable"):
                notes.append(f"+{step['value']} vulnerable")
            elif label != "after resistance and vulnerability":
                notes.append(label)
        types = " and ".join(d.get("types", []))
        head = f"{steps[0]['value']}{' ' + types if types else ''}" if steps else ""
        if notes:
            head += ", " + ", ".join(notes)
        layers = [f"{d[k]} {w}" for k, w in (("temp_hp_lost", "temporary HP"), ("hp_lost", "HP")) if d.get(k)]
        amount = d.get("amount", 0)
        body = f"{head}: {amount} damage" if head and head != str(amount) else f"{amount} damage"
        return body + (f" ({', '.join(layers)})" if layers else "")

    # ------------------------------------------------------------ sheets, XP
    def _CreatureRegistered(self, p: dict[str, Any], o: Any, s: Any) -> str:
        if o is not None:  # a registration in force (a revoked one never named anybody)
            self.names[p["creature_id"]] = p["name"]
        level = o["level"] if o else p.get("level") or 1
        d = p["defenses"]
        bits = [f"{p['max_hp']} HP"]
        if p.get("surges_per_day"):
            bits.append(f"{p['surges_per_day']} healing surges")
        bits.append(", ".join(f"{DEFENSE_NAMES[k]} {d[k]}" for k in ("ac", "fort", "ref", "will") if k in d))
        if p.get("powers"):
            bits.append(
                "powers: " + ", ".join(self.m.esc(str(x.get("name") or x.get("id"))) for x in p["powers"])
            )
        who = self.name(p["creature_id"])
        return f"{who} joins the campaign: level {level} {RANKS[p['kind']]}; {'; '.join(bits)}."

    def _SheetUpdated(self, p: dict[str, Any], o: Any, s: Any) -> str:
        changes = ", ".join(self.m.esc(k) for k in sorted(p["changes"]))
        why = f" ({self.m.esc(p['reason'])})" if p.get("reason") else ""
        return f"{self.name(p['creature_id'], s)}'s sheet changes: {changes}{why}."

    def _ExperienceAwarded(self, p: dict[str, Any], o: Any, s: Any) -> str:
        why = f" for {self.m.esc(p['reason'])}" if p.get("reason") else ""
        text = f"{self.names_of(p['creatures'], s)} gain {p['amount']} XP{why}."
        ups = [
            f"{self.name(c, s)} reaches level {v['level_after']}"
            for c, v in (o or {}).get("creatures", {}).items()
            if v["level_after"] != v["level_before"]
        ]
        return text + (" " + "; ".join(ups) + "." if ups else "")

    def _LevelSet(self, p: dict[str, Any], o: Any, s: Any) -> str:
        level = p["level"] if p["level"] is not None else "the level of their XP"
        return f"The GM sets {self.name(p['creature'], s)}'s level to {level}."

    # ------------------------------------------------------------ attacks
    def _parts(self, parts: list[dict[str, Any]]) -> str:
        out = ""
        for i, part in enumerate(parts):
            v = int(part["value"])
            label = (
                "" if part["source"] in ("d20", "attack bonus") else f" ({self.m.esc(str(part['source']))})"
            )
            out += (str(v) if i == 0 else (f" + {v}" if v >= 0 else f" - {-v}")) + label
        return out

    def _AttackMade(self, p: dict[str, Any], o: Any, s: Any) -> str:
        attacker = self.name(p["attacker"], s)
        power = self.m.esc(str(p["power"].get("name") or "an attack"))
        if o is None:
            rolls = ", ".join(
                f"{self.name(t['target'], s)}"
                + (f" (d20: {dice.natural(t['roll'])})" if t.get("roll") else "")
                for t in p["targets"]
            )
            return f"{attacker} attacks {rolls} with {power}."
        out = []
        if p.get("damage") and len(o["targets"]) > 1:
            out.append(f"{attacker} uses {power}, damage {self.roll(p['damage'])} for every target hit.")
        for t in o["targets"]:
            target = self.name(t["target"], s)
            verb = "critically hits" if t["crit"] else ("hits" if t["hit"] else "misses")
            if "attack_total" in t:
                text = (
                    f"{attacker} {verb} {target} with {power}: {self._parts(t['attack_parts'])} = "
                    f"{t['attack_total']} vs {DEFENSE_NAMES[t['defense']]} {t['defense_value']}"
                )
                if t.get("natural") == 20:
                    text += " (natural 20: maximum damage)"
                elif t.get("fumble"):
                    text += " (natural 1)"
            else:
                how = self.m.esc(t.get("automatic", "automatic hit"))
                text = f"{attacker} {verb} {target} with {power} ({how})"
            if t.get("overridden"):
                text += (
                    " [GM override: "
                    + ", ".join(f"{k} = {str(v).lower()}" for k, v in sorted(t["overridden"].items()))
                    + "]"
                )
            if "damage" in t:
                d = t["damage"]
                how = ""
                if "maximum" in d:
                    how = f"maximum {d['maximum']}" + (
                        f" + {d['crit_bonus']} bonus" if "crit_bonus" in d else ""
                    )
                elif len(o["targets"]) == 1 and p.get("damage"):
                    how = self.roll(p["damage"])
                text += "; " + (how + ", " if how else "") + self.damage_text(d)
            for eff in t.get("effects", []):
                text += f"; {target} gets {self.m.esc(eff['name'])} [{eff['effect_id']}]"
            text += "." + (self.life(target, t["damage"]) if "damage" in t else "")
            out.append(text)
        return " ".join(out)

    # ------------------------------------------------------------ powers, action points
    def power_name(self, cid: Any, pid: Any, state: Any) -> str:
        """A power's name from the creature's sheet (its id when the sheet does not have it)."""
        creatures = getattr(state, "creatures", None)
        c = creatures.get(cid) if creatures is not None else None
        power = c.powers.get(pid) if c is not None else None
        return self.m.esc(str(power["name"] if power else pid))

    def _ActionTaken(self, p: dict[str, Any], o: Any, s: Any) -> str:
        who = self.name(p["creature"], s)
        kind = str(p["action"])
        article = "an" if kind[0] in "aeiou" else "a"
        instead = f" (instead of a {p['substitutes_for']} action)" if p.get("substitutes_for") else ""
        name = f": {self.m.esc(p['name'])}" if p.get("name") else ""
        return f"{who} takes {article} {kind} action{instead}{name}."

    def _PowerUsed(self, p: dict[str, Any], o: Any, s: Any) -> str:
        tail = "" if o is None or o["expended"] else " (at will)"
        return f"{self.name(p['creature'], s)} uses {self.power_name(p['creature'], p['power_id'], s)}{tail}."

    def _RechargeRolled(self, p: dict[str, Any], o: Any, s: Any) -> str:
        who, power = self.name(p["creature"], s), self.power_name(p["creature"], p["power_id"], s)
        head = f"{who} rolls to recharge {power}: {self.roll(p['roll'])}"
        if o is None:
            return head + "."
        faces = "-".join(str(f) for f in (o["recharge_on"][0], o["recharge_on"][-1]))
        return f"{head} (recharge {faces}): {'recharged' if o['recharged'] else 'not recharged'}."

    def _RechargeConditionMet(self, p: dict[str, Any], o: Any, s: Any) -> str:
        why = f" ({self.m.esc(p['trigger'])})" if p.get("trigger") else ""
        return f"{self.name(p['creature'], s)}'s {self.m.esc(p['power_id'])} recharges{why}."

    def _ActionPointSpent(self, p: dict[str, Any], o: Any, s: Any) -> str:
        left = f"; {o['action_points_left']} left" if o else ""
        return f"{self.name(p['creature'], s)} spends an action point for an extra {p['extra']} action{left}."

    # ------------------------------------------------------------ effects and saves
    def _EffectApplied(self, p: dict[str, Any], o: Any, s: Any) -> str:
        eff = p["effect"]
        comps = ", ".join(_component(c) for c in eff.get("components", []))
        ident = f" [{o['effect_id']}]" if o else ""
        lasting = self.duration(eff.get("duration", {"kind": "until_removed"}), p["source"], s)
        return (
            f"{self.name(p['source'], s)} puts {self.m.esc(str(eff.get('name', 'an effect')))}{ident} on "
            f"{self.name(p['target'], s)}: {comps} ({lasting})."
        )

    def _EffectMaintained(self, p: dict[str, Any], o: Any, s: Any) -> str:
        who = self.name(o["maintained_by"], s) if o else "Its user"
        return f"{who} maintains {self.m.esc(p['effect_id'])} ({p['action']} action)."

    def _EffectEndedByChoice(self, p: dict[str, Any], o: Any, s: Any) -> str:
        who = self.name(o["ended_by"], s) if o else "Its user"
        return f"{who} ends {self.m.esc(p['effect_id'])} (free action)."

    def _EffectEnded(self, p: dict[str, Any], o: Any, s: Any) -> str:
        on = f" on {self.name(o['target'], s)}" if o else ""
        return f"Effect {self.m.esc(p['effect_id'])}{on} ends: {self.m.esc(p['reason'])}."

    def _SavingThrowRolled(self, p: dict[str, Any], o: Any, s: Any) -> str:
        who, eid = self.name(p["creature"], s), self.m.esc(p["effect_id"])
        head = f"{who} saves against {eid}: {self.roll(p['roll'])}"
        if o is None:
            return head + "."
        mods = f", {o['total']} with bonuses" if o["total"] != dice.roll_total(p["roll"]) else ""
        if o["success"]:
            after = ", its aftereffect begins" if o.get("aftereffect") else ""
            return f"{head}{mods}: success, the effect ends{after}."
        if o.get("first_failed_save"):
            comps = ", ".join(_component(c) for c in o["first_failed_save"]["components"])
            how = "instead" if o["first_failed_save"]["instead"] else "as well"
            return f"{head}{mods}: failure, the first failed save: {comps} {how}."
        return f"{head}{mods}: failure."

    def _EndOfTurnOrderChosen(self, p: dict[str, Any], o: Any, s: Any) -> str:
        order = ", ".join(self.m.esc(e) for e in p["effect_ids"])
        return f"{self.name(p['creature'], s)} resolves the end of the turn in this order: {order}."

    # ------------------------------------------------------------ the placeholder pack
    def _DamageApplied(self, p: dict[str, Any], o: Any, s: Any) -> str:
        who = self.name(p["target"], s)
        src = f" from {self.m.esc(p['source'])}" if p.get("source") and p["source"] != "other" else ""
        if o is None:
            amount = self.roll(p["roll"]) or str(p["amount"])
            return f"{who} takes {amount} damage{src}."
        roll = f"{self.roll(p['roll'])}, " if p.get("roll") else ""
        return f"{who} takes damage{src}: {roll}{self.damage_text(o)}.{self.life(who, o)}"

    def _HealingApplied(self, p: dict[str, Any], o: Any, s: Any) -> str:
        who = self.name(p["target"], s)
        head = f"{self.name(p['healer'], s)} heals {who}" if p.get("healer") else f"{who} is healed"
        if p.get("source"):
            head += f" ({self.m.esc(p['source'])})"
        if o is None:
            return head + "."
        if o.get("note"):
            return f"{head}: {self.m.esc(o['note'])}."
        surge = ", spending a healing surge" if o.get("surge_spent") else ""
        return f"{head}{surge}: {o['hp_healed']} HP restored.{self.life(who, o)}"

    def _TemporaryHitPointsGranted(self, p: dict[str, Any], o: Any, s: Any) -> str:
        amount = o["granted"] if o else p["amount"]
        tail = f"; now {o['temp_hp_after']}" if o else ""
        return f"{self.name(p['target'], s)} gains {amount} temporary hit points{tail}."

    def _HealingSurgeSpent(self, p: dict[str, Any], o: Any, s: Any) -> str:
        who = self.name(p["creature"], s)
        if o is None:
            return f"{who} spends a healing surge."
        restored = f"{o['hp_healed']} HP restored, {o['surges_left']} left"
        return f"{who} spends a healing surge: {restored}.{self.life(who, o)}"

    def _RallyUsed(self, p: dict[str, Any], o: Any, s: Any) -> str:
        who = self.name(p["creature"], s)
        if o is None or "hp_healed" not in o:
            return f"{who} rallies."
        return f"{who} rallies, spending a healing surge: {o['hp_healed']} HP restored.{self.life(who, o)}"

    def _DeathSavingThrowRolled(self, p: dict[str, Any], o: Any, s: Any) -> str:
        who = self.name(p["creature"], s)
        head = f"{who} makes a death saving throw: {self.roll(p['roll'])}"
        if o is None:
            return head + "."
        tail = f" ({o['death_save_failures']} failed so far)" if o["result"] == "failure" else ""
        return f"{head}: {o['result']}{tail}.{self.life(who, {'life_before': 'dying', **o})}"

    def _Stabilized(self, p: dict[str, Any], o: Any, s: Any) -> str:
        who = self.name(p["creature"], s)
        healer = self.name(p["healer"], s) if p.get("healer") else "The table"
        check = f" ({self.roll(p['roll'])} vs DC {o['dc'] if o else p.get('dc')})" if p.get("roll") else ""
        if o is None:
            return f"{healer} tries to stabilise {who}{check}."
        return f"{healer} tries to stabilise {who}{check}: {'stabilised' if o['success'] else 'still dying'}."

    def _DeathDeclared(self, p: dict[str, Any], o: Any, s: Any) -> str:
        return f"{self.name(p['creature'], s)} dies: {self.m.esc(p['cause'])}."

    def _rest(self, p: dict[str, Any], o: Any, s: Any, kind: str, length: str) -> str:
        who = self.names_of(o["participants"], s) if o else "The party"
        recharged = sorted({pid for ids in (o or {}).get("recharged", {}).values() for pid in ids})
        tail = f"; recharged: {', '.join(recharged)}" if recharged else ""
        return f"{who} take{'s' if o and len(o['participants']) == 1 else ''} {kind} ({length}){tail}."

    def _ShortRestTaken(self, p: dict[str, Any], o: Any, s: Any) -> str:
        return self._rest(p, o, s, "a short rest", f"{p['minutes']} minutes")

    def _LongRestTaken(self, p: dict[str, Any], o: Any, s: Any) -> str:
        return self._rest(p, o, s, "a long rest", f"{p['hours']} hours")

    def _EncounterEnded(self, p: dict[str, Any], o: Any, s: Any) -> str:
        text = super()._EncounterEnded(p, o, s)
        if o and o.get("action_point_gained"):
            gained = o["action_point_gained"]
            verb = "gains" if len(gained) == 1 else "gain"
            text = text if text.endswith((".", "!", "?")) else text + "."
            text += f" {self.names_of(gained, s)} {verb} an action point (every second encounter)."
        return text

    # ------------------------------------------------------------ boundaries
    def turn_end_steps(self, o: Mapping[str, Any], s: Any) -> list[Step]:
        out: list[Step] = []
        for x in o.get("aftereffects_began", []):
            out.append(
                ("derived", f"{self.m.esc(str(x['name']))} ({x['effect_id']}): the aftereffect begins.")
            )
        for x in o.get("effects_ended", []):
            out.append(
                (
                    "derived",
                    f"{self.m.esc(str(x['name']))} on {self.name(x['target'], s)} ends: "
                    f"{self.m.esc(x['why'])}.",
                )
            )
        return out

    def turn_start_steps(self, turn: Mapping[str, Any], s: Any) -> list[Step]:
        out: list[Step] = []
        who = self.name(turn["creature"], s)
        for tick in turn.get("persistent_damage", []):
            out.append(
                (
                    "derived",
                    f"Persistent {tick['type']} damage hurts {who}: {self.damage_text(tick)}."
                    + self.life(who, tick),
                )
            )
        for x in turn.get("effects_ended", []):
            out.append(("derived", f"{self.m.esc(str(x['name']))} on {self.name(x['target'], s)} ends."))
        return out

    # ------------------------------------------------------------ summaries
    def tally(
        self,
        fact_type: str,
        p: dict[str, Any],
        o: dict[str, Any] | None,
        changes: Mapping[str, Change],
        s: Any = None,
    ) -> list[tuple[str, str, int]]:
        """Damage dealt by attacks, XP; from the views: damage taken, healing, surges and action
        points spent."""
        out: list[tuple[str, str, int]] = []
        if o is not None and fact_type == "ExperienceAwarded":
            out += [(cid, "xp", int(o["amount"])) for cid in o["creatures"]]
        if o is not None and fact_type == "AttackMade":
            out += [(o["attacker"], "dealt", int(t.get("damage", {}).get("amount", 0))) for t in o["targets"]]
        for cid, (before, after) in changes.items():
            if before is None or after is None:
                continue
            lost = max(0, before["hp"] - after["hp"]) + max(0, before["temp_hp"] - after["temp_hp"])
            out += [
                (cid, "taken", lost),
                (cid, "healed", max(0, after["hp"] - before["hp"])),
                (cid, "surges", max(0, before["surges"] - after["surges"])),
                (cid, "action_points", max(0, before["action_points"] - after["action_points"])),
            ]
        return [x for x in out if x[2]]

    def marks(
        self, fact_type: str, p: dict[str, Any], o: dict[str, Any] | None, changes: Mapping[str, Change]
    ) -> list[tuple[str, str]]:
        out = super().marks(fact_type, p, o, changes)
        if o is not None and fact_type in REST_MARKS:
            out += [(cid, REST_MARKS[fact_type]) for cid in o.get("participants", [])]
        return out
