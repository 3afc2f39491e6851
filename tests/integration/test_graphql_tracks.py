"""``Character.tracks``: the numbers a game system tracks for a creature, with bounds and
thresholds, read through the public API for any system (what the table page draws as bars)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from uuid import UUID

import pytest
from fastapi.testclient import TestClient

from api.graphql.ids import campaign_gid
from api.http.app import create_app
from api.service.application import ChronicleApplication
from api.service.auth import AccessControl
from api.service.demo import create_demo
from api.service.settings import Settings
from domain.rulesets import get_ruleset
from tests.graphql_helpers import GQL

QUERY = """
query Tracks($c: ID!) {
  campaign(id: $c) {
    characters {
      __typename creatureId kind
      tracks { key label value ceiling floor thresholds { label value } }
    }
  }
}
"""


@pytest.fixture
def client(memory_app: ChronicleApplication) -> Iterator[TestClient]:
    with TestClient(create_app(Settings(database_url="memory:"), memory_app)) as c:
        yield c


def _tracks(client: TestClient, app: ChronicleApplication, cid: UUID) -> dict[str, Any]:
    access = AccessControl(app)
    access.grant_gm(cid)  # a campaign made outside GraphQL gets its access record here
    viewer = access.issue(cid, "viewer", [], "the TV", None).token
    data = GQL(client).ok(QUERY, {"c": campaign_gid(cid)}, viewer)
    return {c["creatureId"]: c for c in data["campaign"]["characters"]}


def _expected(ruleset_id: str, view: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {
            "key": t.key,
            "label": t.label,
            "value": t.value,
            "ceiling": t.ceiling,
            "floor": t.floor,
            "thresholds": [{"label": label, "value": v} for label, v in t.thresholds],
        }
        for t in get_ruleset(ruleset_id).tracks(view)
    ]


def test_stellar_winds_characters_carry_hp_wounds_and_surges_with_their_thresholds(
    client: TestClient, memory_app: ChronicleApplication
) -> None:
    cid = create_demo(memory_app)
    found = _tracks(client, memory_app, cid)
    traze = found["traze"]["tracks"]
    assert [t["key"] for t in traze] == ["hp", "wounds", "surges"]
    hp, wounds, _ = traze
    assert (hp["label"], hp["ceiling"], hp["floor"]) == ("HP", 24, 0)
    assert hp["thresholds"] == [{"label": "bloodied", "value": 12}]  # half of 24
    assert (wounds["floor"], wounds["thresholds"]) == (None, [{"label": "dying", "value": 0}])
    # every creature, monsters too, exactly as the ruleset gives them (the exports chart the same)
    summary = memory_app.summary(cid)["creatures"]
    assert set(found) == set(summary)
    for creature_id, view in summary.items():
        assert found[creature_id]["tracks"] == _expected("stellar-winds", view), creature_id


def test_a_system_without_an_api_plugin_serves_its_tracks_too(
    client: TestClient, memory_app: ChronicleApplication, toy_ruleset: object
) -> None:
    """The toy ruleset (its own package, no GraphQL plug-in: GenericCharacter): its hit points
    with the dying line and its grit, from the interface field."""
    cid = memory_app.create_campaign("Toys", ruleset="toy")
    memory_app.record(
        cid,
        "ToyCreatureJoined",
        {"creature_id": "bram", "name": "Bram", "kind": "pc", "max_hp": 20, "grit": 2},
    )
    memory_app.record(cid, "Hit", {"target": "bram", "amount": 6})
    found = _tracks(client, memory_app, cid)["bram"]
    assert found["__typename"] == "GenericCharacter"
    hp, grit = found["tracks"]
    assert (hp["key"], hp["value"], hp["ceiling"]) == ("hp", 14, 20)
    assert [t["label"] for t in hp["thresholds"]] == ["dying"]
    assert (grit["key"], grit["value"], grit["ceiling"]) == ("grit", 2, None)
    assert found["tracks"] == _expected("toy", memory_app.creature_state(cid, "bram"))
