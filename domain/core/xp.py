"""Experience points and the level they earn: one implementation for every system that has XP.

RULES.md A4.2 gives the only XP table in the rules Chronicle has (Orcus, "Levels and Their
Benefits", levels 1-30). Adopted rulings 3, 9 and 22: a character's level is *derived* from its
total XP on its campaign's table, so a corrected award corrects the level; a campaign may set
its own table (B-X-3). XP above the last threshold is kept but earns nothing (B-OR-16).

A table is the list of cumulative XP needed to *be* each level, starting with 0 for level 1.
"""

from __future__ import annotations

from typing import Any

from domain.errors import InvalidInput

MAX_LEVEL = 30  # OR-2 / B-OR-16: levels run 1 to 30

# A4.2 "Levels and Their Benefits": cumulative XP to *be* each level 1..30 (cumulative(n+1) =
# cumulative(n) + XP to reach the next level, checked row by row in tests).
ORCUS_XP: list[int] = [
    0,
    1000,
    2250,
    3750,
    5500,
    7500,
    10000,
    13000,
    16500,
    20500,
    25500,
    31500,
    38500,
    46500,
    56500,
    68500,
    82500,
    98500,
    118500,
    142500,
    170500,
    202500,
    242500,
    290500,
    346500,
    410500,
    490500,
    586500,
    698500,
    826500,
]
XP_TABLES: dict[str, list[int]] = {"orcus": ORCUS_XP}
"""Named tables a campaign's ``xp_table`` flag may name instead of giving its own list."""


def level_for_xp(xp: int, table: list[int]) -> int:
    """The highest level whose threshold ``xp`` reaches (level 1 at least; capped by the table)."""
    level = 1
    for n, threshold in enumerate(table, start=1):
        if xp >= threshold:
            level = n
        else:
            break
    return level


def table_of(value: Any) -> list[int]:
    """The thresholds a flag value names: a table's name, or the list itself."""
    if isinstance(value, str):
        return XP_TABLES.get(value, ORCUS_XP)
    return list(value)


def threshold(level: int, table: list[int]) -> int:
    """The XP needed to be ``level`` (ruling 9: a character registered at level N without XP)."""
    if not 1 <= level <= len(table):
        raise InvalidInput(
            f"the campaign's XP table stops at level {len(table)}: give this character's XP", field="level"
        )
    return table[level - 1]


def check_table(name: str, value: Any) -> Any:
    """Validate an ``xp_table`` flag value: a known table's name, or a rising list from 0."""
    if isinstance(value, str) and value in XP_TABLES:
        return value
    if (
        isinstance(value, list)
        and value
        and value[0] == 0
        and len(value) <= MAX_LEVEL
        and all(isinstance(v, int) and not isinstance(v, bool) for v in value)
        and all(a < b for a, b in zip(value, value[1:], strict=False))
    ):
        return list(value)
    known = ", ".join(repr(k) for k in XP_TABLES)
    raise InvalidInput(
        f"flag {name} must be {known} or a rising list of XP thresholds starting at 0 (level 1), "
        f"at most {MAX_LEVEL} levels",
        field="value",
    )
