"""Sentences for powers, ammunition, grenades, Bluff, escape and falls (``powers.py``, ``skills.py``)."""

from __future__ import annotations

from typing import Any

from domain.core.narration import Narrator


class GearSentences(Narrator):
    """The base of ``StellarWindsNarrator``, which gives ``damage_text``."""

    def damage_text(self, d: dict[str, Any], roll: Any = None) -> str:  # pragma: no cover
        raise NotImplementedError

    def _PowerUsed(self, p: dict[str, Any], o: Any, s: Any) -> str:
        who = self.name(p["creature"], s)
        if o is None:
            return f"{who} uses the power {self.m.esc(p['power_id'])}."
        state = "expended until a rest" if o["expended"] else "at will"
        return f"{who} uses {self.m.esc(o['name'])} ({o['frequency'].replace('_', ' ')}: {state})."

    def _AmmunitionExpended(self, p: dict[str, Any], o: Any, s: Any) -> str:
        left = f"; {o['rounds_left']} left" if o else ""
        weapon = self.m.esc(p["weapon_id"])
        return f"{self.name(p['creature'], s)} spends {p['rounds']} round(s) of {weapon}{left}."

    def _EquipmentChanged(self, p: dict[str, Any], o: Any, s: Any) -> str:
        counts = ", ".join(f"{self.m.esc(k)} {v}" for k, v in sorted(p["ammo"].items()))
        why = f" ({self.m.esc(p['reason'])})" if p.get("reason") else ""
        return f"{self.name(p['creature'], s)} now carries {counts}{why}."

    def _GrenadeThrown(self, p: dict[str, Any], o: Any, s: Any) -> str:
        who = self.name(p["creature"], s)
        x, y = p["square"]
        head = f"{who} throws a {self.m.esc(p.get('grenade_id', 'grenade'))} at square ({x}, {y})"
        if o is None:
            return head + "."
        lx, ly = o["lands_on"]
        if o.get("direction"):
            return (
                f"{head}, {p['increments']} range increments away: {self.roll(p['deviation'])}, it bounces "
                f"{o['bounced']} square(s) {o['direction']} and lands on ({lx}, {ly})."
            )
        return f"{head}; it lands there."

    def _BluffForCombatAdvantageRolled(self, p: dict[str, Any], o: Any, s: Any) -> str:
        who, target = self.name(p["creature"], s), self.name(p["target"], s)
        head = f"{who} bluffs {target}: {self.roll(p['roll'])}"
        if o is None:
            return head + "."
        verdict = "combat advantage against them" if o["success"] else "no combat advantage"
        return f"{head} = {o['total']} vs Insight {o['vs_insight']}: {verdict}."

    def _EscapeAttempted(self, p: dict[str, Any], o: Any, s: Any) -> str:
        who = self.name(p["creature"], s)
        head = f"{who} tries to escape ({p['skill'].title()}): {self.roll(p['roll'])}"
        if o is None:
            return head + "."
        names = {"ref": "Reflex", "fort": "Fortitude"}
        holder = self.name(o["grabber"], s)
        verdict = "free, and may shift 1 square" if o["success"] else "still held"
        return f"{head} = {o['total']} vs {holder}'s {names[o['defense']]} {o['defense_value']}: {verdict}."

    def _FallTaken(self, p: dict[str, Any], o: Any, s: Any) -> str:
        who = self.name(p["creature"], s)
        head = f"{who} falls {p['feet']} feet"
        if o is None:
            return head + "."
        check = f" (Acrobatics {self.roll(p['acrobatics'])})" if p.get("acrobatics") else ""
        prone = f" {who} lands prone." if o.get("prone") else ""
        return f"{head}{check}: {self.damage_text(o, p.get('roll'))}.{self.life(who, o)}{prone}"
