"""Stellar Winds sentences: what its facts read like in the log, the story and the exports.

One narrator (``domain.core.narration.Narrator``) serves every output; this adds Stellar Winds'
facts, its turn-boundary steps (ongoing damage, regeneration, effects ending, aftereffects),
its per-encounter summary columns and its timeline marks (rests).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from domain import dice
from domain.core.narration import Change, Step
from domain.rulesets.stellar_winds.narrate_gear import GearSentences

DURATIONS = {
    "save_ends": "save ends",
    "until_start_of_turn": "until the start of {anchor}'s next turn",
    "until_end_of_turn": "until the end of {anchor}'s next turn",
    "end_of_encounter": "until the end of the encounter",
    "sustained": "sustained by {anchor}",
    "until_removed": "until removed",
    "surprise_round": "for the surprise round",
}
DEFENSES = {"ac": "AC", "fort": "Fortitude", "ref": "Reflex", "will": "Will"}
REST_MARKS = {"ShortRestTaken": "short rest", "ExtendedRestTaken": "extended rest"}


def effect_source(state: Any, effect_id: str) -> str | None:
    """Who created an effect still on some creature (read-only)."""
    for cid in getattr(state, "holders", ()):
        for e in getattr(state.creatures.get(cid), "effects", None) or ():
            if e["effect_id"] == effect_id:
                return str(e.get("source"))
    return None


class StellarWindsNarrator(GearSentences):
    """Sentences, boundary steps, summary columns and marks for Stellar Winds."""

    columns = (
        ("dealt", "Damage dealt"),
        ("taken", "Damage taken"),
        ("healed", "Healing"),
        ("surges", "Surges spent"),
        ("action_points", "Action points spent"),
        ("xp", "XP"),
    )

    def duration(self, duration: dict[str, Any] | str, state: Any, default_anchor: str = "") -> str:
        kind = duration if isinstance(duration, str) else duration.get("kind", "until_removed")
        anchor = default_anchor if isinstance(duration, str) else duration.get("anchor", default_anchor)
        return DURATIONS.get(kind, kind).format(anchor=self.name(anchor, state) if anchor else "its creator")

    def _CreatureRegistered(self, p: dict[str, Any], o: Any, s: Any) -> str:
        if o is not None:  # a registration in force (a revoked one never named anybody)
            self.names[p["creature_id"]] = p["name"]
        kind = {"pc": "player character", "monster": "monster", "npc": "NPC"}[p["kind"]]
        d = p["defenses"]
        bits = [f"{p['max_hp']} HP"]
        if p.get("surges_per_day"):
            bits.append(f"{p['surges_per_day']} healing surges")
        wounds = p.get("max_wounds") or p["abilities"].get("con", 10)
        bits.append(f"{wounds} wounds")
        bits.append(", ".join(f"{DEFENSES[k]} {d[k]}" for k in ("ac", "fort", "ref", "will") if k in d))
        for key, word in (("resist", "resist"), ("vuln", "vulnerable")):
            if p.get(key):
                bits.append(", ".join(f"{word} {v} {t}" for t, v in sorted(p[key].items())))
        return (
            f"{self.name(p['creature_id'])} joins the campaign: level {p['level']} {kind}; {'; '.join(bits)}."
        )

    def _SheetUpdated(self, p: dict[str, Any], o: Any, s: Any) -> str:
        changes = ", ".join(f"{k} {self.m.esc(str(v))}" for k, v in sorted(p["changes"].items()))
        why = f" ({self.m.esc(p['reason'])})" if p.get("reason") else ""
        return f"{self.name(p['creature_id'], s)}'s sheet changes: {changes}{why}."

    def damage_text(self, d: dict[str, Any], roll: Any = None) -> str:
        """``3d6 (4, 6, 2) + 5 = 17 fire, 5 resisted: 12 damage (12 HP)``."""
        types = " and ".join(d.get("types", []))
        head = self.roll(roll if roll is not None else d.get("roll"))
        steps = d.get("steps", [])
        rolled = steps[0]["value"] if steps else d.get("amount", 0)
        if not head:
            head = ""
        elif roll is not None and dice.roll_total(roll) != rolled:
            head += f", {rolled} counted"
        if types:
            head += f" {types}" if head else types
        notes = []
        for step in steps[1:]:
            label = step["step"]
            if label.startswith("resist"):
                notes.append(f"{-step['value']} resisted")
            elif label.startswith("vulnerable"):
                notes.append(f"+{step['value']} vulnerable")
            elif label != "after resistance and vulnerability":
                notes.append(label)
        if notes:
            head += (", " if head else "") + ", ".join(notes)
        layers = [
            f"{d[k]} {w}"
            for k, w in (("temp_hp_lost", "temporary HP"), ("hp_lost", "HP"), ("wounds_lost", "wounds"))
            if d.get(k)
        ]
        kind = "wounding damage" if d.get("wounding") else "damage"
        body = f"{head}: {d.get('amount', 0)} {kind}" if head else f"{d.get('amount', 0)} {kind}"
        if layers:
            body += f" ({', '.join(layers)})"
        return body

    def _DamageTaken(self, p: dict[str, Any], o: Any, s: Any) -> str:
        who = self.name(p["target"], s)
        src = f" from {self.m.esc(p['source'])}" if p.get("source") and p["source"] != "other" else ""
        if o is None:
            amount = self.roll(p["roll"]) or str(p["amount"])
            if p["roll"] and p["amount"]:
                amount += f" + {p['amount']}"
            return f"{who} takes {amount} {' and '.join(p['types'])} damage{src}.".replace("  ", " ")
        extra = f" + {p['amount']}" if p["roll"] and p["amount"] else ""
        return f"{who} takes damage{src}: {self.damage_text(o, p['roll'])}{extra}.{self.life(who, o)}"

    def _HealingApplied(self, p: dict[str, Any], o: Any, s: Any) -> str:
        who = self.name(p["target"], s)
        healer = f"{self.name(p['healer'], s)} heals {who}" if p.get("healer") else f"{who} is healed"
        how = [self.m.esc(p["source"])] if p.get("source") else []
        if p["magical"]:
            how.append("magical")
        parts = []
        if p["surge_multiplier"]:
            # the number is the fold's (the outcome's breakdown); a skipped fact shows the formula
            shown = [x["value"] for x in (o or {}).get("parts", []) if "surge value" in x["source"]]
            value = f"{shown[0]} " if shown else ""
            times = f"{p['surge_multiplier']} x " if p["surge_multiplier"] > 1 else ""
            parts.append(f"{value}({times}surge value)")
        if p["roll"]:
            parts.append(self.roll(p["roll"]))
        if p["flat"]:
            parts.append(str(p["flat"]))
        head = f"{healer}{' (' + ', '.join(how) + ')' if how else ''}"
        if o is None:
            return f"{head}: {' + '.join(parts) or '0'}."
        if o.get("note"):
            return f"{head}: {self.m.esc(o['note'])}."
        got = [
            f"{o['wounds_healed']} wounds" if o.get("wounds_healed") else "",
            f"{o['hp_healed']} HP" if o.get("hp_healed") else "",
        ]
        if o.get("wounds_raised_to_conscious"):
            got.insert(0, f"wounds raised by {o['wounds_raised_to_conscious']} to wake")
        restored = ", ".join(g for g in got if g) or "nothing"
        surge = ", spending a healing surge" if o.get("surge_spent") else ""
        return (
            f"{head}{surge}: {' + '.join(parts) or '0'}, {o['amount']} healing; restores {restored}."
            + self.life(who, o)
        )

    def _TemporaryHitPointsGranted(self, p: dict[str, Any], o: Any, s: Any) -> str:
        src = f" ({self.m.esc(p['source'])})" if p.get("source") else ""
        amount = o["granted"] if o else p["amount"]
        tail = f"; now {o['temp_hp_after']}" if o else ""
        return f"{self.name(p['target'], s)} gains {amount} temporary hit points{src}{tail}."

    def _HealingSurgeSpent(self, p: dict[str, Any], o: Any, s: Any) -> str:
        who = self.name(p["creature"], s)
        # v2: an enum cause ("short_rest" -> "short rest") and free words in `note`.
        why = p["cause"].replace("_", " ") if p["cause"] != "other" or not p.get("note") else ""
        why = "; ".join(w for w in (why, p.get("note") or "") if w)
        if o is None:
            return f"{who} spends a healing surge ({self.m.esc(why)})."
        return (
            f"{who} spends a healing surge ({self.m.esc(why)}): {o['hp_healed']} HP restored, "
            f"{o['surges_left']} surges left."
        )

    def _SecondWindUsed(self, p: dict[str, Any], o: Any, s: Any) -> str:
        who = self.name(p["creature"], s)
        if o is None:
            return f"{who} uses second wind."
        return (
            f"{who} uses second wind: {o['hp_healed']} HP restored, +2 to all defenses until their next turn."
        )

    def _DeathSavingThrowRolled(self, p: dict[str, Any], o: Any, s: Any) -> str:
        who = self.name(p["creature"], s)
        head = f"{who} makes a death saving throw: {self.roll(p['roll'])}"
        if o is None:
            return head + "."
        mods = f", {o['total']} with modifiers" if o["total"] != dice.roll_total(p["roll"]) else ""
        tail = f" ({o['death_save_failures']} failed so far)" if o["result"] == "failure" else ""
        return f"{head}{mods}: {o['result']}{tail}.{self.life(who, {'life_before': 'dying', **o})}"

    def _StabilizationAttempted(self, p: dict[str, Any], o: Any, s: Any) -> str:
        who = self.name(p["target"], s)
        healer = self.name(p["healer"], s) if p.get("healer") else "Someone"
        check = f": {self.roll(p['roll'])}" if p.get("roll") else ""
        if o is None:
            return f"{healer} tries to stabilise {who}{check}."
        verdict = "stabilised" if o["success"] else "still dying"
        return f"{healer} tries to stabilise {who}{check} vs DC {o['dc']}: {who} is {verdict}."

    def _WoundsRestored(self, p: dict[str, Any], o: Any, s: Any) -> str:
        method = p["method"].replace("_", " ")
        tail = f" (wounds {o['wounds_before']} to {o['wounds_after']})" if o else ""
        return f"{self.name(p['target'], s)} recovers {p['amount']} wounds by {method}{tail}."

    def _DeathDeclared(self, p: dict[str, Any], o: Any, s: Any) -> str:
        return f"{self.name(p['creature'], s)} dies: {self.m.esc(p['cause'])}."

    def _CreatureRaised(self, p: dict[str, Any], o: Any, s: Any) -> str:
        return f"{self.name(p['creature'], s)} is raised from the dead ({self.m.esc(p['means'])})."

    def _rest(self, p: dict[str, Any], o: Any, s: Any, kind: str, length: str) -> str:
        who = (
            self.names_of(o["participants"], s)
            if o
            else (self.names_of(p["participants"], s) if p.get("participants") else "The party")
        )
        return f"{who} take{'s' if o and len(o['participants']) == 1 else ''} {kind} ({length})."

    def _ShortRestTaken(self, p: dict[str, Any], o: Any, s: Any) -> str:
        return self._rest(p, o, s, "a short rest", f"{p['minutes']} minutes")

    def _ExtendedRestTaken(self, p: dict[str, Any], o: Any, s: Any) -> str:
        return self._rest(p, o, s, "an extended rest", f"{p['hours']} hours")

    def _MilestoneReached(self, p: dict[str, Any], o: Any, s: Any) -> str:
        return f"Milestone: {self.names_of(p['creatures'], s)} gain an action point."

    def _ActionPointSpent(self, p: dict[str, Any], o: Any, s: Any) -> str:
        left = f"; {o['action_points_left']} left" if o else ""
        return f"{self.name(p['creature'], s)} spends an action point ({p['use'].replace('_', ' ')}{left})."

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

    # ----------------------------------------------------------- attacks
    def _parts(self, parts: list[dict[str, Any]]) -> str:
        out = ""
        for i, part in enumerate(parts):
            v = part["value"]
            label = "" if part["source"] in ("d20", "attack bonus") else f" ({self.m.esc(part['source'])})"
            out += (str(v) if i == 0 else (f" + {v}" if v >= 0 else f" - {-v}")) + label
        return out

    def _AttackMade(self, p: dict[str, Any], o: Any, s: Any) -> str:
        attacker = self.name(p["attacker"], s)
        power = self.m.esc(str(p["power"].get("name") or "an attack"))
        if o is None:
            rolls = ", ".join(
                f"{self.name(t['target'], s)} (d20: {dice.natural(t['roll'])})" for t in p["targets"]
            )
            return f"{attacker} attacks {rolls} with {power}."
        sentences = []
        shared = o["kind"] in ("close", "area")
        if shared and p.get("damage"):
            sentences.append(
                f"{attacker} uses {power} ({o['kind']}), damage {self.roll(p['damage'])} for all"
            )
        for t in o["targets"]:
            target = self.name(t["target"], s)
            verb = "critically hits" if t["crit"] else ("hits" if t["hit"] else "misses")
            text = (
                f"{attacker} {verb} {target} with {power}: {self._parts(t['attack_parts'])} = "
                f"{t['attack_total']} vs {DEFENSES[t['defense']]} {t['defense_value']}"
            )
            extra_def = [x for x in t["defense_parts"][1:]]
            if extra_def:
                text += (
                    " (" + ", ".join(f"{self.m.esc(x['source'])} {x['value']:+d}" for x in extra_def) + ")"
                )
            if t.get("overridden"):
                text += (
                    " [GM override: "
                    + ", ".join(f"{k} = {str(v).lower()}" for k, v in sorted(t["overridden"].items()))
                    + "]"
                )
            if "damage" in t:
                text += "; " + self.damage_text(t["damage"], None if shared else t["damage"]["roll"])
            for eff in t.get("effects", []):
                lasting = self.duration(eff["duration"], s, p["attacker"])
                text += f"; {target} is {self.m.esc(eff['name'])} ({lasting})"
            text += "." + (self.life(target, t["damage"]) if "damage" in t else "")
            sentences.append(text)
        return " ".join(x if x.endswith(".") else x + "." for x in sentences)

    def _DiceRerolled(self, p: dict[str, Any], o: Any, s: Any) -> str:
        who = self.name(p["creature"], s) if p.get("creature") else "The table"
        why = f" ({self.m.esc(p['reason'])})" if p.get("reason") else ""
        head = f"{who} rerolls die {p['die_index'] + 1} of {self.m.esc(p['roll']['expression'])}{why}"
        if o is None:
            return f"{head}: now {p['new_face']}."
        totals = f"total {o['total_before']} -> {o['total_after']}"
        return f"{head}: {o['old_face']} becomes {o['new_face']}, {totals}."

    def _ExplosiveSaveRolled(self, p: dict[str, Any], o: Any, s: Any) -> str:
        who = self.name(p["target"], s)
        what = self.m.esc(p.get("explosive") or "an explosive")
        head = f"{who} makes a save against {what}: {self.roll(p['roll'])}"
        if o is None:
            return head + "."
        verdict = "half damage" if o["success"] else "full damage"
        return f"{head}, {o['total']} vs DC {o['dc']}: {verdict}; {self.damage_text(o, p.get('damage'))}."

    def _TableActionTaken(self, p: dict[str, Any], o: Any, s: Any) -> str:
        who = self.name(p["creature"], s)
        by = f" by {self.name(p['source'], s)}" if p.get("source") and p["source"] != p["creature"] else ""
        text = {
            "total_defense": f"{who} takes total defense: +2 to all defenses until their next turn",
            "drop_prone": f"{who} drops prone",
            "stand_up": f"{who} stands up",
            "knock_prone": f"{who} is knocked prone{by}",
        }[p["name"]]
        note = f" ({self.m.esc(o['note'])})" if o and o.get("note") else ""
        return f"{text}{note}."

    def _ActionReadied(self, p: dict[str, Any], o: Any, s: Any) -> str:
        return f"{self.name(p['creature'], s)} readies a {p['action']} action: {self.m.esc(p['trigger'])}."

    def _ActionTaken(self, p: dict[str, Any], o: Any, s: Any) -> str:
        name = f": {self.m.esc(p['name'])}" if p.get("name") else ""
        sub = f" (instead of a {p['substitutes_for']} action)" if p.get("substitutes_for") else ""
        gm = " (GM exception)" if p.get("gm_exception") else ""
        article = "an" if p["action"][0] in "aeiou" else "a"
        return f"{self.name(p['creature'], s)} takes {article} {p['action']} action{sub}{name}{gm}."

    def _EffectApplied(self, p: dict[str, Any], o: Any, s: Any) -> str:
        eff = p["effect"]
        comps = []
        for comp in eff.get("components", []):
            if "condition" in comp:
                marker = f" by {self.name(comp['marker'], s)}" if comp.get("marker") else ""
                comps.append(f"{comp['condition']}{marker}")
            if "ongoing" in comp:
                comps.append(
                    f"ongoing {comp['ongoing']['amount']} {comp['ongoing'].get('type', '')}".rstrip()
                )
            for key in ("defense_mod", "attack_mod"):
                if key in comp:
                    comps.append(f"{key.split('_')[0]} {comp[key]['value']:+d}")
            for key in ("resist", "vuln"):
                if key in comp:
                    comps.append(f"{key} {comp[key]['value']} {comp[key].get('type', '')}".rstrip())
            if "regeneration" in comp:
                comps.append(f"regeneration {comp['regeneration']}")
        ident = f" [{o['effect_id']}]" if o else ""
        return (
            f"{self.name(p['source'], s)} puts {self.m.esc(eff.get('name', 'an effect'))}{ident} on "
            f"{self.name(p['target'], s)}: {', '.join(comps)} "
            f"({self.duration(eff.get('duration', {'kind': 'until_removed'}), s, p['source'])})."
        )

    def _EffectSustained(self, p: dict[str, Any], o: Any, s: Any) -> str:
        who = f"{self.name(o['sustained_by'], s)} sustains" if o else "Sustained:"
        return f"{who} effect {self.m.esc(p['effect_id'])} ({p['action']} action)."

    def _EffectEnded(self, p: dict[str, Any], o: Any, s: Any) -> str:
        on = f" on {self.name(o['target'], s)}" if o else ""
        return f"Effect {self.m.esc(p['effect_id'])}{on} ends: {self.m.esc(p['reason'])}."

    def _SavingThrowRolled(self, p: dict[str, Any], o: Any, s: Any) -> str:
        who = self.name(p["creature"], s)
        head = f"{who} saves against {self.m.esc(p['effect_id'])}: {self.roll(p['roll'])}"
        if o is None:
            return head + "."
        mods = f", {o['total']} with modifiers" if o["total"] != dice.roll_total(p["roll"]) else ""
        if o["success"]:
            after = ", its aftereffect begins" if o.get("aftereffect") else ""
            return f"{head}{mods}: success, the effect ends{after}."
        return f"{head}{mods}: failure."

    def _EncounterEnded(self, p: dict[str, Any], o: Any, s: Any) -> str:
        text = super()._EncounterEnded(p, o, s)
        if o and o.get("milestone"):
            text += f" Milestone: {self.names_of(o['milestone'], s)} gain an action point."
        return text

    # --------------------------------------------------------- boundaries
    def turn_end_steps(self, o: Mapping[str, Any], s: Any) -> list[Step]:
        out: list[Step] = []
        for eid in o.get("aftereffects_began", []):
            out.append(("derived", f"{self.m.esc(eid)}: aftereffect begins."))
        for key, verb in (("sustained_lapsed", "is not sustained and ends"), ("effects_ended", "ends")):
            for x in o.get(key, []):
                out.append(("derived", f"{self.m.esc(x['name'])} on {self.name(x['target'], s)} {verb}."))
        return out

    def turn_start_steps(self, turn: Mapping[str, Any], s: Any) -> list[Step]:
        out: list[Step] = []
        who = self.name(turn["creature"], s)
        for tick in turn.get("ongoing_damage", []):
            out.append(
                (
                    "derived",
                    f"Ongoing {tick['type']} damage ({self.m.esc(tick['effect_id'])}) hurts "
                    f"{who}: {self.damage_text(tick)}.{self.life(who, tick)}",
                )
            )
        if turn.get("regeneration"):
            out.append(("derived", f"{who} regenerates {turn['regeneration']['hp_healed']} HP."))
        for x in turn.get("effects_ended", []):
            out.append(("derived", f"{self.m.esc(x['name'])} on {self.name(x['target'], s)} ends."))
        return out

    # --------------------------------------------------------- summaries
    def tally(
        self,
        fact_type: str,
        p: dict[str, Any],
        o: dict[str, Any] | None,
        changes: Mapping[str, Change],
        s: Any = None,
    ) -> list[tuple[str, str, int]]:
        """Damage dealt (attacks; ongoing damage by its effect's source), XP; and from the views:
        damage taken (temporary HP, HP and wounds lost), healing (HP and wounds gained), surges
        and action points spent."""
        out: list[tuple[str, str, int]] = []
        if o is not None and fact_type == "ExperienceAwarded":
            out += [(cid, "xp", int(o["amount"])) for cid in o["creatures"]]
        if o is not None and fact_type == "AttackMade":
            out += [(o["attacker"], "dealt", t.get("damage", {}).get("amount", 0)) for t in o["targets"]]
        if o is not None and fact_type in ("TurnEnded", "TurnStarted"):
            for turn in o.get("turns", []) + ([o] if fact_type == "TurnStarted" else []):
                for tick in turn.get("ongoing_damage", []):
                    source = effect_source(s, tick["effect_id"])
                    if source:
                        out.append((source, "dealt", int(tick.get("amount", 0))))
        for cid, (before, after) in changes.items():
            if before is None or after is None:
                continue
            lost = sum(max(0, before[k] - after[k]) for k in ("hp", "temp_hp", "wounds"))
            gained = max(0, after["hp"] - before["hp"]) + max(0, after["wounds"] - before["wounds"])
            out += [
                (cid, "taken", lost),
                (cid, "healed", gained),
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
