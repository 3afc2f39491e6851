"""A toy game system: the smallest real ruleset, written only against Chronicle's public seam.

It imports nothing from Chronicle but ``domain.core`` (catalogue, state, the encounter engine),
``domain.errors``, ``domain.dice`` and ``domain.rulesets`` (the protocol and ``Track``), which is
what a ruleset shipped as its own package may use. See README.md for its rules.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from domain import dice
from domain.core import encounters as core
from domain.core.catalogue import CORE, opt, req
from domain.core.narration import PLAIN, Markup, Narrator, Step
from domain.core.state import CreatureBase, TableState, dump_table, load_table, new_creature
from domain.errors import InvalidInput, NotFound, RuleViolation
from domain.rulesets import Track

FACTS = {
    "ToyCreatureJoined": {
        "creature_id": req("str"),
        "name": req("str"),
        "kind": req("enum", choices=("pc", "npc", "monster")),
        "max_hp": req("int", minimum=1, maximum=1000),
        "grit": opt("int", 2, minimum=0, maximum=10),
    },
    "Hit": {
        "target": req("str"),
        "roll": opt("roll", None, nullable=True),
        "amount": opt("int", 0, minimum=0, maximum=1000),
        "source": opt("str", None, nullable=True),
    },
    "Patch": {"target": req("str"), "amount": req("int", minimum=1, maximum=1000)},
    "Rally": {"creature": req("str")},
    "Brace": {"creature": req("str")},
}

ERROR_CODES = {
    "TOY_OUT": "The creature is out of the fight (no grit left); it can be neither hit nor patched.",
    "TOY_NO_GRIT": "The creature has no grit left to rally with.",
}

FLAGS: dict[str, tuple[Any, str, Callable[[Any], bool]]] = {
    "toy.rally_heals": (3, "Hit points a rally restores.", lambda v: isinstance(v, int) and 1 <= v <= 100),
}


class ToyCreature(CreatureBase):
    __slots__ = ("name", "kind", "max_hp", "hp", "grit", "life", "effects")


class ToyState(TableState):
    __slots__ = ()


Handler = Callable[[ToyState, dict[str, Any], Any], dict[str, Any]]


def _creature(state: ToyState, cid: str, field: str) -> ToyCreature:
    if cid not in state.creatures:
        raise NotFound(f"no creature {cid!r} in this campaign", field=field)
    c: ToyCreature = state.own(cid)
    return c


def _joined(state: ToyState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    cid = p["creature_id"]
    if cid in state.creatures:
        raise RuleViolation(f"a creature {cid!r} already exists", field="creature_id", code="ALREADY_EXISTS")
    c = new_creature(ToyCreature, cid)
    c.name, c.kind, c.max_hp, c.hp, c.grit, c.life, c.effects = (
        p["name"],
        p["kind"],
        p["max_hp"],
        p["max_hp"],
        p["grit"],
        "active",
        [],
    )
    state.creatures[cid] = c
    return {"creature": cid, "hp": c.hp}


def _hit(state: ToyState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    c = _creature(state, p["target"], "target")
    if c.life == "dead":
        raise RuleViolation(f"{c.name} is out of the fight", field="target", code="TOY_OUT")
    amount = dice.roll_total(p["roll"]) if p["roll"] else p["amount"]
    braced = any(e["name"] == "brace" for e in c.effects)
    if braced:
        amount //= 2
        c.effects = [e for e in c.effects if e["name"] != "brace"]
    before = c.life
    if c.life == "dying":
        c.grit = max(0, c.grit - 1)
        if c.grit == 0:
            c.life = "dead"
    else:
        c.hp = max(0, c.hp - amount)
        if c.hp == 0:
            c.life = "dying"
    return {"target": c.id, "amount": amount, "braced": braced, "life_before": before, "life_after": c.life}


def _patch(state: ToyState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    c = _creature(state, p["target"], "target")
    if c.life == "dead":
        raise RuleViolation(f"{c.name} is out of the fight", field="target", code="TOY_OUT")
    healed = min(p["amount"], c.max_hp - c.hp)
    before = c.life
    c.hp += healed
    if c.life == "dying" and c.hp > 0:
        c.life = "active"
    return {"target": c.id, "healed": healed, "life_before": before, "life_after": c.life}


def _rally(state: ToyState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    c = _creature(state, p["creature"], "creature")
    if c.grit <= 0:
        raise RuleViolation(f"{c.name} has no grit left", field="creature", code="TOY_NO_GRIT")
    if c.life == "dead":
        raise RuleViolation(f"{c.name} is out of the fight", field="creature", code="TOY_OUT")
    c.grit -= 1
    healed = min(int(state.flags["toy.rally_heals"]), c.max_hp - c.hp)
    before = c.life
    c.hp += healed
    if c.life == "dying" and c.hp > 0:
        c.life = "active"
    return {"creature": c.id, "healed": healed, "life_before": before, "life_after": c.life}


def _brace(state: ToyState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    c = _creature(state, p["creature"], "creature")
    effect_id = state.new_effect_id()
    enc = core.running_for(state, c.id)
    c.effects = [
        *c.effects,
        {
            "effect_id": effect_id,
            "name": "brace",
            "source": c.id,
            "components": [],
            # until a hit uses it, or the end of the holder's next turn (after this moment)
            "duration": {"kind": "end_of_next_turn", "anchor": c.id, "turn": enc.turn_no if enc else None},
        },
    ]
    state.holders[c.id] = None
    return {"creature": c.id, "effect_id": effect_id}


class ToyRules(core.Rules):
    """The core encounter engine's defaults (a d20 initiative, a standard and a move action a
    turn), and one derived step: a brace ends at the end of its holder's next turn."""

    def turn_ended(self, state: Any, enc: core.Encounter, cid: str, ctx: Any) -> dict[str, Any]:
        c = state.creatures.get(cid)
        ended = [
            e["effect_id"]
            for e in getattr(c, "effects", ())
            if e["name"] == "brace" and core.next_turn_passed(enc, cid, e["duration"].get("turn"))
        ]
        if not ended:
            return {}
        c = state.own(cid)
        c.effects = [e for e in c.effects if e["effect_id"] not in ended]
        return {"effects_ended": ended}


RULES = ToyRules()


class ToyNarrator(Narrator):
    """The toy's own sentences (the core tells encounters, turns, corrections and rulings), its
    turn-end step (a brace ending) and its per-encounter summary columns."""

    columns = (("damage_taken", "Damage taken"), ("healed", "Healed"))

    def _ToyCreatureJoined(self, p: dict[str, Any], o: Any, s: Any) -> str:
        return f"{self.m.esc(p['name'])} joins the fight ({p['max_hp']} HP, {p['grit']} grit)."

    def _Hit(self, p: dict[str, Any], o: Any, s: Any) -> str:
        who = self.name(p["target"], s)
        by = f" by {self.m.esc(p['source'])}" if p.get("source") else ""
        dice_text = f": {self.roll(p['roll'])}" if p.get("roll") else ""
        if not o:  # revoked or orphaned: what was claimed
            amount = dice.roll_total(p["roll"]) if p.get("roll") else p["amount"]
            return f"{who} is hit{by} for {amount}{dice_text}."
        if o["life_before"] == "dying":
            return f"{who} is hit{by} while down and loses a grit{dice_text}.{self.life(who, o)}"
        braced = ", halved by the brace" if o["braced"] else ""
        return f"{who} is hit{by} for {o['amount']}{dice_text}{braced}.{self.life(who, o)}"

    def _Patch(self, p: dict[str, Any], o: Any, s: Any) -> str:
        who = self.name(p["target"], s)
        healed = o["healed"] if o else p["amount"]
        return f"{who} is patched up for {healed} HP.{self.life(who, o or {})}"

    def _Rally(self, p: dict[str, Any], o: Any, s: Any) -> str:
        who = self.name(p["creature"], s)
        if not o:
            return f"{who} rallies."
        return f"{who} rallies: a grit for {o['healed']} HP.{self.life(who, o)}"

    def _Brace(self, p: dict[str, Any], o: Any, s: Any) -> str:
        return f"{self.name(p['creature'], s)} braces."

    def turn_end_steps(self, o: Mapping[str, Any], s: Any) -> list[Step]:
        if not o.get("effects_ended"):
            return []
        return [("derived", f"{self.name(o['ended'], s)}'s brace ends.")]

    def tally(
        self,
        fact_type: str,
        p: dict[str, Any],
        o: dict[str, Any] | None,
        changes: Mapping[str, Any],
        s: Any = None,
    ) -> list[tuple[str, str, int]]:
        if not o:
            return []
        if fact_type == "Hit" and o.get("amount"):
            return [(o["target"], "damage_taken", int(o["amount"]))]
        if fact_type in ("Patch", "Rally") and o.get("healed"):
            return [(o.get("target") or o["creature"], "healed", int(o["healed"]))]
        return []


HANDLERS: dict[str, Handler] = {
    "ToyCreatureJoined": _joined,
    "Hit": _hit,
    "Patch": _patch,
    "Rally": _rally,
    "Brace": _brace,
    **core.handlers(RULES),  # encounters, initiative, rounds, turns and time: the core's
}


class Toy:
    id = "toy"
    title = "Toy"
    version = "2"  # 2: encounters, and a brace ends at the end of its holder's next turn
    catalogue = CORE.extend(FACTS)
    flag_defaults: Mapping[str, Any] = {name: spec[0] for name, spec in FLAGS.items()}
    error_codes: Mapping[str, str] = ERROR_CODES
    encounter_rules = RULES

    def narrator(self, markup: Markup = PLAIN) -> Narrator:
        return ToyNarrator(markup)

    def initial_state(self, flags: dict[str, Any]) -> ToyState:
        return ToyState(flags)

    def apply(self, state: ToyState, fact_type: str, payload: dict[str, Any], ctx: Any) -> dict[str, Any]:
        handler = HANDLERS.get(fact_type)
        if handler is None:
            raise InvalidInput(f"the toy system does not know the fact {fact_type}", field="type")
        state.fact_seq, state.fact_effects = ctx.seq, 0
        return handler(state, payload, ctx)

    def validate_flag(self, flag: str, value: Any) -> Any:
        spec = FLAGS.get(flag)
        if spec is None:
            raise InvalidInput(f"unknown rules flag {flag!r}", field="flag")
        if not spec[2](value):
            raise InvalidInput(f"flag {flag} does not accept {value!r}", field="value")
        return value

    def flags_doc(self) -> list[dict[str, Any]]:
        return [{"name": n, "default": s[0], "ref": "toy README", "doc": s[1]} for n, s in FLAGS.items()]

    def creature_view(self, state: ToyState, creature_id: str) -> dict[str, Any]:
        c: ToyCreature = state.creatures[creature_id]
        return {
            "id": c.id,
            "name": c.name,
            "kind": c.kind,
            "level": 1,
            "life": c.life,
            "conditions": ["braced"] if any(e["name"] == "brace" for e in c.effects) else [],
            "effects": [dict(e) for e in c.effects],
            "hit_points": {"current": c.hp, "max": c.max_hp, "temporary": 0},
            "grit": c.grit,
        }

    def encounter_view(self, state: ToyState, encounter_id: str) -> dict[str, Any]:
        return core.view(state, state.encounters[encounter_id], RULES)

    def campaign_view(self, state: ToyState) -> dict[str, Any]:
        return {
            "clock_minutes": state.minutes,
            "flags": dict(state.flags),
            "active_encounter": state.active_encounter,
        }

    def pending_rolls(self, state: ToyState) -> list[tuple[str, dict[str, Any]]]:
        return core.pending_rolls(state, RULES)

    def dump_state(self, state: ToyState) -> dict[str, Any]:
        return dump_table(state)

    def load_state(self, data: dict[str, Any]) -> ToyState:
        return load_table(ToyState, data, creature=ToyCreature, encounter=core.Encounter)

    def tracks(self, view: dict[str, Any]) -> list[Track]:
        hp = view["hit_points"]
        return [
            Track("hp", "HP", hp["current"], ceiling=hp["max"], thresholds=(("dying", 0),)),
            Track("grit", "Grit", view["grit"], ceiling=None),
        ]


TOY = Toy()
