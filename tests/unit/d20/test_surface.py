"""What the d20 ruleset shows the rest of Chronicle: error codes, flags, tracks, views,
narration (SEAM.md "Rules for every ruleset")."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

from domain.core.catalogue import CORE
from domain.core.narration import PLAIN
from domain.errors import CORE_CODES
from domain.rulesets import get_ruleset, summary
from domain.rulesets.d20_house import ERROR_CODES
from tests.unit.d20.helpers import RULESET, D20Table, d20, pct, refused, roll

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


def test_every_d20_fact_has_a_sentence_of_its_own() -> None:
    narrator = RULESET.narrator(PLAIN)
    own = set(RULESET.catalogue.types) - set(CORE.types)
    missing = {t for t in own if not hasattr(narrator, "_" + t)}
    assert missing == set()


def test_narration_tells_the_folds_numbers(table: D20Table) -> None:
    """B-DH-5 / B-DH-1: the ogre's confirmed critical (2d8 twice, Strength x1 1/2 = 7 twice)
    and the massive-damage save it owes, as the log reads them."""
    table.creature("ogre", kind="monster", str=20, bab=[9, 4], max_hp=60)
    table.creature("kara", max_hp=120, stamina=16, saves={"fort": 5})
    club = {"name": "greatclub", "kind": "melee", "grip": "two_hands"}
    a = table.attack("ogre", "kara", 20, weapon=club)
    c = table.confirm(a.position, 8)
    d = table.damage_roll(a.position, "2d8", [8, 8], [8, 8], extra=[roll("1d6", 4)])
    m = table.record("MassiveDamageSaveRolled", creature="kara", attack=a.position, roll=d20(6))
    n = RULESET.narrator(PLAIN)
    state = table.ledger.state

    def say(rec: Any, fact_type: str) -> str:
        return n.sentence(fact_type, table.ledger.entry(rec.position).payload, rec.outcome, state)

    assert say(a, "AttackRolled") == (
        "Ogre attacks Kara with greatclub: 20 + 9 (base attack bonus) + 5 (Strength) = 34 vs AC 10: "
        "a natural 20, a hit that threatens a critical."
    )
    assert say(c, "CriticalConfirmationRolled") == (
        "Ogre rolls to confirm: total 22 vs AC 10: a critical hit."
    )
    assert say(d, "DamageRolled") == (
        "Ogre deals 50 critical damage to Kara: 16 (weapon dice) + 16 (weapon dice again (critical)) "
        "+ 14 (Strength x1 1/2 (two hands) x2 (critical)) + 4 (extra dice) (HP 120 to 70). "
        "Massive damage: Kara owes a DC 15 Fortitude save."
    )
    # d20 6 + 5 base + 3 Stamina = 14 < 15: Kara dies.
    assert say(m, "MassiveDamageSaveRolled") == (
        f"Kara saves against massive damage (the attack at #{a.position}): 1d20 (6) = 6, "
        "Fortitude 14 vs DC 15: Kara dies of massive damage."
    )


def test_a_fact_the_fold_did_not_apply_is_told_by_its_inputs() -> None:
    """Revoked and orphaned facts have no outcome: every sentence still reads."""
    n = RULESET.narrator(PLAIN)
    payloads = {
        "StabilizationRolled": {"creature": "g", "roll": pct(37), "round": 2},
        "DamageRolled": {"attack": 7, "weapon": roll("1d8", 3), "crit_weapon": None},
        "HealCheckRolled": {"healer": "t", "target": "g", "roll": d20(12)},
        "MassiveDamageSaveRolled": {"creature": "k", "attack": 7, "roll": d20(3)},
    }
    assert n.sentence("StabilizationRolled", payloads["StabilizationRolled"], None, None) == (
        "g rolls to stabilise after round 2: d% 37."
    )
    assert n.sentence("DamageRolled", payloads["DamageRolled"], None, None) == (
        "Damage for the attack at #7: 1d8 (3) = 3."
    )
    for fact_type, payload in payloads.items():
        assert n.sentence(fact_type, RULESET.catalogue.validate(fact_type, payload), None, None)
