"""Orcus attack resolution (RULES.md A4.5-A4.7, B-OR-4, B-OR-5): one fact per attack.

``AttackMade`` records the power as declared, each target's d20 as it fell (or that the target
chose to be hit, OR-10), the A4.6 circumstances declared for it (each may cite a ruling) and
other modifiers, the damage dice rolled once for every target (OR-13, OR-14) and, per target,
the critical hit bonus damage (B-OR-5). The fold derives the rest and returns its breakdown:

* the attack total: attack bonus, proficiency (OR-10), every A4.6 row that applies (declared,
  or read from the creatures' conditions: off-guard target, prone or restrained attacker; each
  row once; a row declared for an origin it does not apply to is ignored and the outcome says
  why, ruling 17), effects, declared modifiers;
* hit or miss: a natural 20 is a critical hit and always hits, even if the total would miss
  (OR-11, B-OR-4); a natural 1 always misses; otherwise the total must reach the defense; an
  attack with no roll (automatic, or the target chose to be hit) hits and cannot crit or fumble;
* damage: a critical hit deals the *maximum* of the whole damage expression, dice and modifiers
  (OR-11, B-OR-5), plus that target's bonus damage, rolled and not maximised; a hit deals the
  rolled damage; a miss deals half only if the power says so; never negative (OR-14); then
  types, resistance and vulnerability and the HP placeholder (``life``);
* Hit, Miss and Effect riders (OR-12) put their effects on the target;
* a power from the attacker's sheet (``power.power_id``) is expended (OR-9).
"""

from __future__ import annotations

from typing import Any

from domain import dice
from domain.core.rules import declared_modifiers, owned, require
from domain.errors import InvalidInput
from domain.rulesets.orcus import effects, life
from domain.rulesets.orcus.rules import check_usable, expend, not_dead
from domain.rulesets.orcus.state import Creature, OrcusState
from domain.rulesets.orcus.tables import (
    ATTACK_MODIFIERS,
    CONDITIONS,
    CRIT_NATURAL,
    DEFENSE_NAMES,
    FUMBLE_NATURAL,
    ORIGINS,
)

POWER_KEYS = (
    "name",
    "power_id",
    "kind",
    "defense",
    "attack_bonus",
    "proficiency",
    "damage",
    "weapon",
    "damage_types",
    "miss",
    "effects",
    "auto_hit",
)


def _int(power: dict[str, Any], key: str) -> int:
    v: int = power.get(key, 0)
    if isinstance(v, bool) or not isinstance(v, int) or abs(v) > 1000:
        raise InvalidInput(f"power.{key} must be a whole number", field=f"power.{key}")
    return v


def check_power(state: OrcusState, power: dict[str, Any]) -> dict[str, Any]:
    """The declared power with defaults (its effects checked by ``effects.check_spec``)."""
    unknown = set(power) - set(POWER_KEYS)
    if unknown:
        raise InvalidInput(f"power: unknown field(s) {', '.join(sorted(unknown))}", field="power")
    out = {
        "name": str(power.get("name") or "attack"),
        "power_id": power.get("power_id"),
        "kind": power.get("kind"),
        "defense": power.get("defense"),
        "attack_bonus": _int(power, "attack_bonus"),
        "proficiency": _int(power, "proficiency"),
        "damage": power.get("damage"),
        "weapon": power.get("weapon"),
        "damage_types": effects.check_types(state, power.get("damage_types", []), "power.damage_types"),
        "miss": power.get("miss", "none"),
        "auto_hit": power.get("auto_hit", False),
    }
    if out["kind"] not in ORIGINS:
        raise InvalidInput(f"power.kind must be one of {', '.join(ORIGINS)} (A4 origins)", field="power.kind")
    if out["defense"] not in DEFENSE_NAMES:
        raise InvalidInput("power.defense must be ac, fort, ref or will", field="power.defense")
    if out["miss"] not in ("none", "half"):
        raise InvalidInput("power.miss must be none or half", field="power.miss")
    if not isinstance(out["auto_hit"], bool):
        raise InvalidInput("power.auto_hit must be true or false", field="power.auto_hit")
    if out["power_id"] is not None and not isinstance(out["power_id"], str):
        raise InvalidInput("power.power_id names a power on the attacker's sheet", field="power.power_id")
    if out["damage"] is not None:
        if not isinstance(out["damage"], str):
            raise InvalidInput("power.damage is a dice expression, e.g. '2dW+4'", field="power.damage")
        dice.parse(out["damage"], weapon=out["weapon"])
    specs = power.get("effects", [])
    if not isinstance(specs, list):
        raise InvalidInput("power.effects must be a list", field="power.effects")
    out["effects"] = [effects.check_spec(s, state, "power.effects") for s in specs]
    return out


def _same_dice(roll: dict[str, Any], expression: str, weapon: str | None) -> bool:
    """Whether a damage roll is the power's expression (weapon dice expanded, OR-15)."""
    plan = dice.parse(expression, weapon=weapon)
    if len(plan) != len(roll["terms"]):
        return False
    for planned, got in zip(plan, roll["terms"], strict=True):
        if "const" in planned:
            if got.get("const") != planned["const"]:
                return False
        elif (
            "const" in got
            or got["sides"] != planned["sides"]
            or len(got["faces"]) != planned["count"]
            or got["sign"] != planned["sign"]
            or got.get("keep") != planned.get("keep")
        ):
            return False
    return True


def _rows(
    entry: dict[str, Any], attacker: Creature, target: Creature, kind: str, mode: str, ctx: Any
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The A4.6 rows that apply to this target (each once, the stronger of two that exclude each
    other), and the declared rows ignored with the reason (ruling 17)."""
    chosen: dict[str, str] = {}  # row -> why it applies
    ignored: list[dict[str, Any]] = []
    for item in entry.get("circumstances", []):
        name, ruling = (item, None) if isinstance(item, str) else (item.get("name"), item.get("ruling"))
        row = ATTACK_MODIFIERS.get(name) if isinstance(name, str) else None
        if row is None:
            raise InvalidInput(
                f"unknown circumstance {name!r}; the A4.6 rows: {', '.join(ATTACK_MODIFIERS)}",
                field="targets.circumstances",
            )
        if ruling is not None and not ctx.ruling_holds(ruling):
            ignored.append({"circumstance": name, "why": f"ruling {ruling} does not hold"})
            continue
        if kind not in row.kinds:
            ignored.append(
                {"circumstance": name, "why": f"{row.label} applies only to {' or '.join(row.kinds)} attacks"}
            )
            continue
        chosen[name] = f"ruling {ruling}" if ruling else "declared"
    tconds, aconds = target.conditions(mode), attacker.conditions(mode)
    table = CONDITIONS[mode]
    for name, row in ATTACK_MODIFIERS.items():
        if name in chosen:
            continue
        if row.target_condition and row.target_condition in tconds:
            chosen[name] = f"target {row.target_condition.replace('_', '-')}"
        elif row.attacker_condition and row.attacker_condition in aconds:
            chosen[name] = f"attacker {row.attacker_condition}"
    # the 4e placeholder conditions: what grants off-guard, what blinds the attacker (A4.9)
    if "target_off_guard" not in chosen:
        granting = sorted(
            n
            for n in tconds
            if n in table
            and (table[n].grants_off_guard or (table[n].grants_off_guard_melee and kind == "melee"))
        )
        if granting:
            chosen["target_off_guard"] = f"target {', '.join(granting)}"
    if kind in ATTACK_MODIFIERS["total_concealment"].kinds and "total_concealment" not in chosen:
        blind = sorted(n for n in aconds if n in table and table[n].blinds)
        if blind:
            chosen["total_concealment"] = f"attacker {', '.join(blind)}"
    for name in list(chosen):
        for other in ATTACK_MODIFIERS[name].excludes:
            if other in chosen and name in chosen:
                weaker = (
                    name
                    if abs(ATTACK_MODIFIERS[name].modifier) < abs(ATTACK_MODIFIERS[other].modifier)
                    else other
                )
                ignored.append({"circumstance": weaker, "why": "does not stack with the stronger row"})
                del chosen[weaker]
    parts = [
        {
            "source": ATTACK_MODIFIERS[name].label,
            "value": ATTACK_MODIFIERS[name].modifier,
            "why": why,
            "row": name,
        }
        for name, why in chosen.items()
    ]
    return parts, ignored


def defense_of(target: Creature, defense: str, mode: str) -> tuple[int, list[dict[str, Any]]]:
    """A target's defense with its modifiers (effects; 4e placeholder conditions)."""
    parts: list[dict[str, Any]] = [
        {"source": f"{DEFENSE_NAMES[defense]} (sheet)", "value": target.defenses[defense]}
    ]
    table = CONDITIONS[mode]
    for cond in sorted(target.conditions(mode)):
        spec = table.get(cond)
        if spec and spec.defense_mod:
            parts.append({"source": cond, "value": spec.defense_mod})
    parts.extend(effects.defense_mods(target, defense))
    return sum(int(x["value"]) for x in parts), parts


def _overridden(ctx: Any, target: str, i: int) -> dict[str, bool]:
    out = {}
    for key in ("hit", "crit"):
        for name in (f"{key}:{target}", f"{key}:{i}", key):
            if name in ctx.overrides:
                out[key] = bool(ctx.overrides[name])
                break
    return out


def attack_made(state: OrcusState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """OR-10..OR-15, A4.6, B-OR-4, B-OR-5 (see the module docstring)."""
    power = check_power(state, p["power"])
    kind, mode = power["kind"], state.flags["or.placeholder.conditions"]
    attacker = owned(state, p["attacker"], "attacker")
    not_dead(attacker, ctx, "attacker")
    require(attacker.conscious, f"{attacker.name} is not conscious", "NOT_CONSCIOUS", ctx, "attacker")
    if power["power_id"] is not None:
        check_usable(attacker, power["power_id"], ctx)
    ids = [t["target"] for t in p["targets"]]
    if len(set(ids)) != len(ids):
        raise InvalidInput("a creature is affected only once by one attack (OR-13)", field="targets")
    for spec in power["effects"]:
        effects.needs_user(spec, attacker.id, state, "power.effects")
    expression = power["damage"] or (p["damage"]["expression"] if p["damage"] else None)
    if (
        p["damage"] is not None
        and power["damage"] is not None
        and not _same_dice(p["damage"], power["damage"], power["weapon"])
    ):
        raise InvalidInput(
            f"the damage roll is not the power's {power['damage']!r} (weapon dice expanded, OR-15)",
            field="damage",
        )
    plans = []
    for i, entry in enumerate(p["targets"]):
        target = owned(state, entry["target"], "targets.target")
        not_dead(target, ctx, "targets.target")
        res: dict[str, Any] = {"target": target.id}
        if power["auto_hit"] or entry.get("chose_to_be_hit"):
            if entry.get("roll") is not None:
                raise InvalidInput("an automatic hit has no attack roll", field="targets.roll")
            hit, crit = True, False  # B-OR-4: no roll, no critical hit or fumble
            res["automatic"] = "chose to be hit (OR-10)" if entry.get("chose_to_be_hit") else "automatic hit"
        else:
            roll = entry.get("roll")
            if roll is None:
                raise InvalidInput(
                    f"the attack on {target.name} needs its d20 roll (OR-10)", field="targets.roll"
                )
            natural = dice.natural(roll) or 0
            parts: list[dict[str, Any]] = [
                {"source": "d20", "value": dice.roll_total(roll)},
                {"source": "attack bonus", "value": power["attack_bonus"]},
            ]
            if power["proficiency"]:
                parts.append({"source": "proficiency", "value": power["proficiency"]})
            rows, ignored = _rows(entry, attacker, target, kind, mode, ctx)
            parts += rows
            parts += effects.attack_mods(attacker)
            parts += declared_modifiers(entry.get("modifiers"), ctx, "targets.modifiers")
            total = sum(int(x["value"]) for x in parts)
            defense, defense_parts = defense_of(target, power["defense"], mode)
            crit = natural == CRIT_NATURAL  # OR-11 / B-OR-4: always, whatever the total
            hit = crit or (natural != FUMBLE_NATURAL and total >= defense)
            res.update(
                natural=natural,
                attack_total=total,
                attack_parts=parts,
                defense=power["defense"],
                defense_value=defense,
                defense_parts=defense_parts,
            )
            if natural == FUMBLE_NATURAL:
                res["fumble"] = True
            if ignored:
                res["ignored"] = ignored
        over = _overridden(ctx, target.id, i)
        hit = over.get("hit", hit)
        crit = over.get("crit", crit) and hit
        res.update(hit=hit, crit=crit)
        if over:
            res["overridden"] = over
        if expression is not None and (hit or power["miss"] == "half"):
            if not crit and p["damage"] is None:
                raise InvalidInput(
                    f"{target.name} takes rolled damage: record the damage roll "
                    "(rolled once for every target, OR-13)",
                    field="damage",
                )
        plans.append((target, entry, res))
    # every precondition holds: apply, target by target
    results = []
    for target, entry, res in plans:
        hit, crit = res["hit"], res["crit"]
        if expression is not None and (hit or power["miss"] == "half") and target.life != "dead":
            if crit:
                raw = dice.maximum(expression, weapon=power["weapon"])  # B-OR-5: the whole expression
                how = {"maximum": raw}
                if entry.get("crit_bonus") is not None:
                    bonus = dice.roll_total(entry["crit_bonus"])  # B-OR-5: rolled per target, not maximised
                    raw += bonus
                    how["crit_bonus"] = bonus
            else:
                raw = dice.roll_total(p["damage"])
                how = {"rolled": raw}
                if not hit:
                    raw //= 2  # the power's Miss: half damage
                    how["half_on_miss"] = raw
            if entry.get("crit_bonus") is not None and not crit:
                res["crit_bonus_ignored"] = "not a critical hit"
            amount, steps = life.modify(target, raw, power["damage_types"])
            res["damage"] = {
                **how,
                "types": power["damage_types"],
                "steps": steps,
                **life.deliver(state, target, amount),
            }
        elif entry.get("crit_bonus") is not None:
            res["crit_bonus_ignored"] = "not a critical hit" if not crit else "the power deals no damage"
        when = {"hit", "effect"} if hit else {"miss", "effect"}
        applied = []
        for spec in power["effects"]:
            if spec.get("on", "hit") in when and target.life != "dead":
                applied.append(effects.apply(state, target, spec, source=attacker.id))
        if applied:
            res["effects"] = applied
        results.append(res)
    out: dict[str, Any] = {"attacker": attacker.id, "power": power["name"], "kind": kind, "targets": results}
    if power["power_id"] is not None:
        out["power_expended"] = expend(state, attacker, power["power_id"])
    return out


HANDLERS = {"AttackMade": attack_made}
