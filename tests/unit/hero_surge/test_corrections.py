"""Corrections through the ledger (RULES.md C0.4, C0.5): revoke, restore, amend, overturned rulings
with orphaned facts (a luck roll no longer owed), as-of in both views, what-if; and the fold's laws
(hypothesis)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from api.service.application import ChronicleApplication
from domain.errors import DomainError, RuleViolation
from domain.rulesets.hero_surge import HERO_SURGE
from tests.unit.hero_surge.helpers import HSTable, d20, roll


@pytest.fixture
def t() -> HSTable:
    table = HSTable()
    for cid in ("aldric", "brin"):
        table.add(cid)
    return table


def luck_after_damage_while_dying(t: HSTable) -> tuple[int, int, int]:
    """brin: 27 damage (-3, dying, 4 surges), 1 more (-4, luck roll owed), unlucky (3 surges)."""
    first = t.rec("DamageApplied", target="brin", amount=27).position
    t.rec("DamageApplied", target="brin", amount=1)
    luck = t.rec("LuckRollMade", creature="brin", context="dying_damage", roll=d20(6)).position
    assert t.surges("brin") == 3
    return first, luck - 1, luck


def test_revoking_the_damage_that_started_dying_orphans_the_luck_roll_no_longer_owed(t: HSTable) -> None:
    """Without the 27, the 1 damage finds brin at 24, not dying: the luck roll is owed no more
    (ruling 25): orphaned, and its surge comes back."""
    first, second, luck = luck_after_damage_while_dying(t)
    out = t.app.revoke(t.cid, first, "the 27 hit the ogre").outcome
    assert out["orphaned"] == [luck]
    assert "owes no luck roll" in t.orphans()[str(luck)]
    v = t.v("brin")
    assert (v["hit_points"]["current"], v["hero_surges"], v["life"]) == (23, 5, "active")


def test_as_of_in_both_views_after_the_correction(t: HSTable) -> None:
    first, second, luck = luck_after_damage_while_dying(t)
    t.app.revoke(t.cid, first, "the 27 hit the ogre")
    believed = t.v("brin", luck, "recorded")
    corrected = t.v("brin", luck, "corrected")
    assert (believed["hit_points"]["current"], believed["hero_surges"], believed["life"]) == (-4, 3, "dying")
    assert (corrected["hit_points"]["current"], corrected["hero_surges"], corrected["life"]) == (
        23,
        5,
        "active",
    )


def test_restoring_the_revoked_damage_brings_the_luck_roll_back(t: HSTable) -> None:
    first, second, luck = luck_after_damage_while_dying(t)
    before = t.app.summary(t.cid)
    revocation = t.app.revoke(t.cid, first, "oops").position
    out = t.app.restore(t.cid, revocation, "it was right").outcome
    assert out["no_longer_orphaned"] == [luck]
    after = t.app.summary(t.cid)
    assert after["creatures"] == before["creatures"] and after["orphans"] == {}


def test_amending_the_damage_orphans_the_luck_roll(t: HSTable) -> None:
    """An amendment of the first damage to 20 leaves brin at 4 then 3: no luck roll owed."""
    first, second, luck = luck_after_damage_while_dying(t)
    t.app.amend(t.cid, first, {"amount": 20}, "it was 20")
    assert str(luck) in t.orphans() and t.hp("brin") == 3 and t.surges("brin") == 5


def test_amending_a_die_face_changes_every_later_number(t: HSTable) -> None:
    """A mistyped luck-roll face: 6 (unlucky) was a 20: dying ends, no surge lost."""
    first, second, luck = luck_after_damage_while_dying(t)
    t.app.amend(t.cid, luck, {"roll": d20(20)}, "it was a 20")
    v = t.v("brin")
    assert (v["hero_surges"], v["life"], v["stable"]) == (4, "stabilized", True)


def test_an_overturned_success_level_orphans_a_luck_roll_no_longer_owed(t: HSTable) -> None:
    """aldric's medical attempt on dying brin is ruled a limited success (advantage), so brin stays
    dying; the next damage owes a luck roll, made with advantage. The GM overturns the ruling:
    a normal success. brin was stable, the damage only started dying again: the luck roll is
    owed no more and is orphaned (ruling 25)."""
    t.rec("DamageApplied", target="brin", amount=27)
    t.app.record_ruling(
        t.cid, "med", "How well did aldric's medicine go?", "limited success", "limited_success"
    )
    t.rec(
        "AttemptRolled",
        attempt_id="m1",
        creature="aldric",
        kind="medical",
        targets=["brin"],
        roll=d20(13),
        success_level="limited_success",
        rulings={"success_level": "med"},
    )
    t.rec("MedicalAttemptMade", healer="aldric", target="brin", attempt_id="m1")
    t.rec("DamageApplied", target="brin", amount=1)
    luck = t.rec("LuckRollMade", creature="brin", context="dying_damage", roll=roll("2d20kh1", 3, 8)).position
    assert t.surges("brin") == 3
    preview = t.app.what_if(
        t.cid,
        [
            (
                "RulingResolved",
                {
                    "ruling_id": "med",
                    "outcome": "overturned",
                    "decision": "it worked",
                    "value": "normal_success",
                },
            )
        ],
    )
    assert preview["newly_orphaned"] == [luck]
    assert preview["changes"]["brin"]["hero_surges"] == [3, 4]
    assert t.surges("brin") == 3  # a what-if stores nothing
    t.app.resolve_ruling(t.cid, "med", "overturned", "it worked", value="normal_success")
    assert str(luck) in t.orphans()
    v = t.v("brin")
    assert (v["hero_surges"], v["dying"], v["luck_rolls_owed"]) == (4, True, [])


def test_a_ruling_overturned_without_a_new_level_orphans_the_attempt(t: HSTable) -> None:
    t.app.record_ruling(t.cid, "lvl", "Level?", "critical", "critical_success")
    pos = t.rec(
        "AttemptRolled",
        attempt_id="a1",
        creature="aldric",
        kind="attack",
        roll=d20(18),
        success_level="critical_success",
        rulings={"success_level": "lvl"},
    ).position
    effect = t.rec("DevastatingEffectChosen", attempt_id="a1", option="knock_back", target="brin").position
    t.app.resolve_ruling(t.cid, "lvl", "overturned", "no level stands")
    orphans = t.orphans()
    assert str(pos) in orphans and str(effect) in orphans


def test_an_outcome_override_keeps_an_orphan(t: HSTable) -> None:
    """C0.5: the GM may keep an orphaned luck roll (OutcomeOverridden orphan=keep)."""
    first, second, luck = luck_after_damage_while_dying(t)
    t.app.revoke(t.cid, first, "wrong target")
    t.app.override(t.cid, luck, "orphan", "keep", "the roll stands")
    assert t.orphans() == {} and t.surges("brin") == 4


def test_what_if_previews_a_revocation(t: HSTable) -> None:
    first, second, luck = luck_after_damage_while_dying(t)
    before = t.position
    preview = t.app.what_if(t.cid, [("FactRevoked", {"target": first, "reason": "?", "cascade": "fact"})])
    assert preview["newly_orphaned"] == [luck]
    assert preview["changes"]["brin"]["hit_points"] == [
        {"current": -4, "max": 24, "temporary": 0},
        {"current": 23, "max": 24, "temporary": 0},
    ]
    assert t.position == before


def test_a_retroactive_flag_refolds_the_campaign(t: HSTable) -> None:
    """hs.heal_from_negative set retroactively: the earlier healing from -5 now starts at 0."""
    t.rec("DamageApplied", target="aldric", amount=47)
    t.rec("HealingApplied", target="aldric", amount=8)
    assert t.hp("aldric") == 3
    t.app.set_flag(t.cid, "hs.heal_from_negative", "from_zero", retroactive=True)
    assert t.hp("aldric") == 8


# ------------------------------------------------------------------ laws (hypothesis)
ACTIONS = st.lists(
    st.one_of(
        st.tuples(st.just("DamageApplied"), st.integers(0, 30), st.booleans()),
        st.tuples(st.just("HealingApplied"), st.integers(0, 20), st.booleans()),
        st.tuples(st.just("HeroSurgeDrained"), st.integers(0, 0), st.booleans()),
        st.tuples(st.just("HeroSurgesRestored"), st.integers(1, 3), st.booleans()),
        st.tuples(st.just("HeroSurgeSpent"), st.integers(0, 0), st.booleans()),
        st.tuples(st.just("LuckRollMade"), st.integers(1, 20), st.booleans()),
        st.tuples(st.just("TemporaryHitPointsGranted"), st.integers(0, 10), st.booleans()),
        st.tuples(st.just("HealersKitUsed"), st.integers(0, 0), st.booleans()),
    ),
    max_size=30,
)


def payload(kind: str, n: int, flag: bool) -> dict[str, Any]:
    who = "brin" if flag else "cara"
    return {
        "DamageApplied": {"target": who, "amount": n, "bypass_dr": flag},
        "HealingApplied": {"target": who, "amount": n},
        "HeroSurgeDrained": {"creature": who},
        "HeroSurgesRestored": {"creature": who, "amount": n},
        "HeroSurgeSpent": {"creature": who, "purpose": "spell"},
        "LuckRollMade": {"creature": who, "context": "dying_damage", "roll": d20(n)},
        "TemporaryHitPointsGranted": {"target": who, "amount": n},
        "HealersKitUsed": {"healer": "aldric", "target": who},
    }[kind]


def play(actions: list[tuple[str, int, bool]]) -> HSTable:
    t = HSTable()
    t.add("aldric")
    t.add("brin")
    t.add("cara", kind="pc", level=3, con_score=12, max_hp=30, damage_reduction=1, hero_surges=1)
    for kind, n, flag in actions:
        try:
            t.rec(kind, **payload(kind, n, flag))
        except DomainError:
            pass
    return t


def invariants(view: dict[str, Any]) -> None:
    hp = view["hit_points"]
    assert hp["current"] <= hp["max"] and hp["temporary"] >= 0
    assert view["hero_surges"] <= view["hero_surges_max"]
    if view["dying"]:
        assert hp["current"] < 0 and not view["conscious"] and not view["dead"]
    if view["luck_rolls_owed"]:
        assert view["dying"]
    if not view["dead"]:  # HS-12: past the threshold a hero is dead
        assert -hp["current"] <= view["death_threshold"]
    if view["conscious"]:  # HS-12: 0 or less knocks a hero out
        assert hp["current"] >= 1
    if view["stable"]:
        assert not view["dying"] and not view["conscious"]
    for track in HERO_SURGE.tracks(view):
        assert track.ceiling is None or track.value <= track.ceiling


@settings(max_examples=40, deadline=None)
@given(ACTIONS)
def test_folding_all_at_once_equals_the_live_fold_and_the_tracks_hold(
    actions: list[tuple[str, int, bool]],
) -> None:
    """The one fold: a fresh load of the stored facts gives the state the commands built."""
    t = play(actions)
    live = t.app.summary(t.cid)
    for view in live["creatures"].values():
        invariants(view)
    fresh = ChronicleApplication.__new__(ChronicleApplication)
    fresh.__dict__.update(t.app.__dict__)
    fresh._campaigns = {}
    assert fresh.summary(t.cid) == live


@settings(max_examples=25, deadline=None)
@given(ACTIONS, st.data())
def test_revoke_then_restore_is_the_identity(
    actions: list[tuple[str, int, bool]], data: st.DataObject
) -> None:
    t = play(actions)
    before = t.app.summary(t.cid)
    table_facts = [e.seq for e in t.ledger.entries if e.type not in ("CreatureRegistered",)]
    if not table_facts:
        return
    target = data.draw(st.sampled_from(table_facts))
    try:
        revocation = t.app.revoke(t.cid, target, "law").position
    except RuleViolation:
        return
    for view in t.app.summary(t.cid)["creatures"].values():
        invariants(view)
    t.app.restore(t.cid, revocation, "law")
    after = t.app.summary(t.cid)
    assert after["creatures"] == before["creatures"] and after["orphans"] == before["orphans"]
