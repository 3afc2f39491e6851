"""Damage, healing and the life track: the one implementation of each.

* ``modify`` is the damage pipeline of SW-30 (halvings, then resistance and
  vulnerability per B-SW-14 and adopted ruling 15);
* ``deliver`` puts the result through the defence layers of SW-32 / B-SW-1..5
  (temp HP, HP, wounds; wounding damage skips HP) and moves the life state
  (dying, dead, knocked out: SW-41, SW-43, B-SW-11, B-SW-13, rulings 8, 10, 14);
* ``heal`` is the healing path of SW-35, SW-40 and B-SW-9.

Every function returns a breakdown so the log and the API can show each step.
"""

from __future__ import annotations

from typing import Any

from domain.core import damage as core_damage
from domain.errors import RuleViolation
from domain.rulesets.stellar_winds import effects
from domain.rulesets.stellar_winds.state import LIFE_CONDITIONS, Creature, divide
from domain.rulesets.stellar_winds.tables import CONDITIONS, HALF_DAMAGE_TAKEN


def _components(c: Creature, key: str) -> list[dict[str, Any]]:
    return [
        comp[key] for eff in c.effects if not eff.get("pending") for comp in eff["components"] if key in comp
    ]


def resistance(
    c: Creature, types: list[str], flags: dict[str, Any] | None = None, conditions: set[str] | None = None
) -> int:
    """The resistance that applies to damage of these types (B-SW-14, SW-28; ``core.damage``):
    per type the highest (``sw.resist_stacking``: or the sum); for several types the lowest, 0
    unless each is resisted (``sw.multi_type_resist``: or the highest of them). ``conditions``:
    ``c.conditions()`` when the caller has them already."""
    if not c.resist and not c.effects and c.life not in LIFE_CONDITIONS:
        return 0  # nothing to resist with (what the rules below give for no pairs at all)
    flags = flags or {}
    conds = c.conditions() if conditions is None else conditions
    pairs = [
        *c.resist.items(),
        *(("all", CONDITIONS[n].resist_all) for n in conds if n in CONDITIONS),
        *((r["type"], r["value"]) for r in _components(c, "resist")),
    ]
    if flags.get("sw.resist_stacking", "highest") == "sum":
        values: dict[str, int] = {}
        for kind, value in pairs:
            values[kind] = values.get(kind, 0) + max(0, int(value))
    else:
        values = core_damage.highest(pairs)
    if flags.get("sw.multi_type_resist", "lowest_if_all") == "highest" and types:
        return max([int(values.get("all", 0)), *(int(values.get(t, 0)) for t in types)])
    return core_damage.resistance(values, types)


def vulnerability(c: Creature, types: list[str]) -> int:
    """The highest vulnerability among the damage's types, once (adopted ruling 15; ``core.damage``)."""
    if not c.vuln and not c.effects:
        return 0  # no vulnerability at all (what the rule below gives for no pairs)
    pairs = [*c.vuln.items(), *((v["type"], v["value"]) for v in _components(c, "vuln"))]
    return core_damage.vulnerability(core_damage.highest(pairs), types)


def modify(
    target: Creature,
    raw: int,
    types: list[str],
    *,
    half: bool = False,
    weakened: bool = False,
    ongoing: bool = False,
    flags: dict[str, Any] | None = None,
) -> tuple[int, list[dict[str, Any]]]:
    """SW-30: the damage a target actually takes from ``raw`` rolled damage."""
    flags = flags or {}
    steps: list[dict[str, Any]] = [{"step": "rolled", "value": raw}]
    amount = max(0, raw)
    if half:
        amount = divide(amount, 2, flags)  # B-X-6
        steps.append({"step": "half damage (miss)", "value": amount})
    if weakened and not ongoing:
        amount = divide(amount, 2, flags)
        steps.append({"step": "attacker weakened: half", "value": amount})
    conds = target.conditions()
    halving = sorted(conds & HALF_DAMAGE_TAKEN) if conds else None
    if halving:
        amount = divide(amount, 2, flags)  # each halving source applies once (SW-30)
        steps.append({"step": f"target {', '.join(halving)}: half", "value": amount})
    # SW-30 step 5 applies to every total, 0 included (a negative roll became 0 in step 1):
    # 1d4-5 cold against vulnerable cold 5 deals 5
    vuln = vulnerability(target, types)
    res = resistance(target, types, flags, conds)
    if vuln or res:
        amount = max(0, amount + vuln - res)
        if vuln:
            steps.append({"step": f"vulnerable {vuln}", "value": vuln})
        if res:
            steps.append({"step": f"resist {res}", "value": -res})
        steps.append({"step": "after resistance and vulnerability", "value": amount})
    return amount, steps


def _dies_at(c: Creature, flags: dict[str, Any]) -> int:
    if c.makes_death_saves:
        return int(flags["sw.death_wounds_threshold"])
    return int(flags["sw.monster_death_at_wounds"])


def deliver(
    state: Any,
    c: Creature,
    amount: int,
    *,
    wounding: bool = False,
    nonlethal: bool = False,
) -> dict[str, Any]:
    """SW-32: apply ``amount`` to the layers and move the life state."""
    flags = state.flags
    before = c.life
    temp = 0
    if amount and (not wounding or flags["sw.wounding_hits_temp_hp_first"]):
        temp = min(c.temp_hp, amount)
        c.temp_hp -= temp
    rest = amount - temp
    hp_lost = wounds_lost = 0
    no_wound_track = not c.is_pc and not flags["sw.monsters_have_wounds"]
    if no_wound_track:
        wounding = False  # B-SW-5 (8): a creature without a wound track takes wounding damage as HP
    if rest:
        if wounding or c.life == "dying" or c.life == "stabilized" or c.life == "knocked_out":
            wounds_lost = rest  # ruling 10: while dying, damage after temp HP goes to wounds
        else:
            hp_lost = min(c.hp, rest)
            c.hp -= hp_lost
            # SW-32: at 0 HP all ordinary damage reduces wounds; B-SW-2's flag governs only the
            # excess of the instance that empties HP
            if flags["sw.damage_layering"] == "cascade" and (
                flags["sw.hp_overflow_to_wounds"] or hp_lost == 0
            ):
                wounds_lost = rest - hp_lost
        if wounds_lost and no_wound_track:
            wounds_lost = 0
        c.wounds -= wounds_lost
    took = amount > 0
    if took and c.life in ("knocked_out", "stabilized"):
        c.life = "dying"  # ruling 14 / B-SW-10: damage ends the protection
    _settle(state, c, nonlethal=nonlethal and before not in ("dying", "knocked_out", "stabilized", "dead"))
    if not c.is_pc and not flags["sw.monsters_have_wounds"] and c.hp == 0 and c.life == "active":
        c.life = "dead"
    return {
        "amount": amount,
        "temp_hp_lost": temp,
        "hp_lost": hp_lost,
        "wounds_lost": wounds_lost,
        "wounding": wounding,
        "life_before": before,
        "life_after": c.life,
    }


def _settle(state: Any, c: Creature, *, nonlethal: bool = False) -> None:
    """Derive the life state from the wound track (SW-41, SW-43, B-SW-11, B-SW-13)."""
    flags = state.flags
    if c.life == "dead":
        return
    if c.wounds > 0:
        if c.life == "dying":
            c.life = "active"
        return
    if nonlethal:
        c.wounds = 0  # B-SW-11: frozen at 0, no death saves, helpless
        c.life = "knocked_out"
        _fall_prone(state, c)  # A1.10 Unconscious: falls prone (and stays prone when it wakes)
        return
    if c.wounds <= _dies_at(c, flags):
        c.life = "dead"
    elif c.life in ("active", "dying"):
        c.life = "dying"
    if c.life == "dead" or c.life == "dying":
        _fall_prone(state, c)


def _fall_prone(state: Any, c: Creature) -> None:
    """An unconscious creature falls prone (A1.10 Unconscious); the rule lives in ``effects``."""
    effects.fall_prone(state, c)


def can_heal(c: Creature) -> None:
    """Healing cannot help the dead. Not waivable: callers check it before they change anything."""
    if c.life == "dead":
        raise RuleViolation(f"{c.name} is dead; healing cannot help", field="target", code="CREATURE_DEAD")


def heal(state: Any, c: Creature, amount: int, *, magical: bool) -> dict[str, Any]:
    """SW-35, SW-40, B-SW-9: healing through the one path."""
    flags = state.flags
    can_heal(c)
    before = c.life
    wounds_set = 0
    if c.wounds <= 0 or c.life in ("dying", "stabilized", "knocked_out"):
        floor = int(flags["sw.dying_heal_sets_wounds_to"])
        if c.wounds < floor:
            wounds_set = floor - c.wounds
            c.wounds = floor
    wounds_healed = 0
    if magical and flags["sw.magic_heals_wounds_first"] and c.wounds < c.max_wounds(flags):
        wounds_healed = min(amount, c.max_wounds(flags) - c.wounds)
        c.wounds += wounds_healed
    hp_healed = min(max(0, amount - wounds_healed), c.max_hp - c.hp)
    c.hp += hp_healed
    if c.wounds > 0 and c.life in ("dying", "stabilized", "knocked_out"):
        c.life = "active"  # conscious, still prone (SW-40)
    return {
        "amount": amount,
        "magical": magical,
        "wounds_raised_to_conscious": wounds_set,
        "wounds_healed": wounds_healed,
        "hp_healed": hp_healed,
        "life_before": before,
        "life_after": c.life,
    }
