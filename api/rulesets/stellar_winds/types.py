"""``StellarWindsCharacter``: the shared ``Character`` fields plus Stellar Winds' own resources."""

from __future__ import annotations

from typing import Any

import strawberry

from api.graphql.types import Character, Modifier


@strawberry.type
class Defense:
    base: int
    current: int = strawberry.field(description="With conditions and effects (against a melee attack).")
    modifiers: list[Modifier]
    against_ranged: int = strawberry.field(
        description="Current value against a ranged attack from a non-adjacent attacker (ruling 19)."
    )


@strawberry.type(description="Speed in squares: the sheet's, and now (A1.10: slowed 2, immobilized 0).")
class Speed:
    base: int
    current: int
    limited_by: list[str] = strawberry.field(description="The conditions that lower it now.")


@strawberry.type(description="A power on the sheet (C1.1) and whether it is expended until a rest (SW-49).")
class StellarWindsPower:
    power_id: str
    name: str
    frequency: str = strawberry.field(description="at_will, encounter or daily.")
    expended: bool
    used_in_encounter: str | None = strawberry.field(description="Where it was used (while expended).")


@strawberry.type(description="Rounds of a weapon's ammunition (C1.1; a grenade is a weapon id too).")
class Ammunition:
    weapon_id: str
    rounds: int


@strawberry.type
class Defenses:
    ac: Defense
    fort: Defense
    ref: Defense
    will: Defense


@strawberry.type
class Wounds:
    current: int
    max: int


@strawberry.type
class HealingSurges:
    remaining: int
    per_day: int
    value: int


def _defenses(view: dict[str, Any]) -> Defenses:
    """Defenses now, as the fold's ``attacks.defense_of`` gives them (the view's ``defenses_now``)."""
    out = {}
    for d, now in view["defenses_now"].items():
        out[d] = Defense(
            base=view["defenses"][d],
            current=int(now["value"]),
            against_ranged=int(now["against_ranged"]),
            modifiers=[Modifier(source=str(p["source"]), value=int(p["value"])) for p in now["parts"][1:]],
        )
    return Defenses(**out)


@strawberry.type(description="A Stellar Winds creature: hit points, wounds, healing surges, action points.")
class StellarWindsCharacter(Character):
    @strawberry.field(description="Experience points (PCs tracking XP; null otherwise).")
    def xp(self) -> int | None:
        return self.view_.get("xp")

    @strawberry.field(description="The level the XP alone would give.")
    def xp_level(self) -> int | None:
        return self.view_.get("xp_level")

    @strawberry.field(description="Bloodied: hit points at or below half the maximum (SW-33).")
    def bloodied(self) -> bool:
        return bool(self.view_["bloodied"])

    @strawberry.field
    def bloodied_value(self) -> int:
        return int(self.view_["bloodied_value"])

    @strawberry.field
    def wounds(self) -> Wounds:
        return Wounds(current=self.view_["wounds"], max=self.view_["max_wounds"])

    @strawberry.field
    def healing_surges(self) -> HealingSurges:
        v = self.view_
        return HealingSurges(remaining=v["surges"], per_day=v["surges_per_day"], value=v["surge_value"])

    @strawberry.field
    def second_wind_used(self) -> bool:
        return bool(self.view_["second_wind_used"])

    @strawberry.field
    def action_points(self) -> int:
        return int(self.view_["action_points"])

    @strawberry.field
    def action_point_spent_since_rest(self) -> bool:
        return bool(self.view_["action_point_spent_since_rest"])

    @strawberry.field
    def encounters_since_extended_rest(self) -> int:
        return int(self.view_["encounters_since_extended_rest"])

    @strawberry.field
    def initiative_bonus(self) -> int:
        return int(self.view_["initiative_bonus"])

    @strawberry.field
    def death_save_failures(self) -> int:
        return int(self.view_["death_save_failures"])

    @strawberry.field(description="Speed now: slowed and immobilized lower it (A1.10).")
    def speed(self) -> Speed:
        s = self.view_["speed"]
        return Speed(base=int(s["base"]), current=int(s["current"]), limited_by=list(s["limited_by"]))

    @strawberry.field(description="Modifier to Perception checks from conditions (deafened: -10, A1.10).")
    def perception_modifier(self) -> int:
        return int(self.view_["perception_modifier"])

    @strawberry.field(description="Defenses now: the sheet value, conditions and effects.")
    def defenses(self) -> Defenses:
        return _defenses(self.view_)

    @strawberry.field(description="The sheet's powers with their expended state (C1.1, SW-49).")
    def powers(self) -> list[StellarWindsPower]:
        return [
            StellarWindsPower(
                power_id=str(p["id"]),
                name=str(p["name"]),
                frequency=str(p["frequency"]),
                expended=bool(p["expended"]),
                used_in_encounter=(p.get("used") or {}).get("encounter"),
            )
            for p in self.view_.get("powers", [])
        ]

    @strawberry.field(description="Ammunition per weapon id (C1.1).")
    def ammunition(self) -> list[Ammunition]:
        return [Ammunition(weapon_id=k, rounds=int(v)) for k, v in sorted(self.view_.get("ammo", {}).items())]

    @strawberry.field(
        description="SW-15: action points it may spend per encounter (monsters per their sheet)."
    )
    def action_points_per_encounter(self) -> int:
        return int(self.view_.get("action_points_per_encounter", 1))
