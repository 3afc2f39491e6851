"""The demo campaign's Markdown and HTML exports, against golden files; streaming and parts.

Regenerate the golden files after an intended change with
``CHRONICLE_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/unit/test_export_golden.py``
and review the diff.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from uuid import UUID

import pytest

from api.exports import service
from api.rulesets.stellar_winds.demo import ENCOUNTER
from api.service.application import ChronicleApplication
from api.service.demo import create_demo
from domain.errors import DomainError
from tests.unit.conftest import memory_application

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
UPDATE = os.environ.get("CHRONICLE_UPDATE_GOLDEN", "") == "1"


@pytest.fixture(scope="module")
def demo() -> Iterator[tuple[ChronicleApplication, UUID]]:
    app = memory_application()
    try:
        yield app, create_demo(app)
    finally:
        app.close()


def _golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if UPDATE:
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"{path} is missing: run with CHRONICLE_UPDATE_GOLDEN=1 to create it"
    assert text == path.read_text(encoding="utf-8"), f"{name} differs from {path} (CHRONICLE_UPDATE_GOLDEN=1)"


@pytest.mark.parametrize("fmt", ["md", "html"])
def test_demo_export_matches_the_golden_file(demo: tuple[ChronicleApplication, UUID], fmt: str) -> None:
    app, cid = demo
    _golden(f"demo.{fmt}", "".join(service.export(app, cid, fmt)))  # type: ignore[arg-type]


def test_a_second_demo_exports_byte_identically(demo: tuple[ChronicleApplication, UUID]) -> None:
    app, cid = demo
    other = create_demo(app)
    for fmt in service.FORMATS:
        assert "".join(service.export(app, cid, fmt)) == "".join(service.export(app, other, fmt))


def test_the_story_shows_dice_breakdowns_and_every_correction(
    demo: tuple[ChronicleApplication, UUID],
) -> None:
    app, cid = demo
    md = "".join(service.export(app, cid, "md"))
    assert (
        "Traze hits Goblin Cutter with Burning Blast: 14 + 6 = 20 vs Reflex 14; 3d6 (4, 6, 2) + 5 = 17 fire, "
        "5 resisted: 12 damage (12 HP)"
    ) in md
    assert (
        "critically hits Traze with shortbow" in md
        and "12 wounding damage (12 wounds). Traze is dying." in md
    )
    assert "~~**#47** Mira takes 4 damage from falling debris.~~ *(Revoked by #67: No debris fell" in md
    assert "*(Amended by #68: The d8 showed a 3, not a 6.)*" in md
    assert "**ORPHANED** **#36** Goblin Cutter saves against e33" in md
    assert "Cites ruling r-flank, overturned by #66" in md
    assert "*Ongoing fire damage (e17) hurts Traze: 5 damage (5 HP).*" in md
    assert "### Surprise round" in md and "#### Goblin Cutter's turn" in md
    assert "**Summary of Ambush at the relay station**" in md
    assert str(cid) not in md


def test_exports_stream_in_small_chunks(demo: tuple[ChronicleApplication, UUID]) -> None:
    app, cid = demo
    for fmt in service.FORMATS:
        chunks = list(service.export(app, cid, fmt))
        assert len(chunks) > 70
        assert max(map(len, chunks)) < 16_000  # one line / one timeline at a time, never the whole file


def test_one_encounter_or_a_range(demo: tuple[ChronicleApplication, UUID]) -> None:
    app, cid = demo
    md = "".join(service.export(app, cid, "md", encounter=ENCOUNTER))
    assert "**#9**" in md and "**#63**" in md and "**#8**" not in md and "**#64**" not in md
    part = "".join(service.export(app, cid, "md", first=40, last=45))
    assert "(continued)" in part and "**#40**" in part and "**#45**" in part and "**#46**" not in part
    lines = "".join(service.export(app, cid, "jsonl", first=40, last=45)).splitlines()
    assert '"part":{"from":40,"to":45}' in lines[0] and len(lines) == 8
    with pytest.raises(DomainError) as err:
        list(service.export(app, cid, "md", encounter="nope"))
    assert err.value.code == "NOT_FOUND"
    with pytest.raises(DomainError):
        list(service.export(app, cid, "md", first=50, last=40))


def test_issue_14_the_story_and_the_state_agree_traze_is_back_and_standing(
    demo: tuple[ChronicleApplication, UUID],
) -> None:
    """Traze woke prone (he fell when he dropped): the story says he is back in the fight, and
    he stands up, so he is not left prone after the extended rest."""
    app, cid = demo
    md = "".join(service.export(app, cid, "md"))
    assert "Traze is back in the fight." in md and "Traze stands up." in md
    assert "prone" not in app.view(cid).state.creatures["traze"].conditions()
    assert "| Traze | 24/24 | 10/10 | 6/6 | active |" in md
