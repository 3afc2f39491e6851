"""``chronicle demo --ruleset hero-surge``: the bridge at Kell (api/rulesets/hero_surge/demo.py), its
numbers as RULES.md A2 / B-HS work them, and its exports (Markdown, HTML whose timeline charts HP and
hero's surges with their negative values, JSONL -> import -> JSONL)."""

from __future__ import annotations

import re
from pathlib import Path
from uuid import UUID

import pytest
from typer.testing import CliRunner

from api.cli.main import app as cli
from api.exports import service
from api.rulesets.hero_surge.demo import ENCOUNTER
from api.service.application import ChronicleApplication
from api.service.demo import create_demo
from api.service.settings import Settings
from api.service.store import open_application
from tests.integration.test_import_roundtrip import round_trip


def positions_of(app: ChronicleApplication, cid: UUID, fact_type: str) -> list[int]:
    return [e.seq for e in app.ledger(cid).entries if e.type == fact_type]


def test_the_demo_plays_hero_surge_through(memory_app: ChronicleApplication) -> None:
    app = memory_app
    cid = create_demo(app, "hero-surge")
    assert app.ledger(cid).ruleset.id == "hero-surge"
    view = app.view(cid)
    aldric, brin, ogre, g1, g2 = (view.creature(c) for c in ("aldric", "brin", "ogre", "g1", "g2"))
    assert aldric is not None and brin is not None and ogre is not None and g1 is not None and g2 is not None
    # Aldric: a long rest (40), then level 2: +7 (B-HS-17 with the Con swap): 47; surges 4 + 1 (HS-15);
    # the Fortune Die of his traded 20 (HS-7, B-HS-4)
    assert (aldric["hit_points"]["current"], aldric["hit_points"]["max"], aldric["level"]) == (47, 47, 2)
    assert (aldric["hero_surges"], aldric["hero_surges_max"], aldric["fortune_dice"]) == (5, 5, 1)
    # Brin after the long rest: full HP and surges (B-HS-12, B-HS-21)
    assert (brin["hit_points"]["current"], brin["hero_surges"], brin["life"]) == (24, 5, "active")
    # the ogre: 30 - 11 (Brin's maximised 14 less DR 3) - 5 (Aldric's brutal 8 less DR 3) = 14
    assert ogre["hit_points"]["current"] == 14
    # the scout at exactly 0: unconscious, not dead (B-HS-6)
    assert (g1["hit_points"]["current"], g1["life"]) == (0, "unconscious")
    encounter = view.encounter(ENCOUNTER)
    assert encounter is not None and (encounter["state"], encounter["round"]) == ("ended", 2)
    # the overturned ruling: the stab's damage roll, its damage and its luck roll no longer apply
    stab_damage = positions_of(app, cid, "DamageRolled")[-1]
    luck = positions_of(app, cid, "LuckRollMade")
    assert sorted(app.ledger(cid).orphans) == [stab_damage, stab_damage + 1, luck[0]]
    # what the table believed (recorded) and what is true (corrected), at the stab's luck roll:
    # -3 and 2 surges (the stab's 2 and an unlucky roll), against -1 and 3
    then = app.creature_state(cid, "brin", luck[0], "recorded")
    now = app.creature_state(cid, "brin", luck[0], "corrected")
    assert (then["hit_points"]["current"], then["hero_surges"], then["life"]) == (-3, 2, "dying")
    assert (now["hit_points"]["current"], now["hero_surges"], now["life"]) == (-1, 3, "dying")
    # the cursed well: 3 -> 0, then a quarter of her HP (6): -1 -> -7 and a negative surge (B-HS-8)
    drained = positions_of(app, cid, "HeroSurgeDrained")[-1]
    well = app.creature_state(cid, "brin", drained, "corrected")
    assert (well["hit_points"]["current"], well["hero_surges"], well["negative_hero_surges"]) == (-7, -1, 1)
    assert well["life"] == "stabilized"  # B-HS-10: not dying again (hs.hp_loss_restarts_dying)


def test_the_demo_is_the_same_campaign_every_time(memory_app: ChronicleApplication) -> None:
    first, second = create_demo(memory_app, "hero-surge"), create_demo(memory_app, "hero-surge")
    for fmt in ("md", "html", "jsonl"):
        a = "".join(service.export(memory_app, first, fmt))
        b = "".join(service.export(memory_app, second, fmt))
        assert a.replace(str(first), "") == b.replace(str(second), ""), fmt


def test_the_demos_story_and_charts(memory_app: ChronicleApplication) -> None:
    cid = create_demo(memory_app, "hero-surge")
    md = "".join(service.export(memory_app, cid, "md", encounter=ENCOUNTER))
    for line in (
        "Brin's attack attempt against Ogre (1d20 (20) = 20): critical success.",  # HS-8
        "Devastating Effect of b1: knock initiative back on Ogre.",  # B-HS-18
        "Damage d1: 1d10 (3) + 4 = 7, maximised to 14.",  # B-HS-16
        "Ogre takes 11 of 14 damage.",  # DR 3
        "Brutal Damage rerolls die 0 of d2: 6 (higher: kept).",  # B-HS-16
        "Aldric takes 9 of 11 damage.",  # DR 2, then temporary HP
        "*Goblin Scout's turn is skipped: surprised: no action in the surprise round (HS-3).*",
        "Attempt a2 is downgraded to a normal success for a Fortune Die.",  # HS-7
        "Brin's defense attempt (1d20 (1) = 1): critical failure (a natural 1 on a failure).",
        "Brin's defense blocks 0 of 2 attacks; critical hits: club.",  # HS-9, B-HS-19
        "Brin takes 12 of 12 damage; falls unconscious, loses a hero's surge (3 left), begins dying.",
        "Order among the foes in the normal success band: Ogre and Goblin Scout.",  # HS-2
        "Aldric tends Brin (limited success); gains advantage on the next luck roll.",  # HS-14
        "*Brin is dying and must make a luck roll.*",  # ruling 25
        "Brin makes a luck roll (dying turn start, 2d20kh1 (~~3~~, 12) = 12): lucky.",
        "Goblin Scout takes 3 of 3 damage; falls unconscious.",  # B-HS-6
        "Brin owes no luck roll now: it took no damage while already dying (B-HS-9, ruling 25)",
    ):
        assert line in md, line
    story = "".join(service.export(memory_app, cid, "md"))
    assert "has no surge to lose: loses 6 HP and gains a negative surge (-1)." in story  # B-HS-8
    assert "Aldric reaches level 2: +7 hit points" in story
    html = "".join(service.export(memory_app, cid, "html"))
    chart = re.search(r'<svg[^>]*data-character="brin".*?</svg>', html, re.S)
    assert chart is not None
    svg = chart.group(0)
    assert 'class="track hp"' in svg and 'class="track hero_surges"' in svg
    assert "<title>dead below at -16</title>" in svg  # HS-12: max(16, 12)
    assert "<title>negative surges at #100</title>" in svg
    labels = re.findall(r"<text[^>]*>([^<]*)</text>", svg)
    assert "-1" in labels[labels.index("Hero&#x27;s surges") :]  # the surges axis reaches -1
    assert 'data-character="ogre"' not in html  # monsters are not charted


def test_the_demo_moves_from_sqlite_to_postgresql(sqlite_store: Settings, postgres_store: Settings) -> None:
    lite, pg = open_application(sqlite_store), open_application(postgres_store)
    try:
        new, _ = round_trip(lite, create_demo(lite, "hero-surge"), pg)
        assert len(pg.ledger(new).orphans) == 3
    finally:
        lite.close()
        pg.close()


def test_chronicle_demo_ruleset_hero_surge_export_import_export(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CHRONICLE_DATABASE_URL", f"sqlite:///{tmp_path / 'store.sqlite'}")
    runner = CliRunner()
    made = runner.invoke(cli, ["demo", "--ruleset", "hero-surge"])
    assert made.exit_code == 0, made.output
    cid = re.search(r"Demo campaign ([0-9a-f-]{36})", made.output).group(1)  # type: ignore[union-attr]
    first = tmp_path / "bridge.jsonl"
    assert runner.invoke(cli, ["export", cid, "--format", "jsonl", "-o", str(first)]).exit_code == 0
    imported = runner.invoke(cli, ["import", str(first)])
    assert imported.exit_code == 0, imported.output
    new = re.search(r"as campaign ([0-9a-f-]{36})", imported.output).group(1)  # type: ignore[union-attr]
    again = runner.invoke(cli, ["export", new, "--format", "jsonl"])
    assert again.exit_code == 0 and again.stdout == first.read_text(encoding="utf-8")
    page = runner.invoke(cli, ["export", new, "--format", "html"])
    assert page.exit_code == 0 and 'data-character="brin"' in page.stdout
