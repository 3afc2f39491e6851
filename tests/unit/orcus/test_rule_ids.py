"""Every OR, B-OR and C4 id of RULES.md is cited by an Orcus test or listed in docs/rules-flags.md
(the Orcus part) as not done or replaced, with its reason (issue 16, "Done when")."""

from __future__ import annotations

import re
from pathlib import Path

HERE = Path(__file__).resolve().parent
TESTS = HERE.parents[1]
DOCS = TESTS.parent / "docs" / "rules-flags.md"
RULES = TESTS.parent.parent / "shared" / "rules" / "RULES.md"

# RULES.md A4 numbers OR-1..OR-19, B-OR numbers B-OR-1..B-OR-17, C4 has C4.1 and C4.2.
IDS = [f"OR-{n}" for n in range(1, 20)] + [f"B-OR-{n}" for n in range(1, 18)] + ["C4.1", "C4.2"]


def _test_files() -> list[Path]:
    """The Orcus unit tests here and the Orcus tests through GraphQL, the demo and the exports."""
    own = [p for p in HERE.glob("test_*.py") if p.name != "test_rule_ids.py"]
    return own + sorted((TESTS / "integration").glob("test_orcus_*.py"))


def cited_in_tests() -> set[str]:
    found: set[str] = set()
    for path in _test_files():
        text = path.read_text(encoding="utf-8")
        for m in re.finditer(r"(?<![A-Za-z])(b[_-])?or[_-](\d+)(?!\d)", text, re.IGNORECASE):
            found.add(f"{'B-OR' if m.group(1) else 'OR'}-{int(m.group(2))}")
        found.update(re.findall(r"\bC4\.[12]\b", text))
    return found


def documented() -> set[str]:
    section = (
        DOCS.read_text(encoding="utf-8").split("# Orcus flags (ruleset `orcus`)", 1)[1].split("\n# ", 1)[0]
    )
    table = section.split("## Orcus: rule ids not done in this ruleset, and why", 1)[1]
    return set(re.findall(r"\b(?:B-)?OR-\d+\b|\bC4\.[12]\b", table))


def test_the_ids_are_those_of_rules_md() -> None:
    """The list above is RULES.md's (when the spec is beside the repo, as in the team's checkout)."""
    if not RULES.exists():  # pragma: no cover - a checkout without ../shared
        return
    text = RULES.read_text(encoding="utf-8")
    found = (
        set(re.findall(r"\bB-OR-\d+\b", text))
        | {m for m in re.findall(r"(?<![-\w])OR-\d+\b", text)}
        | set(re.findall(r"\bC4\.[12]\b", text))
    )
    assert found == set(IDS)


def test_every_rule_id_is_tested_or_documented() -> None:
    missing = [i for i in IDS if i not in cited_in_tests() and i not in documented()]
    assert not missing, f"neither tested nor documented: {missing}"
