"""The reference docs list what the code has (so they cannot drift)."""

from __future__ import annotations

import json
from pathlib import Path

from domain.rulesets.hero_surge.flags import FLAGS as HS_FLAGS
from domain.rulesets.stellar_winds.flags import FLAGS

DOCS = Path(__file__).resolve().parents[2] / "docs"
HS_HEADING = "# Hero's-surge rules flags"


def test_every_rules_flag_is_documented_with_its_default() -> None:
    text = (DOCS / "rules-flags.md").read_text(encoding="utf-8")
    for name, flag in FLAGS.items():
        assert f"| `{name}` | `{json.dumps(flag.default)}` |" in text, name


def test_every_hero_surge_flag_is_documented_under_its_heading_with_default_and_reference() -> None:
    text = (DOCS / "rules-flags.md").read_text(encoding="utf-8")
    assert HS_HEADING in text
    section = text.split(HS_HEADING, 1)[1]
    for name, flag in HS_FLAGS.items():
        assert f"| `{name}` | `{json.dumps(flag.default)}` | {flag.ref} | {flag.doc} |" in section, name
