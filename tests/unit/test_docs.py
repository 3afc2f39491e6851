"""The reference docs list what the code has (so they cannot drift)."""

from __future__ import annotations

import json
from pathlib import Path

from domain.rulesets.stellar_winds.flags import FLAGS

DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_every_rules_flag_is_documented_with_its_default() -> None:
    text = (DOCS / "rules-flags.md").read_text(encoding="utf-8")
    for name, flag in FLAGS.items():
        assert f"| `{name}` | `{json.dumps(flag.default)}` |" in text, name
