"""``OrcusCharacter``: the shared ``Character`` fields plus Orcus's own (RULES.md C4.1).

Every number is the ruleset's creature view (``domain.rulesets.orcus``) or its one implementation
of a rule (a defense now is ``attacks.defense_of``): nothing is computed here, so the API and the
fold cannot disagree.
"""

from __future__ import annotations

from typing import Any

import strawberry
from strawberry.scalars import JSON

from api.graphql.types import Character, Modifier
from api.rulesets.orcus.inputs import OrcusDefense, OrcusDurationKind, OrcusFrequency, OrcusRank
from domain.rulesets.orcus.tables import DURATIONS


@strawberry.type(description="A defense: the sheet's, and now (conditions and effects, A4.9 placeholders).")
class OrcusDefenseValue:
    defense: OrcusDefense
    base: int
    current: int
    modifiers: list[Modifier]


@strawberry.type(description="A4.9 placeholder: healing surges, each worth floor(max HP / 4).")
class OrcusHealingSurges:
    remaining: int
    per_day: int
    value: int


@strawberry.type(description="When an action point was last spent (OR-7).")
class OrcusActionPointSpend:
    encounter_id: str | None
    round: int | None


@strawberry.type(
    description="OR-7 / B-OR-3 / ruling 21: a hero starts with 1, gains 1 after every second encounter, "
    "spends at most one per encounter, never in the surprise round; reset to 1 by a long rest. An elite "
    "or boss has its stat block's and spends at most one per round."
)
class OrcusActionPoints:
    current: int
    stat_block: int = strawberry.field(description="A monster's per its stat block (a hero's: 1).")
    spent_this_encounter: bool
    last_spent: OrcusActionPointSpend | None


@strawberry.type(description="A power (OR-9) and whether it is expended, since when.")
class OrcusPower:
    power_id: str
    name: str
    frequency: OrcusFrequency
    recharge: list[int] | None = strawberry.field(
        description="'Recharge X-Y': the d6 faces that recharge it."
    )
    condition: str | None = strawberry.field(description="'Recharge if ...'.")
    expended: bool
    used_in_encounter: str | None = strawberry.field(description="Where it was used (while expended).")
    used_on_turn: int | None = strawberry.field(description="The encounter's turn number it was used on.")


@strawberry.type(description="A damage type and a value (resistance, vulnerability).")
class OrcusTypedValue:
    type: str
    value: int


@strawberry.type(
    description="Persistent damage taken at the start of its turn: per type, the highest (ruling 20)."
)
class OrcusPersistentDamage:
    type: str
    amount: int
    effect_id: str


@strawberry.type(description="An effect in force, with what Orcus keeps on it (OR-17..OR-19).")
class OrcusEffect:
    effect_id: str
    name: str | None
    source: str | None
    components: JSON
    conditions: list[str]
    duration: OrcusDurationKind
    anchor: str | None = strawberry.field(description="The creature whose turns time it.")
    save_ends: bool
    maintain_action: str | None = strawberry.field(description="A maintained effect's action (OR-18).")
    maintained_on_turn: int | None = strawberry.field(description="The turn it was last maintained on.")
    applied_on_turn: int | None
    aftereffect: JSON | None = strawberry.field(description="What begins when it ends (OR-19, ruling 23).")
    first_failed_save: JSON | None = strawberry.field(
        description="A First Failed Save rider not yet applied (B-OR-12)."
    )
    first_failed_save_applied: bool
    pending: bool = strawberry.field(description="An aftereffect waiting for the end of its turn's saves.")


def _effect(e: dict[str, Any]) -> OrcusEffect:
    d = dict(e.get("duration") or {})
    kind = str(d.get("kind", "until_removed"))
    comps = list(e.get("components") or [])
    return OrcusEffect(
        effect_id=str(e["effect_id"]),
        name=e.get("name"),
        source=e.get("source"),
        components=comps,
        conditions=[c["condition"] for c in comps if isinstance(c, dict) and c.get("condition")],
        duration=OrcusDurationKind(kind),
        anchor=d.get("anchor"),
        save_ends=bool(DURATIONS[kind].save_ends),
        maintain_action=d.get("action") if kind == "maintain" else None,
        maintained_on_turn=e.get("maintained_turn"),
        applied_on_turn=d.get("applied_turn"),
        aftereffect=e.get("aftereffect"),
        first_failed_save=e.get("first_failed_save"),
        first_failed_save_applied=bool(e.get("first_failed_save_applied")),
        pending=bool(e.get("pending")),
    )


def _defenses(view: dict[str, Any]) -> list[OrcusDefenseValue]:
    """Defenses now, as the fold's ``attacks.defense_of`` gives them (the view's ``defenses_now``)."""
    return [
        OrcusDefenseValue(
            defense=OrcusDefense(d),
            base=int(view["defenses"][d]),
            current=int(now["value"]),
            modifiers=[Modifier(source=str(p["source"]), value=int(p["value"])) for p in now["parts"][1:]],
        )
        for d, now in view["defenses_now"].items()
    ]


@strawberry.type(
    description="An Orcus creature (RULES.md C4.1): rank, XP and the level it earns, action points, powers "
    "with their expended / recharge state, defenses, effects with durations, maintain and First Failed "
    "Save riders; and the A4.9 placeholder pack (hit points, bloodied, dying and death saves, healing "
    "surges, Rally)."
)
class OrcusCharacter(Character):
    @strawberry.field(description="C4.1 kind: hero, monster, elite or boss.")
    def rank(self) -> OrcusRank:
        return OrcusRank(self.view_["rank"])

    @strawberry.field(description="A hero's XP (null for monsters, ruling 9).")
    def xp(self) -> int | None:
        xp = self.view_.get("xp")
        return None if xp is None else int(xp)

    @strawberry.field(description="The level the XP earns on the A4.2 table, capped at 30 (OR-2, B-OR-16).")
    def xp_level(self) -> int | None:
        lvl = self.view_.get("xp_level")
        return None if lvl is None else int(lvl)

    @strawberry.field(description="A level the GM set explicitly (ruling 3); null: the level follows XP.")
    def level_pinned(self) -> int | None:
        lvl = self.view_.get("level_pinned")
        return None if lvl is None else int(lvl)

    @strawberry.field(description="A4.9: bloodied at floor(max HP / 2) or fewer.")
    def bloodied(self) -> bool:
        return bool(self.view_["bloodied"])

    @strawberry.field
    def bloodied_value(self) -> int:
        return int(self.view_["bloodied_value"])

    @strawberry.field(
        description="A4.9: dead at this many HP or fewer (a hero: minus its bloodied value; null when only "
        "failed death saves kill it)."
    )
    def dies_at(self) -> int | None:
        v = self.view_.get("dies_at")
        return None if v is None else int(v)

    @strawberry.field
    def healing_surges(self) -> OrcusHealingSurges:
        v = self.view_
        return OrcusHealingSurges(
            remaining=int(v["surges"]), per_day=int(v["surges_per_day"]), value=int(v["surge_value"])
        )

    @strawberry.field(description="Failed death saves since the last rest (A4.9).")
    def death_save_failures(self) -> int:
        return int(self.view_["death_save_failures"])

    @strawberry.field(description="Rallied in this encounter (or since the last rest, out of one).")
    def rallied(self) -> bool:
        return bool(self.view_["rallied"])

    @strawberry.field
    def action_points(self) -> OrcusActionPoints:
        v = self.view_
        spent = v.get("action_point_spent")
        return OrcusActionPoints(
            current=int(v["action_points"]),
            stat_block=int(v["action_points_stat_block"]),
            spent_this_encounter=bool(v["action_point_spent_this_encounter"]),
            last_spent=None
            if not spent
            else OrcusActionPointSpend(encounter_id=spent.get("encounter"), round=spent.get("round")),
        )

    @strawberry.field(description="OR-7: encounters since the last long rest (every second one: +1 AP).")
    def encounters_since_long_rest(self) -> int:
        return int(self.view_["encounters_since_long_rest"])

    @strawberry.field
    def powers(self) -> list[OrcusPower]:
        out = []
        for pid, p in self.view_["powers"].items():
            used = p.get("used") or {}
            out.append(
                OrcusPower(
                    power_id=str(pid),
                    name=str(p["name"]),
                    frequency=OrcusFrequency(p["frequency"]),
                    recharge=[int(f) for f in p["recharge"]] if p.get("recharge") is not None else None,
                    condition=p.get("condition"),
                    expended=bool(p["expended"]),
                    used_in_encounter=used.get("encounter"),
                    used_on_turn=used.get("turn"),
                )
            )
        return out

    @strawberry.field(description="AC, Fortitude, Reflex and Will: the sheet's and now.")
    def defenses(self) -> list[OrcusDefenseValue]:
        return _defenses(self.view_)

    @strawberry.field(description="Resistances from the sheet (effects add their own components).")
    def resist(self) -> list[OrcusTypedValue]:
        return [OrcusTypedValue(type=t, value=int(v)) for t, v in sorted(self.view_["resist"].items())]

    @strawberry.field(description="Vulnerabilities from the sheet.")
    def vuln(self) -> list[OrcusTypedValue]:
        return [OrcusTypedValue(type=t, value=int(v)) for t, v in sorted(self.view_["vuln"].items())]

    @strawberry.field(description="What it takes at the start of its turn (ruling 20, A4.9).")
    def persistent_damage(self) -> list[OrcusPersistentDamage]:
        return [
            OrcusPersistentDamage(type=t, amount=int(x["amount"]), effect_id=str(x["effect_id"]))
            for t, x in self.view_["persistent_damage"].items()
        ]

    @strawberry.field(description="Its effects with Orcus's details (durations, maintain, riders).")
    def orcus_effects(self) -> list[OrcusEffect]:
        return [_effect(e) for e in self.view_.get("effects") or []]
