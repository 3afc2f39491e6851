"""Corrections on an Orcus campaign (RULES.md C0.4, C0.5): revoke, restore, amend, overturned
rulings with orphaned facts, GM overrides, as-of in both views, what-if; played through
``ChronicleApplication`` on the in-memory store."""

from __future__ import annotations

from tests.unit.orcus.helpers import CLUB, OrcusTable, d20, refused


def test_c0_5_revoking_the_damage_orphans_the_death_save_that_no_longer_applies(t: OrcusTable) -> None:
    """mira drops to -1 (dying) and fails a death save; the damage was misread: revoked, she was
    never dying, so the death save is orphaned (NOT_DYING) and changes nothing."""
    hit = t.damage("mira", 31).position
    save = t.record("DeathSavingThrowRolled", creature="mira", roll=d20(4)).position
    assert t.v("mira")["death_save_failures"] == 1
    t.revoke(hit, "the ogre missed")
    v = t.v("mira")
    assert (v["hp"], v["life"], v["death_save_failures"]) == (30, "active", 0)
    assert str(save) in t.orphans() and "not dying" in t.orphans()[str(save)]
    # both views of the past: what the table believed at the save, and what we now know
    assert t.v("mira", save, "recorded")["death_save_failures"] == 1
    assert t.v("mira", save, "corrected")["death_save_failures"] == 0


def test_c0_4_revoke_then_restore_is_the_identity(t: OrcusTable) -> None:
    t.damage("mira", 12)
    used = t.record("PowerUsed", creature="mira", power_id="lance").position
    t.record("RallyUsed", creature="mira")
    before = t.app.summary(t.cid)
    revocation = t.revoke(used).position
    assert not t.v("mira")["powers"]["lance"]["expended"]
    t.restore(revocation)
    after = t.app.summary(t.cid)
    assert after["creatures"] == before["creatures"] and after["orphans"] == before["orphans"]


def test_ruling_24_revoking_the_use_orphans_the_recharge_that_followed(t: OrcusTable) -> None:
    """Ruling 24 after a correction: the 'Recharge if' condition met for a power that, once its use
    is revoked, was never expended: the fact is orphaned (NOT_EXPENDED)."""
    used = t.record("PowerUsed", creature="ogre", power_id="rage").position
    met = t.record("RechargeConditionMet", creature="ogre", power_id="rage", trigger="bloodied").position
    t.revoke(used)
    assert "not expended" in t.orphans()[str(met)]


def test_c0_4_an_overturned_cover_ruling_turns_a_miss_into_a_hit_and_orphans_a_later_surge(
    t: OrcusTable,
) -> None:
    """The ogre's club (+7, 2d6+4) at mira (AC 17, 5 HP left) behind cover (ruling r-cover, -2):
    d20 11 + 7 - 2 = 16 misses. mira then spends a surge (5 -> 12). The GM overturns the cover
    ruling: 18 hits for 3 + 3 + 4 = 10, mira falls to -5 and is dying, and the surge she spent
    on her own is orphaned (NOT_CONSCIOUS)."""
    t.damage("mira", 25)
    t.app.record_ruling(t.cid, "r-cover", "Is mira in cover behind the altar?", "Yes: -2 to hit her")
    attack = t.attack(
        "ogre",
        dict(CLUB),
        [{"target": "mira", "face": 11, "circumstances": [{"name": "cover", "ruling": "r-cover"}]}],
        damage=[3, 3],
    )
    assert attack.outcome["targets"][0]["attack_total"] == 16 and attack.outcome["targets"][0]["hit"] is False
    surge = t.record("HealingSurgeSpent", creature="mira").position
    assert t.hp("mira") == 12
    t.app.resolve_ruling(t.cid, "r-cover", "overturned", "the altar is too low")
    v = t.v("mira")
    assert (v["hp"], v["life"], v["surges"]) == (-5, "dying", 6)
    assert "not conscious" in t.orphans()[str(surge)]
    outcome = t.ledger.outcomes_as_recorded([attack.position])[0]
    assert outcome["targets"][0]["hit"] is False  # as recorded then


def test_c0_4_amending_a_d20_face_reresolves_the_attack(t: OrcusTable) -> None:
    """A natural 20 misread: amended to 12 (12 + 7 = 19 hits AC 17 for the rolled 2d6+4 = 9 instead
    of the maximum 16)."""
    pos = t.attack("ogre", dict(CLUB), [{"target": "mira", "face": 20}], damage=[2, 3]).position
    assert t.hp("mira") == 14
    t.amend(pos, {"targets": [{"target": "mira", "roll": d20(12)}]})
    assert t.hp("mira") == 21


def test_c0_4_an_override_keeps_an_orphan_and_a_gm_can_say_a_hit_missed(t: OrcusTable) -> None:
    hit = t.damage("mira", 31).position
    save = t.record("DeathSavingThrowRolled", creature="mira", roll=d20(4)).position
    t.revoke(hit)
    t.app.override(t.cid, save, "orphan", "keep", "the table played it")
    assert t.v("mira")["death_save_failures"] == 1 and str(save) not in t.orphans()
    pos = t.attack("ogre", dict(CLUB), [{"target": "gob", "face": 15}], damage=[1, 1]).position
    assert t.hp("gob") == 4
    t.app.override(t.cid, pos, "hit", False, "the goblin ducked")
    assert t.hp("gob") == 10


def test_c0_4_what_if_previews_a_correction_without_storing_it(t: OrcusTable) -> None:
    hit = t.damage("mira", 31).position
    save = t.record("DeathSavingThrowRolled", creature="mira", roll=d20(4)).position
    before = t.store_max()
    preview = t.app.what_if(t.cid, [("FactRevoked", {"target": hit, "reason": "what if it missed"})])
    assert preview["newly_orphaned"] == [save]
    assert preview["changes"]["mira"]["hp"] == [-1, 30]
    assert preview["view"].creature("mira")["life"] == "active"
    assert t.store_max() == before and t.v("mira")["life"] == "dying"


def test_a_flag_set_later_changes_the_rules_from_then_on(t: OrcusTable) -> None:
    t.damage("mira", 30)
    assert t.v("mira")["life"] == "dying"
    t.app.set_flag(t.cid, "or.placeholder.dying", "dead_at_zero")
    t.hero("kel")
    t.damage("kel", 30)
    assert (t.v("mira")["life"], t.v("kel")["life"]) == ("dying", "dead")
    with refused("INVALID_INPUT"):
        t.app.set_flag(t.cid, "or.placeholder.dying", "maybe")
