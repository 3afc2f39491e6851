"""The reference docs list what the code has (so they cannot drift)."""

from __future__ import annotations

import json
from pathlib import Path

from domain.rulesets.d20_house import ERROR_CODES as D20_CODES
from domain.rulesets.d20_house.flags import FLAGS as D20_FLAGS
from domain.rulesets.hero_surge import ERROR_CODES as HS_CODES
from domain.rulesets.hero_surge.flags import FLAGS as HS_FLAGS
from domain.rulesets.orcus import ERROR_CODES as ORCUS_CODES
from domain.rulesets.orcus.flags import FLAGS as ORCUS_FLAGS
from domain.rulesets.stellar_winds.flags import FLAGS

DOCS = Path(__file__).resolve().parents[2] / "docs"
D20_HEADING = "# d20 house rules flags (ruleset `d20`)"
HS_HEADING = "# Hero's-surge rules flags (ruleset `hero-surge`)"


def _section(heading: str) -> str:
    """The text under a top-level heading of rules-flags.md, up to the next one."""
    text = (DOCS / "rules-flags.md").read_text(encoding="utf-8")
    assert heading in text
    return text.split(heading, 1)[1].split("\n# ", 1)[0]


ORCUS_HEADING = "# Orcus flags (ruleset `orcus`)"


def test_every_rules_flag_is_documented_with_its_default() -> None:
    text = (DOCS / "rules-flags.md").read_text(encoding="utf-8")
    for name, flag in FLAGS.items():
        assert f"| `{name}` | `{json.dumps(flag.default)}` |" in text, name


def test_every_d20_flag_is_documented_under_its_system_with_its_default_and_reference() -> None:
    d20 = _section(D20_HEADING)
    for name, flag in D20_FLAGS.items():
        assert f"| `{name}` | `{json.dumps(flag.default)}` | {flag.ref} |" in d20, name


def test_every_d20_error_code_is_documented() -> None:
    text = (DOCS / "errors.md").read_text(encoding="utf-8")
    for code in D20_CODES:
        assert f"| `{code}` |" in text, code


def test_every_hero_surge_flag_is_documented_under_its_system_with_default_reference_and_meaning() -> None:
    hs = _section(HS_HEADING)
    for name, flag in HS_FLAGS.items():
        assert f"| `{name}` | `{json.dumps(flag.default)}` | {flag.ref} | {flag.doc} |" in hs, name


def test_every_hero_surge_error_code_is_documented() -> None:
    text = (DOCS / "errors.md").read_text(encoding="utf-8")
    for code in HS_CODES:
        assert f"| `{code}` |" in text, code


def test_every_orcus_flag_is_documented_under_its_system_with_its_default_and_reference() -> None:
    text = (DOCS / "rules-flags.md").read_text(encoding="utf-8")
    assert ORCUS_HEADING in text
    orcus = _section(ORCUS_HEADING)
    for name, flag in ORCUS_FLAGS.items():
        assert f"| `{name}` | `{json.dumps(flag.default)}` | {flag.ref} | {flag.doc} |" in orcus, name


def test_every_orcus_error_code_is_documented() -> None:
    text = (DOCS / "errors.md").read_text(encoding="utf-8")
    for code in ORCUS_CODES:
        assert f"| `{code}` |" in text, code
