"""A hero's-surge campaign through the exports: Markdown and HTML tell it with the hero's-surge
narrator and chart its tracks (HP below 0 against the death line, HS-12; hero's surges below 0,
HS-16), with the rest marked; JSONL -> import -> export is byte-identical, in memory and from
SQLite into PostgreSQL."""

from __future__ import annotations

import re
from uuid import UUID

from api.exports import service
from api.service.application import ChronicleApplication
from api.service.settings import Settings
from api.service.store import open_application
from tests.integration.test_import_roundtrip import round_trip


def wraiths(app: ChronicleApplication) -> UUID:
    """Brin (a level-2 hero: 24 HP, 5 surges, dead past -16) meets a wraith. Its touch takes 20: 24 -> 4.
    Five drains (HS-16) take her surges 5 -> 0; a sixth, with none left, costs a quarter of her HP
    (B-HS-8): 4 -> -2, below 0 from above it: that is a transition (B-HS-7) with no surge to lose:
    another 6, -8, and two negative surges; dying. Falling stones deal 3 more while she is dying (-11): a
    luck roll is owed (B-HS-9), 12, lucky. Aldric's healer's kit makes her stable (B-HS-10); a long
    rest restores HP and surges (B-HS-12, B-HS-21). Revoking the stones orphans the luck roll (ruling
    25: no damage while dying, none owed)."""
    cid = app.create_campaign("Wraiths (hero-surge)", ruleset="hero-surge")

    def fact(fact_type: str, **payload: object) -> int:
        return app.record(cid, fact_type, dict(payload)).position

    fact("CreatureRegistered", creature_id="brin", name="Brin", kind="pc", level=2, con_score=16, max_hp=24)
    fact(
        "CreatureRegistered", creature_id="aldric", name="Aldric", kind="pc", level=1, con_score=14, max_hp=40
    )
    fact("DamageApplied", target="brin", amount=20, source="the wraith's touch")
    for _ in range(6):
        fact("HeroSurgeDrained", creature="brin", source="the wraith")
    hazard = fact("DamageApplied", target="brin", amount=3, source="falling stones")
    luck = fact("LuckRollMade", creature="brin", context="dying_damage", roll=app.roll("1d20", faces=[12]))
    fact("HealersKitUsed", healer="aldric", target="brin")
    fact("RestTaken", kind="long", hours=8)
    app.revoke(cid, hazard, "the stones missed")
    assert list(app.ledger(cid).orphans) == [luck]
    return cid


def test_markdown_and_html_tell_a_hero_surge_campaign_and_chart_negative_hp_and_surges(
    memory_app: ChronicleApplication,
) -> None:
    cid = wraiths(memory_app)
    drained = [e.seq for e in memory_app.ledger(cid).entries if e.type == "HeroSurgeDrained"][-1]
    then = memory_app.creature_state(cid, "brin", drained, "corrected")
    assert (then["hit_points"]["current"], then["hero_surges"], then["life"]) == (-8, -2, "dying")
    assert memory_app.creature_state(cid, "brin")["hit_points"]["current"] == 24
    md = "".join(service.export(memory_app, cid, "md"))
    assert "has no surge to lose: loses 6 HP and gains a negative surge (-1)" in md
    assert "~~**#11**" in md  # the revoked stones: struck through
    assert "**ORPHANED** **#12** Brin makes a luck roll" in md
    assert "A long rest of 8 hours: Brin and Aldric." in md
    html = "".join(service.export(memory_app, cid, "html"))
    assert html.startswith("<!DOCTYPE html>") and html.rstrip().endswith("</html>")
    svg = re.search(r'<svg[^>]*data-character="brin".*?</svg>', html, re.S)
    assert svg is not None
    chart = svg.group(0)
    assert 'class="track hp"' in chart and 'class="track hero_surges"' in chart
    assert "<title>dead below at -16</title>" in chart and 'class="mark long-rest"' in chart
    labels = re.findall(r"<text[^>]*>([^<]*)</text>", chart)
    assert "-8" in labels or "-16" in labels  # the HP axis goes below 0
    assert "-2" in labels[labels.index("Hero&#x27;s surges") :]  # the surges axis reaches -2


def test_a_hero_surge_campaign_round_trips_through_jsonl(memory_app: ChronicleApplication) -> None:
    round_trip(memory_app, wraiths(memory_app), memory_app)


def test_a_hero_surge_campaign_moves_from_sqlite_to_postgresql(
    sqlite_store: Settings, postgres_store: Settings
) -> None:
    lite, pg = open_application(sqlite_store), open_application(postgres_store)
    try:
        new, exported = round_trip(lite, wraiths(lite), pg)
        assert "hero-surge" in exported.splitlines()[0]
        assert pg.ledger(new).ruleset.id == "hero-surge"
    finally:
        lite.close()
        pg.close()
