"""Outcomes and lines are filled once per page per operation (7e4ff6f), keyed by ``id()`` of the
page's list. A Fact asked by its id has no page: its one-record list was made per call and freed
after its fill, so the next Fact's list could take the same id, find that fill done in the
operation's cache, and never be filled (a query of aliased Facts asking ``line`` answered '' for
most of them). Each group now lives as long as the operation's cache."""

from __future__ import annotations

from fastapi.testclient import TestClient

from api.http.app import create_app
from api.service.application import ChronicleApplication
from api.service.settings import Settings
from tests.graphql_helpers import GQL, create_campaign, gid, pc


def test_facts_by_id_aliased_in_one_operation_each_get_their_outcome_and_line() -> None:
    app = ChronicleApplication(env={"PERSISTENCE_MODULE": "eventsourcing.popo"})
    with TestClient(create_app(Settings(database_url="memory:"), app)) as client:
        g = GQL(client)
        cid, gm = create_campaign(g)
        vex = pc(g, cid, gm, "Vex")
        campaign = gid("Campaign", cid, cid)
        positions = []
        for n in range(1, 9):
            out = g.mutate("dealDamage", {"campaignId": campaign, "characterId": vex, "amount": n}, gm)
            positions.append(out["facts"][0]["position"])
        for shown in ("line", "outcome line"):
            fields = " ".join(
                f'f{p}: node(id: "{gid("Fact", cid, str(p))}") {{ ... on Fact {{ {shown} }} }}'
                for p in positions
            )
            for _ in range(3):
                got = g.ok("query { " + fields + " }", {}, gm)
                for n, p in enumerate(positions, start=1):
                    node = got[f"f{p}"]
                    assert "Vex" in node["line"], (p, shown, node)  # was '' for most of them
                    if "outcome" in shown:
                        assert node["outcome"]["amount"] == n, (p, node)


def test_two_history_pages_in_one_operation_each_get_their_outcomes() -> None:
    app = ChronicleApplication(env={"PERSISTENCE_MODULE": "eventsourcing.popo"})
    with TestClient(create_app(Settings(database_url="memory:"), app)) as client:
        g = GQL(client)
        cid, gm = create_campaign(g)
        vex = pc(g, cid, gm, "Vex")
        campaign = gid("Campaign", cid, cid)
        for n in range(1, 9):
            g.mutate("dealDamage", {"campaignId": campaign, "characterId": vex, "amount": n}, gm)
        query = """query($id: ID!) { node(id: $id) { ... on Campaign {
          a: history(first: 4) { edges { node { position outcome line } } }
          b: history(last: 4) { edges { node { position outcome line } } }
          c: history(first: 4) { edges { node { position outcome line } } } } } }"""
        for _ in range(3):
            got = g.ok(query, {"id": campaign}, gm)["node"]
            for alias in "abc":
                for e in got[alias]["edges"]:
                    node = e["node"]
                    if node["position"] > 2:
                        assert node["outcome"] is not None, (alias, node)
                        assert node["line"], (alias, node)


def test_facts_filled_one_after_the_other_in_one_operation_each_get_their_own_fill() -> None:
    """The same, without the timing of a GraphQL execution: two Facts filled one after the other
    in one operation (as the resolvers of two aliased ``node`` fields may run)."""
    import asyncio
    from types import SimpleNamespace

    from api.graphql import data
    from api.graphql.types import _filled

    app = ChronicleApplication(env={"PERSISTENCE_MODULE": "eventsourcing.popo"})
    with TestClient(create_app(Settings(database_url="memory:"), app)) as client:
        g = GQL(client)
        cid, gm = create_campaign(g)
        vex = pc(g, cid, gm, "Vex")
        campaign = gid("Campaign", cid, cid)
        positions = [
            g.mutate("dealDamage", {"campaignId": campaign, "characterId": vex, "amount": n}, gm)["facts"][0][
                "position"
            ]
            for n in (1, 2, 3)
        ]
        from uuid import UUID

        records = data.history_records(app, UUID(cid), range(positions[0], positions[-1] + 1))
        info = SimpleNamespace(context={"application": app})

        async def one_after_the_other() -> None:
            for r in records:
                await _filled(info, r)  # type: ignore[arg-type]

        asyncio.run(one_after_the_other())
        assert [r.filled for r in records] == [True, True, True]
        assert [r.outcome["amount"] for r in records] == [1, 2, 3]  # type: ignore[index]
