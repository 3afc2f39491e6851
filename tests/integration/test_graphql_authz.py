"""Authorization matrix: every operation x (GM, player of this character, player of another
character, viewer, another campaign's GM, no token), table-driven."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from api.graphql.mutations import all_mutations
from api.http.app import create_app
from api.service.application import ChronicleApplication
from api.service.settings import Settings
from tests.graphql_helpers import GQL, INPUT_TYPES, create_campaign, gid, issue, pc

ROLES = ("gm", "own_player", "other_player", "viewer", "other_gm", "none")
MEMBERS = "members"  # any player (not viewers) may: notes, contesting a ruling
DENIED = {"FORBIDDEN", "UNAUTHENTICATED", "NOT_FOUND"}


class Table:
    def __init__(self, g: GQL) -> None:
        self.cid, self.gm = create_campaign(g, "Matrix")
        self.c = gid("Campaign", self.cid, self.cid)
        self.aria = pc(g, self.cid, self.gm, "Aria")
        self.brom = pc(g, self.cid, self.gm, "Brom")
        self.enc = gid("Encounter", self.cid, "fight")
        g.mutate(
            "startEncounter",
            {"campaignId": self.c, "encounterId": "fight", "participantIds": [self.aria, self.brom]},
            self.gm,
        )
        self.g = g
        self.effect = self.fresh_effect()
        _, self.other_gm = create_campaign(g, "Elsewhere")
        self.tokens = {
            "gm": self.gm,
            "own_player": issue(g, self.cid, self.gm, "PLAYER", [self.aria]),
            "other_player": issue(g, self.cid, self.gm, "PLAYER", [self.brom]),
            "viewer": issue(g, self.cid, self.gm, "VIEWER"),
            "other_gm": self.other_gm,
            "none": None,
        }

    def fresh_proposal(self) -> str:
        """A pending proposal of Aria's player (a dice roll for Aria), for the GM to decide."""
        out = self.g.mutate(
            "submitProposal",
            {
                "campaignId": self.c,
                "mutation": "rollDice",
                "input": {"characterId": self.aria, "roll": {"expression": "1d20"}},
            },
            self.tokens["own_player"],
            "proposal { id }",
        )
        assert out["userErrors"] == [], out
        return str(out["proposal"]["id"])

    def fresh_effect(self) -> str:
        out = self.g.mutate(
            "applyEffect",
            {
                "campaignId": self.c,
                "characterId": self.brom,
                "sourceCharacterId": self.aria,
                "effect": {"components": [{"condition": "dazed"}], "duration": {"kind": "save_ends"}},
            },
            self.gm,
            "character { effects { effectId } }",
        )
        return str(out["character"]["effects"][-1]["effectId"])


# (mutation, input builder, may a player do it for their own character (aria)?)
def _ops() -> list[tuple[str, Callable[[Table], dict[str, Any]], bool | str]]:
    d20 = {"expression": "1d20", "faces": [10]}
    return [
        (
            "registerCreature",
            lambda t: {
                "name": "Goblin",
                "kind": "MONSTER",
                "level": 1,
                "maxHp": 10,
                "defenses": {"ac": 10, "fort": 10, "ref": 10, "will": 10},
            },
            False,
        ),
        ("updateSheet", lambda t: {"characterId": t.aria, "changes": {"speed": 7}}, True),
        ("startEncounter", lambda t: {"participantIds": [t.aria]}, False),
        ("determineSurprise", lambda t: {"encounterId": t.enc, "surprisedIds": []}, False),
        ("rollInitiative", lambda t: {"encounterId": t.enc, "characterId": t.aria, "roll": d20}, True),
        (
            "breakInitiativeTie",
            lambda t: {"encounterId": t.enc, "characterIds": [t.aria, t.brom], "method": "COIN"},
            False,
        ),
        ("startTurn", lambda t: {"encounterId": t.enc}, False),
        ("endTurn", lambda t: {"encounterId": t.enc}, False),
        ("delayTurn", lambda t: {"encounterId": t.enc, "characterId": t.aria}, True),
        ("takeDelayedTurn", lambda t: {"encounterId": t.enc, "characterId": t.aria}, True),
        (
            "readyAction",
            lambda t: {
                "encounterId": t.enc,
                "characterId": t.aria,
                "action": "STANDARD",
                "trigger": "door opens",
            },
            True,
        ),
        (
            "triggerReadiedAction",
            lambda t: {"encounterId": t.enc, "characterId": t.aria, "triggerCharacterId": t.brom},
            True,
        ),
        ("endEncounter", lambda t: {"encounterId": t.enc}, False),
        ("takeAction", lambda t: {"characterId": t.aria, "action": "FREE"}, True),
        (
            "attack",
            lambda t: {
                "attackerId": t.aria,
                "power": {"kind": "MELEE", "defense": "AC", "attackBonus": 2},
                "targets": [{"characterId": t.brom, "attackRoll": d20}],
            },
            True,
        ),
        ("dealDamage", lambda t: {"characterId": t.aria, "amount": 1}, True),
        ("heal", lambda t: {"characterId": t.aria, "flat": 1}, True),
        ("grantTemporaryHitPoints", lambda t: {"characterId": t.aria, "amount": 1}, True),
        ("spendHealingSurge", lambda t: {"characterId": t.aria}, True),
        ("useSecondWind", lambda t: {"characterId": t.aria}, True),
        ("rollDeathSave", lambda t: {"characterId": t.aria, "roll": d20}, True),
        ("attemptStabilization", lambda t: {"characterId": t.brom, "healerId": t.aria}, True),
        ("restoreWounds", lambda t: {"characterId": t.aria, "amount": 1, "method": "MAGIC"}, False),
        ("declareDeath", lambda t: {"characterId": t.brom, "cause": "test"}, False),
        ("raiseCreature", lambda t: {"characterId": t.brom, "means": "test"}, False),
        (
            "applyEffect",
            lambda t: {
                "characterId": t.brom,
                "sourceCharacterId": t.aria,
                "effect": {"components": [{"condition": "slowed"}]},
            },
            True,
        ),
        ("sustainEffect", lambda t: {"effectId": t.fresh_effect()}, True),
        ("endEffect", lambda t: {"effectId": t.fresh_effect()}, True),
        ("rollSavingThrow", lambda t: {"characterId": t.aria, "effectId": t.effect, "roll": d20}, True),
        ("spendActionPoint", lambda t: {"characterId": t.aria}, True),
        ("reachMilestone", lambda t: {"characterIds": [t.aria]}, False),
        ("awardExperience", lambda t: {"characterIds": [t.aria], "amount": 10}, False),
        ("setLevel", lambda t: {"characterId": t.aria, "level": 2}, False),
        ("takeShortRest", lambda t: {"participantIds": [t.aria]}, True),
        ("takeExtendedRest", lambda t: {"participantIds": [t.aria]}, True),
        ("totalDefense", lambda t: {"characterId": t.aria}, True),
        ("rollExplosiveSave", lambda t: {"characterId": t.aria, "dc": 15, "amount": 1}, True),
        ("dropProne", lambda t: {"characterId": t.aria}, True),
        ("standUp", lambda t: {"characterId": t.aria}, True),
        ("knockProne", lambda t: {"characterId": t.brom, "sourceCharacterId": t.aria}, True),
        ("usePower", lambda t: {"characterId": t.aria, "powerId": "ray"}, True),
        ("expendAmmunition", lambda t: {"characterId": t.aria, "weaponId": "rifle"}, True),
        (
            "changeEquipment",
            lambda t: {"characterId": t.aria, "ammo": [{"weaponId": "rifle", "rounds": 5}]},
            True,
        ),
        (
            "autofire",
            lambda t: {
                "attackerId": t.aria,
                "weaponId": "rifle",
                "weapon": "1d10",
                "targets": [{"characterId": t.brom, "attackRoll": d20}],
            },
            True,
        ),
        ("throwGrenade", lambda t: {"characterId": t.aria, "square": [0, 0], "damage": "1d6"}, True),
        (
            "bluffForCombatAdvantage",
            lambda t: {"characterId": t.aria, "targetId": t.brom, "vsInsight": 30, "roll": d20},
            True,
        ),
        (
            "escapeGrab",
            lambda t: {"characterId": t.aria, "effectId": t.effect, "skill": "ATHLETICS", "roll": d20},
            True,
        ),
        ("fall", lambda t: {"characterId": t.aria, "feet": 5}, True),
        ("advanceTime", lambda t: {"minutes": 1}, False),
        ("setTime", lambda t: {"day": 9, "hour": 8}, False),
        ("rollDice", lambda t: {"roll": {"expression": "1d6"}, "characterId": t.aria}, True),
        ("addNote", lambda t: {"text": "hello"}, MEMBERS),
        ("revokeFact", lambda t: {"position": 2, "reason": "test"}, False),
        ("restoreFact", lambda t: {"revocationPosition": 2}, False),
        ("amendFact", lambda t: {"position": 2, "patch": {"name": "Arya"}, "reason": "typo"}, False),
        ("recordRuling", lambda t: {"rulingId": "r1", "question": "q", "decision": "d"}, False),
        ("contestRuling", lambda t: {"rulingId": "r1", "argument": "no"}, MEMBERS),
        ("resolveRuling", lambda t: {"rulingId": "r1", "outcome": "UPHELD"}, False),
        ("overrideOutcome", lambda t: {"position": 3, "field": "hp", "value": 1, "reason": "gm"}, False),
        ("setRulesFlag", lambda t: {"flag": "sw.enforce_turns", "value": False}, False),
        ("recordFact", lambda t: {"type": "NoteAdded", "payload": {"text": "x"}}, False),
        # proposals (issue 19): a player proposes for its own character, only the GM decides, the
        # proposer (or the GM) withdraws, only the GM sets the trust settings
        ("submitProposal", lambda t: {"mutation": "useSecondWind", "input": {"characterId": t.aria}}, True),
        ("approveProposal", lambda t: {"proposalId": t.fresh_proposal()}, False),
        ("rejectProposal", lambda t: {"proposalId": t.fresh_proposal(), "reason": "no"}, False),
        ("withdrawProposal", lambda t: {"proposalId": t.fresh_proposal()}, True),
        ("setProposalPolicy", lambda t: {"mutation": "rollDice", "mode": "DIRECT"}, False),
    ]


OPS = _ops()


def expected(role: str, player_ok: bool | str) -> str:
    return {
        "gm": "allow",
        "own_player": "allow" if player_ok else "FORBIDDEN",
        "other_player": "allow" if player_ok == MEMBERS else "FORBIDDEN",
        "viewer": "FORBIDDEN",
        "other_gm": "NOT_FOUND",
        "none": "UNAUTHENTICATED",
    }[role]


def served(make: Callable[[GQL], Any]) -> Iterator[tuple[GQL, Any]]:
    """An in-memory application behind the HTTP app, and the table ``make`` sets up on it."""
    from api.service.store import open_application

    app: ChronicleApplication = open_application(Settings(database_url="memory:"))
    with TestClient(create_app(Settings(database_url="memory:"), app)) as client:
        g = GQL(client)
        yield g, make(g)
    app.close()


def check_access(
    g: GQL, t: Any, op: str, build: Callable[[Any], dict[str, Any]], player_ok: bool | str, role: str
) -> None:
    """``role`` calls ``op``: allowed, it may meet a rules refusal but never an access refusal (nor
    WRONG_RULESET: each table's campaign is of the op's system); else exactly the expected code."""
    out = g.mutate(op, {"campaignId": t.c, **build(t)}, t.tokens[role])
    codes = [e["code"] for e in out["userErrors"]]
    want = expected(role, player_ok)
    if want == "allow":
        denied = [
            e
            for e in out["userErrors"]
            if e["code"] in DENIED - {"NOT_FOUND"}
            or (e["code"] == "NOT_FOUND" and e["field"] == "campaignId")
        ]
        assert not denied and "WRONG_RULESET" not in codes, (op, role, out["userErrors"])
    else:
        assert codes == [want], (op, role, out["userErrors"])


@pytest.fixture(scope="module")
def table() -> Iterator[tuple[GQL, Table]]:
    yield from served(Table)


def test_the_matrix_covers_every_mutation() -> None:
    covered = (
        {name for name, _, _ in OPS}
        | {name for name, _, _ in D20_OPS}
        | {name for name, _, _ in ORCUS_OPS}
        | {name for name, _, _ in HS_OPS}
    )
    assert covered == set(INPUT_TYPES)


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize(("op", "build", "player_ok"), OPS, ids=[o[0] for o in OPS])
def test_mutation_access(
    table: tuple[GQL, Table],
    op: str,
    build: Callable[[Table], dict[str, Any]],
    player_ok: bool | str,
    role: str,
) -> None:
    check_access(*table, op, build, player_ok, role)


class D20Table:
    """A d20 house-rules campaign for the d20 plug-in's mutations (api/rulesets/d20_house)."""

    def __init__(self, g: GQL) -> None:
        out = g.ok(
            'mutation { createCampaign(input: {name: "Matrix d20", ruleset: "d20"}) { '
            "campaign { campaignId } gmToken } }"
        )["createCampaign"]
        self.g, self.cid, self.gm = g, out["campaign"]["campaignId"], out["gmToken"]
        self.c = gid("Campaign", self.cid, self.cid)
        self.aria, self.brom = (self.register(name) for name in ("Aria", "Brom"))
        _, other_gm = create_campaign(g, "Elsewhere d20")
        self.tokens = {
            "gm": self.gm,
            "own_player": issue(g, self.cid, self.gm, "PLAYER", [self.aria]),
            "other_player": issue(g, self.cid, self.gm, "PLAYER", [self.brom]),
            "viewer": issue(g, self.cid, self.gm, "VIEWER"),
            "other_gm": other_gm,
            "none": None,
        }

    def register(self, name: str) -> str:
        out = self.g.mutate(
            "d20RegisterCreature",
            {
                "campaignId": self.c,
                "name": name,
                "kind": "PC",
                "level": 1,
                "maxHp": 1000,
                "baseAttackBonus": [1],
            },
            self.gm,
            "character { id }",
        )
        return str(out["character"]["id"])

    def attack(self, face: int) -> int:
        """A fresh attack of Aria's on Brom (20: a threat awaiting confirmation; 19: a hit)."""
        out = self.g.mutate(
            "d20Attack",
            {
                "campaignId": self.c,
                "attackerId": self.aria,
                "targetId": self.brom,
                "roll": {"expression": "1d20", "faces": [face]},
            },
            self.gm,
        )
        assert out["userErrors"] == [], out
        return int(out["facts"][0]["position"])


def _d20_ops() -> list[tuple[str, Callable[[D20Table], dict[str, Any]], bool | str]]:
    d20 = {"expression": "1d20", "faces": [10]}
    return [
        (
            "d20RegisterCreature",
            lambda t: {"name": "Gnoll", "kind": "MONSTER", "level": 1, "maxHp": 11, "baseAttackBonus": [2]},
            False,
        ),
        ("d20UpdateSheet", lambda t: {"characterId": t.aria, "changes": {"level": 2}}, True),
        ("d20Attack", lambda t: {"attackerId": t.aria, "targetId": t.brom, "roll": d20}, True),
        ("d20AttackOfOpportunity", lambda t: {"attackerId": t.aria, "targetId": t.brom, "roll": d20}, True),
        ("d20ConfirmCritical", lambda t: {"attack": t.attack(20), "roll": d20}, True),
        ("d20RollDamage", lambda t: {"attack": t.attack(19), "weapon": {"expression": "1d4"}}, True),
        ("d20DealDamage", lambda t: {"characterId": t.aria, "amount": 1}, True),
        ("d20Heal", lambda t: {"characterId": t.aria, "amount": 1}, True),
        ("d20HealCheck", lambda t: {"healerId": t.aria, "characterId": t.brom, "roll": d20}, True),
        ("d20Stabilize", lambda t: {"characterId": t.aria}, True),
        ("d20MassiveDamageSave", lambda t: {"characterId": t.aria, "attack": 2}, True),
        ("d20SavingThrow", lambda t: {"characterId": t.aria, "save": "WILL", "dc": 10}, True),
        ("d20DamageAbility", lambda t: {"characterId": t.aria, "ability": "STRENGTH", "amount": 1}, True),
        (
            "d20RecoverAbilities",
            lambda t: {"characterIds": [t.aria], "kind": "SLEEP", "hours": 4, "clean": True},
            True,
        ),
        ("d20TakeAction", lambda t: {"characterId": t.aria, "action": "FREE"}, True),
        ("d20CastDefensively", lambda t: {"characterId": t.aria, "spellLevel": 1}, True),
        ("d20DeclareDeath", lambda t: {"characterId": t.brom, "cause": "test"}, False),
        ("d20Resurrect", lambda t: {"characterId": t.brom, "means": "test"}, False),
    ]


D20_OPS = _d20_ops()


@pytest.fixture(scope="module")
def d20_table() -> Iterator[tuple[GQL, D20Table]]:
    yield from served(D20Table)


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize(("op", "build", "player_ok"), D20_OPS, ids=[o[0] for o in D20_OPS])
def test_d20_mutation_access(
    d20_table: tuple[GQL, D20Table],
    op: str,
    build: Callable[[D20Table], dict[str, Any]],
    player_ok: bool | str,
    role: str,
) -> None:
    """The d20 plug-in's mutations (a d20 campaign): who may record what."""
    check_access(*d20_table, op, build, player_ok, role)


class OrcusTable:
    """An Orcus campaign for the Orcus plug-in's mutations (api/rulesets/orcus)."""

    def __init__(self, g: GQL) -> None:
        out = g.ok(
            'mutation { createCampaign(input: {name: "Matrix Orcus", ruleset: "orcus"}) { '
            "campaign { campaignId } gmToken } }"
        )["createCampaign"]
        self.g, self.cid, self.gm = g, out["campaign"]["campaignId"], out["gmToken"]
        self.c = gid("Campaign", self.cid, self.cid)
        self.aria, self.brom = (self.register(name) for name in ("Aria", "Brom"))
        fight = {"campaignId": self.c, "encounterId": "fight", "participantIds": [self.aria, self.brom]}
        assert g.mutate("startEncounter", fight, self.gm)["userErrors"] == []
        _, other_gm = create_campaign(g, "Elsewhere Orcus")
        self.tokens = {
            "gm": self.gm,
            "own_player": issue(g, self.cid, self.gm, "PLAYER", [self.aria]),
            "other_player": issue(g, self.cid, self.gm, "PLAYER", [self.brom]),
            "viewer": issue(g, self.cid, self.gm, "VIEWER"),
            "other_gm": other_gm,
            "none": None,
        }

    def register(self, name: str) -> str:
        out = self.g.mutate(
            "orcusRegisterCreature",
            {
                "campaignId": self.c,
                "name": name,
                "kind": "HERO",
                "level": 1,
                "maxHp": 1000,
                "surgesPerDay": 9,
                "defenses": {"ac": 10, "fort": 10, "ref": 10, "will": 10},
                "powers": [{"id": "breath", "frequency": "RECHARGE", "recharge": [5, 6]}],
            },
            self.gm,
            "character { id }",
        )
        assert out["userErrors"] == [], out
        return str(out["character"]["id"])

    def maintained(self) -> str:
        """A fresh effect Aria maintains on Brom: Aria is its user."""
        out = self.g.mutate(
            "orcusApplyEffect",
            {
                "campaignId": self.c,
                "characterId": self.brom,
                "sourceId": self.aria,
                "effect": {"components": [{"attackMod": -2}], "duration": {"kind": "MAINTAIN"}},
            },
            self.gm,
        )
        assert out["userErrors"] == [], out
        return str(out["facts"][0]["outcome"]["effect_id"])


def _orcus_ops() -> list[tuple[str, Callable[[OrcusTable], dict[str, Any]], bool | str]]:
    d20 = {"expression": "1d20", "faces": [10]}
    defenses = {"ac": 12, "fort": 12, "ref": 12, "will": 12}
    return [
        (
            "orcusRegisterCreature",
            lambda t: {"name": "Kobold", "kind": "MONSTER", "level": 1, "maxHp": 20, "defenses": defenses},
            False,
        ),
        ("orcusUpdateSheet", lambda t: {"characterId": t.aria, "changes": {"speed": 7}}, False),
        ("orcusAwardExperience", lambda t: {"characterIds": [t.aria], "amount": 10}, False),
        ("orcusSetLevel", lambda t: {"characterId": t.aria, "level": 2}, False),
        (
            "orcusAttack",
            lambda t: {
                "attackerId": t.aria,
                "power": {"kind": "MELEE", "defense": "AC", "attackBonus": 2, "damage": "1d6"},
                "targets": [{"targetId": t.brom, "roll": d20}],
                "damage": {"expression": "1d6", "faces": [3]},
            },
            True,
        ),
        ("orcusUsePower", lambda t: {"characterId": t.aria, "powerId": "breath"}, True),
        (
            "orcusRollRecharge",
            lambda t: {
                "characterId": t.aria,
                "powerId": "breath",
                "roll": {"expression": "1d6", "faces": [6]},
            },
            True,
        ),
        ("orcusMeetRechargeCondition", lambda t: {"characterId": t.aria, "powerId": "breath"}, False),
        ("orcusSpendActionPoint", lambda t: {"characterId": t.aria, "extra": "STANDARD"}, True),
        ("orcusTakeAction", lambda t: {"characterId": t.aria, "action": "FREE"}, True),
        (
            "orcusReadyAction",
            lambda t: {"characterId": t.aria, "action": "STANDARD", "trigger": "door"},
            True,
        ),
        (
            "orcusApplyEffect",
            lambda t: {
                "characterId": t.brom,
                "sourceId": t.aria,
                "effect": {"components": [{"condition": "slowed"}], "duration": {"kind": "SAVE_ENDS"}},
            },
            True,
        ),
        ("orcusRollSavingThrow", lambda t: {"characterId": t.aria, "effectId": "e1", "roll": d20}, True),
        ("orcusMaintainEffect", lambda t: {"effectId": t.maintained()}, True),
        ("orcusEndEffect", lambda t: {"effectId": t.maintained(), "byChoice": True}, True),
        ("orcusChooseEndOfTurnOrder", lambda t: {"characterId": t.aria, "effectIds": []}, True),
        ("orcusDealDamage", lambda t: {"characterId": t.aria, "amount": 1}, True),
        ("orcusHeal", lambda t: {"characterId": t.aria, "flat": 1}, True),
        ("orcusGrantTemporaryHitPoints", lambda t: {"characterId": t.aria, "amount": 1}, True),
        ("orcusSpendHealingSurge", lambda t: {"characterId": t.aria}, True),
        ("orcusRally", lambda t: {"characterId": t.aria}, True),
        ("orcusRollDeathSave", lambda t: {"characterId": t.aria, "roll": d20}, True),
        ("orcusStabilize", lambda t: {"characterId": t.brom, "healerId": t.aria}, True),
        ("orcusDeclareDeath", lambda t: {"characterId": t.brom, "cause": "test"}, False),
        ("orcusTakeShortRest", lambda t: {"characterIds": [t.aria]}, False),
        ("orcusTakeLongRest", lambda t: {"characterIds": [t.aria]}, False),
    ]


ORCUS_OPS = _orcus_ops()


@pytest.fixture(scope="module")
def orcus_table() -> Iterator[tuple[GQL, OrcusTable]]:
    yield from served(OrcusTable)


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize(("op", "build", "player_ok"), ORCUS_OPS, ids=[o[0] for o in ORCUS_OPS])
def test_orcus_mutation_access(
    orcus_table: tuple[GQL, OrcusTable],
    op: str,
    build: Callable[[OrcusTable], dict[str, Any]],
    player_ok: bool | str,
    role: str,
) -> None:
    """The Orcus plug-in's mutations (an Orcus campaign): the GM records anything, a player acts for
    its own hero (levels, XP, sheets, rests and deaths are the GM's), nobody else records."""
    check_access(*orcus_table, op, build, player_ok, role)


class HSTable:
    """A hero's-surge campaign for its plug-in's mutations (api/rulesets/hero_surge): Aria's attack,
    its damage roll, and an encounter in setup."""

    def __init__(self, g: GQL) -> None:
        out = g.ok(
            'mutation { createCampaign(input: {name: "Matrix HS", ruleset: "hero-surge"}) { '
            "campaign { campaignId } gmToken } }"
        )["createCampaign"]
        self.g, self.cid, self.gm = g, out["campaign"]["campaignId"], out["gmToken"]
        self.c = gid("Campaign", self.cid, self.cid)
        self.aria, self.brom = (self.register(name) for name in ("Aria", "Brom"))
        d20 = {"expression": "1d20", "faces": [12]}
        attack = {"attemptId": "a-aria", "characterId": self.aria, "kind": "ATTACK", "roll": d20}
        for op, inp in (
            ("heroSurgeAttempt", {**attack, "successLevel": "NORMAL_SUCCESS", "targetIds": [self.brom]}),
            (
                "heroSurgeRollDamage",
                {"damageId": "dmg-aria", "attemptId": "a-aria", "roll": {"expression": "1d6"}},
            ),
            ("startEncounter", {"encounterId": "fight", "participantIds": [self.aria, self.brom]}),
        ):
            assert g.mutate(op, {"campaignId": self.c, **inp}, self.gm)["userErrors"] == []
        self.enc = gid("Encounter", self.cid, "fight")
        _, other_gm = create_campaign(g, "Elsewhere HS")
        self.tokens = {
            "gm": self.gm,
            "own_player": issue(g, self.cid, self.gm, "PLAYER", [self.aria]),
            "other_player": issue(g, self.cid, self.gm, "PLAYER", [self.brom]),
            "viewer": issue(g, self.cid, self.gm, "VIEWER"),
            "other_gm": other_gm,
            "none": None,
        }

    def register(self, name: str) -> str:
        sheet = {"name": name, "kind": "PC", "level": 1, "conScore": 12, "maxHp": 1000, "hitDie": 8}
        out = self.g.mutate(
            "heroSurgeRegisterCreature", {"campaignId": self.c, **sheet}, self.gm, "character { id }"
        )
        assert out["userErrors"] == [], out
        return str(out["character"]["id"])


def _hs_ops() -> list[tuple[str, Callable[[HSTable], dict[str, Any]], bool | str]]:
    d20 = {"expression": "1d20", "faces": [10]}
    return [
        (
            "heroSurgeRegisterCreature",
            lambda t: {"name": "Cade", "kind": "MONSTER", "level": 1, "conScore": 10, "maxHp": 5},
            False,
        ),
        (
            "heroSurgeUpdateSheet",
            lambda t: {"characterId": t.aria, "changes": {"damage_reduction": 1}},
            False,
        ),
        (
            "heroSurgeCheckInitiative",
            lambda t: {"encounterId": t.enc, "characterId": t.aria, "successLevel": "FAILURE", "roll": d20},
            True,
        ),
        ("heroSurgeChooseOrder", lambda t: {"encounterId": t.enc, "characterIds": [t.aria]}, True),
        ("heroSurgeTakeAction", lambda t: {"characterId": t.aria, "action": "FREE"}, True),
        ("heroSurgeReadyAction", lambda t: {"characterId": t.aria, "action": "ACTION", "trigger": "x"}, True),
        ("heroSurgeDefend", lambda t: {"characterId": t.aria}, True),
        ("heroSurgeFullRoundAction", lambda t: {"characterId": t.aria, "step": "ABORT"}, True),
        (
            "heroSurgeAttempt",
            lambda t: {
                "attemptId": "x",
                "characterId": t.aria,
                "kind": "SKILL",
                "successLevel": "FAILURE",
                "roll": d20,
            },
            True,
        ),
        ("heroSurgeExchangeFortuneDie", lambda t: {"attemptId": "a-aria"}, True),
        ("heroSurgeSpendFortuneDie", lambda t: {"characterId": t.aria, "effect": "reroll"}, True),
        ("heroSurgeChooseDevastatingEffect", lambda t: {"attemptId": "a-aria", "option": "KNOCK_BACK"}, True),
        ("heroSurgeChooseHamperingEffect", lambda t: {"attemptId": "a-aria", "option": "MOVE_5FT"}, True),
        ("heroSurgeConsumeRankPenalty", lambda t: {"characterId": t.aria, "attemptId": "a-aria"}, True),
        ("heroSurgeResolveDefense", lambda t: {"defenseAttemptId": "a-aria", "incoming": ["b"]}, True),
        ("heroSurgeRollDamage", lambda t: {"damageId": "y", "attemptId": "a-aria", "roll": d20}, True),
        ("heroSurgeRerollDamageDie", lambda t: {"damageId": "dmg-aria", "dieIndex": 0, "newFace": 6}, True),
        ("heroSurgeApplyDamage", lambda t: {"characterId": t.aria, "amount": 1}, True),
        ("heroSurgeGrantTemporaryHitPoints", lambda t: {"characterId": t.aria, "amount": 1}, True),
        ("heroSurgeHeal", lambda t: {"characterId": t.aria, "amount": 1}, True),
        ("heroSurgeLuckRoll", lambda t: {"characterId": t.aria, "context": "OTHER", "roll": d20}, True),
        (
            "heroSurgeMedicalAttempt",
            lambda t: {"healerId": t.aria, "characterId": t.brom, "attemptId": "a-aria"},
            True,
        ),
        ("heroSurgeUseHealersKit", lambda t: {"healerId": t.aria, "characterId": t.brom}, True),
        (
            "heroSurgeRuleInstantKill",
            lambda t: {"characterId": t.brom, "attemptId": "a-aria", "luckRollIds": []},
            False,
        ),
        ("heroSurgeRestoreToLife", lambda t: {"characterId": t.brom, "means": "a miracle"}, False),
        ("heroSurgeSpendSurge", lambda t: {"characterId": t.aria, "purpose": "SPELL"}, True),
        ("heroSurgeDrainSurge", lambda t: {"characterId": t.aria}, True),
        ("heroSurgeRestoreSurges", lambda t: {"characterId": t.aria, "amount": 1}, False),
        ("heroSurgeTakeRest", lambda t: {"kind": "SHORT", "characterIds": [t.aria]}, False),
        (
            "heroSurgeGainLevel",
            lambda t: {"characterId": t.aria, "newLevel": 2, "hitDice": {"expression": "2d8"}},
            False,
        ),
    ]


HS_OPS = _hs_ops()


@pytest.fixture(scope="module")
def hs_table() -> Iterator[tuple[GQL, HSTable]]:
    yield from served(HSTable)


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize(("op", "build", "player_ok"), HS_OPS, ids=[o[0] for o in HS_OPS])
def test_hero_surge_mutation_access(
    hs_table: tuple[GQL, HSTable],
    op: str,
    build: Callable[[HSTable], dict[str, Any]],
    player_ok: bool | str,
    role: str,
) -> None:
    """The hero's-surge plug-in's mutations (a hero's-surge campaign): the GM records anything, a
    player acts for its own hero (its attempts and what follows from them); sheets, levels, rests,
    surges restored, instant kills and raising the dead are the GM's; nobody else records."""
    check_access(*hs_table, op, build, player_ok, role)


QUERIES = [
    (
        "proposals",
        "query($c: ID!) { campaign(id: $c) { pendingProposals { totalCount nodes { proposer } } "
        "proposals(first: 1) { totalCount } proposalPolicies { mode } } }",
        lambda t: {"c": t.c},
        True,
    ),
    (
        "campaign",
        "query($c: ID!) { campaign(id: $c) { name history(first: 1) { totalCount } } }",
        lambda t: {"c": t.c},
        True,
    ),
    (
        "character",
        "query($x: ID!) { character(id: $x) { name hitPoints { current } } }",
        lambda t: {"x": t.aria},
        True,
    ),
    (
        "encounter",
        "query($x: ID!) { encounter(id: $x) { round turnOfCreatureId } }",
        lambda t: {"x": t.enc},
        True,
    ),
    ("node", "query($x: ID!) { node(id: $x) { id } }", lambda t: {"x": gid("Fact", t.cid, 2)}, True),
    (
        "accessTokens",
        "query($c: ID!) { campaign(id: $c) { accessTokens { role } } }",
        lambda t: {"c": t.c},
        False,
    ),
]


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize(("name", "query", "variables", "members"), QUERIES, ids=[q[0] for q in QUERIES])
def test_query_access(
    table: tuple[GQL, Table],
    name: str,
    query: str,
    variables: Callable[[Table], Any],
    members: bool,
    role: str,
) -> None:
    g, t = table
    body = g.raw(query, variables(t), t.tokens[role])
    codes = [e["extensions"]["code"] for e in body.get("errors") or []]
    if role == "other_gm":
        assert codes == ["NOT_FOUND"]
    elif role == "none":
        assert codes == ["UNAUTHENTICATED"]
    elif role == "gm" or members:
        assert codes == [], body
    else:
        assert codes == ["FORBIDDEN"]


def test_token_management_is_for_the_gm(table: tuple[GQL, Table]) -> None:
    g, t = table
    q = "mutation($i: IssueAccessTokenInput!) { issueAccessToken(input: $i) { token userErrors { code } } }"
    for role, want in (
        ("own_player", ["FORBIDDEN"]),
        ("viewer", ["FORBIDDEN"]),
        ("other_gm", ["NOT_FOUND"]),
        ("none", ["UNAUTHENTICATED"]),
    ):
        out = g.ok(q, {"i": {"campaignId": t.c, "role": "VIEWER"}}, t.tokens[role])["issueAccessToken"]
        assert [e["code"] for e in out["userErrors"]] == want, role
    token = issue(g, t.cid, t.gm, "VIEWER")
    assert g.ok("{ campaigns { name } }", token=token)["campaigns"] == [{"name": "Matrix"}]
    tokens = g.ok(
        "query($c: ID!) { campaign(id: $c) { accessTokens { id role revokedAt } } }", {"c": t.c}, t.gm
    )["campaign"]["accessTokens"]
    tid = [x for x in tokens if x["role"] == "VIEWER" and x["revokedAt"] is None][-1]["id"]
    out = g.ok(
        "mutation($i: RevokeAccessTokenInput!) { revokeAccessToken(input: $i) { accessToken { revokedAt } "
        "userErrors { code } } }",
        {"i": {"accessTokenId": tid}},
        t.gm,
    )["revokeAccessToken"]
    assert out["userErrors"] == [] and out["accessToken"]["revokedAt"]
    assert (
        g.raw("{ campaigns { name } }", token=token)["errors"][0]["extensions"]["code"] == "UNAUTHENTICATED"
    )


def test_the_actions_list_is_what_the_schema_offers() -> None:
    from api.graphql.served import schema

    mutation_type = schema.get_type_by_name("Mutation")
    names = {f.graphql_name or f.python_name for f in mutation_type.fields}  # type: ignore[union-attr]
    assert {m.name for m in all_mutations()} <= {f.python_name for f in mutation_type.fields}  # type: ignore[union-attr]
    assert {"createCampaign", "issueAccessToken", "revokeAccessToken"} <= names | {
        "createCampaign",
        "issueAccessToken",
        "revokeAccessToken",
    }
