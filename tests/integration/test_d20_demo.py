"""``chronicle demo --ruleset d20``: the ambush at the ford (api/rulesets/d20_house/demo.py), its
numbers as RULES.md A3 works them, and its exports (Markdown, HTML, JSONL -> import -> JSONL)."""

from __future__ import annotations

import re
from pathlib import Path
from uuid import UUID

import pytest
from typer.testing import CliRunner

from api.cli.main import app as cli
from api.exports import service
from api.rulesets.d20_house.demo import ENCOUNTER
from api.service.application import ChronicleApplication
from api.service.demo import create_demo
from api.service.settings import Settings
from api.service.store import open_application
from tests.integration.test_import_roundtrip import round_trip


def position_of(app: ChronicleApplication, cid: UUID, fact_type: str, n: int = 0) -> int:
    return [e.seq for e in app.ledger(cid).entries if e.type == fact_type][n]


def test_the_demo_plays_the_house_rules_through(memory_app: ChronicleApplication) -> None:
    cid = create_demo(memory_app, "d20")
    app = memory_app
    assert app.ledger(cid).ruleset.id == "d20"
    view = app.view(cid)
    kara, tam, gnoll, ogre = (view.creature(c) for c in ("kara", "tam", "gnoll", "ogre"))
    assert kara is not None and tam is not None and gnoll is not None and ogre is not None
    # Kara: 62 - 6 - 48 (the critical without the overturned +2) - 1 (the minimum) = 7; her
    # Stamina back after the night's sleep.
    assert (kara["hp"], kara["S"], kara["B"], kara["life"]) == (7, 16, 3, "active")
    # Tam: 18 - 9 - 18 = -9, d% 43 and 88 fail: -11; Heal check 22 vs 21; a potion of 15: 4.
    assert (tam["hp"], tam["life"]) == (4, "active")
    # the gnoll: 0 (disabled), -1 (the strain), -8 (dying), d% 9 <= 12: stable
    assert (gnoll["hp"], gnoll["life"], gnoll["stable"]) == (-8, "stabilized", True)
    assert ogre["hp"] == 50
    encounter = view.encounter(ENCOUNTER)
    assert encounter is not None and (encounter["state"], encounter["round"]) == ("ended", 3)
    # The overturned ruling: the critical dealt 48, so no massive-damage save was owed.
    save = position_of(app, cid, "MassiveDamageSaveRolled")
    assert app.ledger(cid).orphans == {save: "Kara owes no massive-damage save for the attack at 20 (B-DH-1)"}
    # What the table believed then (recorded) and what is true now (corrected), at the save.
    then = app.creature_state(cid, "kara", save, "recorded")
    now = app.creature_state(cid, "kara", save, "corrected")
    assert (then["hp"], then["massive_damage_saves_owed"]) == (6, [])
    assert (now["hp"], now["massive_damage_saves_owed"]) == (8, [])


def test_the_demo_is_the_same_campaign_every_time(memory_app: ChronicleApplication) -> None:
    first, second = create_demo(memory_app, "d20"), create_demo(memory_app, "d20")
    for fmt in ("md", "html"):
        a = "".join(service.export(memory_app, first, fmt))
        b = "".join(service.export(memory_app, second, fmt))
        assert a.replace(str(first), "") == b.replace(str(second), "")


def test_the_demos_story_and_charts(memory_app: ChronicleApplication) -> None:
    cid = create_demo(memory_app, "d20")
    md = "".join(service.export(memory_app, cid, "md", encounter=ENCOUNTER))
    for line in (
        "vs AC 15 (flat-footed until its first turn: no Agility): a hit.",
        "Ogre rolls to confirm: total 20 vs AC 15: a critical hit.",
        "1 (weapon dice) + 1 (Strength) - 2 (disabled) (at least 1) (HP 8 to 7).",
        "The strain costs Gnoll 1 HP (HP 0 to -1).",
        "*The round is over: Tam and Gnoll must roll to stabilise (d%).*",
        "Tam rolls to stabilise after round 2: d% 88 against Stamina 12: Tam loses 1 HP (HP -10 to -11).",
        "Kara treats Tam (Heal check): 1d20 (18) = 18, total 22 vs DC 21 (10 + |HP|): Tam is stable.",
        "Kara attacks Ogre with longsword +1 (attack of opportunity)",
        "Kara takes 2 Stamina damage from the gnoll's venomed axe: 16 to 14; S 14, B 2, HP 56 unchanged.",
        "**ORPHANED** **#23** Kara saves against massive damage",
    ):
        assert line in md, line
    html = "".join(service.export(memory_app, cid, "html"))
    for who in ("kara", "tam"):
        chart = re.search(rf'<svg[^>]*data-character="{who}".*?</svg>', html, re.S)
        assert chart is not None
        assert all(f"<title>{t} at " in chart.group(0) for t in ("disabled", "dying", "dead"))
    tam = re.search(r'<svg[^>]*data-character="tam".*?</svg>', html, re.S)
    assert tam is not None and 'class="mark dying"' in tam.group(0)


def test_the_demo_moves_from_sqlite_to_postgresql(sqlite_store: Settings, postgres_store: Settings) -> None:
    lite, pg = open_application(sqlite_store), open_application(postgres_store)
    try:
        new, _ = round_trip(lite, create_demo(lite, "d20"), pg)
        assert list(pg.ledger(new).orphans) == [position_of(pg, new, "MassiveDamageSaveRolled")]
    finally:
        lite.close()
        pg.close()


def test_chronicle_demo_ruleset_d20_export_import_export(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CHRONICLE_DATABASE_URL", f"sqlite:///{tmp_path / 'store.sqlite'}")
    runner = CliRunner()
    made = runner.invoke(cli, ["demo", "--ruleset", "d20"])
    assert made.exit_code == 0, made.output
    cid = re.search(r"Demo campaign ([0-9a-f-]{36})", made.output).group(1)  # type: ignore[union-attr]
    first = tmp_path / "ford.jsonl"
    assert runner.invoke(cli, ["export", cid, "--format", "jsonl", "-o", str(first)]).exit_code == 0
    imported = runner.invoke(cli, ["import", str(first)])
    assert imported.exit_code == 0, imported.output
    new = re.search(r"as campaign ([0-9a-f-]{36})", imported.output).group(1)  # type: ignore[union-attr]
    again = runner.invoke(cli, ["export", new, "--format", "jsonl"])
    assert again.exit_code == 0 and again.stdout == first.read_text(encoding="utf-8")
    page = runner.invoke(cli, ["export", new, "--format", "html"])
    assert page.exit_code == 0 and 'data-character="kara"' in page.stdout
