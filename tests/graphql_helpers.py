"""Shared helpers for the GraphQL tests: a tiny client and a standard table."""

from __future__ import annotations

import base64
import uuid
from typing import Any

import httpx

from api.graphql.mutations import all_mutations

CAMPAIGN_FIELDS = "id campaignId name position"
INPUT_TYPES = {
    name.split("_")[0] + "".join(w.capitalize() for w in name.split("_")[1:]): cls.__name__
    for name, cls in ((m.name, m.input) for m in all_mutations())
}


def gid(type_name: str, campaign_id: str, local: str | int) -> str:
    return base64.b64encode(f"{type_name}:{campaign_id}:{local}".encode()).decode()


class GQL:
    """POSTs to /graphql through any httpx-compatible client (TestClient or httpx.Client)."""

    def __init__(self, client: Any, url: str = "/graphql") -> None:
        self.client, self.url = client, url

    def raw(self, query: str, variables: dict[str, Any] | None = None, token: str | None = None) -> Any:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        response = self.client.post(
            self.url, json={"query": query, "variables": variables or {}}, headers=headers
        )
        assert response.status_code == 200, response.text
        return response.json()

    def ok(self, query: str, variables: dict[str, Any] | None = None, token: str | None = None) -> Any:
        body = self.raw(query, variables, token)
        assert not body.get("errors"), body
        return body["data"]

    def mutate(self, name: str, input: dict[str, Any], token: str | None, select: str = "") -> Any:  # noqa: A002
        q = (
            f"mutation($input: {INPUT_TYPES[name]}!) {{ {name}(input: $input) {{ "
            f"userErrors {{ code message field }} position replayed facts {{ position type payload outcome "
            f"dice {{ expression faces total }} }} {select} }} }}"
        )
        return self.ok(q, {"input": input}, token)[name]


def create_campaign(g: GQL, name: str = "Night Watch", key: str | None = None) -> tuple[str, str]:
    out = g.ok(
        "mutation($i: CreateCampaignInput!) { createCampaign(input: $i) { campaign { campaignId } gmToken "
        "userErrors { code } } }",
        {"i": {"name": name, "idempotencyKey": key}},
    )["createCampaign"]
    assert out["userErrors"] == [], out
    return out["campaign"]["campaignId"], out["gmToken"]


def pc(g: GQL, cid: str, token: str, name: str, **extra: Any) -> str:
    inp = {
        "campaignId": gid("Campaign", cid, cid),
        "name": name,
        "kind": "PC",
        "level": 1,
        "maxHp": 30,
        "surgesPerDay": 4,
        "defenses": {"ac": 15, "fort": 13, "ref": 13, "will": 12},
        "abilities": {"constitution": 14, "dexterity": 12},
        **extra,
    }
    out = g.mutate("registerCreature", inp, token, "character { id creatureId }")
    assert out["userErrors"] == [], out
    return str(out["character"]["id"])


def issue(g: GQL, cid: str, gm: str, role: str, characters: list[str] | None = None) -> str:
    out = g.ok(
        "mutation($i: IssueAccessTokenInput!) { issueAccessToken(input: $i) { token userErrors { code } } }",
        {
            "i": {
                "campaignId": gid("Campaign", cid, cid),
                "role": role,
                "characterIds": characters or [],
                "idempotencyKey": str(uuid.uuid4()),
            }
        },
        gm,
    )["issueAccessToken"]
    assert out["userErrors"] == [], out
    return str(out["token"])


def http_client(url: str) -> httpx.Client:
    return httpx.Client(base_url=url, timeout=30)
