"""``HeroSurgeCharacter``: the shared ``Character`` fields plus the hero's-surge system's own (RULES.md
C2.1).

Every number is the ruleset's creature view (``domain.rulesets.hero_surge.creature_view``):
nothing is computed here, so the API and the fold cannot disagree. Hit points may be negative
(a dying hero) and so may hero's surges (HS-16).
"""

from __future__ import annotations

from typing import Any

import strawberry

from api.graphql.types import Character
from api.rulesets.hero_surge.inputs import HeroSurgeLuckContext, HeroSurgeSuccessLevel


@strawberry.type(description="Hero's surges (HS-15, HS-16): may be negative; null maximum for non-heroes.")
class HeroSurgeSurges:
    current: int
    max: int
    negative: int = strawberry.field(description="How many below zero (0 when not negative).")


@strawberry.type(description="B-HS-5: a pending rank penalty, until used or the end of the next round.")
class HeroSurgeRankPenalty:
    penalty_id: str
    amount: int
    by_attempt: str
    source: str
    until_round: int | None


@strawberry.type(description="C2.1 / B-HS-18: an initiative check in the active encounter.")
class HeroSurgeInitiative:
    round: int
    success_level: HeroSurgeSuccessLevel = strawberry.field(description="As the table ruled it.")
    band: HeroSurgeSuccessLevel = strawberry.field(description="Where it acts: the level after knock-backs.")
    die: int
    knocked_back: int


def _initiative(x: dict[str, Any] | None) -> HeroSurgeInitiative | None:
    if not x:
        return None
    return HeroSurgeInitiative(
        round=int(x["round"]),
        success_level=HeroSurgeSuccessLevel(x["success_level"]),
        band=HeroSurgeSuccessLevel(x["band"]),
        die=int(x["die"]),
        knocked_back=int(x["knocked_back"]),
    )


@strawberry.type(
    description="A hero's-surge creature (RULES.md C2.1): hit points that go negative for heroes, temporary "
    "HP, damage reduction, hero's surges (current, maximum by level, negative), Fortune Dice, the dying "
    "state with the luck rolls owed, the death threshold, defend, rank penalties and full-round actions."
)
class HeroSurgeCharacter(Character):
    @strawberry.field(description="B-HS-6: heroes use surges, dying and the death threshold.")
    def hero(self) -> bool:
        return bool(self.view_["hero"])

    @strawberry.field
    def con_score(self) -> int:
        return int(self.view_["con_score"])

    @strawberry.field(description="The class Hit Die's size (HS-13).")
    def hit_die(self) -> int | None:
        v = self.view_.get("hit_die")
        return None if v is None else int(v)

    @strawberry.field(description="Armor damage reduction (B-HS-24).")
    def damage_reduction(self) -> int:
        return int(self.view_["damage_reduction"])

    @strawberry.field(description="Extra blocks against several attacks (HS-9; defend adds one, HS-5).")
    def extra_blocks(self) -> int:
        return int(self.view_["extra_blocks"])

    @strawberry.field(description="HS-11: until 'long_rest' or a game minute (null without temporary HP).")
    def temporary_hit_points_until(self) -> str | None:
        v = self.view_.get("temp_hp_until")
        return None if v is None else str(v)

    @strawberry.field(description="Null for monsters and NPCs (B-HS-6).")
    def hero_surges(self) -> HeroSurgeSurges | None:
        v = self.view_
        if v["hero_surges"] is None:
            return None
        return HeroSurgeSurges(
            current=int(v["hero_surges"]),
            max=int(v["hero_surges_max"]),
            negative=int(v["negative_hero_surges"]),
        )

    @strawberry.field(description="B-HS-4: Fortune Dice gained by exchanging natural 20s.")
    def fortune_dice(self) -> int:
        return int(self.view_["fortune_dice"])

    @strawberry.field
    def conscious(self) -> bool:
        return bool(self.view_["conscious"])

    @strawberry.field(description="HS-14: dying (negative HP, unconscious, luck rolls owed).")
    def dying(self) -> bool:
        return bool(self.view_["dying"])

    @strawberry.field(description="B-HS-10 / B-HS-21: unconscious and not dying.")
    def stable(self) -> bool:
        return bool(self.view_["stable"])

    @strawberry.field
    def dead(self) -> bool:
        return bool(self.view_["dead"])

    @strawberry.field(description="HS-12 / B-HS-22: dead when -HP exceeds max(Con, floor(max HP / 2)).")
    def death_threshold(self) -> int:
        return int(self.view_["death_threshold"])

    @strawberry.field(description="B-HS-9 / ruling 25: the luck rolls this dying hero owes now.")
    def luck_rolls_owed(self) -> list[HeroSurgeLuckContext]:
        return [HeroSurgeLuckContext(x) for x in self.view_["luck_rolls_owed"]]

    @strawberry.field(description="HS-14: a medical limited success: advantage on the next luck roll.")
    def luck_advantage_pending(self) -> bool:
        return bool(self.view_["luck_advantage_pending"])

    @strawberry.field
    def rank_penalties(self) -> list[HeroSurgeRankPenalty]:
        out = []
        for x in self.view_["rank_penalties"]:
            until = x.get("until_round")
            out.append(
                HeroSurgeRankPenalty(
                    penalty_id=str(x["id"]),
                    amount=int(x["amount"]),
                    by_attempt=str(x["by"]),
                    source=str(x["source"]),
                    until_round=int(until[1]) if until else None,
                )
            )
        return out

    @strawberry.field(description="HS-5: defending (mode, target) until the start of its next turn.")
    def defending(self) -> str | None:
        d: dict[str, Any] | None = self.view_.get("defend")
        if not d:
            return None
        return str(d["mode"]) + (f":{d['target']}" if d.get("target") else "")

    @strawberry.field(description="C2.1: this round's initiative check in the active encounter (HS-2).")
    def initiative_this_round(self) -> HeroSurgeInitiative | None:
        return _initiative(self.view_.get("initiative"))

    @strawberry.field(description="HS-2: its check for the next round, once recorded.")
    def initiative_next_round(self) -> HeroSurgeInitiative | None:
        return _initiative(self.view_.get("next_round_initiative"))

    @strawberry.field(description="B-HS-18: knock-backs waiting for its next initiative check.")
    def knockback_pending(self) -> int:
        return int(self.view_["knockback_pending"])

    @strawberry.field(description="HS-6: the full-round action it is engaged in.")
    def full_round_action(self) -> str | None:
        f = self.view_.get("full_round_action")
        return str(f["action"]) if f else None

    @strawberry.field(description="HS-6: a completed full-round action after moving: no movement this turn.")
    def movement_forfeited(self) -> bool:
        return bool(self.view_["movement_forfeited"])
