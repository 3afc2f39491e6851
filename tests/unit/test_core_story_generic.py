"""What the core tells for a system that brings little of its own (found by the toy ruleset going
through the exports, issue 15): the per-encounter summary of a system without summary columns is
still a well-formed Markdown table, and an initiative roll that is its own score says it once."""

from __future__ import annotations

from api.exports.render import _md_summary
from api.exports.story import EncounterDigest
from domain import dice
from domain.core.narration import Narrator


def _table(enc: EncounterDigest) -> list[list[str]]:
    lines = [line for line in "".join(_md_summary(enc)).splitlines() if line.startswith("|")]
    return [[cell.strip() for cell in line.strip("|").split("|")] for line in lines]


def test_a_summary_without_columns_is_a_table_of_names_with_one_cell_a_row() -> None:
    enc = EncounterDigest(
        "a", "Ambush", 4, participants=["bram", "ogre"], names={"bram": "Bram", "ogre": "Ogre"}
    )
    assert _table(enc) == [["Creature"], ["---"], ["Bram"], ["Ogre"]]


def test_every_row_of_a_summary_has_as_many_cells_as_its_header() -> None:
    enc = EncounterDigest(
        "a",
        "Ambush",
        4,
        columns=(("dealt", "Dealt"), ("taken", "Taken")),
        participants=["bram"],
        names={"bram": "Bram"},
    )
    enc.add("bram", "taken", 3)
    rows = _table(enc)
    assert rows == [["Creature", "Dealt", "Taken"], ["---", "---:", "---:"], ["Bram", "0", "3"]]


def test_an_initiative_roll_that_is_the_score_is_told_once() -> None:
    narrate = Narrator().sentence
    roll = dice.roll("1d20", faces=[15])
    p = {"encounter_id": "a", "creature": "bram", "roll": roll}
    assert (
        narrate("InitiativeRolled", p, {"score": 15, "rank": [15]}, None)
        == "bram rolls initiative: 1d20 (15) = 15."
    )
    # a score that is not the die (a system that adds something without calling it a bonus)
    assert narrate("InitiativeRolled", p, {"score": 17, "rank": [17]}, None) == (
        "bram rolls initiative: 1d20 (15) = 15 = 17."
    )
    assert narrate("InitiativeRolled", p, {"score": 18, "bonus": 3, "rank": [18, 3]}, None) == (
        "bram rolls initiative: 1d20 (15) = 15, + 3 = 18."
    )
