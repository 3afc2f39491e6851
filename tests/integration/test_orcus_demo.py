"""``chronicle demo --ruleset orcus``: the ogre's den (api/rulesets/orcus/demo.py), its numbers as
RULES.md A4 / B-OR and the A4.9 placeholders work them, and its exports (Markdown, HTML, JSONL ->
import -> JSONL)."""

from __future__ import annotations

import re
from pathlib import Path
from uuid import UUID

import pytest
from typer.testing import CliRunner

from api.cli.main import app as cli
from api.exports import service
from api.rulesets.orcus.demo import ENCOUNTER
from api.service.application import ChronicleApplication
from api.service.demo import create_demo
from api.service.settings import Settings
from api.service.store import open_application
from tests.integration.test_import_roundtrip import round_trip


def positions_of(app: ChronicleApplication, cid: UUID, fact_type: str) -> list[int]:
    return [e.seq for e in app.ledger(cid).entries if e.type == fact_type]


def test_the_demo_plays_orcus_through(memory_app: ChronicleApplication) -> None:
    app = memory_app
    cid = create_demo(app, "orcus")
    assert app.ledger(cid).ruleset.id == "orcus"
    view = app.view(cid)
    mira, tam, ogre, goblin = (view.creature(c) for c in ("mira", "tam", "ogre", "goblin"))
    assert mira is not None and tam is not None and ogre is not None and goblin is not None
    # Mira: 30 - 19 (the critical: maximum 16 + 3 bonus) - 5 (fire) + 7 (Rally) + 7 (a surge) = 20;
    # 6 surges - Rally - 1 = 4; her action point spent (one encounter: none gained yet, OR-7).
    assert (mira["hp"], mira["surges"], mira["action_points"], mira["life"]) == (20, 4, 0, "active")
    # Tam, corrected (the flank overturned: the spear missed): 24 - 11 - 5 - 5 + 6 (a surge) = 9.
    assert (tam["hp"], tam["life"], tam["death_save_failures"], tam["surges"]) == (9, "active", 0, 5)
    # 1,500 XP: 2,250 + 1,500 = 3,750, level 4 (A4.2, ruling 22)
    assert (mira["xp"], mira["level"], tam["level"]) == (3750, 4, 4)
    # the ogre: 52 - 9 (Strike) = 43; Fire Breath recharged on a 6 (B-OR-17); the goblin dead
    assert (ogre["hp"], ogre["powers"]["breath"]["expended"]) == (43, False)
    assert goblin["life"] == "dead"
    # the short rest recharged Radiant Lance and the Warding Zone (OR-9)
    assert not mira["powers"]["lance"]["expended"] and not tam["powers"]["ward"]["expended"]
    encounter = view.encounter(ENCOUNTER)
    assert encounter is not None and (encounter["state"], encounter["round"]) == ("ended", 3)
    # the overturned ruling: both of Tam's death saves no longer apply
    saves = positions_of(app, cid, "DeathSavingThrowRolled")
    assert app.ledger(cid).orphans == dict.fromkeys(saves, "Tam is not dying")
    # what the table believed (recorded) and what is true (corrected), after the first death save
    then = app.creature_state(cid, "tam", saves[0], "recorded")
    now = app.creature_state(cid, "tam", saves[0], "corrected")
    assert (then["hp"], then["life"], then["death_save_failures"]) == (-5, "dying", 1)
    assert (now["hp"], now["life"], now["death_save_failures"]) == (3, "active", 0)
    # as recorded at the end of the fight: the natural 20 spent a surge and healed 6 (-5 -> 0 -> 6)
    end = positions_of(app, cid, "EncounterEnded")[0]
    assert app.creature_state(cid, "tam", end, "recorded")["hp"] == 6


def test_the_demo_is_the_same_campaign_every_time(memory_app: ChronicleApplication) -> None:
    first, second = create_demo(memory_app, "orcus"), create_demo(memory_app, "orcus")
    for fmt in ("md", "html", "jsonl"):
        a = "".join(service.export(memory_app, first, fmt))
        b = "".join(service.export(memory_app, second, fmt))
        assert a.replace(str(first), "") == b.replace(str(second), ""), fmt


def test_the_demos_story_and_charts(memory_app: ChronicleApplication) -> None:
    cid = create_demo(memory_app, "orcus")
    md = "".join(service.export(memory_app, cid, "md", encounter=ENCOUNTER))
    for line in (
        # OR-12: the Miss effect
        "Mira misses Ogre with Radiant Lance: 7 + 5 = 12 vs Reflex 13; Ogre gets dazzled",
        "Mira spends an action point for an extra standard action; 0 left.",  # OR-7
        "Mira takes a swift action: shouts to Tam to raise the ward.",  # OR-6
        # OR-11, B-OR-4, B-OR-5: a natural 20, the maximum plus the bonus rolled for her
        "Ogre critically hits Mira with Fire Breath: 20 + 6 - 2 (dazzled) = 24 vs Reflex 15 "
        "(natural 20: maximum damage); maximum 16 + 3 bonus",
        "*Persistent fire damage hurts Tam: 5 damage (5 HP).*",  # OR-6, ruling 20
        "Tam saves against e20.2: 1d20 (6) = 6: failure, the first failed save: persistent 5 fire damage, "
        "dazed as well.",  # B-OR-12
        "Tam maintains e24 (swift action).",  # B-OR-8
        "*Warding Zone on Ogre ends: not maintained this turn (OR-18).*",
        "Ogre rolls to recharge Fire Breath: 1d6 (4) = 4 (recharge 5-6): not recharged.",  # B-OR-17
        "Ogre rolls to recharge Fire Breath: 1d6 (6) = 6 (recharge 5-6): recharged.",
        "Mira rallies, spending a healing surge: 7 HP restored.",
        "Goblin misses Tam with Spear: 12 + 4 = 16 vs AC 17. *(Cites ruling r-flank, overturned",
        "**ORPHANED** **#41** Tam makes a death saving throw: 1d20 (7) = 7.",
    ):
        assert line in md, line
    story = "".join(service.export(memory_app, cid, "md"))
    assert "Mira and Tam take a short rest (10 minutes); recharged: lance, ward." in story
    assert "Mira and Tam gain 1500 XP for the ogre's den. Mira reaches level 4; Tam reaches level 4." in story
    html = "".join(service.export(memory_app, cid, "html"))
    for who in ("mira", "tam"):
        chart = re.search(rf'<svg[^>]*data-character="{who}".*?</svg>', html, re.S)
        assert chart is not None
        svg = chart.group(0)
        assert 'class="track hp"' in svg and 'class="track action_points"' in svg
        assert all(f"<title>{line} at " in svg for line in ("bloodied", "dying", "dead"))
        assert "<title>short rest at #59</title>" in svg
    assert 'data-character="ogre"' not in html  # monsters are not charted


def test_the_demo_moves_from_sqlite_to_postgresql(sqlite_store: Settings, postgres_store: Settings) -> None:
    lite, pg = open_application(sqlite_store), open_application(postgres_store)
    try:
        new, _ = round_trip(lite, create_demo(lite, "orcus"), pg)
        assert sorted(pg.ledger(new).orphans) == positions_of(pg, new, "DeathSavingThrowRolled")
    finally:
        lite.close()
        pg.close()


def test_chronicle_demo_ruleset_orcus_export_import_export(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CHRONICLE_DATABASE_URL", f"sqlite:///{tmp_path / 'store.sqlite'}")
    runner = CliRunner()
    made = runner.invoke(cli, ["demo", "--ruleset", "orcus"])
    assert made.exit_code == 0, made.output
    cid = re.search(r"Demo campaign ([0-9a-f-]{36})", made.output).group(1)  # type: ignore[union-attr]
    first = tmp_path / "den.jsonl"
    assert runner.invoke(cli, ["export", cid, "--format", "jsonl", "-o", str(first)]).exit_code == 0
    imported = runner.invoke(cli, ["import", str(first)])
    assert imported.exit_code == 0, imported.output
    new = re.search(r"as campaign ([0-9a-f-]{36})", imported.output).group(1)  # type: ignore[union-attr]
    again = runner.invoke(cli, ["export", new, "--format", "jsonl"])
    assert again.exit_code == 0 and again.stdout == first.read_text(encoding="utf-8")
    page = runner.invoke(cli, ["export", new, "--format", "html"])
    assert page.exit_code == 0 and 'data-character="tam"' in page.stdout
