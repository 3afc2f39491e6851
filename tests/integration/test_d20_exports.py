"""A d20 house-rules campaign through the exports: Markdown and HTML tell it with the d20
narrator and chart HP against the disabled / dying / dead thresholds; JSONL -> import -> export is
byte-identical, in memory and from SQLite into PostgreSQL."""

from __future__ import annotations

import re
from uuid import UUID

from api.exports import service
from api.rulesets.d20_house.commands import D20Commands
from api.service.application import ChronicleApplication
from api.service.settings import Settings
from api.service.store import open_application
from tests.integration.test_import_roundtrip import round_trip

AXE = {"name": "battleaxe", "kind": "melee"}


def ford(app: ChronicleApplication) -> UUID:
    """Kara (a PC: Stamina 16, S 16, B 3, 38 HP) falls to a gnoll's axe and to poison, is
    stabilised, treated and rests; a revoked axe blow orphans its damage, her stabilisation roll
    and the Heal check (she was never dying)."""
    cid = app.create_campaign("The ford (d20)", ruleset="d20")
    d = D20Commands(app)
    d.register_creature(
        cid,
        "Kara",
        max_hp=38,
        bab=[6, 1],
        abilities={"str": 16, "stamina": 16, "agility": 12},
        base_saves={"fort": 5},
        armor=4,
        shield=1,
    )
    d.register_creature(cid, "Gnoll", kind="monster", max_hp=11, bab=[2], abilities={"str": 14}, armor=3)
    d.register_creature(cid, "Tam", max_hp=12, bab=[0], abilities={"spirit": 14})
    # the gnoll: d20 19 + 4 = 23 vs 16; 1d8 (8) + 2 = 10: Kara 28
    a = d.attack(cid, "gnoll", "kara", face=19, weapon=AXE).position
    d.damage(cid, a, "1d8", faces=[8])
    d.deal_damage(cid, "kara", amount=27, source="the ford's current")  # 1: fine
    # again: d20 15 + 4 = 19; 1d8 (3) + 2 = 5: Kara -4, dying (-4..-16)
    blow = d.attack(cid, "gnoll", "kara", face=15, weapon=AXE).position
    d.damage(cid, blow, "1d8", faces=[3])
    first_roll = d.stabilize(cid, "kara", face=44).position  # 44 > 16: -5
    d.damage_ability(cid, "kara", "stamina", 2, source="gnoll venom")  # S 14, B 2
    check = d.heal_check(cid, "tam", "kara", face=16).position  # 16 vs 10 + 5 = 15: stable
    d.heal(cid, "kara", "1d8", faces=[6], healer="tam", source="cure")  # -5 + 6 = 1: fine
    d.recover_abilities(cid, ["kara", "tam"], "sleep", 4)
    app.revoke(cid, blow, "The gnoll had already fled")
    assert set(app.ledger(cid).orphans) == {blow + 1, first_roll, check}
    return cid


def test_markdown_and_html_tell_a_d20_campaign_and_chart_hp_against_its_thresholds(
    memory_app: ChronicleApplication,
) -> None:
    cid = ford(memory_app)
    md = "".join(service.export(memory_app, cid, "md"))
    assert "Kara rolls to stabilise: d% 44." in md  # orphaned: told by its inputs
    assert "Orphaned: no attack at position" in md
    assert "Tam treats Kara (Heal check)" in md
    assert "Kara takes 2 Stamina damage from gnoll venom" in md
    assert "Kara and Tam sleep 4 hours" in md
    html = "".join(service.export(memory_app, cid, "html"))
    assert html.startswith("<!DOCTYPE html>") and html.rstrip().endswith("</html>")
    svg = re.search(r'<svg[^>]*data-character="kara".*?</svg>', html, re.S)
    assert svg is not None
    chart = svg.group(0)
    for line in ("disabled", "dying", "dead"):
        assert f"<title>{line} at " in chart
    assert 'class="track hp"' in chart and 'class="track stamina"' in chart
    assert 'data-character="gnoll"' not in html  # monsters are not charted
    # the corrected story: no blow, so Kara never fell below 1 HP and no dying mark
    assert 'class="mark dying"' not in chart and 'class="mark sleep"' in chart


def test_a_d20_campaign_round_trips_through_jsonl(memory_app: ChronicleApplication) -> None:
    round_trip(memory_app, ford(memory_app), memory_app)


def test_a_d20_campaign_moves_from_sqlite_to_postgresql(
    sqlite_store: Settings, postgres_store: Settings
) -> None:
    lite, pg = open_application(sqlite_store), open_application(postgres_store)
    try:
        new, exported = round_trip(lite, ford(lite), pg)
        assert '"ruleset": "d20"' in exported.splitlines()[0] or '"ruleset":"d20"' in exported.splitlines()[0]
        assert pg.ledger(new).ruleset.id == "d20"
    finally:
        lite.close()
        pg.close()
