"""C0.3 ``purpose``: what each roll of a fact is for, derived from where the fact keeps it."""

from __future__ import annotations

from domain import rulesets
from domain.core.rolls import roll_purpose

SW = rulesets.get_ruleset("stellar-winds")


def test_c0_3_a_stellar_winds_attack_names_its_attack_and_damage_rolls_per_target() -> None:
    assert roll_purpose(SW, "AttackMade", {}, ("targets", "1", "roll")) == "attack roll"
    assert roll_purpose(SW, "AttackMade", {}, ("targets", "1", "damage")) == "damage roll"
    assert roll_purpose(SW, "AttackMade", {}, ("damage",)) == "damage roll"
    assert roll_purpose(SW, "SavingThrowRolled", {}, ("roll",)) == "saving throw"


def test_c0_3_the_core_names_its_own_rolls_and_a_free_roll_keeps_the_tables_purpose() -> None:
    assert roll_purpose(SW, "InitiativeRolled", {}, ("roll",)) == "initiative"
    assert roll_purpose(SW, "InitiativeTieBroken", {}, ("rolls", "0")) == "initiative tie-break"
    assert roll_purpose(SW, "DiceRolled", {"purpose": "Perception"}, ("roll",)) == "Perception"
    assert roll_purpose(SW, "DiceRolled", {"purpose": None}, ("roll",)) == "free roll"


def test_a_roll_no_table_names_is_shown_by_its_path() -> None:
    assert roll_purpose(object(), "SomethingRolled", {}, ("extra", "0", "roll")) == "extra.0.roll"
    assert roll_purpose(SW, "AttackMade", {}, ("targets", "x", "roll")) == "targets.x.roll"  # not an index
