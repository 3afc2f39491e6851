"""Issue 19 end to end: players propose, the GM decides, over GraphQL and WebSocket against a
real ``chronicle serve`` process, on SQLite and on PostgreSQL.

Two player clients (Ana plays Aria, Bo plays Brom) propose while the GM's client watches the
queue live (``campaignProposals``); the GM approves one, changes and approves another, rejects
a third; a proposal made stale by an earlier approval is refused with the command's own error;
idempotency keys work for proposing and deciding; the state, the history and the Markdown
export show exactly that."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from gql import Client, gql
from gql.transport.exceptions import TransportQueryError
from gql.transport.websockets import WebsocketsTransport

from api.cli.process import clean_env as server_env
from api.cli.process import served
from api.exports import service
from api.service.settings import Settings
from api.service.store import open_application
from tests.e2e.test_serve import Server
from tests.graphql_helpers import GQL, create_campaign, gid, pc

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

PROPOSAL = """proposal { id position mutation status proposer characterId reason input amendedInput
  changes { field before after } appliedPositions decidedBy }"""


@pytest.fixture
def server(store: Settings, tmp_path: Path) -> Iterator[Server]:
    env = server_env(CHRONICLE_DATABASE_URL=store.database_url, CHRONICLE_SUBSCRIPTION_POLL_SECONDS="0.5")
    with served(env, tmp_path) as (url, proc):
        yield Server(url, proc)


def issue(g: GQL, cid: str, gm: str, role: str, characters: list[str], label: str) -> str:
    out = g.ok(
        "mutation($i: IssueAccessTokenInput!) { issueAccessToken(input: $i) { token userErrors { code } } }",
        {
            "i": {
                "campaignId": gid("Campaign", cid, cid),
                "role": role,
                "characterIds": characters,
                "label": label,
                "idempotencyKey": str(uuid.uuid4()),
            }
        },
        gm,
    )["issueAccessToken"]
    assert out["userErrors"] == [], out
    return str(out["token"])


def codes(out: dict[str, Any]) -> list[str]:
    return [e["code"] for e in out["userErrors"]]


def test_players_propose_and_the_gm_decides_live(server: Server) -> None:
    with httpx.Client(base_url=server.url, timeout=30) as client:
        g = GQL(client)
        cid, gm = create_campaign(g, "Proposals")
        c = gid("Campaign", cid, cid)
        aria, brom = pc(g, cid, gm, "Aria"), pc(g, cid, gm, "Brom", surgesPerDay=1)
        orc = pc(g, cid, gm, "Orc")
        g.mutate("dealDamage", {"campaignId": c, "characterId": brom, "amount": 12}, gm)
        ana = issue(g, cid, gm, "PLAYER", [aria], "Ana")
        bo = issue(g, cid, gm, "PLAYER", [brom], "Bo")
        viewer = issue(g, cid, gm, "VIEWER", [], "TV")

        # each player has a client of their own (the GM's is ``g`` and the WebSocket below)
        phones = {t: GQL(httpx.Client(base_url=server.url, timeout=30)) for t in (ana, bo, viewer)}

        def submit(token: str, mutation: str, inp: dict[str, Any], key: str | None = None) -> dict[str, Any]:
            return phones[token].mutate(
                "submitProposal",
                {"campaignId": c, "mutation": mutation, "input": inp, "idempotencyKey": key},
                token,
                PROPOSAL,
            )

        # the GM's trust setting: players propose healing surges, the GM decides
        policy = g.mutate(
            "setProposalPolicy", {"campaignId": c, "mutation": "spendHealingSurge", "mode": "APPROVAL"}, gm
        )
        assert policy["userErrors"] == []
        direct = g.mutate("spendHealingSurge", {"campaignId": c, "characterId": brom}, bo)
        assert codes(direct) == ["APPROVAL_REQUIRED"]
        start = g.ok("query($c: ID!) { campaign(id: $c) { position } }", {"c": c}, gm)["campaign"]["position"]

        attack = {
            "attackerId": aria,
            "power": {"kind": "MELEE", "defense": "AC", "attackBonus": 6, "damage": "1d8+3"},
            "targets": [
                {
                    "characterId": orc,
                    "attackRoll": {"expression": "1d20", "faces": [17]},
                    "damageRoll": {"expression": "1d8+3", "faces": [5]},
                }
            ],
        }

        async def table() -> list[dict[str, Any]]:
            transport = WebsocketsTransport(
                url=server.url.replace("http", "ws") + "/graphql",
                init_payload={"authorization": f"Bearer {gm}"},
            )
            seen: list[dict[str, Any]] = []
            async with Client(transport=transport, fetch_schema_from_transport=False) as session:
                arrived = asyncio.Event()

                async def listen() -> None:
                    sub = gql("""subscription($c: ID!, $a: Int) {
                        campaignProposals(campaignId: $c, afterPosition: $a) {
                        position kind proposal { position mutation proposer status } } }""")
                    async for event in session.subscribe(sub, variable_values={"c": c, "a": start}):
                        seen.append(event["campaignProposals"])
                        if sum(e["kind"] == "SUBMITTED" for e in seen) == 4:
                            arrived.set()
                        if len(seen) == 8:
                            return

                task = asyncio.create_task(listen())
                await asyncio.sleep(0.5)
                # two players propose from their own clients (off the event loop: plain HTTP)
                await asyncio.to_thread(players_propose)
                await asyncio.wait_for(arrived.wait(), 15)  # the GM saw them arrive live
                await asyncio.to_thread(gm_decides)
                await asyncio.wait_for(task, 15)
            return seen

        ids: dict[str, str] = {}
        pos: dict[str, int] = {}

        def players_propose() -> None:
            first = submit(ana, "attack", attack, key="ana-swing")
            assert first["userErrors"] == [] and first["proposal"]["status"] == "PENDING", first
            again = submit(ana, "attack", attack, key="ana-swing")  # a retried request: the same proposal
            other = {**attack, "nonlethal": True}
            assert codes(submit(ana, "attack", other, key="ana-swing")) == ["IDEMPOTENCY_KEY_REUSED"]
            assert (
                again["replayed"] is True and again["proposal"]["position"] == first["proposal"]["position"]
            )
            assert first["proposal"]["proposer"] == "Ana (player)"
            assert first["proposal"]["characterId"] == "aria"
            surge = {"characterId": brom, "cause": "POWER"}
            p2 = submit(bo, "spendHealingSurge", surge, key="bo-surge-1")
            p3 = submit(bo, "spendHealingSurge", surge)  # Brom has one surge: only one can be approved
            p4 = submit(ana, "useSecondWind", {"characterId": aria})
            for name, out in (("attack", first), ("surge", p2), ("surge2", p3), ("wind", p4)):
                assert out["userErrors"] == [], out
                ids[name], pos[name] = out["proposal"]["id"], out["proposal"]["position"]
            # a player proposes only for their own character; a viewer cannot propose; only the GM decides
            assert codes(submit(bo, "useSecondWind", {"characterId": aria})) == ["FORBIDDEN"]
            assert codes(submit(viewer, "useSecondWind", {"characterId": aria})) == ["FORBIDDEN"]
            assert codes(
                phones[bo].mutate("approveProposal", {"campaignId": c, "proposalId": ids["surge"]}, bo)
            ) == ["FORBIDDEN"]
            # malformed commands are refused at once, naming the input field
            bad = submit(ana, "useSecondWind", {"characterId": aria, "bogus": 1})
            assert codes(bad) == ["INVALID_INPUT"] and bad["userErrors"][0]["field"] == "input"
            assert codes(submit(ana, "noSuchMutation", {})) == ["INVALID_INPUT"]

        def gm_decides() -> None:
            queue = g.ok(
                """query($c: ID!) { campaign(id: $c) { pendingProposals(first: 10) { totalCount
                nodes { position mutation proposer } } } }""",
                {"c": c},
                gm,
            )["campaign"]["pendingProposals"]
            assert queue["totalCount"] == 4
            assert [n["proposer"] for n in queue["nodes"]] == [
                "Ana (player)",
                "Bo (player)",
                "Bo (player)",
                "Ana (player)",
            ]
            # what-if: both surges approved -> the second is refused, the first heals Brom
            preview = g.ok(
                """query($c: ID!, $p: [ID!]!) { campaign(id: $c) { proposalPreview(proposalIds: $p) {
                applied refusals { position code }
                changes { creatureId fields { field before after } } } } }""",
                {"c": c, "p": [ids["surge"], ids["surge2"]]},
                gm,
            )["campaign"]["proposalPreview"]
            assert preview["applied"] == [pos["surge"]]
            assert preview["refusals"] == [{"position": pos["surge2"], "code": "NO_HEALING_SURGE"}]
            assert preview["changes"][0]["creatureId"] == "brom"

            # approve Bo's surge (and retry the approval: replayed, applied once)
            ok = g.mutate(
                "approveProposal",
                {"campaignId": c, "proposalId": ids["surge"], "idempotencyKey": "gm-ok-surge"},
                gm,
                PROPOSAL,
            )
            assert ok["userErrors"] == [] and ok["proposal"]["status"] == "APPROVED", ok
            assert [f["type"] for f in ok["facts"]] == ["ProposalDecided", "HealingSurgeSpent"]
            again = g.mutate(
                "approveProposal",
                {"campaignId": c, "proposalId": ids["surge"], "idempotencyKey": "gm-ok-surge"},
                gm,
            )
            assert again["replayed"] is True and again["position"] == ok["position"]
            # change Ana's damage dice and approve
            changed_target = {**attack["targets"][0], "damageRoll": {"expression": "1d8+3", "faces": [2]}}
            changed = g.mutate(
                "approveProposal",
                {
                    "campaignId": c,
                    "proposalId": ids["attack"],
                    "changes": {"targets": [changed_target]},
                    "reason": "the die was cocked",
                },
                gm,
                PROPOSAL,
            )
            assert changed["userErrors"] == [], changed
            assert changed["proposal"]["status"] == "APPROVED_WITH_CHANGES"
            assert {"field": "targets.0.damageRoll.faces.0", "before": 5, "after": 2} in changed["proposal"][
                "changes"
            ]
            # Bo's second surge is stale now: refused with the command's own error, still pending
            stale = g.mutate("approveProposal", {"campaignId": c, "proposalId": ids["surge2"]}, gm, PROPOSAL)
            assert codes(stale) == ["NO_HEALING_SURGE"] and stale["facts"] == []
            rejected = g.mutate(
                "rejectProposal",
                {
                    "campaignId": c,
                    "proposalId": ids["surge2"],
                    "reason": "no surge left",
                    "idempotencyKey": "gm-no",
                },
                gm,
                PROPOSAL,
            )
            assert rejected["proposal"]["status"] == "REJECTED"
            # and the third decision: Ana's second wind is rejected
            no = g.mutate(
                "rejectProposal", {"campaignId": c, "proposalId": ids["wind"], "reason": "not now"}, gm
            )
            assert no["userErrors"] == []
            # a decided proposal is decided once
            twice = g.mutate(
                "rejectProposal", {"campaignId": c, "proposalId": ids["attack"], "reason": "x"}, gm
            )
            assert codes(twice) == ["PROPOSAL_NOT_PENDING"]

        try:
            seen = asyncio.run(table())
        finally:
            for phone in phones.values():
                phone.client.close()

        kinds = [(e["kind"], e["proposal"]["position"]) for e in seen]
        assert kinds[:4] == [("SUBMITTED", pos[n]) for n in ("attack", "surge", "surge2", "wind")]
        assert kinds[4:] == [("DECIDED", pos[n]) for n in ("surge", "attack", "surge2", "wind")]
        assert [e["proposal"]["status"] for e in seen[-4:]] == [
            "APPROVED",
            "APPROVED_WITH_CHANGES",
            "REJECTED",
            "REJECTED",
        ]

        # the state: Brom healed by his one surge, the orc took the amended 2+3
        state = g.ok(
            """query($c: ID!) { campaign(id: $c) {
            pendingProposals { totalCount }
            proposals { nodes { position status } }
            characters { creatureId hitPoints { current max }
              ... on StellarWindsCharacter { healingSurges { remaining } } } } }""",
            {"c": c},
            gm,
        )["campaign"]
        hp = {x["creatureId"]: x["hitPoints"]["current"] for x in state["characters"]}
        assert hp["orc"] == 25 and hp["aria"] == 30
        assert hp["brom"] == 18 + 7  # a surge heals a quarter of 30 (7)
        surges = {x["creatureId"]: x["healingSurges"]["remaining"] for x in state["characters"]}
        assert surges["brom"] == 0
        assert state["pendingProposals"]["totalCount"] == 0
        assert {n["position"]: n["status"] for n in state["proposals"]["nodes"]} == {
            pos["attack"]: "APPROVED_WITH_CHANGES",
            pos["surge"]: "APPROVED",
            pos["surge2"]: "REJECTED",
            pos["wind"]: "REJECTED",
        }

        # the history: each applied fact says where it came from
        nodes = g.ok(
            """query($c: ID!, $a: String) { campaign(id: $c) { history(first: 100, after: $a) {
            nodes { position type provenance proposalPosition line } } } }""",
            {"c": c, "a": None},
            gm,
        )["campaign"]["history"]["nodes"]
        by_type = {n["type"]: n for n in nodes if n["provenance"]}
        assert by_type["AttackMade"]["provenance"] == (
            f"proposed by Ana (player), approved with changes by the GM (proposal #{pos['attack']})"
        )
        assert by_type["HealingSurgeSpent"]["provenance"] == (
            f"proposed by Bo (player), approved by the GM (proposal #{pos['surge']})"
        )
        assert set(by_type) == {"AttackMade", "HealingSurgeSpent"}
        lines = [n["line"] for n in nodes if n["type"].startswith("Proposal")]
        assert "Ana (player) proposes attack for Aria." in lines
        assert f"The GM rejects proposal #{pos['surge2']}: no surge left" in lines

        # the Markdown export tells the same story
        md = client.get(f"/campaigns/{cid}/export.md", headers={"Authorization": f"Bearer {gm}"})
        assert md.status_code == 200
        assert (
            f"Proposed by Ana (player), approved with changes by the GM (proposal #{pos['attack']})"
            in md.text
        )
        assert f"Proposed by Bo (player), approved by the GM (proposal #{pos['surge']})" in md.text
        assert (
            f"The GM approves with changes proposal #{pos['attack']} "
            r"(targets.0.damageRoll.faces.0 from 5 to 2): the die was cocked" in md.text
        )
        assert f"The GM rejects proposal #{pos['surge2']}: no surge left" in md.text
        assert f"The GM rejects proposal #{pos['wind']}: not now" in md.text
        assert md.text.count("Proposed by ") == 2  # only the two applied facts carry a provenance
        # and the JSONL export carries the proposals: an import has the same book and provenance
        jsonl = client.get(f"/campaigns/{cid}/export.jsonl", headers={"Authorization": f"Bearer {gm}"}).text
        fresh = open_application(Settings(database_url="memory:"))
        try:
            new = service.import_lines(fresh, jsonl.encode().splitlines(keepends=True))
            moved = fresh.proposals(new).proposals
            assert {p: q.status for p, q in moved.items()} == {
                n["position"]: n["status"].lower() for n in state["proposals"]["nodes"]
            }
            assert "".join(service.export(fresh, new, "jsonl")) == jsonl
            assert "".join(service.export(fresh, new, "md")) == md.text
        finally:
            fresh.close()


def test_withdrawal_and_a_forbidden_command(server: Server) -> None:
    with httpx.Client(base_url=server.url, timeout=30) as client:
        g = GQL(client)
        cid, gm = create_campaign(g, "Withdrawn")
        c = gid("Campaign", cid, cid)
        aria, brom = pc(g, cid, gm, "Aria"), pc(g, cid, gm, "Brom")
        ana = issue(g, cid, gm, "PLAYER", [aria], "Ana")
        bo = issue(g, cid, gm, "PLAYER", [brom], "Bo")
        roll = {"characterId": aria, "roll": {"expression": "1d20", "faces": [3]}, "purpose": "perception"}
        out = g.mutate(
            "submitProposal", {"campaignId": c, "mutation": "rollDice", "input": roll}, ana, PROPOSAL
        )
        p = out["proposal"]["id"]
        assert codes(g.mutate("withdrawProposal", {"campaignId": c, "proposalId": p}, bo)) == ["FORBIDDEN"]
        gone = g.mutate(
            "withdrawProposal", {"campaignId": c, "proposalId": p, "reason": "oops"}, ana, PROPOSAL
        )
        assert gone["userErrors"] == [] and gone["proposal"]["status"] == "WITHDRAWN"
        late = g.mutate("approveProposal", {"campaignId": c, "proposalId": p}, gm)
        assert codes(late) == ["PROPOSAL_NOT_PENDING"]
        # forbidden for players: neither directly nor as a proposal; the GM still may
        g.mutate("setProposalPolicy", {"campaignId": c, "mutation": "rollDice", "mode": "FORBIDDEN"}, gm)
        assert codes(g.mutate("rollDice", {"campaignId": c, **roll}, ana)) == ["FORBIDDEN"]
        again = g.mutate("submitProposal", {"campaignId": c, "mutation": "rollDice", "input": roll}, ana)
        assert codes(again) == ["FORBIDDEN"]
        assert g.mutate("rollDice", {"campaignId": c, **roll}, gm)["userErrors"] == []
        policies = g.ok(
            "query($c: ID!) { campaign(id: $c) { proposalPolicies { mutation mode } } }", {"c": c}, gm
        )
        assert policies["campaign"]["proposalPolicies"] == [{"mutation": "rollDice", "mode": "FORBIDDEN"}]
        # a token of another campaign sees nothing of the queue, live or not
        _, stranger = create_campaign(g, "Elsewhere")

        async def listen_as(token: str) -> str:
            transport = WebsocketsTransport(
                url=server.url.replace("http", "ws") + "/graphql",
                init_payload={"authorization": f"Bearer {token}"},
            )
            async with Client(transport=transport, fetch_schema_from_transport=False) as session:
                sub = gql(
                    "subscription($c: ID!) { "
                    "campaignProposals(campaignId: $c, afterPosition: 0) { position } }"
                )
                try:
                    async for _ in session.subscribe(sub, variable_values={"c": c}):
                        return "event"
                except TransportQueryError as err:
                    return str((err.errors or [{}])[0].get("extensions", {}).get("code"))
            return "ended"

        assert asyncio.run(listen_as(stranger)) == "NOT_FOUND"
        assert asyncio.run(listen_as(ana)) == "event"  # a member catches up from position 0
        hidden = g.raw(
            "query($c: ID!) { campaign(id: $c) { pendingProposals { totalCount } } }", {"c": c}, stranger
        )
        assert hidden["errors"][0]["extensions"]["code"] == "NOT_FOUND"
        # back to the default: players roll directly again
        g.mutate("setProposalPolicy", {"campaignId": c, "mutation": "rollDice", "mode": "DIRECT"}, gm)
        assert g.mutate("rollDice", {"campaignId": c, **roll}, ana)["userErrors"] == []
