"""Every SW, B-SW, B-X and C1 id of RULES.md is cited by a Stellar Winds test or listed in
docs/rules-flags.md (the Stellar Winds part) as not done, with its reason (issue 14, "Done when")."""

from __future__ import annotations

import re
from pathlib import Path

HERE = Path(__file__).resolve().parent
TESTS = HERE.parent
DOCS = TESTS.parent / "docs" / "rules-flags.md"
RULES = TESTS.parent.parent / "shared" / "rules" / "RULES.md"

# RULES.md A1 numbers SW-1..SW-50, B-SW numbers B-SW-1..B-SW-32, B-X has B-X-1..B-X-6, C1 has C1.1, C1.2.
IDS = (
    [f"SW-{n}" for n in range(1, 51)]
    + [f"B-SW-{n}" for n in range(1, 33)]
    + [f"B-X-{n}" for n in range(1, 7)]
    + ["C1.1", "C1.2"]
)

# The other systems' tests live in their own folders and cite their own ids.
OTHER_SYSTEMS = {"d20", "orcus", "hero_surge"}
SECTION = "## Stellar Winds: rule ids not done, and why"


def _test_files() -> list[Path]:
    """Every test module outside the other systems' folders (Stellar Winds is the default ruleset,
    so its rules are also checked by the core tests), except this one."""
    files = []
    for path in sorted(TESTS.rglob("test_*.py")):
        if path.name == "test_sw_rule_ids.py" or OTHER_SYSTEMS & set(path.relative_to(TESTS).parts):
            continue
        files.append(path)
    return files


_CITE = re.compile(r"(?<![A-Za-z0-9])(?:(b[_-])?(sw|x)[_-](\d+)(?!\d)|(c1)\.([12])(?!\d))", re.IGNORECASE)


def cited_in_tests() -> set[str]:
    found: set[str] = set()
    for path in _test_files():
        for m in _CITE.finditer(path.read_text(encoding="utf-8")):
            if m.group(4):
                found.add(f"C1.{m.group(5)}")
            elif m.group(2).lower() == "x":
                if m.group(1):
                    found.add(f"B-X-{int(m.group(3))}")
            else:
                found.add(f"{'B-SW' if m.group(1) else 'SW'}-{int(m.group(3))}")
    return found


def documented() -> set[str]:
    table = DOCS.read_text(encoding="utf-8").split(SECTION, 1)[1].split("\n# ", 1)[0]
    return set(re.findall(r"\bB-SW-\d+\b|(?<![-\w])SW-\d+\b|\bB-X-\d+\b|\bC1\.[12]\b", table))


def test_the_ids_are_those_of_rules_md() -> None:
    """The list above is RULES.md's (when the spec is beside the repo, as in the team's checkout)."""
    if not RULES.exists():  # pragma: no cover - a checkout without ../shared
        return
    text = RULES.read_text(encoding="utf-8")
    found = (
        set(re.findall(r"\bB-SW-\d+\b", text))
        | set(re.findall(r"(?<![-\w])SW-\d+\b", text))
        | set(re.findall(r"\bB-X-\d+\b", text))
        | set(re.findall(r"\bC1\.[12]\b", text))
    )
    assert found == set(IDS)


def test_every_rule_id_is_tested_or_documented() -> None:
    missing = [i for i in IDS if i not in cited_in_tests() and i not in documented()]
    assert not missing, f"neither tested nor documented: {missing}"
