"""The hero's-surge ruleset on the seam: discovery, catalogue (C2.2), creature state and views (C2.1),
tracks, flags, error codes, narration."""

from __future__ import annotations

from importlib import metadata

import pytest

from domain import rulesets
from domain.core import narration
from domain.errors import CORE_CODES, InvalidInput
from domain.rulesets.hero_surge import ERROR_CODES, HERO_SURGE, narrate
from domain.rulesets.hero_surge.flags import FLAGS
from domain.rulesets.stellar_winds import StellarWinds
from tests.unit.hero_surge.helpers import HSTable, d20, roll

# C2.2's events: each is a fact of this catalogue, the core's, or folded into another (facts.py).
C22_EVENTS = {
    "CreatureRegistered", "RoundStarted", "SurpriseDetermined", "InitiativeCheckRolled",
    "InitiativeOrderChosen", "InitiativeKnockedBack", "TurnStarted", "AttemptRolled",
    "FortuneDieExchanged", "FortuneDieSpent", "MultiAttackDefenseResolved", "DevastatingEffectChosen",
    "HamperingEffectChosen", "RankPenaltyApplied", "RankPenaltyConsumed", "DamageRolled", "DiceRerolled",
    "DamageApplied", "HeroSurgeSpent", "HeroSurgeDrained", "HeroSurgesRestored", "LuckRollMade",
    "MedicalAttemptMade", "HealersKitUsed", "HealingApplied", "TemporaryHitPointsGranted", "DefendDeclared",
    "FullRoundActionStarted", "FullRoundActionMaintained", "FullRoundActionAborted",
    "FullRoundActionCompleted", "RestTaken", "LevelGained", "InstantKillRuled", "RestoredToLife",
}  # fmt: skip
FOLDED = {"InitiativeKnockedBack": "DevastatingEffectChosen", "RankPenaltyApplied": "HamperingEffectChosen"}
ENGINE = {"RoundStarted", "TurnStarted"}  # the core encounter engine's facts (SEAM.md "Coming")


def test_it_is_found_through_its_entry_point() -> None:
    eps = {ep.name: ep.value for ep in metadata.entry_points(group=rulesets.ENTRY_POINT_GROUP)}
    assert eps["hero-surge"] == "domain.rulesets.hero_surge:HERO_SURGE"
    assert rulesets.get_ruleset("hero-surge") is HERO_SURGE
    assert isinstance(HERO_SURGE, rulesets.Ruleset) and "hero-surge" not in rulesets.problems()


def test_c22_every_event_is_a_fact_or_accounted_for() -> None:
    types = HERO_SURGE.catalogue.types
    for event in C22_EVENTS:
        assert event in types or event in FOLDED or event in ENGINE, event
    for event, into in FOLDED.items():
        assert into in types and event not in types
    assert "ExperienceAwarded" not in types  # ruling 22: no XP table


def test_every_catalogued_table_fact_has_a_handler_or_waits_for_the_engine() -> None:
    from domain.core.catalogue import CORE_TABLE
    from domain.rulesets.hero_surge import HANDLERS

    unhandled = HERO_SURGE.catalogue.table_types - set(HANDLERS)
    assert unhandled == set(CORE_TABLE) - {"TimeAdvanced"} - set(HANDLERS)  # HS redefines some core facts


def test_c21_registration_defaults_and_the_view_keys_every_ruleset_gives() -> None:
    t = HSTable()
    t.add("brin")
    t.add("goblin")
    hero, monster = t.v("brin"), t.v("goblin")
    for key in ("id", "name", "kind", "level", "life", "conditions", "effects", "hit_points"):
        assert key in hero and key in monster
    assert hero["life"] in rulesets.LIFE_STATES
    assert (hero["hero"], hero["hero_surges"], hero["hero_surges_max"], hero["fortune_dice"]) == (
        True,
        5,
        5,
        0,
    )
    assert (monster["hero"], monster["hero_surges"], monster["hero_surges_max"]) == (False, None, None)
    assert hero["hit_points"] == {"current": 24, "max": 24, "temporary": 0}
    assert hero["death_threshold"] == 16 and hero["damage_reduction"] == 0


def test_c21_a_non_pc_hero_and_refused_sheets() -> None:
    t = HSTable()
    t.add("ally", kind="npc", hero=True, level=4, con_score=12, max_hp=30)
    assert t.v("ally")["hero_surges"] == 6
    with pytest.raises(InvalidInput, match="no hero's surges"):
        t.add("orc", kind="monster", con_score=12, max_hp=8, hero_surges=2)
    with pytest.raises(InvalidInput, match="at most 4"):
        t.add("hero", kind="pc", level=1, con_score=12, max_hp=8, hero_surges=5)


def test_tracks_chart_hp_and_surges_below_zero() -> None:
    t = HSTable()
    t.add("cara", kind="pc", level=2, con_score=16, max_hp=24, hero_surges=0)
    t.rec("DamageApplied", target="cara", amount=27)  # -3, chain: -9, surges -1
    tracks = {x.key: x for x in HERO_SURGE.tracks(t.v("cara"))}
    assert (tracks["hp"].value, tracks["hp"].floor, tracks["hp"].ceiling) == (-9, None, 24)
    assert ("dead below", -16) in tracks["hp"].thresholds
    assert (tracks["hero_surges"].value, tracks["hero_surges"].floor) == (-1, None)
    t.add("goblin")
    assert [x.key for x in HERO_SURGE.tracks(t.v("goblin"))] == ["hp"]


def test_flags_are_validated_and_every_gap_flag_is_prefixed() -> None:
    assert all(name == "rounding" or name.startswith("hs.") for name in FLAGS)
    with pytest.raises(InvalidInput):
        HERO_SURGE.validate_flag("hs.luck_roll", {"die": 20, "lucky_min": 30})
    with pytest.raises(InvalidInput):
        HERO_SURGE.validate_flag("hs.long_rest_surges", "half")
    with pytest.raises(InvalidInput, match="unknown rules flag"):
        HERO_SURGE.validate_flag("sw.crit_mode", "max")
    assert HERO_SURGE.validate_flag("hs.long_rest_surges", 2) == 2
    doc = {d["name"]: d for d in HERO_SURGE.flags_doc()}
    assert doc["hs.monsters_die_below_zero"]["ref"].startswith("B-HS-6")


def test_error_codes_are_documented_and_agree_with_other_rulesets() -> None:
    sw = StellarWinds.error_codes
    for code, meaning in ERROR_CODES.items():
        assert code not in CORE_CODES
        assert code not in sw or sw[code] == meaning, code


def test_pending_rolls_lists_owed_luck_rolls() -> None:
    t = HSTable()
    t.add("brin")
    t.rec("DamageApplied", target="brin", amount=27)
    t.rec("DamageApplied", target="brin", amount=1)
    assert HERO_SURGE.pending_rolls(t.ledger.state) == [
        ("LuckRollMade", {"creature": "brin", "context": "dying_damage"})
    ]


def test_narration_is_one_sentence_per_fact_with_its_consequences() -> None:
    t = HSTable()
    t.add("brin")
    n = rulesets.narrator_for(HERO_SURGE)
    assert isinstance(n, narrate.HeroSurgeNarrator)
    rec = t.rec("DamageApplied", target="brin", amount=27)
    state = t.ledger.state
    text = n.sentence("DamageApplied", rec.facts[0]["payload"], rec.outcome, state)
    assert (
        text == "Brin takes 27 of 27 damage; falls unconscious, loses a hero's surge (4 left), begins dying."
    )
    t.rec("DamageApplied", target="brin", amount=1)
    luck = t.rec("LuckRollMade", creature="brin", context="dying_damage", roll=d20(3))
    text = n.sentence("LuckRollMade", luck.facts[0]["payload"], luck.outcome, t.ledger.state)
    assert (
        text == "Brin makes a luck roll (dying damage, 1d20 (3) = 3): unlucky; loses a hero's surge (3 left)."
    )
    assert n.sentence(
        "FactRevoked", {"target": 3, "reason": "oops", "cascade": "fact"}, None, state
    ).startswith("The GM revokes fact #3")


def test_every_hero_surge_fact_has_a_sentence_even_without_an_outcome() -> None:
    """An orphaned or revoked fact has no outcome: its sentence still reads (from the payload)."""
    from domain.rulesets.hero_surge.facts import FACTS

    t = HSTable()
    t.add("brin")
    n = HERO_SURGE.narrator(narration.PLAIN)
    samples = {
        "CreatureRegistered": {"name": "Brin", "kind": "pc", "level": 1, "max_hp": 9},
        "SheetUpdated": {"creature_id": "brin", "changes": {"name": "B"}},
        "InitiativeCheckRolled": {"creature": "brin", "round": 1, "roll": d20(3), "success_level": "failure"},
        "InitiativeRolled": {"creature": "brin", "roll": d20(3), "success_level": "failure"},
        "CreatureJoinedEncounter": {"creature": "brin", "roll": None, "success_level": None},
        "InitiativeOrderChosen": {"creatures": ["brin"], "decided_by": ""},
        "DefendDeclared": {"creature": "brin", "mode": "self", "target": None},
        "FullRoundActionStarted": {"creature": "brin", "action": "ritual"},
        "FullRoundActionMaintained": {"creature": "brin"},
        "FullRoundActionAborted": {"creature": "brin"},
        "FullRoundActionCompleted": {"creature": "brin"},
        "AttemptRolled": {
            "creature": "brin",
            "kind": "attack",
            "roll": d20(3),
            "success_level": "failure",
            "targets": [],
        },
        "FortuneDieExchanged": {"attempt_id": "a"},
        "FortuneDieSpent": {"creature": "brin", "effect": "luck"},
        "DevastatingEffectChosen": {"attempt_id": "a", "option": "knock_back", "target": "brin"},
        "HamperingEffectChosen": {"attempt_id": "a", "option": "move_5ft", "target": None},
        "RankPenaltyConsumed": {"target": "brin", "attempt_id": "a"},
        "MultiAttackDefenseResolved": {"incoming": ["g1"]},
        "DamageRolled": {"damage_id": "d", "roll": d20(3)},
        "DiceRerolled": {"roll_id": "d", "die_index": 0, "new_face": 2},
        "DamageApplied": {"target": "brin"},
        "TemporaryHitPointsGranted": {"target": "brin", "amount": 3},
        "HealingApplied": {"target": "brin", "amount": 3},
        "LuckRollMade": {"creature": "brin", "context": "dying_damage", "roll": d20(3)},
        "MedicalAttemptMade": {"healer": "brin", "target": "brin"},
        "HealersKitUsed": {"healer": "brin", "target": "brin"},
        "InstantKillRuled": {"target": "brin"},
        "RestoredToLife": {"creature": "brin", "means": "a miracle"},
        "HeroSurgeSpent": {"creature": "brin", "purpose": "healing"},
        "HeroSurgeDrained": {"creature": "brin", "source": ""},
        "HeroSurgesRestored": {"creature": "brin", "amount": 1},
        "RestTaken": {"kind": "long", "hours": None},
        "LevelGained": {"creature": "brin", "new_level": 2},
    }
    assert set(samples) == set(FACTS)
    for fact_type, payload in samples.items():
        text = n.sentence(fact_type, payload, None, t.ledger.state)
        assert text.endswith(".") and "Brin" in text or fact_type in {
            "FortuneDieExchanged", "DevastatingEffectChosen", "HamperingEffectChosen",
            "MultiAttackDefenseResolved", "DamageRolled", "DiceRerolled", "InitiativeOrderChosen",
            "RestTaken",
        }, (fact_type, text)  # fmt: skip


def test_the_narrators_summary_columns_and_marks() -> None:
    """The per-encounter table (dealt, taken, healed, surges) and the timeline marks."""
    t = HSTable()
    t.add("aldric")
    t.add("brin")
    n = HERO_SURGE.narrator(narration.PLAIN)
    t.attempt("a1", "aldric", "normal_success", 14, targets=["brin"])
    t.rec("DamageRolled", damage_id="d1", attempt_id="a1", roll=roll("3d10", 10, 10, 7))
    before = t.ledger.state.clone()
    rec = t.rec("DamageApplied", target="brin", damage_id="d1")
    after = t.ledger.state
    changes = {"brin": (HERO_SURGE.creature_view(before, "brin"), HERO_SURGE.creature_view(after, "brin"))}
    assert sorted(n.tally("DamageApplied", rec.facts[0]["payload"], rec.outcome, changes)) == [
        ("aldric", "dealt", 27),
        ("brin", "surges", 1),
        ("brin", "taken", 27),
    ]
    assert ("brin", "dying") in n.marks("DamageApplied", rec.facts[0]["payload"], rec.outcome, changes)
    steps = n.turn_start_steps({"creature": "brin", "luck_roll_owed": "dying_turn_start"}, after)
    assert steps == [("derived", "Brin is dying and must make a luck roll.")]
