"""The session in docs/api.md runs, in order, against a real application (in-process HTTP):
every operation it shows (registering a monster, starting an encounter, ...) and the answers it
shows (the what-if preview's changes)."""

from __future__ import annotations

import json
import re
import uuid
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from api.http.app import create_app
from api.service.application import ChronicleApplication
from api.service.settings import Settings
from tests.graphql_helpers import GQL

REPO = Path(__file__).resolve().parents[2]


D20_SECTION = "## 10. Another game system: the d20 house rules"
ORCUS_SECTION = "## 11. Another game system: Orcus"
HS_SECTION = "## 12. Another game system: the hero's-surge system"


def operations(section: str | None = None) -> dict[str, str]:
    """The guide's operations by name (only those of the section under the heading ``section``,
    up to the next one, when given)."""
    text = (REPO / "docs" / "api.md").read_text(encoding="utf-8")
    if section is not None:
        text = text.split(section, 1)[1].split("\n## ", 1)[0]
    ops: dict[str, str] = {}
    for block in re.findall(r"```graphql\n(.*?)```", text, re.S):
        for op in re.split(r"\n(?=(?:query|mutation|subscription) )", block.strip()):
            name = re.match(r"(?:query|mutation|subscription) (\w+)", op)
            assert name, op
            ops[name.group(1)] = op
    return ops


def shown_answer(after: str) -> Any:
    """The JSON answer the guide shows after the operation ``after``."""
    text = (REPO / "docs" / "api.md").read_text(encoding="utf-8")
    block = re.search(r"```json\n(.*?)```", text.split(after, 1)[1], re.S)
    assert block, f"no answer shown after {after}"
    return json.loads(block.group(1))


def test_the_guide_session_plays_through() -> None:
    ops = operations()
    app = ChronicleApplication(env={"PERSISTENCE_MODULE": "eventsourcing.popo"})
    with TestClient(create_app(Settings(database_url="memory:"), app)) as client:
        g = GQL(client)

        ran: set[str] = set()

        def run(name: str, token: str | None = None, **variables: Any) -> Any:
            ran.add(name)
            data = g.ok(ops[name], variables, token)
            for value in data.values():
                if isinstance(value, dict):
                    assert value.get("userErrors", []) == [], (name, value)
            return data

        key = str(uuid.uuid4())  # a fresh secret key per request, as the guide says
        created = run("CreateCampaign", key=key)["createCampaign"]
        gm, campaign = created["gmToken"], created["campaign"]["id"]
        retried = run("CreateCampaign", key=key)["createCampaign"]  # an idempotent retry
        assert (retried["gmToken"], retried["replayed"]) == (gm, True)
        traze = run("RegisterTraze", gm, campaign=campaign)["registerCreature"]["character"]
        assert traze["hitPoints"] == {"current": 48, "max": 48} and traze["bloodiedValue"] == 24
        monster = run("RegisterGoblin", gm, campaign=campaign)["registerCreature"]["character"]
        assert (monster["name"], monster["hitPoints"]) == ("Goblin", {"current": 30, "max": 30})
        goblin = monster["id"]
        player = run("PlayerToken", gm, campaign=campaign, traze=traze["id"], key=str(uuid.uuid4()))[
            "issueAccessToken"
        ]["token"]

        fight = run("StartFight", gm, campaign=campaign, traze=traze["id"], goblin=goblin)
        encounter = fight["startEncounter"]["encounter"]
        assert (encounter["name"], encounter["state"]) == ("Ambush at the relay", "setup")
        run("Initiative", gm, campaign=campaign, encounter=encounter["id"], who=traze["id"], face=18)
        rolled = run("Initiative", gm, campaign=campaign, encounter=encounter["id"], who=goblin, face=4)
        order = rolled["rollInitiative"]["encounter"]
        assert (order["state"], order["round"], order["turnOf"]) == ("running", 1, None)  # ruling 18
        assert [c["name"] for c in order["initiativeOrder"]] == ["Traze", "Goblin"]
        started = run("StartTurn", gm, campaign=campaign, encounter=encounter["id"])["startTurn"]
        assert (
            started["encounter"]["turnOf"] == {"name": "Traze"}
            and started["facts"][0]["type"] == "TurnStarted"
        )

        run("Flanked", gm, campaign=campaign)
        fireball = run("Fireball", player, campaign=campaign, traze=traze["id"], goblin=goblin)["attack"]
        hit = fireball["facts"][0]["outcome"]["targets"][0]
        assert hit["attack_total"] == 14 + 10 + 2 and hit["hit"] is True  # 26 vs Reflex 25
        assert hit["damage"]["amount"] == 4 + 6 + 2 + 5
        assert fireball["facts"][0]["dice"][-1]["faces"] == [4, 6, 2]
        ended = run("EndTurn", player, campaign=campaign, encounter=encounter["id"])["endTurn"]
        assert [f["type"] for f in ended["facts"]] == ["TurnEnded"] and ended["pendingRolls"] == []
        between = ended["encounter"]
        assert between["turnOfCreatureId"] is None and between["raw"]["next_turn_of"] == "goblin"

        sheet = run("Sheet", player, traze=traze["id"])["character"]
        assert sheet["defenses"]["ac"]["current"] == 19
        assert [t["key"] for t in sheet["tracks"]] == ["hp", "wounds", "surges"]
        assert sheet["tracks"][0]["thresholds"] == [{"label": "bloodied", "value": 24}]
        log = run("Log", player, campaign=campaign)["campaign"]
        assert [e["node"]["type"] for e in log["history"]["edges"]] == ["AttackMade"]
        at = fireball["facts"][0]["position"]
        then = run("Then", player, campaign=campaign, at=at)["campaign"]
        assert then["believed"] == then["known"]

        preview = run("Preview", gm, campaign=campaign)["campaign"]["whatIf"]
        # The preview shows the change the guide says it does: the goblin's hit points, 13 -> 22.
        assert preview == shown_answer("query Preview"), preview
        goblin_changes = {c["creatureId"]: c["fields"] for c in preview["changes"]}["goblin"]
        assert {"field": "hp", "before": 30 - 17, "after": 30 - 17 // 2} in goblin_changes
        overturned = run("Overturn", gm, campaign=campaign)["resolveRuling"]
        shown = {c["name"]: c["hitPoints"]["current"] for c in overturned["characters"]}
        assert shown == {"Goblin": 30 - 17 // 2}  # the payload shows whoever the correction changed
        hp = {
            c["name"]: c["hitPoints"]["current"]
            for c in run("Then", gm, campaign=campaign, at=at)["campaign"]["known"]["characters"]
        }
        assert hp["Goblin"] == 30 - 17 // 2  # 24 misses Reflex 25 now: half damage
        then = run("Then", player, campaign=campaign, at=at)["campaign"]
        believed = {c["name"]: c["hitPoints"]["current"] for c in then["believed"]["characters"]}
        assert believed["Goblin"] == 30 - 17  # what the table saw before the ruling was overturned
        run("Undo", gm, campaign=campaign, position=at)
        tv = run("TvToken", gm, campaign=campaign, key=str(uuid.uuid4()))["issueAccessToken"]["token"]
        mine = g.ok("query($c: ID!) { campaign(id: $c) { viewer { role } } }", {"c": campaign}, tv)
        assert mine["campaign"]["viewer"]["role"] == "VIEWER"
        assert run("Sheet", gm, traze=goblin)["character"]["hitPoints"]["current"] == 30
        # Every query and mutation the guide shows was played (its subscription has its own e2e
        # tests over a real WebSocket: tests/e2e/test_graphql.py; the d20 and Orcus sections are
        # played below).
        shown = {name for name, op in ops.items() if not op.startswith("subscription")}
        assert ran == shown - set(operations(D20_SECTION)) - set(operations(ORCUS_SECTION)) - set(
            operations(PROPOSALS_SECTION)
        ) - set(operations(HS_SECTION))


def test_the_d20_section_plays_through() -> None:
    """RULES.md A3 numbers as the guide works them: 19 + 6 + 3 + 1 = 29 vs AC 13; 8 + 3 + 1 = 12
    damage takes the gnoll (S 12, B 1) from 11 to -1: disabled, so no stabilisation roll."""
    ops = operations(D20_SECTION)
    app = ChronicleApplication(env={"PERSISTENCE_MODULE": "eventsourcing.popo"})
    with TestClient(create_app(Settings(database_url="memory:"), app)) as client:
        g = GQL(client)
        ran: set[str] = set()

        def run(name: str, token: str | None = None, **variables: Any) -> Any:
            ran.add(name)
            return g.ok(ops[name], variables, token)

        created = run("CreateFord", key=str(uuid.uuid4()))["createCampaign"]
        gm, campaign = created["gmToken"], created["campaign"]["id"]
        assert created["campaign"]["ruleset"] == "d20"
        kara = run("RegisterKara", gm, campaign=campaign)["d20RegisterCreature"]["character"]
        assert (kara["effectiveStamina"], kara["staminaBonus"]) == (16, 3)
        assert kara["armorClass"] == {"ac": 16, "touch": 11, "flatFooted": 15}
        assert kara["thresholds"] == {"disabledTo": -3, "dyingFrom": -4, "deadBelow": -16}
        gnoll = run("RegisterGnoll", gm, campaign=campaign)["d20RegisterCreature"]["character"]["id"]
        swing = run("Swing", gm, campaign=campaign, kara=kara["id"], gnoll=gnoll)["d20Attack"]["facts"][0]
        assert (swing["outcome"]["attack_total"], swing["outcome"]["ac"]) == (29, 13)
        wound = run("Wound", gm, campaign=campaign, attack=swing["position"])["d20RollDamage"]
        hurt = {c["name"]: c for c in wound["characters"]}["Gnoll"]
        assert (hurt["hitPoints"]["current"], hurt["lifeState"], hurt["band"]) == (-1, "DISABLED", "DISABLED")
        refused = run("Bleed", gm, campaign=campaign, gnoll=gnoll)["d20Stabilize"]["userErrors"]
        assert refused == shown_answer("mutation Bleed")
        assert ran == set(ops)


def test_the_orcus_section_plays_through() -> None:
    """RULES.md A4 numbers as the guide works them: a natural 20 deals the maximum of 2d6+4 (16)
    plus the 1d6 (3) bonus rolled for Mira: 30 -> 11 (OR-11, B-OR-4, B-OR-5); Rally heals a surge
    (floor(30 / 4) = 7, A4.9): 18; a second Rally is refused (OR-9)."""
    ops = operations(ORCUS_SECTION)
    app = ChronicleApplication(env={"PERSISTENCE_MODULE": "eventsourcing.popo"})
    with TestClient(create_app(Settings(database_url="memory:"), app)) as client:
        g = GQL(client)
        ran: set[str] = set()

        def run(name: str, token: str | None = None, **variables: Any) -> Any:
            ran.add(name)
            return g.ok(ops[name], variables, token)

        created = run("CreateDen", key=str(uuid.uuid4()))["createCampaign"]
        gm, campaign = created["gmToken"], created["campaign"]["id"]
        assert created["campaign"]["ruleset"] == "orcus"
        mira = run("RegisterMira", gm, campaign=campaign)["orcusRegisterCreature"]["character"]
        assert (mira["level"], mira["xpLevel"], mira["bloodiedValue"], mira["diesAt"]) == (3, 3, 15, -15)
        assert mira["healingSurges"] == {"remaining": 6, "value": 7} and mira["actionPoints"]["current"] == 1
        ogre = run("RegisterOgre", gm, campaign=campaign)["orcusRegisterCreature"]["character"]["id"]
        breath = run("Breath", gm, campaign=campaign, ogre=ogre, mira=mira["id"])["orcusAttack"]
        assert breath["userErrors"] == []
        hit = breath["facts"][0]["outcome"]["targets"][0]
        assert (
            hit["crit"],
            hit["damage"]["maximum"],
            hit["damage"]["crit_bonus"],
            hit["damage"]["amount"],
        ) == (
            True,
            16,
            3,
            19,
        )
        burnt = {c["name"]: c for c in breath["characters"]}["Mira"]
        assert (burnt["hitPoints"]["current"], burnt["bloodied"]) == (11, True)
        assert [(p["type"], p["amount"]) for p in burnt["persistentDamage"]] == [("fire", 5)]
        seen = run("Mira", gm, id=mira["id"])["character"]
        assert seen["orcusEffects"][0]["saveEnds"] is True
        assert seen["orcusEffects"][0]["firstFailedSave"]["components"] == [{"condition": "dazed"}]
        rallied = run("Rally", gm, campaign=campaign, mira=mira["id"])["orcusRally"]
        assert rallied["userErrors"] == [] and rallied["characters"][0]["hitPoints"]["current"] == 18
        again = run("Rally", gm, campaign=campaign, mira=mira["id"])["orcusRally"]["userErrors"]
        assert again == shown_answer("Rallying again is")
        assert ran == set(ops)


PROPOSALS_SECTION = "## 13. Players propose, the GM decides"


def test_the_proposals_section_plays_through() -> None:
    """Brom has one healing surge left; his player proposes spending it twice under APPROVAL:
    the preview of both says the second would be refused, the GM approves the first, the second
    is refused with NO_HEALING_SURGE and stays pending, then is rejected; the history says who
    proposed the surge spent."""
    from tests.graphql_helpers import create_campaign, gid, issue, pc

    ops = operations(PROPOSALS_SECTION)
    app = ChronicleApplication(env={"PERSISTENCE_MODULE": "eventsourcing.popo"})
    with TestClient(create_app(Settings(database_url="memory:"), app)) as client:
        g = GQL(client)
        ran: set[str] = set()

        def run(name: str, token: str | None = None, **variables: Any) -> Any:
            ran.add(name)
            return g.ok(ops[name], variables, token)

        cid, gm = create_campaign(g, "Relay")
        campaign = gid("Campaign", cid, cid)
        brom = pc(g, cid, gm, "Brom", surgesPerDay=1)
        g.mutate("dealDamage", {"campaignId": campaign, "characterId": brom, "amount": 12}, gm)
        player = issue(g, cid, gm, "PLAYER", [brom])
        assert run("RequireApproval", gm, campaign=campaign)["setProposalPolicy"]["userErrors"] == []
        surge = {"characterId": brom, "cause": "POWER"}
        first = run("ProposeSurge", player, campaign=campaign, input=surge, key="surge-1")["submitProposal"]
        assert first["userErrors"] == [] and first["proposal"]["status"] == "PENDING"
        assert first["proposal"]["proposer"] == "player"  # a token issued without a label
        repeat = run("ProposeSurge", player, campaign=campaign, input=surge, key="surge-1")["submitProposal"]
        assert repeat["replayed"] and repeat["proposal"]["id"] == first["proposal"]["id"]
        second = run("ProposeSurge", player, campaign=campaign, input=surge)["submitProposal"]["proposal"]
        queue = run("Queue", gm, campaign=campaign)["campaign"]["pendingProposals"]
        assert queue["totalCount"] == 2
        both = [first["proposal"]["id"], second["id"]]
        preview = run("WhatIfApproved", gm, campaign=campaign, proposals=both)["campaign"]["proposalPreview"]
        assert preview["applied"] == [first["proposal"]["position"]]
        assert [r["code"] for r in preview["refusals"]] == ["NO_HEALING_SURGE"]
        ok = run("Approve", gm, campaign=campaign, proposal=first["proposal"]["id"], key="ok-1")[
            "approveProposal"
        ]
        assert [f["type"] for f in ok["facts"]] == ["ProposalDecided", "HealingSurgeSpent"]
        assert ok["characters"] == [{"name": "Brom", "hitPoints": {"current": 25}}]
        stale = run("Approve", gm, campaign=campaign, proposal=second["id"])["approveProposal"]
        assert stale["userErrors"] == shown_answer("pending:")
        no = run("Reject", gm, campaign=campaign, proposal=second["id"])["rejectProposal"]
        assert no["proposal"] == {"status": "REJECTED", "reason": "no surge left"}
        nodes = run("Provenance", gm, campaign=campaign)["campaign"]["history"]["nodes"]
        spent = [n for n in nodes if n["type"] == "HealingSurgeSpent"]
        assert spent[0]["provenance"] == (
            f"proposed by player, approved by the GM (proposal #{first['proposal']['position']})"
        )
        shown = {name for name, op in ops.items() if not op.startswith("subscription")}
        assert ran == shown


def test_the_hero_surge_section_plays_through() -> None:
    """RULES.md A2 numbers as the guide works them: Brin (level 2, Con 16, 24 HP) has 5 surges
    (HS-15) and dies past -16 (HS-12); bands by the ruled level, heroes first (HS-2); 25 damage:
    -1, a surge lost (B-HS-7), dying without a luck roll; 2 more: -3 and a luck roll owed (B-HS-9);
    9 is unlucky: 3 surges; a second luck roll is refused (ruling 25)."""
    ops = operations(HS_SECTION)
    app = ChronicleApplication(env={"PERSISTENCE_MODULE": "eventsourcing.popo"})
    with TestClient(create_app(Settings(database_url="memory:"), app)) as client:
        g = GQL(client)
        ran: set[str] = set()

        def run(name: str, token: str | None = None, **variables: Any) -> Any:
            ran.add(name)
            return g.ok(ops[name], variables, token)

        created = run("CreateBridge", key=str(uuid.uuid4()))["createCampaign"]
        gm, campaign = created["gmToken"], created["campaign"]["id"]
        assert created["campaign"]["ruleset"] == "hero-surge"
        brin = run("RegisterBrin", gm, campaign=campaign)["heroSurgeRegisterCreature"]["character"]
        assert brin["heroSurges"] == {"current": 5, "max": 5, "negative": 0} and brin["deathThreshold"] == 16
        sneak = run("RegisterSneak", gm, campaign=campaign)["heroSurgeRegisterCreature"]["character"]["id"]
        enc = run("StartBridge", gm, campaign=campaign, brin=brin["id"], sneak=sneak)["startEncounter"]
        eid = enc["encounter"]["id"]
        run(
            "CheckInitiative", gm, campaign=campaign, encounter=eid, who=sneak, level="MAJOR_SUCCESS", face=19
        )
        settled = run(
            "CheckInitiative",
            gm,
            campaign=campaign,
            encounter=eid,
            who=brin["id"],
            level="MAJOR_SUCCESS",
            face=3,
        )["heroSurgeCheckInitiative"]["facts"][0]["outcome"]
        assert settled["order"] == ["brin", "goblin-sneak"]  # the same band: the hero first
        first = run("Stab", gm, campaign=campaign, brin=brin["id"], amount=25)["heroSurgeApplyDamage"]
        hurt = first["characters"][0]
        assert (hurt["hitPoints"]["current"], hurt["heroSurges"]["current"], hurt["dying"]) == (-1, 4, True)
        assert hurt["luckRollsOwed"] == []
        second = run("Stab", gm, campaign=campaign, brin=brin["id"], amount=2)["heroSurgeApplyDamage"]
        assert second["characters"][0]["luckRollsOwed"] == ["DYING_DAMAGE"]
        luck = run("Luck", gm, campaign=campaign, brin=brin["id"])["heroSurgeLuckRoll"]
        assert luck["facts"][0]["outcome"]["result"] == "unlucky"
        assert luck["characters"][0]["heroSurges"]["current"] == 3
        again = run("Luck", gm, campaign=campaign, brin=brin["id"])["heroSurgeLuckRoll"]["userErrors"]
        assert again == shown_answer("A luck roll nobody owes is refused")
        assert ran == set(ops)
