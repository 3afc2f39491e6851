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
