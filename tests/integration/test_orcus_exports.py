"""An Orcus campaign through the exports: Markdown and HTML tell it with the Orcus narrator and chart
its tracks (HP against the bloodied / dying / dead lines of A4.9, and action points, OR-7) with the
rests marked; JSONL -> import -> export is byte-identical, in memory and from SQLite into
PostgreSQL."""

from __future__ import annotations

import re
from uuid import UUID

from api.exports import service
from api.rulesets.orcus.commands import OrcusCommands
from api.service.application import ChronicleApplication
from api.service.settings import Settings
from api.service.store import open_application
from tests.integration.test_import_roundtrip import round_trip

DEFENSES = {"ac": 17, "fort": 14, "ref": 15, "will": 13}
CLAW = {"name": "Claw", "kind": "melee", "defense": "ac", "attack_bonus": 6, "damage": "1d10+4"}


def skirmish(o: OrcusCommands, cid: UUID, eid: str, *, claw_face: int, damage: list[int]) -> int:
    """A short encounter: the wolf claws Mira once; returns the claw's position."""
    o.record(cid, "EncounterStarted", {"encounter_id": eid, "name": eid, "participants": ["mira", "wolf"]})
    o.record(
        cid,
        "InitiativeRolled",
        {"encounter_id": eid, "creature": "wolf", "roll": o.app.roll("1d20", faces=[18])},
    )
    o.record(
        cid,
        "InitiativeRolled",
        {"encounter_id": eid, "creature": "mira", "roll": o.app.roll("1d20", faces=[2])},
    )
    o.record(cid, "TurnStarted", {"encounter_id": eid})
    claw = o.attack(
        cid, "wolf", CLAW, [{"target": "mira", "face": claw_face}], damage_faces=damage, action="standard"
    )
    o.record(cid, "TurnEnded", {"encounter_id": eid})
    o.record(cid, "EncounterEnded", {"encounter_id": eid, "outcome": "the wolf slinks off"})
    return claw.position


def wolves(app: ChronicleApplication) -> UUID:
    """Mira (a hero: 30 HP, bloodied 15, surge 7, dies at -15) meets a wolf twice. The first claw:
    15 + 6 = 21 vs AC 17, 1d10 (10) + 4 = 14: 16. The second: 1d10 (9) + 4 = 13: 3, and the second
    encounter gives her an action point (B-OR-3: 1 -> 2). A rockslide of 5 takes her to -2, dying;
    her death save (12) changes nothing; a potion spends a surge (-2 -> 0 -> 7, A4.9). A long rest
    resets her action points to 1 (OR-7) and restores her HP (A4.9). Revoking the rockslide orphans
    the death save (she was never dying)."""
    cid = app.create_campaign("Wolves (orcus)", ruleset="orcus")
    o = OrcusCommands(app)
    o.register_creature(cid, "Mira", max_hp=30, xp=2250, surges_per_day=6, defenses=DEFENSES)
    o.register_creature(cid, "Wolf", kind="monster", level=2, max_hp=20, defenses=DEFENSES)
    skirmish(o, cid, "first", claw_face=15, damage=[10])  # 30 -> 16
    skirmish(o, cid, "second", claw_face=15, damage=[9])  # 16 -> 3; the second encounter: AP 2
    hazard = o.deal_damage(cid, "mira", amount=5, source="a rockslide").position  # 3 -> -2: dying
    saved = o.death_save(cid, "mira", face=12).position  # 12: no change
    o.heal(cid, "mira", surge_multiplier=1, requires_surge=True, source="a potion")  # -2 -> 0 -> 7
    o.long_rest(cid, hours=8)
    app.revoke(cid, hazard, "the rockslide missed her")
    assert app.ledger(cid).orphans == {saved: "Mira is not dying"}
    return cid


def test_markdown_and_html_tell_an_orcus_campaign_and_chart_hp_and_action_points(
    memory_app: ChronicleApplication,
) -> None:
    cid = wolves(memory_app)
    view = memory_app.view(cid)
    mira = view.creature("mira")
    assert mira is not None and (mira["hp"], mira["action_points"], mira["encounters_since_long_rest"]) == (
        30,
        1,
        0,
    )
    then = memory_app.creature_state(cid, "mira", memory_app.ledger(cid).last_seq - 2, "corrected")
    assert then["action_points"] == 2  # after the second encounter, before the long rest (B-OR-3)
    md = "".join(service.export(memory_app, cid, "md"))
    assert "Wolf hits Mira with Claw: 15 + 6 = 21 vs AC 17; 1d10 (10) + 4 = 14" in md
    assert "~~**#18** Mira takes 5 damage from a rockslide.~~" in md  # revoked: struck through
    assert "the wolf slinks off. Mira gains an action point (every second encounter)." in md
    assert "**ORPHANED**" in md and "Mira makes a death saving throw: 1d20 (12) = 12." in md
    assert "Mira takes a long rest (8 hours)" in md
    html = "".join(service.export(memory_app, cid, "html"))
    assert html.startswith("<!DOCTYPE html>") and html.rstrip().endswith("</html>")
    svg = re.search(r'<svg[^>]*data-character="mira".*?</svg>', html, re.S)
    assert svg is not None
    chart = svg.group(0)
    assert 'class="track hp"' in chart and 'class="track action_points"' in chart
    for line in ("bloodied", "dying", "dead"):
        assert f"<title>{line} at " in chart
    assert 'class="mark long-rest"' in chart
    assert 'class="mark dying"' not in chart  # corrected: she never fell
    assert 'data-character="wolf"' not in html  # monsters are not charted


def test_an_orcus_campaign_round_trips_through_jsonl(memory_app: ChronicleApplication) -> None:
    round_trip(memory_app, wolves(memory_app), memory_app)


def test_an_orcus_campaign_moves_from_sqlite_to_postgresql(
    sqlite_store: Settings, postgres_store: Settings
) -> None:
    lite, pg = open_application(sqlite_store), open_application(postgres_store)
    try:
        new, exported = round_trip(lite, wolves(lite), pg)
        assert (
            '"ruleset": "orcus"' in exported.splitlines()[0]
            or '"ruleset":"orcus"' in exported.splitlines()[0]
        )
        assert pg.ledger(new).ruleset.id == "orcus"
        assert len(pg.ledger(new).orphans) == 1
    finally:
        lite.close()
        pg.close()
