"""userErrors name the mutation's own input field, so an app can mark the right control."""

from __future__ import annotations

from fastapi.testclient import TestClient

from api.http.app import create_app
from api.service.application import ChronicleApplication
from api.service.settings import Settings
from tests.graphql_helpers import GQL, create_campaign, gid, pc


def test_user_errors_name_input_fields() -> None:
    app = ChronicleApplication(env={"PERSISTENCE_MODULE": "eventsourcing.popo"})
    with TestClient(create_app(Settings(database_url="memory:"), app)) as client:
        g = GQL(client)
        cid, gm = create_campaign(g)
        campaign = gid("Campaign", cid, cid)
        vex = pc(g, cid, gm, "Vex")
        ghost = gid("Character", cid, "nobody")

        def field(name: str, inp: dict[str, object]) -> str | None:
            errors = g.mutate(name, {"campaignId": campaign, **inp}, gm)["userErrors"]
            assert len(errors) == 1, errors
            return errors[0]["field"]

        assert field("dealDamage", {"characterId": ghost, "amount": 3}) == "characterId"
        assert field("heal", {"characterId": vex, "surgeMultiplier": 99}) == "surgeMultiplier"
        assert field("revokeFact", {"position": 999, "reason": "typo"}) == "position"
        assert field("restoreFact", {"revocationPosition": 2, "reason": ""}) == "revocationPosition"
