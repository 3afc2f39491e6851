"""Issue 5: the corrections engine (RULES.md C0.4, C0.5 and the C1.2 worked example).

Corrections are new facts that change how earlier facts read: revocation
(undo) with its cascades, restoration (redo), amendment in place, rulings and
their resolution, GM overrides, and rules flags. Nothing stored is rewritten;
facts that lose their preconditions are orphaned and listed, never repaired.
"""

from __future__ import annotations

from typing import Any

import pytest

from domain.errors import DomainError
from tests.unit.conftest import AXE, Table, summary_of
from tests.unit.test_sw_ledger import make_dying, refused


def hp_wounds(
    t: Table, who: str = "vex", position: int | None = None, view: str = "corrected"
) -> tuple[int, int]:
    c = t.c(who, position, view)
    return c["hp"], c["wounds"]


# ---------------------------------------------------------------- revocation
def test_revoking_a_fact_drops_just_that_fact(table: Table) -> None:
    first = table.deal_damage("vex", amount=10)
    table.deal_damage("vex", amount=5)
    r = table.revoke(first.position, "typed into the wrong row")
    assert r.outcome == {"orphaned": [], "no_longer_orphaned": []}
    assert table.c("vex")["hp"] == 35
    assert table.ledger.status(first.position) == ["revoked"]


def test_revoking_an_action_drops_every_fact_with_its_correlation_id(table: Table) -> None:
    action = table.record_many(
        [
            ("TemporaryHitPointsGranted", {"target": "vex", "amount": 5}),
            ("DamageTaken", {"target": "vex", "amount": 8}),
        ]
    )
    table.deal_damage("vex", amount=1)  # a later, separate action
    assert (table.c("vex")["temp_hp"], table.c("vex")["hp"]) == (0, 36)
    table.revoke(action.positions[0], "the whole action was a mistake", cascade="action")
    assert (table.c("vex")["temp_hp"], table.c("vex")["hp"]) == (0, 39)
    for p in action.positions:
        assert table.ledger.status(p) == ["revoked"]


def test_revoking_consequences_drops_the_fact_and_everything_it_caused(table: Table) -> None:
    cause = table.deal_damage("vex", amount=10)
    child = table.record("HealingSurgeSpent", {"creature": "vex"}, meta={"causation_id": cause.position})
    table.record(
        "TemporaryHitPointsGranted", {"target": "vex", "amount": 4}, meta={"causation_id": child.position}
    )
    table.deal_damage("orc", amount=7)  # unrelated
    table.revoke(cause.position, "never happened", cascade="consequences")
    vex = table.c("vex")
    assert (vex["hp"], vex["surges"], vex["temp_hp"]) == (40, 8, 0)
    assert table.c("orc")["hp"] == 43


def test_revoking_only_the_fact_keeps_its_consequences(table: Table) -> None:
    cause = table.deal_damage("vex", amount=10)
    table.record("HealingSurgeSpent", {"creature": "vex"}, meta={"causation_id": cause.position})
    table.revoke(cause.position, "only the damage was wrong")
    assert (table.c("vex")["hp"], table.c("vex")["surges"]) == (40, 7)


def test_restoring_a_revocation_redoes_the_fact(table: Table) -> None:
    hit = table.deal_damage("vex", amount=10)
    before = table.summary()
    rev = table.revoke(hit.position, "oops")
    assert table.c("vex")["hp"] == 40
    table.restore(rev.position, "it did happen")
    assert table.c("vex")["hp"] == 30
    assert table.summary()["creatures"] == before["creatures"]
    assert table.ledger.status(hit.position) == ["active"]


def test_revoking_the_revocation_also_redoes_the_fact(table: Table) -> None:
    hit = table.deal_damage("vex", amount=10)
    rev = table.revoke(hit.position, "oops")
    table.revoke(rev.position, "the undo was the mistake")
    assert table.c("vex")["hp"] == 30


def test_revoking_twice_or_restoring_what_is_not_revoked_is_refused(table: Table) -> None:
    hit = table.deal_damage("vex", amount=10)
    rev = table.revoke(hit.position, "oops")
    refused(table, "ALREADY_REVOKED", table.revoke, hit.position, "again")
    table.restore(rev.position)
    refused(table, "NOT_REVOKED", table.restore, rev.position)  # already restored
    refused(table, "INVALID_INPUT", table.restore, hit.position)  # not a revocation
    restore = table.ledger.last_seq
    table.revoke(restore, "the redo was wrong")  # the revocation is in force again ...
    assert table.c("vex")["hp"] == 40
    table.restore(rev.position, "... and can be restored again")
    assert table.c("vex")["hp"] == 30
    refused(table, "NOT_FOUND", table.revoke, 999, "nothing there")


def test_revoking_the_damage_that_made_a_creature_dying_orphans_its_death_save(table: Table) -> None:
    hit = table.deal_damage("vex", amount=54)
    save = table.death_save("vex", face=4)
    rev = table.revoke(hit.position, "wrong target")
    assert rev.outcome["orphaned"] == [save.position]
    assert table.orphans() == {str(save.position): "Vex is not dying"}
    assert table.c("vex")["death_save_failures"] == 0
    restored = table.restore(rev.position)
    assert restored.outcome["no_longer_orphaned"] == [save.position]
    assert table.c("vex")["death_save_failures"] == 1


# ----------------------------------------------------------------- amendment
def test_amending_a_die_face_keeps_the_facts_position(table: Table) -> None:
    hit = table.deal_damage("vex", "2d6", faces=[1, 1])
    table.heal("vex", flat=10)  # capped: heals only the 2 lost
    assert table.c("vex")["hp"] == 40
    table.amend(hit.position, {"roll": table.app.roll("2d6", faces=[6, 6])}, "misread the dice")
    # read in place: 40 - 12 + 10 = 38 (at the end it would have been 40 - 12 = 28)
    assert table.c("vex")["hp"] == 38
    assert table.ledger.status(hit.position) == ["amended"]
    assert table.c("vex", hit.position)["hp"] == 28


def test_amending_the_target_moves_the_damage(table: Table) -> None:
    hit = table.deal_damage("vex", amount=9)
    table.amend(hit.position, {"target": "orc"}, "it was the orc")
    assert (table.c("vex")["hp"], table.c("orc")["hp"]) == (40, 41)


def test_amending_the_damage_type_re_reads_resistance(make_table: Any) -> None:
    t = make_table()
    t.pc("vex", resist={"fire": 5})
    hit = t.deal_damage("vex", amount=10, types=["fire"])
    assert t.c("vex")["hp"] == 35
    t.amend(hit.position, {"types": ["cold"]}, "it was a frost ray")
    assert t.c("vex")["hp"] == 30


def test_amendments_compose_as_merge_patches(table: Table) -> None:
    hit = table.deal_damage("vex", amount=9, types=["fire"])
    table.amend(hit.position, {"amount": 4}, "less")
    table.amend(hit.position, {"target": "orc"}, "and to the orc")
    assert table.ledger.effective_payload(hit.position)["amount"] == 4
    assert (table.c("vex")["hp"], table.c("orc")["hp"]) == (40, 46)
    table.amend(hit.position, {"amount": 9, "target": "vex"}, "back as it was")
    assert (table.c("vex")["hp"], table.c("orc")["hp"]) == (31, 50)


def test_an_attack_d20_amended_to_a_miss_removes_its_damage(table: Table) -> None:
    a = table.hit_vex([5, 5], face=19, circumstances=["combat_advantage"])  # 29 vs 29: hit
    assert table.c("vex")["hp"] == 26
    targets = table.ledger.effective_payload(a.position)["targets"]
    targets[0]["roll"] = table.app.roll("1d20", faces=[18])
    table.amend(a.position, {"targets": targets}, "it was an 18")
    assert table.c("vex")["hp"] == 40


def test_an_amendment_that_breaks_the_schema_or_targets_a_correction_is_refused(table: Table) -> None:
    hit = table.deal_damage("vex", amount=9)
    refused(table, "INVALID_INPUT", table.amend, hit.position, {"amount": -1}, "bad")
    refused(
        table,
        "INVALID_DICE",
        table.amend,
        hit.position,
        {"roll": {"expression": "1d6", "terms": [{"sides": 6, "faces": [7], "sign": 1}]}},
        "bad face",
    )
    rev = table.revoke(hit.position, "gone")
    refused(table, "ALREADY_REVOKED", table.amend, hit.position, {"amount": 1}, "revoked")
    refused(table, "INVALID_INPUT", table.amend, rev.position, {"target": 1}, "a revocation")


# ------------------------------------------------------------------ rulings
def cover_attack(t: Table, target: str = "orc", face: int = 10, ruling: str = "r-1") -> Any:
    power = {**AXE, "attack_bonus": 9}
    return t.attack(
        "vex",
        power,
        [
            {
                "target": target,
                "face": face,
                "damage_faces": [3, 3],
                "circumstances": [{"name": "cover", "ruling": ruling}],
            }
        ],
    )


def test_a_ruling_upheld_changes_nothing(table: Table) -> None:
    table.record_ruling("r-1", "Does the orc have cover?", "yes")
    a = cover_attack(table)  # 10 + 9 - 2 = 17 vs 17: hit
    assert a.outcome["targets"][0]["hit"] is True
    before = table.summary()["creatures"]
    table.contest_ruling("r-1", "the crate is too low")
    r = table.resolve_ruling("r-1", "upheld", "cover stands")
    assert r.outcome == {"orphaned": [], "no_longer_orphaned": []}
    assert table.summary()["creatures"] == before
    assert table.ledger.resolution.ruling_status["r-1"] == "upheld"


def test_a_ruling_overturned_re_evaluates_every_fact_that_cites_it(table: Table) -> None:
    table.record_ruling("r-1", "Does the orc have cover?", "yes")
    first = cover_attack(table, face=8)  # 8 + 9 - 2 = 15 < 17: miss
    second = cover_attack(table, face=9)  # 16 < 17: miss
    table.deal_damage("orc", amount=1)  # cites nothing
    assert table.c("orc")["hp"] == 49
    table.resolve_ruling("r-1", "overturned", "no cover after all")
    assert table.c("orc")["hp"] == 49 - 10 - 10  # both attacks now hit (17, 18 vs 17), 2d6+4 = 10 each
    log: dict[int, Any] = {}
    table.ledger.replay(lambda e, outcome, orphan: log.__setitem__(e.seq, outcome))
    assert log[first.position]["targets"][0]["attack_total"] == 17
    assert log[second.position]["targets"][0]["attack_total"] == 18


def test_a_ruling_overturned_drops_a_cited_death_save_modifier(table: Table) -> None:
    table.record_ruling("r-2", "Does the cleric's blessing add to death saves?", "yes, +2")
    make_dying(table)
    table.death_save("vex", face=18, modifiers=[{"source": "blessing", "value": 2, "ruling": "r-2"}])
    assert table.c("vex")["life"] == "active"
    table.resolve_ruling("r-2", "overturned", "blessings do not help death saves")
    assert (table.c("vex")["life"], table.c("vex")["surges"]) == ("dying", 8)


def test_a_ruling_value_feeds_a_payload_field_and_its_resolution_re_reads_it(table: Table) -> None:
    table.deal_damage("vex", amount=45)  # hp 0, wounds 7
    table.record_ruling("r-3", "Is the medkit's healing magical?", "yes: nanites")
    table.heal("vex", flat=6, rulings={"magical": "r-3"})
    assert hp_wounds(table) == (1, 12)  # magical: wounds first
    table.resolve_ruling("r-3", "overturned", "it is first aid", value=False)
    assert hp_wounds(table) == (6, 7)


def test_citing_an_unknown_ruling_or_resolving_one_is_refused(table: Table) -> None:
    refused(table, "NOT_FOUND", cover_attack, table, ruling="r-404")
    refused(table, "NOT_FOUND", table.resolve_ruling, "r-404", "upheld")
    refused(table, "NOT_FOUND", table.contest_ruling, "r-404", "why")
    table.record_ruling("r-1", "q", "d")
    refused(table, "INVALID_INPUT", table.record_ruling, "r-1", "q", "again")


# ---------------------------------------------------------------- overrides
def test_outcome_overridden_a_hit_counts_as_a_miss(table: Table) -> None:
    a = table.hit_vex([5, 5], face=19, circumstances=["combat_advantage"])
    assert table.c("vex")["hp"] == 26
    table.override(a.position, "hit", False, "GM: that hit counts as a miss")
    assert table.c("vex")["hp"] == 40
    assert table.ledger.status(a.position) == ["overridden"]


def test_outcome_overridden_per_target_and_a_miss_counted_as_a_hit(make_table: Any) -> None:
    t = make_table()
    t.pc("vex")
    t.pc("kit")
    t.monster("orc")
    burst = {"name": "blast", "kind": "close", "defense": "ref", "attack_bonus": 0, "damage": "1d6"}
    a = t.attack("orc", burst, [{"target": "vex", "face": 2}, {"target": "kit", "face": 3}], damage_faces=[4])
    assert (t.c("vex")["hp"], t.c("kit")["hp"]) == (40, 40)
    t.override(a.position, "hit:kit", True, "GM: kit was caught in it")
    assert (t.c("vex")["hp"], t.c("kit")["hp"]) == (40, 36)


def test_an_override_of_a_correction_is_refused(table: Table) -> None:
    hit = table.deal_damage("vex", amount=3)
    rev = table.revoke(hit.position, "x")
    refused(table, "INVALID_INPUT", table.override, rev.position, "hit", False, "meta")


# ------------------------------------------------------------------ orphans
def test_an_orphan_kept_with_an_override_counts_again(table: Table) -> None:
    hit = table.deal_damage("vex", amount=54)
    save = table.death_save("vex", face=4)
    table.revoke(hit.position, "wrong target")
    assert str(save.position) in table.orphans()
    r = table.override(save.position, "orphan", "keep", "GM: the failure stands")
    assert r.outcome["no_longer_orphaned"] == [save.position]
    assert table.orphans() == {}
    assert table.c("vex")["death_save_failures"] == 1
    assert table.ledger.status(save.position) == ["overridden"]


def test_an_orphan_can_be_revoked_by_the_gm(table: Table) -> None:
    hit = table.deal_damage("vex", amount=54)
    save = table.death_save("vex", face=4)
    table.revoke(hit.position, "wrong target")
    r = table.revoke(save.position, "void the orphan")
    assert r.outcome["no_longer_orphaned"] == [save.position]
    assert table.orphans() == {}


def test_an_orphaned_fact_leaves_the_state_as_it_was_before_it(table: Table) -> None:
    hit = table.deal_damage("vex", amount=30)
    surge = table.spend_surge("vex")
    table.spend_surge("vex")
    table.amend(hit.position, {"target": "orc"}, "it was the orc")
    # vex was never hurt: the surges still heal nothing, but both remain legal (vex is conscious)
    assert table.orphans() == {}
    table.record("DeathDeclared", {"creature": "orc", "cause": "fell"})
    table.amend(hit.position, {"target": "vex", "amount": 1000}, "it was huge")  # vex dead before the surges
    orphans = table.orphans()
    assert set(orphans) == {str(surge.position), str(surge.position + 1)}
    assert table.c("vex")["surges"] == 8  # nothing of the orphans applied


# ------------------------------------------------------------- rules flags
def test_a_rules_flag_set_from_a_position_does_not_re_read_earlier_facts(table: Table) -> None:
    table.deal_damage("vex", amount=45)  # hp 0, wounds 7
    table.heal("vex", flat=3, magical=True)
    table.set_flag("sw.magic_heals_wounds_first", False)
    assert hp_wounds(table) == (0, 10)


def test_a_retroactive_rules_flag_re_reads_every_fact(table: Table) -> None:
    table.deal_damage("vex", amount=45)
    heal = table.heal("vex", flat=3, magical=True)
    flag = table.set_flag("sw.magic_heals_wounds_first", False, retroactive=True)
    assert hp_wounds(table) == (3, 7)
    assert hp_wounds(table, "vex", heal.position) == (3, 7)  # corrected view: as if always so
    assert hp_wounds(table, "vex", heal.position, "recorded") == (0, 10)  # what the table believed then
    table.revoke(flag.position, "back to the default")
    assert hp_wounds(table) == (0, 10)


def test_a_rules_flag_amended_to_retroactive_re_reads_the_past(table: Table) -> None:
    table.deal_damage("vex", amount=45)
    table.heal("vex", flat=3, magical=True)
    flag = table.set_flag("sw.magic_heals_wounds_first", False)
    assert hp_wounds(table) == (0, 10)
    table.amend(flag.position, {"retroactive": True}, "the house rule was always meant")
    assert hp_wounds(table) == (3, 7)


# ---------------------------------------------------------------- as-of
def test_as_of_corrected_and_recorded_views(table: Table) -> None:
    hit = table.deal_damage("vex", amount=10)
    later = table.deal_damage("vex", amount=5)
    table.revoke(hit.position, "never happened")
    assert hp_wounds(table, "vex", later.position, "recorded") == (25, 12)
    assert hp_wounds(table, "vex", later.position, "corrected") == (35, 12)
    assert hp_wounds(table, "vex", hit.position - 2) == (40, 12)
    with pytest.raises(DomainError) as info:
        table.c("vex", 10_000)
    assert info.value.code == "POSITION_OUT_OF_RANGE"
    with pytest.raises(DomainError):
        table.c("vex", later.position, "sideways")


# ---------------------------------------------------------------- what-if
def test_what_if_previews_and_stores_nothing(table: Table) -> None:
    hit = table.deal_damage("vex", amount=10)
    position, stored, before = table.position, table.store_max(), table.summary()
    registration = next(e.seq for e in table.ledger.entries if e.payload.get("creature_id") == "vex")
    preview = table.what_if(
        [
            ("FactRevoked", {"target": hit.position, "reason": "what if"}),
            ("FactAmended", {"target": registration, "patch": {"max_hp": 44}, "reason": "x"}),
        ]
    )
    assert preview["changes"]["vex"]["hp"] == [30, 44]
    assert preview["changes"]["vex"]["max_hp"] == [40, 44]
    assert (table.position, table.store_max()) == (position, stored)
    assert table.summary() == before


def test_what_if_refuses_table_actions_and_bad_references(table: Table) -> None:
    stored = table.store_max()
    with pytest.raises(DomainError):
        table.what_if([("DamageTaken", {"target": "vex", "amount": 3})])
    with pytest.raises(DomainError):
        table.what_if([("FactRevoked", {"target": 999, "reason": "x"})])
    assert table.store_max() == stored


def test_what_if_then_commit_gives_the_previewed_state(table: Table) -> None:
    table.record_ruling("r-1", "cover?", "yes")
    cover_attack(table, face=8)
    corrections = [("RulingResolved", {"ruling_id": "r-1", "outcome": "overturned", "decision": "no"})]
    preview = table.what_if(corrections)
    table.record(*corrections[0])
    now = table.summary()
    assert summary_of(preview["view"])["creatures"] == now["creatures"]


# ------------------------------------------------------ C1.2 end to end
def test_c1_contested_ruling_example_end_to_end(make_table: Any) -> None:
    t = make_table()
    t.pc("vex")
    t.monster("orc")
    t.deal_damage("vex", amount=29)
    t.deal_damage("vex", amount=10, wounding=True)
    assert hp_wounds(t) == (11, 2)
    t.record_ruling("r-4", "Is the target flanked?", "target was flanked")
    a9 = t.attack(
        "orc",
        dict(AXE),
        [
            {
                "target": "vex",
                "face": 19,
                "damage_faces": [5, 5],
                "circumstances": [{"name": "combat_advantage", "ruling": "r-4"}],
            }
        ],
    )
    assert a9.outcome["targets"][0]["attack_total"] == 29
    assert (hp_wounds(t), t.c("vex")["life"]) == ((0, -1), "dying")
    save = t.death_save("vex", face=7)
    t.contest_ruling("r-4", "no flank", by="player")
    stored_before = list(t.ledger.entries)

    resolved = t.resolve_ruling("r-4", "overturned", "no flank")

    # the total is 27 < 29: a miss; the 14 damage is not applied
    log: dict[int, Any] = {}
    t.ledger.replay(lambda e, outcome, orphan: log.__setitem__(e.seq, (outcome, orphan)))
    attack = log[a9.position][0]["targets"][0]
    assert (attack["attack_total"], attack["hit"], "damage" in attack) == (27, False, False)
    vex = t.c("vex")
    assert (vex["hp"], vex["wounds"], vex["temp_hp"], vex["life"]) == (11, 2, 0, "active")
    # the death save fails its precondition: orphaned, listed for the GM, not edited
    assert resolved.outcome == {"orphaned": [save.position], "no_longer_orphaned": []}
    assert t.orphans() == {str(save.position): "Vex is not dying"}
    assert log[save.position] == (None, "Vex is not dying")
    assert vex["death_save_failures"] == 0
    assert t.ledger.status(save.position) == ["orphaned"]
    # no other event is edited
    assert [(e.seq, e.type, e.payload) for e in t.ledger.entries[: len(stored_before)]] == [
        (e.seq, e.type, e.payload) for e in stored_before
    ]
    # history in both time axes
    assert t.c("vex", save.position, "recorded")["life"] == "dying"
    assert t.c("vex", save.position, "corrected")["life"] == "active"
    # the GM voids the orphan
    t.revoke(save.position, "orphaned by the r-4 ruling")
    assert t.orphans() == {}
    assert (hp_wounds(t), t.c("vex")["life"]) == ((11, 2), "active")
