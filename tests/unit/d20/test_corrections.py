"""Corrections on a d20 campaign (RULES.md C0.4, C0.5; SEAM.md): revoke, restore, amend,
overturned rulings, GM overrides, retroactive flags, as-of in both views and what-if, with
the facts a correction orphans (a stabilisation roll or Heal check for a creature no longer
dying, a massive-damage save no attack owes, a confirmation for an attack that no longer
threatens).
"""

from __future__ import annotations

from tests.unit.d20.helpers import D20Table, d20, refused, roll


def dying_ana(t: D20Table) -> int:
    """Ana (20 HP, Stamina 16: B 3) takes 24 from a falling rock: -4, dying. Returns its position."""
    t.creature("ana", max_hp=20, stamina=16)
    t.creature("medic")
    return t.damage("ana", 24).position


def test_amending_the_damage_orphans_the_stabilisation_roll_of_a_creature_no_longer_dying(
    table: D20Table,
) -> None:
    rock = dying_ana(table)
    roll_at = table.stabilize("ana", 50).position  # fails: -5
    assert table.hp("ana") == -5
    table.app.amend(table.cid, rock, {"amount": 22}, "it was 22")  # -2: disabled
    orphans = table.orphans()
    assert str(roll_at) in orphans and "not dying" in orphans[str(roll_at)]
    v = table.v("ana")
    assert (v["hp"], v["band"]) == (-2, "disabled")
    # as-of, both axes: what the table believed at the roll, and the corrected past
    assert table.v("ana", roll_at, "recorded")["hp"] == -5
    assert table.v("ana", roll_at, "corrected")["hp"] == -2


def test_revoking_the_damage_orphans_the_heal_check_and_restoring_it_brings_everything_back(
    table: D20Table,
) -> None:
    rock = dying_ana(table)
    check = table.heal_check("medic", "ana", 15).position  # DC 14: stable
    before = table.app.summary(table.cid)
    revocation = table.app.revoke(table.cid, rock, "no rock fell").position
    assert "not dying" in table.orphans()[str(check)]
    assert table.v("ana")["life"] == "active" and table.hp("ana") == 20
    table.app.restore(table.cid, revocation, "it did fall")
    after = table.app.summary(table.cid)
    assert table.orphans() == {}
    assert after["creatures"] == before["creatures"]


def massive(t: D20Table) -> tuple[int, int, int]:
    """An ogre hits Ana (100 HP) for 1d12 (10) + 40 = 50: she owes a DC 15 Fortitude save."""
    t.creature("ogre", bab=[8])
    t.creature("ana", max_hp=100, stamina=10)
    a = t.attack("ogre", "ana", 15).position
    dmg = t.damage_roll(a, "1d12", [10], extra_flat=40).position
    return a, dmg, t.record("MassiveDamageSaveRolled", creature="ana", attack=a, roll=d20(3)).position


def test_amending_the_damage_below_50_orphans_the_massive_damage_save_and_undoes_the_death(
    table: D20Table,
) -> None:
    a, dmg, save = massive(table)
    assert table.v("ana")["dead_by"] == "massive_damage"
    table.app.amend(table.cid, dmg, {"extra_flat": 30}, "the bonus was +30")  # 40: no save owed
    assert "owes no massive-damage save" in table.orphans()[str(save)]
    v = table.v("ana")
    assert (v["hp"], v["life"], v["dead_by"], v["massive_damage_saves_owed"]) == (60, "active", None, [])
    assert table.v("ana", save, "recorded")["dead_by"] == "massive_damage"


def test_a_gm_may_keep_an_orphan_with_an_override(table: D20Table) -> None:
    a, dmg, save = massive(table)
    table.app.amend(table.cid, dmg, {"extra_flat": 30}, "the bonus was +30")
    table.app.override(table.cid, save, "orphan", "keep", "the table agreed she rolled for it")
    assert str(save) not in table.orphans()
    assert table.v("ana")["dead_by"] == "massive_damage"


def test_an_overturned_ruling_turns_a_hit_into_a_miss_and_orphans_its_damage(table: D20Table) -> None:
    table.creature("orc", str=16, bab=[6])
    table.creature("ana", armor=7, max_hp=20)  # AC 17
    table.app.record_ruling(table.cid, "flank-1", "Does the orc flank Ana?", "yes: +2")
    a = table.attack(
        "orc", "ana", 6, modifiers=[{"source": "flanking", "value": 2, "ruling": "flank-1"}]
    ).position  # 6 + 9 + 2 = 17: a hit
    dmg = table.damage_roll(a, "1d8", [5]).position  # 5 + 3 = 8
    assert table.hp("ana") == 12
    table.app.resolve_ruling(table.cid, "flank-1", "overturned", "the ally was not adjacent")
    assert "no attack at position" in table.orphans()[str(dmg)]
    assert table.hp("ana") == 20
    assert table.ledger.status(dmg) == ["orphaned"]


def test_amending_a_natural_20_orphans_the_confirmation_and_the_doubled_dice(table: D20Table) -> None:
    table.creature("orc", str=16, bab=[6])
    table.creature("ana", max_hp=40)
    a = table.attack("orc", "ana", 20).position
    conf = table.confirm(a, 12).position
    dmg = table.damage_roll(a, "1d8", [5], [7]).position  # 12 + 6 = 18
    assert table.hp("ana") == 22
    table.app.amend(table.cid, a, {"roll": d20(19)}, "it was a 19")
    orphans = table.orphans()
    assert "did not threaten" in orphans[str(conf)]
    assert "rolled once" in orphans[str(dmg)]
    assert table.hp("ana") == 40
    # the table then records the regular hit's damage: the attack is still open
    table.damage_roll(a, "1d8", [5])
    assert table.hp("ana") == 32


def test_a_gm_override_of_a_stabilisation_roll(table: D20Table) -> None:
    dying_ana(table)
    at = table.stabilize("ana", 90).position
    assert table.hp("ana") == -5
    table.app.override(table.cid, at, "success", True, "the GM rules she clings on")
    v = table.v("ana")
    assert (v["hp"], v["life"]) == (-4, "stabilized")


def test_a_retroactive_flag_recomputes_a_critical(table: D20Table) -> None:
    """B-DH-5 flag dh.crit_doubles_static_mods set retroactively: the literal reading."""
    table.creature("orc", str=16, bab=[6])
    table.creature("ana", max_hp=40)
    a = table.attack("orc", "ana", 20).position
    table.confirm(a, 12)
    table.damage_roll(a, "1d8", [5], [7])  # 12 + 2 x 3 = 18
    assert table.hp("ana") == 22
    table.app.set_flag(table.cid, "dh.crit_doubles_static_mods", False, retroactive=True)
    assert table.hp("ana") == 25  # 12 + 3


def test_what_if_previews_a_revocation_with_its_orphans_and_stores_nothing(table: D20Table) -> None:
    rock = dying_ana(table)
    roll_at = table.stabilize("ana", 50).position
    last = table.position
    preview = table.app.what_if(
        table.cid, [("FactRevoked", {"target": rock, "reason": "?", "cascade": "fact"})]
    )
    assert preview["changes"]["ana"]["band"] == ["dying", "fine"]
    assert preview["changes"]["ana"]["hp"] == [-5, 20]
    assert preview["newly_orphaned"] == [roll_at]
    assert table.position == last and table.v("ana")["hp"] == -5


def test_a_correction_to_stamina_damage_moves_the_thresholds_back(table: D20Table) -> None:
    """B-DH-9 through the ledger: amending the ability damage re-derives the band."""
    table.creature("ana", max_hp=20, stamina=16)
    table.damage("ana", 23)  # -3: disabled
    poison = table.ability_damage("ana", "stamina", 4).position  # B 1: dying
    assert table.v("ana")["band"] == "dying"
    stab = table.stabilize("ana", 5).position
    table.app.amend(table.cid, poison, {"amount": 2}, "a weaker poison")  # S 14, B 2: still dying
    assert table.v("ana")["band"] == "dying" and table.orphans() == {}
    table.app.amend(table.cid, poison, {"amount": 1}, "weaker still")  # S 15, B 2
    assert table.v("ana")["life"] == "stabilized"
    table.app.amend(table.cid, poison, {"ability": "str"}, "it was Strength poison")  # B 3: disabled
    assert str(stab) in table.orphans() and table.v("ana")["band"] == "disabled"


def test_a_refused_correction_stores_nothing(table: D20Table) -> None:
    rock = dying_ana(table)
    before = table.store_max()
    with refused("INVALID_INPUT"):
        table.app.amend(table.cid, rock, {"amount": -3}, "typo")
    with refused("INVALID_DICE"):
        table.app.amend(table.cid, rock, {"roll": roll("1d6", 3) | {"terms": []}}, "typo")
    assert table.store_max() == before
