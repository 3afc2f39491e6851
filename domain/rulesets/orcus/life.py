"""Hit points, damage, healing and the life track: the A4.9 placeholder pack (B-OR-1).

The seed has no hit point chapter. Each rule below is the 4e placeholder of A4.9 behind its
``or.placeholder.*`` flag, so a table with the full Orcus text can switch it:

* :func:`modify`: rolled damage -> damage taken: never negative (OR-14, RULE), then
  vulnerability and resistance by type (``core.damage``; OR-16 ABSENT, the 4e placeholder);
* :func:`deliver`: temporary HP first, then HP (``or.placeholder.hit_points``: below 0, or
  stopping at 0), then the life state (:func:`settle`: ``or.placeholder.dying``: a hero at 0
  HP or below is dying and dies at minus its bloodied value; monsters, elites and bosses die
  at 0 or below);
* :func:`heal`: healing below 0 HP starts from 0 (``or.placeholder.heal_from_zero``), is capped
  at max HP and wakes a dying or stabilised hero.

Every function returns a breakdown for the outcome.
"""

from __future__ import annotations

from typing import Any

from domain.core import damage as core_damage
from domain.core import effects as core_effects
from domain.errors import RuleViolation
from domain.rulesets.orcus.state import Creature


def _values(c: Creature, key: str) -> dict[str, int]:
    sheet = c.resist if key == "resist" else c.vuln
    pairs = [*sheet.items(), *((v["type"], v["value"]) for _, v in core_effects.components(c, key))]
    return core_damage.highest(pairs)


def modify(c: Creature, raw: int, types: list[str]) -> tuple[int, list[dict[str, Any]]]:
    """The damage ``c`` takes from ``raw`` rolled damage of ``types``."""
    amount = max(0, raw)  # OR-14: "possible to deal 0 damage, but never negative damage"
    steps: list[dict[str, Any]] = [{"step": "rolled", "value": raw}]
    if raw < 0:
        steps.append({"step": "never negative (OR-14)", "value": 0})
    if amount > 0:
        vuln = core_damage.vulnerability(_values(c, "vuln"), types)
        res = core_damage.resistance(_values(c, "resist"), types)
        if vuln or res:
            amount = max(0, amount + vuln - res)
            if vuln:
                steps.append({"step": f"vulnerable {vuln}", "value": vuln})
            if res:
                steps.append({"step": f"resist {res}", "value": -res})
            steps.append({"step": "after resistance and vulnerability", "value": amount})
    return amount, steps


def deliver(state: Any, c: Creature, amount: int) -> dict[str, Any]:
    """Apply ``amount`` damage: temporary HP, then HP, then the life state (see the docstring)."""
    before_life, before_hp = c.life, c.hp
    temp = min(c.temp_hp, amount)
    c.temp_hp -= temp
    rest = amount - temp
    c.hp -= rest
    if state.flags["or.placeholder.hit_points"] == "floor_zero":
        c.hp = max(0, c.hp)
    if rest > 0 and c.life == "stabilized":
        c.life = "dying"  # 4e: damage makes a stabilised creature dying again
    settle(state, c)
    return {
        "amount": amount,
        "temp_hp_lost": temp,
        "hp_lost": before_hp - c.hp,
        "hp_before": before_hp,
        "hp_after": c.hp,
        "life_before": before_life,
        "life_after": c.life,
    }


def dies_at(state: Any, c: Creature) -> int | None:
    """The HP at or below which ``c`` is dead (None: only failed death saves kill it)."""
    flags = state.flags
    if flags["or.placeholder.dying"] == "dead_at_zero" or not c.is_hero:
        return 0
    if flags["or.placeholder.death_at_minus_bloodied"]:
        return -c.bloodied_value
    return None


def settle(state: Any, c: Creature) -> None:
    """The life state the HP give (A4.9 0 HP or below)."""
    if c.life == "dead":
        return
    threshold = dies_at(state, c)
    if threshold is not None and c.hp <= threshold:
        c.life = "dead"
    elif c.hp <= 0:
        if c.life == "active":
            c.life = "dying"
    elif c.life in ("dying", "stabilized"):
        c.life = "active"


def can_heal(c: Creature) -> None:
    """Not waivable: healing cannot help the dead (checked before anything changes)."""
    if c.life == "dead":
        raise RuleViolation(f"{c.name} is dead; healing cannot help", field="target", code="CREATURE_DEAD")


def heal(state: Any, c: Creature, amount: int) -> dict[str, Any]:
    """Healing through the one path (A4.9 Healing placeholder)."""
    can_heal(c)
    before_life, before_hp = c.life, c.hp
    raised = 0
    if c.hp < 0 and state.flags["or.placeholder.heal_from_zero"]:
        raised = -c.hp
        c.hp = 0
    healed = max(0, min(amount, c.max_hp - c.hp))
    c.hp += healed
    settle(state, c)
    return {
        "amount": amount,
        "raised_to_zero": raised,
        "hp_healed": healed,
        "hp_before": before_hp,
        "hp_after": c.hp,
        "life_before": before_life,
        "life_after": c.life,
    }
