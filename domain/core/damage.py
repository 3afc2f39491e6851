"""Damage arithmetic every 4e-derived system shares: resistance and vulnerability by type.

A ruleset gathers what a creature has (its sheet, its effects, its conditions) as
``(damage type, value)`` pairs, where the type ``"all"`` counts for every type, and asks:

* :func:`resistance`: per type only the highest resistance counts; damage of several types is
  resisted by the lowest of its types' resistances, and not at all unless every one of its
  types is resisted (RULES.md B-SW-14, the 4e rule, also the Orcus placeholder of A4.9);
  untyped damage is resisted only by a resistance to all damage;
* :func:`vulnerability`: the highest vulnerability among the damage's types applies, once
  (adopted ruling 15).

Pure integer arithmetic; values are never negative.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

ALL = "all"


def highest(pairs: Iterable[tuple[str, int]]) -> dict[str, int]:
    """Collapse ``(type, value)`` pairs to the highest value of each type."""
    out: dict[str, int] = {}
    for kind, value in pairs:
        if value > out.get(kind, 0):
            out[kind] = int(value)
    return out


def resistance(values: Mapping[str, int], types: Sequence[str]) -> int:
    """The resistance that applies to damage of ``types`` (see the module docstring)."""
    to_all = int(values.get(ALL, 0))
    if not types:
        return to_all
    per_type = [max(int(values.get(t, 0)), to_all) for t in types]
    return min(per_type) if all(v > 0 for v in per_type) else 0


def vulnerability(values: Mapping[str, int], types: Sequence[str]) -> int:
    """The highest vulnerability among the damage's types (or to all damage), applied once."""
    return max([int(values.get(ALL, 0)), *(int(values.get(t, 0)) for t in types)])
