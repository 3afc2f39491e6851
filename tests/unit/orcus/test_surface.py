"""The Orcus ruleset's surface: discovery, the protocol, error codes, flags, views, tracks and
the narrator (SEAM.md)."""

from __future__ import annotations

from importlib import metadata

from domain import rulesets
from domain.core.narration import PLAIN
from domain.rulesets import Ruleset, Track, get_ruleset, narrator_for
from domain.rulesets.orcus import ERROR_CODES, ORCUS
from domain.rulesets.orcus.facts import FACTS
from domain.rulesets.orcus.narrate import OrcusNarrator
from tests.unit.orcus.helpers import CLUB, OrcusTable, d20


def test_orcus_is_found_through_its_entry_point() -> None:
    names = {ep.name: ep.value for ep in metadata.entry_points(group=rulesets.ENTRY_POINT_GROUP)}
    assert names["orcus"] == "domain.rulesets.orcus:ORCUS"
    assert get_ruleset("orcus") is ORCUS and isinstance(ORCUS, Ruleset)
    assert "orcus" not in rulesets.problems()


def test_every_code_the_ruleset_declares_has_a_meaning_and_shared_codes_mean_the_same() -> None:
    others = [get_ruleset(r) for r in rulesets.available() if r != "orcus"]
    for code, meaning in ERROR_CODES.items():
        assert meaning.strip(), code
        for other in others:
            if code in other.error_codes:
                assert other.error_codes[code] == meaning, (code, other.id)


def test_flags_doc_lists_every_flag_with_default_and_reference() -> None:
    doc = {f["name"]: f for f in ORCUS.flags_doc()}
    assert set(doc) == set(ORCUS.flag_defaults)
    assert (
        doc["or.maintain_on_creation_turn"]["default"] is True
        and "B-OR-8" in doc["or.maintain_on_creation_turn"]["ref"]
    )
    assert all(f["ref"] and f["doc"] for f in doc.values())
    assert all(n == "xp_table" or n.startswith("or.") for n in doc)


def test_c4_1_the_view_has_the_common_keys_and_the_orcus_ones(t: OrcusTable) -> None:
    v = t.v("mira")
    common = {"id", "name", "kind", "level", "life", "conditions", "effects", "hit_points"}
    own = {
        "rank",
        "xp",
        "xp_level",
        "action_points",
        "action_point_spent_this_encounter",
        "powers",
        "surges",
        "surge_value",
        "death_save_failures",
        "bloodied",
        "temp_hp",
        "encounters_since_long_rest",
    }
    assert common | own <= set(v)
    assert v["life"] in rulesets.LIFE_STATES


def test_tracks_chart_hp_with_its_lines_and_action_points(t: OrcusTable) -> None:
    hp, ap = ORCUS.tracks(t.v("mira"))
    assert hp == Track(
        "hp", "HP", 30, ceiling=30, floor=None, thresholds=(("bloodied", 15), ("dying", 0), ("dead", -15))
    )
    assert ap == Track("action_points", "Action points", 1, ceiling=None, floor=0)
    assert [x[0] for x in ORCUS.tracks(t.v("gob"))[0].thresholds] == [
        "bloodied",
        "dying",
    ]  # monsters die at 0


def test_every_orcus_fact_has_its_own_sentence() -> None:
    missing = [f for f in FACTS if not hasattr(OrcusNarrator, "_" + f)]
    assert missing == []
    assert isinstance(narrator_for(ORCUS, PLAIN), OrcusNarrator)


def test_sentences_read_the_folds_numbers(t: OrcusTable) -> None:
    rec = t.attack("ogre", dict(CLUB), [{"target": "mira", "face": 20}])
    entry = t.ledger.entries[-1]
    text = OrcusNarrator().sentence(entry.type, entry.payload, rec.outcome, t.ledger.state)
    assert text.startswith("Ogre critically hits Mira with Club:")
    assert "natural 20: maximum damage" in text and "maximum 16" in text
    save = t.record("DamageApplied", target="mira", amount=20)
    entry = t.ledger.entries[-1]
    text = OrcusNarrator().sentence(entry.type, entry.payload, save.outcome, t.ledger.state)
    assert text == "Mira takes damage: 20 damage (20 HP). Mira is dying."
    death = t.record("DeathSavingThrowRolled", creature="mira", roll=d20(7))
    entry = t.ledger.entries[-1]
    text = OrcusNarrator().sentence(entry.type, entry.payload, death.outcome, t.ledger.state)
    assert text == "Mira makes a death saving throw: 1d20 (7) = 7: failure (1 failed so far)."
    assert OrcusNarrator().sentence(entry.type, entry.payload, None, None).endswith(": 1d20 (7) = 7.")
