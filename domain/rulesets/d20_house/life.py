"""Hit points and the life bands (RULES.md A3.4): the one place HP change.

* :func:`damage`: HP go down; a stable creature becomes dying again (B-DH-4); death latches
  below -S (DH-10, ruling 26).
* :func:`lose_hp`: HP lost without being damage (a failed stabilisation roll, DH-12).
* :func:`heal`: HP go up to the maximum; a dying creature healed even 1 point is stable
  (DH-12, B-DH-7) and wakes disabled at -B or better, fully functional at 1 or more.
* :func:`report`: the before / after numbers every outcome carries.
"""

from __future__ import annotations

from typing import Any

from domain.rulesets.d20_house.state import Creature, settle


def snapshot(c: Creature) -> dict[str, Any]:
    return {"hp": c.hp, "band": c.band, "stable": c.stable, "S": c.S, "B": c.B}


def report(before: dict[str, Any], c: Creature) -> dict[str, Any]:
    """``hp_before`` / ``hp_after``, ``band_before`` / ``band_after``, ``life_after``,
    ``stable``, and ``died`` (its cause) when this change killed it."""
    out: dict[str, Any] = {
        "hp_before": before["hp"],
        "hp_after": c.hp,
        "band_before": before["band"],
        "band_after": c.band,
        "life_after": c.life,
        "stable": c.stable,
    }
    if before["band"] != "dead" and c.dead_by is not None:
        out["died"] = c.dead_by
    return out


def damage(c: Creature, amount: int) -> dict[str, Any]:
    """Damage: HP down by ``amount``; any damage makes a stable creature dying again (B-DH-4)."""
    before = snapshot(c)
    c.hp -= amount
    if amount > 0:
        c.stable = False
    settle(c)
    return {"amount": amount, **report(before, c)}


def lose_hp(c: Creature, amount: int) -> dict[str, Any]:
    """HP lost that is not damage (a failed stabilisation roll)."""
    before = snapshot(c)
    c.hp -= amount
    settle(c)
    return {"lost": amount, **report(before, c)}


def heal(c: Creature, amount: int) -> dict[str, Any]:
    """Healing (DH-12, B-DH-7): up to max HP; a dying creature stops losing HP (stable)."""
    before = snapshot(c)
    was_dying = c.band == "dying"
    healed = max(0, min(amount, c.max_hp - c.hp))
    c.hp += healed
    if was_dying and amount > 0:
        c.stable = True  # "she stops losing hit points and becomes stable"
    settle(c)
    return {"amount": amount, "healed": healed, **report(before, c)}
