"""Every HS, B-HS and C2 id of RULES.md is cited by a test here or in the hero's-surge integration
tests (GraphQL, demo, exports), or listed in docs/rules-flags.md (hero's-surge part) as not done or
adopted as written, with its reason (issue 18)."""

from __future__ import annotations

import re
from pathlib import Path

HERE = Path(__file__).resolve().parent
DOCS = HERE.parents[2] / "docs" / "rules-flags.md"

# RULES.md A2 numbers HS-1..HS-17, B-HS numbers B-HS-1..B-HS-24, C2 has C2.1 and C2.2.
IDS = [f"HS-{n}" for n in range(1, 18)] + [f"B-HS-{n}" for n in range(1, 25)] + ["C2.1", "C2.2"]


def _cited_in_tests() -> set[str]:
    found: set[str] = set()
    played = sorted(HERE.parents[1].joinpath("integration").glob("test_hero_surge_*.py"))
    for path in [*HERE.glob("test_*.py"), *played]:
        if path.name == "test_rule_ids.py":
            continue
        text = path.read_text(encoding="utf-8")
        for m in re.finditer(r"(?<![A-Za-z])(b[_-])?hs[_-]?(\d+)(?!\d)", text, re.IGNORECASE):
            found.add(f"{'B-HS' if m.group(1) else 'HS'}-{int(m.group(2))}")
        found.update(re.findall(r"\bC2\.[12]\b", text))
    return found


def test_every_rule_id_is_tested_or_documented() -> None:
    section = DOCS.read_text(encoding="utf-8").split("# Hero's-surge rules flags", 1)[1].split("\n# ", 1)[0]
    documented = set(re.findall(r"\b(?:B-)?HS-\d+\b|\bC2\.[12]\b", section))
    missing = [i for i in IDS if i not in _cited_in_tests() and i not in documented]
    assert not missing, f"neither tested nor documented: {missing}"
