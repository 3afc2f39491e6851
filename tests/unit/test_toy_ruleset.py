"""The core names no game system: a ruleset shipped as its own package (tests/plugins/toy_ruleset,
found through the ``chronicle.rulesets`` entry point) records, corrects and reads like Stellar Winds.

The API, read models and exports surfaces are played in tests/integration/test_toy_surfaces.py;
these are the domain and command-service laws on the in-memory store.
"""

from __future__ import annotations

from importlib import metadata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from api.service.application import ChronicleApplication
from domain import rulesets
from domain.errors import RuleViolation
from tests.unit.conftest import memory_application


@pytest.fixture(autouse=True)
def _installed(toy_ruleset) -> None:
    """Every test here runs with the toy installed (as its own package) in this process."""


@pytest.fixture
def app() -> ChronicleApplication:
    return memory_application()


def join(app: ChronicleApplication, cid, who: str, max_hp: int = 10, grit: int = 2) -> int:
    payload = {"creature_id": who, "name": who.title(), "kind": "pc", "max_hp": max_hp, "grit": grit}
    return app.record(cid, "ToyCreatureJoined", payload).position


def view(app: ChronicleApplication, cid, who: str, position: int | None = None, axis: str = "corrected"):
    return app.creature_state(cid, who, position, axis)


def test_the_toy_ruleset_is_found_through_its_entry_point_not_registered_by_hand() -> None:
    dists = {
        ep.name: ep.dist.name for ep in metadata.entry_points(group=rulesets.ENTRY_POINT_GROUP) if ep.dist
    }
    assert dists["toy"] == "chronicle-toy-ruleset" and dists["stellar-winds"] == "chronicle"
    names = set(dists)
    assert {"stellar-winds", "toy"} <= names
    assert "toy" in rulesets.available()
    assert rulesets.get_ruleset("toy").title == "Toy"
    assert rulesets.problems() == {}


def test_a_toy_campaign_records_its_own_facts_and_refuses_another_systems(app) -> None:
    cid = app.create_campaign("Toys", ruleset="toy")
    join(app, cid, "ana")
    app.record(cid, "Hit", {"target": "ana", "amount": 4})
    assert view(app, cid, "ana")["hit_points"]["current"] == 6
    with pytest.raises(Exception, match="unknown fact type 'DamageTaken'"):
        app.record(cid, "DamageTaken", {"target": "ana", "amount": 1})
    sw = app.create_campaign("Winds")
    with pytest.raises(Exception, match="unknown fact type 'Hit'"):
        app.record(sw, "Hit", {"target": "ana", "amount": 1})


def test_revoking_a_hit_orphans_the_rally_it_made_possible_and_as_of_keeps_both_views(app) -> None:
    cid = app.create_campaign("Toys", ruleset="toy")
    join(app, cid, "ana", max_hp=10, grit=1)
    hit = app.record(cid, "Hit", {"target": "ana", "amount": 10}).position  # down
    app.record(cid, "Hit", {"target": "ana", "amount": 1})  # costs the last grit: out
    assert view(app, cid, "ana")["life"] == "dead"
    patch_refused = pytest.raises(RuleViolation, match="out of the fight")
    with patch_refused:
        app.record(cid, "Patch", {"target": "ana", "amount": 2})
    second = app.ledger(cid).last_seq
    app.revoke(cid, hit, "misheard the damage")
    # without the first hit, the second only scratches ana: she is up, grit intact
    now = view(app, cid, "ana")
    assert (now["life"], now["hit_points"]["current"], now["grit"]) == ("active", 9, 1)
    # what the table believed at the second hit is still there, and the corrected past too
    assert view(app, cid, "ana", second, "recorded")["life"] == "dead"
    assert view(app, cid, "ana", second, "corrected")["life"] == "active"


def test_a_fact_whose_precondition_fails_after_a_correction_is_orphaned(app) -> None:
    cid = app.create_campaign("Toys", ruleset="toy")
    join(app, cid, "ana", grit=1)
    rally = app.record(cid, "Rally", {"creature": "ana"}).position
    grant = app.amend  # amend the join: no grit at all
    grant(cid, rally - 1, {"grit": 0}, "she had no grit left")
    orphans = app.summary(cid)["orphans"]
    assert str(rally) in orphans and "no grit" in orphans[str(rally)]


def test_what_if_previews_a_revocation_and_stores_nothing(app) -> None:
    cid = app.create_campaign("Toys", ruleset="toy")
    join(app, cid, "ana")
    hit = app.record(cid, "Hit", {"target": "ana", "amount": 7}).position
    before = app.ledger(cid).last_seq
    preview = app.what_if(cid, [("FactRevoked", {"target": hit, "reason": "?", "cascade": "fact"})])
    assert preview["changes"]["ana"]["hit_points"] == [
        {"current": 3, "max": 10, "temporary": 0},
        {"current": 10, "max": 10, "temporary": 0},
    ]
    assert app.ledger(cid).last_seq == before


def test_the_toys_flags_are_its_own(app) -> None:
    cid = app.create_campaign("Toys", ruleset="toy", flags={"toy.rally_heals": 5})
    join(app, cid, "ana", max_hp=10)
    app.record(cid, "Hit", {"target": "ana", "amount": 8})
    app.record(cid, "Rally", {"creature": "ana"})
    assert view(app, cid, "ana")["hit_points"]["current"] == 7
    with pytest.raises(Exception, match="unknown rules flag 'sw.crit_mode'"):
        app.create_campaign("Toys", ruleset="toy", flags={"sw.crit_mode": "max"})


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(["Hit", "Patch", "Rally", "Brace"]), st.integers(1, 6)), max_size=25)
)
def test_folding_all_at_once_equals_the_live_fold(actions) -> None:
    """The one fold: a fresh load of the stored facts gives the state the commands built."""
    app = memory_application()
    cid = app.create_campaign("Toys", ruleset="toy")
    join(app, cid, "ana", max_hp=12, grit=2)
    for kind, n in actions:
        payload = {
            "Hit": {"target": "ana", "amount": n},
            "Patch": {"target": "ana", "amount": n},
            "Rally": {"creature": "ana"},
            "Brace": {"creature": "ana"},
        }[kind]
        try:
            app.record(cid, kind, payload)
        except RuleViolation:
            pass
    live = app.summary(cid)
    fresh = ChronicleApplication.__new__(ChronicleApplication)
    fresh.__dict__.update(app.__dict__)
    fresh._campaigns = {}  # same store, nothing cached: loads and folds every stored fact
    assert fresh.summary(cid) == live
