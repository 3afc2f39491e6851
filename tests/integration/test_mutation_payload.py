"""A mutation's answer (the changed characters, the encounter, ``facts``, the campaign) is built
from the campaign the command held when it stored its facts (``Recorded.before`` / ``after``),
not read again after the save -- and it equals a fresh query made right after it, on both stores.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from api.http.app import create_app
from api.service.application import ChronicleApplication
from api.service.settings import Settings
from tests.graphql_helpers import GQL, create_campaign, gid, pc

CHARACTER = "creatureId name hitPoints { current max temporary } conditions lifeState"
ENCOUNTER = "encounterId round turnOfCreatureId order"
SELECT = (
    f"characters {{ {CHARACTER} }} character {{ {CHARACTER} }} encounter {{ {ENCOUNTER} }} "
    "campaign { position name clockMinutes }"
)


@pytest.fixture
def g(app: ChronicleApplication, store: Settings) -> Iterator[GQL]:
    with TestClient(create_app(store, app)) as client:
        yield GQL(client)


class Table:
    def __init__(self, g: GQL) -> None:
        self.g = g
        self.cid, self.gm = create_campaign(g)
        self.campaign = gid("Campaign", self.cid, self.cid)
        self.ids = {n: pc(g, self.cid, self.gm, n.title()) for n in ("vex", "orc", "mira")}
        self.encounter = gid("Encounter", self.cid, "fight")

    def mutate(self, name: str, **inp: Any) -> dict[str, Any]:
        out: dict[str, Any] = self.g.mutate(name, {"campaignId": self.campaign, **inp}, self.gm, SELECT)
        assert out["userErrors"] == [], out
        return out

    def fresh(self, answer: dict[str, Any]) -> dict[str, Any]:
        """The same selection, queried afresh: each character and the encounter the answer shows."""
        shown = [c["creatureId"] for c in answer["characters"]]
        chars = " ".join(f"c{k}: character(id: $c{k}) {{ {CHARACTER} }}" for k in range(len(shown)))
        params = "".join(f", $c{k}: ID!" for k in range(len(shown)))
        q = (
            f"query($c: ID!, $e: ID!{params}) {{ campaign(id: $c) {{ position name clockMinutes }} "
            f"encounter(id: $e) {{ {ENCOUNTER} }} {chars} }}"
        )
        variables = {
            "c": self.campaign,
            "e": self.encounter,
            **{f"c{k}": self.ids[c] for k, c in enumerate(shown)},
        }
        data = self.g.ok(q, variables, self.gm)
        data["nodes"] = [data.pop(f"c{k}") for k in range(len(shown))]
        return data  # type: ignore[no-any-return]


def _same_as_a_fresh_query(t: Table, answer: dict[str, Any]) -> None:
    fresh = t.fresh(answer)
    assert answer["position"] == fresh["campaign"]["position"]
    assert answer["campaign"] == fresh["campaign"]
    assert answer["characters"] == fresh["nodes"]
    assert answer["character"] == (fresh["nodes"][0] if fresh["nodes"] else None)
    if answer["encounter"] is not None:
        assert answer["encounter"] == fresh["encounter"]
    assert [f["position"] for f in answer["facts"]][-1] == answer["position"]


def test_the_answer_equals_a_fresh_query_after_it(g: GQL) -> None:
    t = Table(g)
    v, o, m = t.ids["vex"], t.ids["orc"], t.ids["mira"]
    steps: list[tuple[str, dict[str, Any]]] = [
        ("dealDamage", {"characterId": o, "amount": 7, "types": []}),
        ("heal", {"characterId": o, "flat": 3}),
        ("advanceTime", {"minutes": 5}),
        ("startEncounter", {"participantIds": [v, o, m], "encounterId": "fight"}),
        *(
            (
                "rollInitiative",
                {"encounterId": t.encounter, "characterId": c, "roll": {"expression": "1d20", "faces": [f]}},
            )
            for c, f in ((v, 18), (o, 9), (m, 4))
        ),
        ("startTurn", {"encounterId": t.encounter}),
        (
            "attack",
            {
                "attackerId": v,
                "power": {
                    "name": "strike",
                    "kind": "MELEE",
                    "defense": "AC",
                    "attackBonus": 9,
                    "damage": "1d8+2",
                },
                "targets": [
                    {
                        "characterId": c,
                        "attackRoll": {"expression": "1d20", "faces": [15]},
                        "damageRoll": {"expression": "1d8+2", "faces": [6]},
                    }
                    for c in (o, m)
                ],
            },
        ),
        ("endTurn", {"encounterId": t.encounter, "serverRolls": True, "startNext": True}),
        ("dealDamage", {"characterId": m, "amount": 40, "types": []}),  # dying
    ]
    for name, inp in steps:
        _same_as_a_fresh_query(t, t.mutate(name, **inp))


def test_the_answer_reads_the_campaign_once_before_the_command(g: GQL, app: ChronicleApplication) -> None:
    """Nothing is read again after the save: the executor's one view of the campaign (before it
    plans), then the command; the answer comes from what the command held."""
    t = Table(g)
    calls: Counter[str] = Counter()
    for name in ("view", "campaign"):
        original = getattr(app, name)

        def spy(*args: Any, _name: str = name, _original: Any = original, **kwargs: Any) -> Any:
            calls[_name] += 1
            return _original(*args, **kwargs)

        setattr(app, name, spy)
    select = f"characters {{ {CHARACTER} }} character {{ {CHARACTER} }} encounter {{ {ENCOUNTER} }}"
    inp = {"campaignId": t.campaign, "characterId": t.ids["orc"], "amount": 4, "types": []}
    answer = g.mutate("dealDamage", inp, t.gm, select)
    assert answer["character"]["hitPoints"]["current"] == 26
    assert calls == Counter({"view": 1}), calls


def test_a_replay_answers_the_campaign_now(g: GQL) -> None:
    t = Table(g)
    inp = {"characterId": t.ids["orc"], "amount": 5, "types": [], "idempotencyKey": "hit-1"}
    first = t.mutate("dealDamage", **inp)
    t.mutate("heal", characterId=t.ids["orc"], flat=2)
    again = t.mutate("dealDamage", **inp)
    assert again["replayed"] and again["facts"] == first["facts"]
    _same_as_a_fresh_query(t, {**again, "facts": [{"position": again["position"]}]})


def test_an_end_of_turn_plans_from_the_view_without_the_campaigns_lock(
    g: GQL, app: ChronicleApplication
) -> None:
    """``endTurn`` finds the rolls the turn owes in the mutation's view of the campaign: it takes
    the campaign's lock as often as a damage does (for its commit), not once more for the turn
    and once more for the rolls (under load each of those waited for the group commit in progress)."""
    t = Table(g)
    v, o, m = t.ids["vex"], t.ids["orc"], t.ids["mira"]
    t.mutate("startEncounter", participantIds=[v, o, m], encounterId="fight")
    for c, face in ((v, 18), (o, 9), (m, 4)):
        roll = {"expression": "1d20", "faces": [face]}
        t.mutate("rollInitiative", encounterId=t.encounter, characterId=c, roll=roll)
    t.mutate("startTurn", encounterId=t.encounter)
    taken: Counter[str] = Counter()
    original = app._lock

    def lock(campaign_id: Any) -> Any:
        taken[str(campaign_id)] += 1
        return original(campaign_id)

    app._lock = lock  # type: ignore[method-assign]
    t.mutate("dealDamage", characterId=o, amount=3, types=[])
    damage, taken = sum(taken.values()), Counter()
    ended = t.mutate("endTurn", encounterId=t.encounter, serverRolls=True, startNext=True)
    assert [f["type"] for f in ended["facts"]][-2:] == ["TurnEnded", "TurnStarted"]
    assert sum(taken.values()) == damage, (taken, damage)
    _same_as_a_fresh_query(t, ended)
