"""endTurn rolls what the turn owes (SW-10): a save against each save-ends effect, then ends it."""

from __future__ import annotations

from fastapi.testclient import TestClient

from api.http.app import create_app
from api.service.application import ChronicleApplication
from api.service.settings import Settings
from tests.graphql_helpers import GQL, create_campaign, gid, pc


def test_end_turn_rolls_the_saves_the_turn_owes_then_ends_it() -> None:
    app = ChronicleApplication(env={"PERSISTENCE_MODULE": "eventsourcing.popo"})
    with TestClient(create_app(Settings(database_url="memory:"), app)) as client:
        g = GQL(client)
        cid, gm = create_campaign(g)
        campaign = gid("Campaign", cid, cid)
        vex, orc = pc(g, cid, gm, "Vex"), pc(g, cid, gm, "Orc")
        started = g.mutate(
            "startEncounter",
            {"campaignId": campaign, "participantIds": [vex, orc], "encounterId": "fight"},
            gm,
        )
        assert started["userErrors"] == []
        encounter = gid("Encounter", cid, "fight")
        for who, face in ((vex, 18), (orc, 4)):
            out = g.mutate(
                "rollInitiative",
                {
                    "campaignId": campaign,
                    "encounterId": encounter,
                    "characterId": who,
                    "roll": {"expression": "1d20", "faces": [face]},
                },
                gm,
            )
            assert out["userErrors"] == [], out
        dazed = g.mutate(
            "applyEffect",
            {
                "campaignId": campaign,
                "characterId": vex,
                "sourceCharacterId": orc,
                "effect": {
                    "name": "dazed",
                    "components": [{"condition": "dazed"}],
                    "duration": {"kind": "save_ends"},
                },
            },
            gm,
        )
        assert dazed["userErrors"] == [], dazed
        effect_id = dazed["facts"][0]["outcome"]["effect_id"]
        ended = g.mutate("endTurn", {"campaignId": campaign, "encounterId": encounter}, gm)
        assert ended["userErrors"] == [], ended
        kinds = [f["type"] for f in ended["facts"]]
        assert kinds == ["SavingThrowRolled", "TurnEnded"]
        save = ended["facts"][0]
        assert save["payload"]["effect_id"] == effect_id and len(save["dice"][0]["faces"]) == 1
        assert ended["facts"][1]["outcome"]["turn_of"] == "orc"
