"""What the d20 ruleset shows the rest of Chronicle: error codes, flags, tracks, views,
narration (SEAM.md "Rules for every ruleset")."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from domain.core.catalogue import CORE
from domain.errors import CORE_CODES
from domain.rulesets import get_ruleset, summary
from domain.rulesets.d20_house import ERROR_CODES
from domain.rulesets.d20_house.narrate import SENTENCES, sentence
from tests.unit.d20.helpers import RULESET, D20Table, refused, roll

PACKAGE = Path(__file__).resolve().parents[3] / "domain" / "rulesets" / "d20_house"


def raised_codes() -> set[str]:
    """Every code string the package's rules can raise (code=..., require(..., "CODE", ...),
    and the refusal pairs of actions.py)."""
    found: set[str] = set()
    names: set[str] = set()  # module constants named in __all__ are not codes
    for path in PACKAGE.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Name):
                names.add(node.id)
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                if re.fullmatch(r"[A-Z][A-Z_]{2,}", node.value):
                    found.add(node.value)
    return found - names


def test_every_code_the_rules_raise_is_declared_by_the_ruleset_or_the_core() -> None:
    codes = raised_codes()
    assert {"NOT_DYING", "NO_MASSIVE_DAMAGE_SAVE_OWED", "AOO_LIMIT", "FLAT_FOOTED"} <= codes
    assert codes <= set(ERROR_CODES) | set(CORE_CODES), sorted(codes - set(ERROR_CODES) - set(CORE_CODES))
    assert set(ERROR_CODES) <= codes, "a declared code nothing raises"


def test_codes_shared_with_another_ruleset_mean_the_same_thing() -> None:
    sw = get_ruleset("stellar-winds").error_codes
    for code, meaning in ERROR_CODES.items():
        if code in sw:
            assert sw[code] == meaning, code
        assert code not in CORE_CODES, f"{code} is a core code: do not redeclare it"


def test_flags_doc_lists_each_flag_with_default_and_reference() -> None:
    doc = {f["name"]: f for f in RULESET.flags_doc()}
    assert doc["dh.massive_damage"]["default"] == {"threshold": 50, "dc": 15, "enabled": True}
    assert doc["dh.crit_doubles_static_mods"]["default"] is True
    assert all(f["ref"] and f["doc"] for f in doc.values())
    assert all(name == "rounding" or name.startswith("dh.") for name in doc)
    with refused("INVALID_INPUT"):
        RULESET.validate_flag("dh.nope", True)
    with refused("INVALID_INPUT"):
        RULESET.validate_flag("dh.aoo_reset", "never")


def test_the_hp_track_draws_the_disabled_dying_and_dead_lines_that_move_with_stamina(table: D20Table) -> None:
    """DH-10 / B-DH-9: Stamina 16: disabled at 0, dying from -4, dead at -17; 4 Stamina damage:
    dying from -2, dead at -13."""
    table.creature("ana", stamina=16, max_hp=20)
    hp, stamina = RULESET.tracks(table.v("ana"))
    assert (hp.key, hp.value, hp.ceiling, hp.floor) == ("hp", 20, 20, None)
    assert hp.thresholds == (("disabled", 0), ("dying", -4), ("dead", -17))
    assert (stamina.key, stamina.value, stamina.ceiling, stamina.thresholds) == (
        "stamina",
        16,
        16,
        (("dead", 0),),
    )
    table.ability_damage("ana", "stamina", 4)
    hp, stamina = RULESET.tracks(table.v("ana"))
    assert hp.thresholds == (("disabled", 0), ("dying", -2), ("dead", -13)) and stamina.value == 12


def test_summary_and_campaign_view_show_open_attacks(table: D20Table) -> None:
    table.creature("orc", bab=[5])
    table.creature("ana")
    a = table.attack("orc", "ana", 20).position
    whole = summary(RULESET, table.ledger.state)
    assert whole["open_attacks"] == {
        str(a): {"attacker": "orc", "target": "ana", "threat": True, "critical": None}
    }
    assert set(whole["creatures"]) == {"orc", "ana"} and whole["encounters"] == {}


def test_every_d20_fact_has_a_sentence() -> None:
    own = set(RULESET.catalogue.types) - set(CORE.types)
    assert own <= set(SENTENCES)


@pytest.mark.parametrize(
    ("fact_type", "payload", "outcome", "expected"),
    [
        (
            "StabilizationRolled",
            {"creature": "g"},
            {
                "face": 37,
                "chance": 12,
                "success": False,
                "hp_before": -8,
                "hp_after": -9,
                "band_before": "dying",
                "band_after": "dying",
            },
            "Gnoll rolls d% 37 against Stamina 12: loses 1 HP (HP -8 -> -9)",
        ),
        (
            "DamageRolled",
            {"attack": 7},
            {
                "attacker": "o",
                "target": "k",
                "amount": 50,
                "critical": True,
                "hp_before": 71,
                "hp_after": 21,
                "band_before": "fine",
                "band_after": "fine",
                "massive_damage_save_owed": {"dc": 15},
            },
            "Ogre deals 50 critical damage to Kara (HP 71 -> 21); "
            "massive damage: a DC 15 Fortitude save is owed",
        ),
        (
            "DamageTaken",
            {"target": "g", "amount": 0, "roll": roll("1d4", 3), "source": "rockslide"},
            {"amount": 3, "hp_before": -9, "hp_after": -12, "band_before": "dying", "band_after": "dying"},
            "Gnoll takes 3 damage from rockslide (1d4 (3) = 3) (HP -9 -> -12)",
        ),
        ("Unheard", {}, None, "Unheard"),
    ],
)
def test_narration_is_one_plain_sentence_from_the_folds_outcome(
    fact_type, payload, outcome, expected
) -> None:
    names = {"g": "Gnoll", "o": "Ogre", "k": "Kara"}
    assert sentence(fact_type, payload, outcome, names) == expected
