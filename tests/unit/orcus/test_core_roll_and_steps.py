"""OR-1 (the core roll: d20 + modifiers, a total equal to the rating succeeds, round down) and OR-3
(the encounter's steps: surprise, initiative, turns, the next round) on an Orcus table."""

from __future__ import annotations

from tests.unit.orcus.helpers import OrcusTable, encounter_facts

STRIKE = {
    "name": "Strike",
    "kind": "melee",
    "defense": "ac",
    "attack_bonus": 5,
    "damage": "1d8+3",
    "miss": "half",
}


def test_or_1_a_total_that_equals_the_rating_succeeds_and_halves_round_down(t: OrcusTable) -> None:
    """The goblin's AC is 15: 10 + 5 = 15 hits, 9 + 5 = 14 misses; the Miss's half of 1d8 (4) + 3 =
    7 is 3 (rounded down). A save of exactly 10 succeeds, 9 fails (OR-19 on the same roll)."""
    hit = t.attack("mira", dict(STRIKE), [{"target": "gob", "face": 10}], damage=[1]).outcome["targets"][0]
    assert (hit["attack_total"], hit["defense_value"], hit["hit"], hit["damage"]["amount"]) == (
        15,
        15,
        True,
        4,
    )
    miss = t.attack("mira", dict(STRIKE), [{"target": "gob", "face": 9}], damage=[4]).outcome["targets"][0]
    assert (miss["attack_total"], miss["hit"], miss["damage"]["half_on_miss"]) == (14, False, 3)
    slowed = {"name": "slowed", "components": [{"condition": "dazed"}], "duration": {"kind": "save_ends"}}
    first = t.effect("mira", "ogre", **slowed).outcome["effect_id"]
    assert t.save("mira", first, 9).outcome["success"] is False
    assert t.save("mira", first, 10).outcome["success"] is True


def test_or_3_surprise_initiative_turns_and_the_next_round(table: OrcusTable) -> None:
    """Determine surprise, roll initiative, take turns (round 0 is the surprise round, OR-4); when
    everyone has had a turn the round ends and the next begins with the first turn in the order."""
    table.cast()
    e = encounter_facts(table, "road")
    e.start(["mira", "gob"], surprised=["gob"])
    e.init("mira", 12, 2)  # 14
    e.init("gob", 15, 0)  # 15: first in the order, but surprised
    view = e.view()
    assert (view["state"], view["order"]) == ("running", ["gob", "mira"])
    started = e.turn().outcome
    assert (started["round_now"], started["turn_of"]) == (0, "mira")  # the surprised goblin is skipped
    e.end()
    started = e.turn().outcome
    assert (started["round_now"], started["turn_of"]) == (1, "gob")
    e.end()
    assert e.turn().outcome["turn_of"] == "mira"
    e.end()
    assert e.turn().outcome["round_now"] == 2


def test_c4_2_every_event_is_an_orcus_fact_or_a_documented_replacement() -> None:
    """Each event of RULES.md C4.2 is a fact an Orcus campaign folds, or docs/rules-flags.md names
    the fact that records it instead (the core engine's turn facts, AttackMade, LevelSet)."""
    import re
    from pathlib import Path

    from domain.rulesets.orcus import ORCUS

    root = Path(__file__).resolve().parents[3]
    rules = root.parent / "shared" / "rules" / "RULES.md"
    if not rules.exists():  # pragma: no cover - a checkout without ../shared
        return
    table = rules.read_text(encoding="utf-8").split("#### C4.2 Events", 1)[1].split("\n---", 1)[0]
    events = set(re.findall(r"^\| (?:\*Placeholders \(B-OR-1\):\* )?(.*?) \|", table, re.M))
    names = {n for row in events for n in re.findall(r"`(\w+)`", row)}
    assert {"AttackRolled", "RechargeRolled", "DeathDeclared"} <= names
    docs = (root / "docs" / "rules-flags.md").read_text(encoding="utf-8")
    replaced = {
        n for row in re.findall(r"^\| C4\.2 (.*?) \|", docs, re.M) for n in re.findall(r"`(\w+)`", row)
    }
    missing = sorted(n for n in names if n not in ORCUS.fact_types and n not in replaced)
    assert missing == []
