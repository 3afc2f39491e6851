"""d20 house-rules table sequences through GraphQL, on SQLite and PostgreSQL (RULES.md A3, B-DH).

A real FastAPI app on the ``store`` fixture, spoken to over HTTP (``TestClient``) with the
d20 plug-in's typed mutations. Every die is given (d% faces included) and every number is
worked by hand from RULES.md in the comments.

Kara: level 6 warrior, Str 16 (+3), Stamina 16 (+3: S 16, B 3), Agility 12 (+1), BAB +6/+1,
Fort +5, armor 4, shield 1: AC 10 + 4 + 1 + 1 = 16, 38 HP.
Gnoll: Str 14 (+2), Stamina 12 (+1: S 12, B 1: disabled 0..-1, dying -2..-12), BAB +2,
armor 3: AC 13, 11 HP.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from api.http.app import create_app
from api.service.settings import Settings
from tests.graphql_helpers import GQL, gid

AXE = {"name": "battleaxe", "kind": "MELEE"}
SWORD = {"name": "longsword +1", "kind": "MELEE", "enhancement": 1}
CLUB = {"name": "greatclub", "kind": "MELEE", "grip": "TWO_HANDS"}

D20_FIELDS = """
  ... on D20Character {
    band stable conscious deadBy effectiveStamina staminaBonus flatFooted
    thresholds { disabledFrom disabledTo dyingFrom dyingTo deadBelow }
    attacksOfOpportunity { used allowed left }
    armorClass { ac touch flatFooted }
    saves { fort { base total } ref { base total } will { base total } }
    baseAttackBonus initiativeBonus actionsAllowed
    abilities { ability base damage drain effective modifier }
    massiveDamageSavesOwed { attack damage dc }
  }
"""
CHARACTER = f"creatureId name lifeState hitPoints {{ current max }} conditions {D20_FIELDS}"


def d20(face: int) -> dict[str, Any]:
    return {"expression": "1d20", "faces": [face]}


def pct(face: int) -> dict[str, Any]:
    return {"expression": "d%", "faces": [face]}


def dice(expression: str, *faces: int) -> dict[str, Any]:
    return {"expression": expression, "faces": list(faces)}


class Table:
    """One d20 campaign over GraphQL, played by its GM."""

    def __init__(self, g: GQL, ruleset: str = "d20") -> None:
        self.g = g
        out = g.ok(
            "mutation($i: CreateCampaignInput!) { createCampaign(input: $i) { campaign { campaignId } "
            "gmToken userErrors { code } } }",
            {"i": {"name": "The ford", "ruleset": ruleset}},
        )["createCampaign"]
        assert out["userErrors"] == [], out
        self.cid, self.gm = out["campaign"]["campaignId"], out["gmToken"]
        self.campaign = gid("Campaign", self.cid, self.cid)

    def ch(self, local: str) -> str:
        return gid("Character", self.cid, local)

    def do(self, mutation: str, /, **inp: Any) -> dict[str, Any]:
        """A mutation that must succeed; its answer (facts, characters)."""
        out = self.try_(mutation, **inp)
        assert out["userErrors"] == [], out
        return out

    def try_(self, mutation: str, /, **inp: Any) -> dict[str, Any]:
        out: dict[str, Any] = self.g.mutate(
            mutation, {"campaignId": self.campaign, **inp}, self.gm, f"characters {{ {CHARACTER} }}"
        )
        return out

    def creature(self, name: str, **sheet: Any) -> str:
        inp = {"name": name, "kind": "PC", "level": 1, "maxHp": 20, "baseAttackBonus": [1], **sheet}
        out = self.do("d20RegisterCreature", **inp)
        return str(out["characters"][0]["creatureId"])

    def who(self, local: str, position: int | None = None, view: str = "CORRECTED") -> dict[str, Any]:
        if position is None:
            q = f"query($id: ID!) {{ character(id: $id) {{ {CHARACTER} }} }}"
            return dict(self.g.ok(q, {"id": self.ch(local)}, self.gm)["character"])
        q = (
            f"query($id: ID!, $p: Int!, $v: TimeAxis!) {{ character(id: $id) {{ "
            f"asOf(position: $p, view: $v) {{ {CHARACTER} }} }} }}"
        )
        out = self.g.ok(q, {"id": self.ch(local), "p": position, "v": view}, self.gm)
        return dict(out["character"]["asOf"])

    def hp(self, local: str) -> int:
        return int(self.who(local)["hitPoints"]["current"])

    def position(self) -> int:
        q = "query($id: ID!) { campaign(id: $id) { position } }"
        return int(self.g.ok(q, {"id": self.campaign}, self.gm)["campaign"]["position"])

    def orphans(self) -> dict[int, str]:
        q = "query($id: ID!) { campaign(id: $id) { orphans { position reason } } }"
        found = self.g.ok(q, {"id": self.campaign}, self.gm)["campaign"]["orphans"]
        return {o["position"]: o["reason"] for o in found}

    def log(self) -> dict[int, str]:
        q = "query($id: ID!) { campaign(id: $id) { log(last: 100) { nodes { position text } } } }"
        nodes = self.g.ok(q, {"id": self.campaign}, self.gm)["campaign"]["log"]["nodes"]
        return {n["position"]: n["text"] for n in nodes}

    # --- shortcuts ------------------------------------------------------------
    def attack(self, attacker: str, target: str, face: int, **more: Any) -> dict[str, Any]:
        out = self.do(
            "d20Attack", attackerId=self.ch(attacker), targetId=self.ch(target), roll=d20(face), **more
        )
        return dict(out["facts"][0])

    def damage(self, attack: int, expression: str, *faces: int, **more: Any) -> dict[str, Any]:
        out = self.do("d20RollDamage", attack=attack, weapon=dice(expression, *faces), **more)
        return dict(out["facts"][0])

    def stabilize(self, who: str, face: int) -> dict[str, Any]:
        return dict(self.do("d20Stabilize", characterId=self.ch(who), roll=pct(face))["facts"][0])


@pytest.fixture
def client(store: Settings) -> Iterator[TestClient]:
    with TestClient(create_app(store)) as test_client:
        yield test_client


@pytest.fixture
def t(client: TestClient) -> Table:
    table = Table(GQL(client))
    table.creature(
        "Kara",
        level=6,
        className="warrior",
        abilities={"strength": 16, "stamina": 16, "agility": 12},
        baseAttackBonus=[6, 1],
        baseSaves={"fort": 5},
        armor=4,
        shield=1,
        maxHp=38,
    )
    table.creature(
        "Gnoll",
        kind="MONSTER",
        abilities={"strength": 14, "stamina": 12},
        baseAttackBonus=[2],
        armor=3,
        maxHp=11,
    )
    table.creature("Tam", abilities={"spirit": 14})
    return table


def test_the_ford_dying_stabilising_and_a_revoked_swing_that_orphans_two_stabilisation_rolls(
    t: Table,
) -> None:
    """DH-10 bands, B-DH-8 strain, B-DH-12 minimum damage, B-DH-13 confirmation, DH-12 / B-DH-3 d%
    stabilisation, B-DH-4 damage to a stable creature, ruling 26 death below -S; then a revocation
    whose consequences orphan the later stabilisation rolls."""
    kara = t.who("kara")
    assert kara["armorClass"] == {"ac": 16, "touch": 11, "flatFooted": 15}
    assert (kara["effectiveStamina"], kara["staminaBonus"]) == (16, 3)
    assert kara["thresholds"] == {
        "disabledFrom": 0,
        "disabledTo": -3,
        "dyingFrom": -4,
        "dyingTo": -16,
        "deadBelow": -16,
    }
    assert kara["saves"]["fort"] == {"base": 5, "total": 8}  # +5 + Stamina +3
    assert kara["baseAttackBonus"] == [6, 1]
    # 1. The gnoll's battleaxe: d20 14 + 2 BAB + 2 Str = 18 vs 16: a hit. 1d8 (6) + 2 = 8: Kara 30.
    a1 = t.attack("gnoll", "kara", 14, weapon=AXE)
    assert (a1["outcome"]["attack_total"], a1["outcome"]["hit"], a1["outcome"]["awaits"]) == (
        18,
        True,
        "damage",
    )
    assert t.damage(a1["position"], "1d8", 6)["outcome"]["amount"] == 8
    assert t.hp("kara") == 30
    # 2. Kara's full attack: d20 11 + 6 + 3 + 1 = 21 vs 13. 1d8 (7) + 3 + 1 = 11: gnoll 0, disabled.
    a2 = t.attack("kara", "gnoll", 11, weapon=SWORD, fullAttack=True)
    assert a2["outcome"]["attack_total"] == 21
    t.damage(a2["position"], "1d8", 7)
    gnoll = t.who("gnoll")
    assert (gnoll["hitPoints"]["current"], gnoll["lifeState"], gnoll["band"]) == (0, "DISABLED", "DISABLED")
    assert gnoll["actionsAllowed"] == "ONE"
    # 3. The disabled gnoll swings: d20 20 + 2 + 2 - 2 = 22, a threat; the strain costs 1 HP: -1.
    a3 = t.attack("gnoll", "kara", 20, weapon=AXE)
    assert (a3["outcome"]["attack_total"], a3["outcome"]["threat"]) == (22, True)
    assert a3["outcome"]["strenuous"]["hp_after"] == -1
    #    Damage before the confirmation is refused, and nothing is stored.
    before = t.position()
    early = t.try_("d20RollDamage", attack=a3["position"], weapon=dice("1d8", 1))
    assert [e["code"] for e in early["userErrors"]] == ["CONFIRMATION_PENDING"]
    assert t.position() == before
    #    Confirmation: d20 9 + 2 = 11 vs 16: a regular hit. 1d8 (1) + 2 - 2 = 1 (at least 1).
    c3 = t.do("d20ConfirmCritical", attack=a3["position"], roll=d20(9))["facts"][0]
    assert (c3["outcome"]["total"], c3["outcome"]["critical"]) == (11, False)
    assert t.damage(a3["position"], "1d8", 1)["outcome"]["amount"] == 1
    assert t.hp("kara") == 29
    # 4. Kara's second swing (+1): d20 19 + 1 + 3 + 1 = 24. 1d8 (3) + 4 = 7: gnoll -8, dying.
    a4 = t.attack("kara", "gnoll", 19, weapon=SWORD, iterative=1)
    assert a4["outcome"]["attack_total"] == 24
    d4 = t.damage(a4["position"], "1d8", 3)["position"]
    gnoll = t.who("gnoll")
    assert (gnoll["hitPoints"]["current"], gnoll["lifeState"]) == (-8, "DYING")
    assert gnoll["conditions"] == ["dying", "unconscious"] and gnoll["actionsAllowed"] == "NONE"
    # 5. d% 37 > 12 (its Stamina): -9. Then d% 12 <= 12: stable.
    s1 = t.stabilize("gnoll", 37)
    assert (s1["outcome"]["face"], s1["outcome"]["hp_after"]) == (37, -9)
    s2 = t.stabilize("gnoll", 12)
    gnoll = t.who("gnoll")
    assert (gnoll["hitPoints"]["current"], gnoll["lifeState"], gnoll["stable"]) == (-9, "STABILIZED", True)
    #    A Heal check on a stable creature is refused with its code; nothing is stored.
    before = t.position()
    late = t.try_("d20HealCheck", healerId=t.ch("tam"), characterId=t.ch("gnoll"), roll=d20(20))
    assert [(e["code"], e["field"]) for e in late["userErrors"]] == [("ALREADY_STABLE", "characterId")]
    assert t.position() == before
    # 6. A rockslide, 1d4 (3): -12 (= -S, still dying) and no longer stable (B-DH-4).
    t.do("d20DealDamage", characterId=t.ch("gnoll"), roll=dice("1d4", 3), source="rockslide")
    gnoll = t.who("gnoll")
    assert (gnoll["hitPoints"]["current"], gnoll["lifeState"], gnoll["stable"]) == (-12, "DYING", False)
    # 7. d% 00 (100) > 12: -13 < -12: dead.
    s3 = t.stabilize("gnoll", 100)
    assert s3["outcome"]["died"] == "hp_threshold"
    gnoll = t.who("gnoll")
    assert (gnoll["lifeState"], gnoll["deadBy"]) == ("DEAD", "HP_THRESHOLD")
    assert "Gnoll dies (below -Stamina hit points)." in t.log()[s3["position"]]
    # The GM rules Kara's second swing never happened: its damage and the first two d% rolls are
    # orphaned (the gnoll was never dying then); the rockslide takes it from -1 to -4 (dying),
    # the last d% (100) to -5: dying, not dead.
    t.do("revokeFact", position=a4["position"], reason="Kara had already moved: no full attack")
    orphans = t.orphans()
    assert set(orphans) == {d4, s1["position"], s2["position"]}
    assert "not dying" in orphans[s1["position"]]
    gnoll = t.who("gnoll")
    assert (gnoll["hitPoints"]["current"], gnoll["lifeState"], gnoll["deadBy"]) == (-5, "DYING", None)
    # As of the last roll: recorded, the table believed it dead; corrected, it is dying.
    assert t.who("gnoll", s3["position"], "RECORDED")["lifeState"] == "DEAD"
    assert t.who("gnoll", s3["position"], "CORRECTED")["lifeState"] == "DYING"


def test_the_ogre_a_confirmed_critical_and_a_massive_damage_save(t: Table) -> None:
    """B-DH-5 (static modifiers doubled, the default), B-DH-1 (50 damage: a DC 15 Fortitude save),
    DH-15. The ogre: Str 20 (+5), BAB +9/+4, a greatclub in two hands (2d8; Str x1 1/2 = 7)."""
    t.do("d20UpdateSheet", characterId=t.ch("kara"), changes={"max_hp": 120}, reason="a tougher Kara")
    assert t.hp("kara") == 120  # 38 + 82
    t.creature("Ogre", kind="MONSTER", abilities={"strength": 20}, baseAttackBonus=[9, 4], maxHp=60)
    # d20 20 + 9 + 5 = 34: a threat. Confirm: d20 2 + 14 = 16 vs 16 (meets): a critical.
    a = t.attack("ogre", "kara", 20, weapon=CLUB)
    assert t.do("d20ConfirmCritical", attack=a["position"], roll=d20(2))["facts"][0]["outcome"]["critical"]
    # (8, 8) + (8, 8) = 32, Strength 7 twice = 14, the extra 1d6 (4) once: 50. Kara 70, alive:
    # a DC 15 Fortitude save is owed.
    hit = t.do(
        "d20RollDamage",
        attack=a["position"],
        weapon=dice("2d8", 8, 8),
        critWeapon=dice("2d8", 8, 8),
        extra=[dice("1d6", 4)],
    )
    fact = hit["facts"][0]
    assert fact["outcome"]["amount"] == 50
    assert fact["outcome"]["massive_damage_save_owed"] == {"attack": a["position"], "damage": 50, "dc": 15}
    kara = next(c for c in hit["characters"] if c["creatureId"] == "kara")
    assert kara["hitPoints"]["current"] == 70
    assert kara["massiveDamageSavesOwed"] == [{"attack": a["position"], "damage": 50, "dc": 15}]
    # Fortitude: d20 7 + 5 + 3 = 15 vs 15: she survives. A second save is owed by nothing.
    save = t.do("d20MassiveDamageSave", characterId=t.ch("kara"), attack=a["position"], roll=d20(7))
    assert (save["facts"][0]["outcome"]["total"], save["facts"][0]["outcome"]["success"]) == (15, True)
    again = t.try_("d20MassiveDamageSave", characterId=t.ch("kara"), attack=a["position"], roll=d20(20))
    assert [(e["code"], e["field"]) for e in again["userErrors"]] == [
        ("NO_MASSIVE_DAMAGE_SAVE_OWED", "attack")
    ]
    kara = t.who("kara")
    assert (kara["hitPoints"]["current"], kara["lifeState"], kara["massiveDamageSavesOwed"]) == (
        70,
        "ACTIVE",
        [],
    )


def test_the_server_rolls_a_criticals_second_set_of_dice_when_none_is_entered(t: Table) -> None:
    """B-DH-5: a confirmed critical rolls the weapon's dice twice; the second set defaults to the
    server's roll of the same expression."""
    t.creature("Ogre", kind="MONSTER", abilities={"strength": 20}, baseAttackBonus=[9], maxHp=60)
    a = t.attack("ogre", "tam", 20, weapon=CLUB)
    t.do("d20ConfirmCritical", attack=a["position"], roll=d20(19))
    fact = t.damage(a["position"], "2d8", 1, 1)
    crit = fact["payload"]["crit_weapon"]
    assert crit["expression"] == "2d8" and len(crit["terms"][0]["faces"]) == 2
    assert fact["outcome"]["amount"] == 2 + sum(crit["terms"][0]["faces"]) + 14


def test_poison_moves_the_thresholds_and_sleep_moves_them_back(t: Table) -> None:
    """B-DH-9 / ruling 26 (thresholds move, HP do not), DH-12 healing stabilises, DH-14 recovery."""
    # 41 damage: 38 -> -3, disabled (0..-3).
    t.do("d20DealDamage", characterId=t.ch("kara"), amount=41)
    assert t.who("kara")["band"] == "DISABLED"
    # 4 Stamina damage: S 12, B 1: still -3 HP, now dying (-2..-12).
    t.do("d20DamageAbility", characterId=t.ch("kara"), ability="STAMINA", amount=4, source="wyvern venom")
    kara = t.who("kara")
    assert (
        kara["effectiveStamina"],
        kara["staminaBonus"],
        kara["hitPoints"]["current"],
        kara["lifeState"],
    ) == (
        12,
        1,
        -3,
        "DYING",
    )
    stamina = next(a for a in kara["abilities"] if a["ability"] == "STAMINA")
    assert stamina == {
        "ability": "STAMINA",
        "base": 16,
        "damage": 4,
        "drain": 0,
        "effective": 12,
        "modifier": 1,
    }
    assert kara["thresholds"]["dyingFrom"] == -2 and kara["thresholds"]["deadBelow"] == -12
    # d% 13 > 12: -4. Tam's Heal check: d20 12 vs DC 10 + |-4| = 14: she is still dying.
    assert t.stabilize("kara", 13)["outcome"]["hp_after"] == -4
    check = t.do("d20HealCheck", healerId=t.ch("tam"), characterId=t.ch("kara"), roll=d20(12))["facts"][0]
    assert (check["outcome"]["total"], check["outcome"]["dc"], check["outcome"]["success"]) == (12, 14, False)
    # A cure of 1d8 (3): -1, stable and conscious: disabled (-1 >= -B).
    t.do("d20Heal", characterId=t.ch("kara"), roll=dice("1d8", 3), healerId=t.ch("tam"), source="cure")
    kara = t.who("kara")
    assert (kara["hitPoints"]["current"], kara["lifeState"], kara["conscious"]) == (-1, "DISABLED", True)
    # 3 hours of sleep is too short; 4 hours: Stamina 16 again, B 3, HP unchanged.
    short = t.try_("d20RecoverAbilities", characterIds=[t.ch("kara")], kind="SLEEP", hours=3, clean=True)
    assert [(e["code"], e["field"]) for e in short["userErrors"]] == [("REST_TOO_SHORT", "hours")]
    t.do("d20RecoverAbilities", characterIds=[t.ch("kara")], kind="SLEEP", hours=4, clean=True)
    kara = t.who("kara")
    assert (kara["effectiveStamina"], kara["staminaBonus"], kara["hitPoints"]["current"], kara["band"]) == (
        16,
        3,
        -1,
        "DISABLED",
    )


def test_attacks_of_opportunity_one_per_round_and_saves_with_natural_results(t: Table) -> None:
    """B-DH-14 (at most one attack of opportunity per round), DH-15 (natural 1 fails, natural 20
    succeeds), DH-11 (a disabled creature's strenuous action costs 1 HP)."""
    first = t.do("d20AttackOfOpportunity", attackerId=t.ch("kara"), targetId=t.ch("gnoll"), roll=d20(2))
    assert first["facts"][0]["payload"]["opportunity"] is True
    kara = next(c for c in first["characters"] if c["creatureId"] == "kara")
    assert kara["attacksOfOpportunity"] == {"used": 1, "allowed": 1, "left": 0}
    second = t.try_("d20AttackOfOpportunity", attackerId=t.ch("kara"), targetId=t.ch("gnoll"), roll=d20(15))
    assert [(e["code"], e["field"]) for e in second["userErrors"]] == [("AOO_LIMIT", "attackerId")]
    # Fortitude +8 vs DC 5 with a natural 1: fails. Will +0 vs DC 25 with a natural 20: succeeds.
    low = t.do("d20SavingThrow", characterId=t.ch("kara"), save="FORT", dc=5, roll=d20(1))["facts"][0]
    high = t.do("d20SavingThrow", characterId=t.ch("tam"), save="WILL", dc=25, roll=d20(20))["facts"][0]
    assert (low["outcome"]["total"], low["outcome"]["success"]) == (9, False)
    assert (high["outcome"]["total"], high["outcome"]["success"]) == (22, True)  # 20 + Spirit +2
    # The gnoll at 0 HP is disabled: it may not run (a full-round action); a strenuous move
    # action (climbing out of the ford) costs it 1 HP after the action: -1.
    t.do("d20DealDamage", characterId=t.ch("gnoll"), amount=11)
    run = t.try_("d20TakeAction", characterId=t.ch("gnoll"), action="FULL_ROUND", run=True)
    assert [(e["code"], e["field"]) for e in run["userErrors"]] == [("DISABLED_ONE_ACTION", "action")]
    climb = t.do("d20TakeAction", characterId=t.ch("gnoll"), action="MOVE", name="climbs out", strenuous=True)
    assert climb["facts"][0]["outcome"]["strenuous"]["hp_after"] == -1
    assert climb["characters"][0]["hitPoints"]["current"] == -1


def test_an_encounter_flat_footed_then_a_stabilisation_roll_after_the_round_that_a_revocation_orphans(
    t: Table,
) -> None:
    """DH-2 (flat-footed until the first turn), DH-3 (initiative), ruling 26 / B-DH-3 (the d%
    roll right after the last turn of the round, before the next can start), through the core
    encounter mutations; revoking the damage that made the gnoll dying orphans its roll."""
    enc = gid("Encounter", t.cid, "ford")
    t.do("startEncounter", encounterId="ford", name="The ford", participantIds=[t.ch("gnoll"), t.ch("kara")])
    # gnoll 15 + 0 = 15, Kara 10 + 1 = 11
    t.do("rollInitiative", encounterId=enc, characterId=t.ch("gnoll"), roll=d20(15))
    t.do("rollInitiative", encounterId=enc, characterId=t.ch("kara"), roll=d20(10))
    kara = t.who("kara")
    assert (kara["flatFooted"], kara["armorClass"]["ac"]) == (True, 15)
    t.do("startTurn", encounterId=enc)
    # 11 + 2 + 2 = 15 vs her flat-footed AC 15 (16 with Agility): a hit
    a = t.attack("gnoll", "kara", 11, weapon=AXE)
    assert (a["outcome"]["ac"], a["outcome"]["hit"]) == (15, True)
    t.do("endTurn", encounterId=enc)
    t.do("startTurn", encounterId=enc)
    kara = t.who("kara")
    assert (kara["flatFooted"], kara["armorClass"]["ac"]) == (False, 16)
    # Kara's full attack: 15 + 6 + 3 + 1 = 25, 1d8 (7) + 4 = 11: the gnoll 11 -> 0 (disabled);
    # then +1: 12 + 1 + 3 + 1 = 17 vs 13, 1d8 (4) + 4 = 8: -8, dying (S 12, B 1).
    a1 = t.attack("kara", "gnoll", 15, weapon=SWORD, fullAttack=True)
    t.damage(a1["position"], "1d8", 7)
    a2 = t.attack("kara", "gnoll", 12, weapon=SWORD, iterative=1)
    blow = t.damage(a2["position"], "1d8", 4)["position"]
    assert t.who("gnoll")["lifeState"] == "DYING"
    early = t.try_("d20Stabilize", characterId=t.ch("gnoll"), roll=pct(37))
    assert [(e["code"], e["field"]) for e in early["userErrors"]] == [("STABILIZATION_NOT_DUE", "round")]
    ended = t.do("endTurn", encounterId=enc)["facts"][-1]
    assert ended["outcome"]["stabilization_owed"] == ["gnoll"]
    waiting = t.try_("startTurn", encounterId=enc)
    assert [e["code"] for e in waiting["userErrors"]] == ["ROLLS_PENDING"]
    q = (
        "query($id: ID!) { encounter(id: $id) { state round turnOfCreatureId order "
        "initiativeOrder { name } participants { name } effects { effectId } raw } }"
    )
    seen = t.g.ok(q, {"id": enc}, t.gm)["encounter"]
    assert (seen["state"], seen["round"], seen["turnOfCreatureId"], seen["order"]) == (
        "running",
        1,
        None,
        ["gnoll", "kara"],
    )
    assert seen["raw"]["stabilization_owed"] == ["gnoll"]
    assert [(r["type"], r["dice"]) for r in seen["raw"]["pending_rolls"]] == [("StabilizationRolled", "d%")]
    # d% 37 > 12: -9 (the round defaults to the encounter's)
    roll = t.do("d20Stabilize", characterId=t.ch("gnoll"), roll=pct(37))["facts"][0]
    assert (roll["payload"]["encounter_id"], roll["payload"]["round"], roll["outcome"]["hp_after"]) == (
        "ford",
        1,
        -9,
    )
    started = t.do("startTurn", encounterId=enc)["facts"][0]
    assert (started["outcome"]["round_now"], started["outcome"]["turn_of"]) == (2, "gnoll")
    t.do("revokeFact", position=blow, reason="Kara's second swing hit the gnoll's shield")
    assert "not dying" in t.orphans()[roll["position"]]
    gnoll = t.who("gnoll")
    assert (gnoll["hitPoints"]["current"], gnoll["lifeState"]) == (0, "DISABLED")


def test_a_stellar_winds_mutation_is_refused_on_a_d20_campaign_and_the_reverse(t: Table) -> None:
    before = t.position()
    out = t.g.mutate("dealDamage", {"campaignId": t.campaign, "characterId": t.ch("kara"), "amount": 5}, t.gm)
    assert [(e["code"], e["field"]) for e in out["userErrors"]] == [("WRONG_RULESET", "campaignId")]
    assert t.position() == before
    sw = Table(t.g, ruleset="stellar-winds")
    out = t.g.mutate(
        "d20DealDamage", {"campaignId": sw.campaign, "characterId": sw.ch("vex"), "amount": 5}, sw.gm
    )
    assert [e["code"] for e in out["userErrors"]] == ["WRONG_RULESET"]


def test_the_graphql_life_states_are_the_core_vocabulary() -> None:
    """Every life state a ruleset's view may give (d20: disabled) is a LifeState value."""
    from api.graphql.enums import LifeState
    from domain.rulesets import LIFE_STATES

    assert [s.value for s in LifeState] == list(LIFE_STATES)
