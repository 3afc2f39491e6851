"""History and log pages carry each fact's outcome and narrated line, as corrected now.

Only the facts on the page are folded (from the nearest checkpoint); the answer must be the
same a mutation gave when the fact was recorded, until a correction changes it.
"""

from __future__ import annotations

from fastapi.testclient import TestClient

from api.http.app import create_app
from api.service.application import ChronicleApplication
from api.service.settings import Settings
from tests.graphql_helpers import GQL, create_campaign, gid, pc

HISTORY = """query($id: ID!, $after: String) { node(id: $id) { ... on Campaign {
  history(first: 2, after: $after) { edges { cursor node { position type outcome status } } }
  log(last: 3) { edges { node { position text status } } } } } }"""


def test_history_pages_show_outcomes_and_lines_as_corrected() -> None:
    app = ChronicleApplication(env={"PERSISTENCE_MODULE": "eventsourcing.popo"})
    with TestClient(create_app(Settings(database_url="memory:"), app)) as client:
        g = GQL(client)
        cid, gm = create_campaign(g)
        vex = pc(g, cid, gm, "Vex")
        campaign = gid("Campaign", cid, cid)
        hits = [
            g.mutate("dealDamage", {"campaignId": campaign, "characterId": vex, "amount": n}, gm)
            for n in (5, 7)
        ]
        first = g.ok(HISTORY, {"id": campaign}, gm)["node"]
        cursor = first["history"]["edges"][-1]["cursor"]
        page = g.ok(HISTORY, {"id": campaign, "after": cursor}, gm)["node"]["history"]["edges"]
        by_position = {e["node"]["position"]: e["node"] for e in page}
        for hit in hits:
            fact = hit["facts"][0]
            assert by_position[fact["position"]]["outcome"] == fact["outcome"]
            assert by_position[fact["position"]]["status"] == ["ACTIVE"]

        revoked_at = hits[0]["facts"][0]["position"]
        out = g.mutate(
            "revokeFact", {"campaignId": campaign, "position": revoked_at, "reason": "misread"}, gm
        )
        assert out["userErrors"] == []
        page = g.ok(HISTORY, {"id": campaign, "after": cursor}, gm)["node"]["history"]["edges"]
        now = {e["node"]["position"]: e["node"] for e in page}
        assert now[revoked_at]["status"] == ["REVOKED"] and now[revoked_at]["outcome"] is None
        later = hits[1]["facts"][0]["position"]
        assert now[later]["outcome"]["hp_lost"] == 7
        lines = g.ok(HISTORY, {"id": campaign}, gm)["node"]["log"]["edges"]
        assert [line["node"]["position"] for line in lines] == [revoked_at, later, out["position"]]
        assert all(line["node"]["text"] for line in lines)
        assert "Vex" in lines[1]["node"]["text"]


def test_a_page_by_position_reads_only_its_own_facts(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A page of the history or the log by position (cursors, fromPosition/toPosition, asOf) and
    a Fact by its id cost their own facts: the campaign's facts are never listed for them
    (issue 21); a filter on content (a character, types) still scans, with the same answers."""
    from api.graphql import data

    app = ChronicleApplication(env={"PERSISTENCE_MODULE": "eventsourcing.popo"})
    with TestClient(create_app(Settings(database_url="memory:"), app)) as client:
        g = GQL(client)
        cid, gm = create_campaign(g)
        vex = pc(g, cid, gm, "Vex")
        campaign = gid("Campaign", cid, cid)
        for n in range(1, 8):
            g.mutate("dealDamage", {"campaignId": campaign, "characterId": vex, "amount": n}, gm)
        pages = """query($id: ID!, $after: String, $at: Int!) { node(id: $id) { ... on Campaign {
          history(first: 3, after: $after) { totalCount edges { cursor node { position type } }
            pageInfo { hasNextPage hasPreviousPage } }
          window: history(last: 2, filter: {fromPosition: 3, toPosition: 6}) { totalCount
            edges { node { position } } pageInfo { hasNextPage hasPreviousPage } }
          log(first: 2, after: $after) { totalCount edges { node { position text } } }
          asOf(position: $at) { history(last: 1) { totalCount edges { node { position } } } } } } }"""
        scanned = data.history
        everything = g.ok(pages, {"id": campaign, "at": 4}, gm)["node"]

        def listing(*args, **kwargs):  # type: ignore[no-untyped-def]
            raise AssertionError("a page by position listed the whole history")

        monkeypatch.setattr(data, "history", listing)
        answer = g.ok(pages, {"id": campaign, "at": 4}, gm)["node"]
        assert answer == everything
        assert [e["node"]["position"] for e in answer["history"]["edges"]] == [1, 2, 3]
        assert answer["history"]["totalCount"] == 9  # the creation, Vex, seven blows
        assert answer["history"]["pageInfo"] == {"hasNextPage": True, "hasPreviousPage": False}
        assert [e["node"]["position"] for e in answer["window"]["edges"]] == [5, 6]
        assert answer["window"]["totalCount"] == 4
        assert answer["window"]["pageInfo"] == {"hasNextPage": False, "hasPreviousPage": True}
        assert answer["asOf"]["history"] == {"totalCount": 4, "edges": [{"node": {"position": 4}}]}
        after = answer["history"]["edges"][-1]["cursor"]
        more = g.ok(pages, {"id": campaign, "after": after, "at": 9}, gm)["node"]
        assert [e["node"]["position"] for e in more["history"]["edges"]] == [4, 5, 6]
        assert [e["node"]["position"] for e in more["log"]["edges"]] == [4, 5]
        assert all(e["node"]["text"] for e in more["log"]["edges"])
        fact = g.ok(
            "query($id: ID!) { node(id: $id) { ... on Fact { position type } } }",
            {"id": gid("Fact", cid, "5")},
            gm,
        )["node"]
        assert fact == {"position": 5, "type": "DamageTaken"}

        monkeypatch.setattr(data, "history", scanned)  # a filter on content scans
        blows = g.ok(
            """query($id: ID!) { node(id: $id) { ... on Campaign {
              history(first: 50, filter: {types: ["DamageTaken"]}) { totalCount } } } }""",
            {"id": campaign},
            gm,
        )["node"]["history"]
        assert blows["totalCount"] == 7


def test_a_page_folds_only_when_it_shows_outcomes_or_lines(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Outcomes and narrated lines fold the stretch a page spans (from the checkpoint before it);
    a page that shows neither (positions, types, statuses, payloads) folds nothing. A page that
    shows them folds once for all its facts, and its answers are those of the eager page."""
    from api.graphql import data

    app = ChronicleApplication(env={"PERSISTENCE_MODULE": "eventsourcing.popo"})
    with TestClient(create_app(Settings(database_url="memory:"), app)) as client:
        g = GQL(client)
        cid, gm = create_campaign(g)
        vex = pc(g, cid, gm, "Vex")
        campaign = gid("Campaign", cid, cid)
        for n in range(1, 6):
            g.mutate("dealDamage", {"campaignId": campaign, "characterId": vex, "amount": n}, gm)
        fills: list[list[int]] = []
        filling = data.fill

        def counted(app_, campaign_id, records):  # type: ignore[no-untyped-def]
            fills.append([r.position for r in records])
            return filling(app_, campaign_id, records)

        monkeypatch.setattr(data, "fill", counted)
        bare = """query($id: ID!) { node(id: $id) { ... on Campaign {
          history(first: 5) { edges { node { position type status payload } } } } } }"""
        plain = g.ok(bare, {"id": campaign}, gm)["node"]["history"]["edges"]
        assert [e["node"]["position"] for e in plain] == [1, 2, 3, 4, 5]
        fact = g.ok(
            "query($id: ID!) { node(id: $id) { ... on Fact { position type status } } }",
            {"id": gid("Fact", cid, "4")},
            gm,
        )["node"]
        assert fact == {"position": 4, "type": "DamageTaken", "status": ["ACTIVE"]}
        assert fills == []  # nothing asked for an outcome or a line

        shown = """query($id: ID!) { node(id: $id) { ... on Campaign {
          history(first: 5) { edges { node { position outcome line } } } } } }"""
        page = g.ok(shown, {"id": campaign}, gm)["node"]["history"]["edges"]
        assert fills == [[1, 2, 3, 4, 5]]  # one fold for the page, not one per fact
        blows = [e["node"] for e in page if e["node"]["position"] >= 3]
        assert [b["outcome"]["amount"] for b in blows] == [1, 2, 3]
        assert all("Vex" in b["line"] for b in blows)
        one = g.ok(
            "query($id: ID!) { node(id: $id) { ... on Fact { outcome line } } }",
            {"id": gid("Fact", cid, "4")},
            gm,
        )["node"]
        assert one == {"outcome": blows[1]["outcome"], "line": blows[1]["line"]}
        assert fills[1:] == [[4]]
