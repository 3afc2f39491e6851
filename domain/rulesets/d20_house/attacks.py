"""Attack resolution (RULES.md A3.3, B-DH-1, B-DH-5, B-DH-12..14): three facts per attack.

* ``AttackRolled``: the d20 as it fell, the weapon and the circumstances as declared. The
  fold derives the bonus (BAB or the iterative's, Strength or Agility, size, range,
  two-weapon penalty, the disabled -2, declared modifiers), the target's AC (touch and
  flat-footed), hit or miss (a natural 1 misses, a natural 20 hits and threatens). A hit
  stays *open* in ``state.attacks`` under the fact's position until its damage is rolled.
* ``CriticalConfirmationRolled``: owed by a threat before its damage; the same bonus
  against the same AC, natural 1 / 20 as usual (B-DH-13).
* ``DamageRolled``: the weapon's dice (twice on a confirmed critical), the extra dice
  (never doubled). The fold adds the static modifiers (twice on a critical by default,
  B-DH-5), keeps at least 1 (B-DH-12), deals it, and leaves a creature it did not kill
  owing a massive-damage save when it was at least the threshold (B-DH-1, ruling 26).
* ``MassiveDamageSaveRolled``: that Fortitude save; failure kills.

An attack of opportunity is an ``AttackRolled`` with ``opportunity``: at most one per round
(``aoo_per_round``), none while flat-footed (B-DH-11, B-DH-14).
"""

from __future__ import annotations

from typing import Any

from domain import dice
from domain.core.rules import declared_modifiers, owned, peek, require
from domain.errors import InvalidInput, RuleViolation
from domain.rulesets.d20_house import actions, life
from domain.rulesets.d20_house.rules import alive, conscious, override, save_result, strenuous_cost
from domain.rulesets.d20_house.state import Creature, D20State, die
from domain.rulesets.d20_house.tables import (
    ABILITY_NAMES,
    ATTACK_ABILITY,
    STRENGTH_FACTOR,
    STRENGTH_TO_DAMAGE,
    TWO_WEAPON_BASE,
    TWO_WEAPON_LIGHT_REDUCTION,
)


def two_weapon_penalty(c: Creature, hand: str, off_hand_light: bool) -> int:
    """DH-8: -6 primary / -10 off hand; a light off-hand weapon -2 less on both; the
    Two-Weapon Fighting feat -2 less (primary) and -6 less (off hand)."""
    primary, off = TWO_WEAPON_BASE
    if off_hand_light:
        primary += TWO_WEAPON_LIGHT_REDUCTION
        off += TWO_WEAPON_LIGHT_REDUCTION
    for feat in c.feat_effects():
        primary += feat.two_weapon[0]
        off += feat.two_weapon[1]
    return primary if hand == "primary" else off


def armor_class(c: Creature, vs: str, flags: dict[str, Any]) -> tuple[int, list[dict[str, Any]], list[str]]:
    """DH-6 / DH-2: 10 + armor + shield + Agility + size. A touch attack ignores armor and
    shield; a flat-footed target (or one running without the Run feat, DH-4) loses its
    Agility bonus (``dh.flat_footed_loses``: or the whole modifier)."""
    touch = vs in ("touch", "flat_footed_touch")
    flat: list[str] = []
    if vs.startswith("flat_footed"):
        flat.append("declared flat-footed")
    if c.flat_footed:
        flat.append("flat-footed until its first turn")
    running = c.running and not any(f.keeps_agility_running for f in c.feat_effects())
    parts: list[dict[str, Any]] = [{"source": "base", "value": 10}]
    if not touch:
        parts += [{"source": "armor", "value": c.armor}, {"source": "shield", "value": c.shield}]
    agility = c.mod("agility")
    if flat and flags["dh.flat_footed_loses"] == "modifier":
        kept = 0
    elif flat or running:
        kept = min(0, agility)  # the bonus is lost; a penalty still counts
    else:
        kept = agility
    parts += [{"source": "Agility", "value": kept}, {"source": "size", "value": c.size}]
    reasons = flat + (["running"] if running else [])
    parts = [x for x in parts if x["value"] or x["source"] == "base"]
    return sum(x["value"] for x in parts), parts, reasons


def attack_rolled(state: D20State, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    weapon, kind = p["weapon"], p["weapon"]["kind"]
    if p["attacker"] == p["target"]:
        raise InvalidInput("a creature does not attack itself", field="target")
    if kind == "melee" and p["range_penalty"]:
        raise InvalidInput("a range penalty is for ranged and thrown attacks", field="range_penalty")
    full = (
        p["full_attack"]
        if p["full_attack"] is not None
        else (p["iterative"] > 0 or p["two_weapon"] is not None)
    )
    if p["opportunity"] and (kind != "melee" or full or p["two_weapon"] or p["iterative"]):
        raise InvalidInput(
            "an attack of opportunity is a single basic melee attack (DH-5)", field="opportunity"
        )
    a = peek(state, p["attacker"], "attacker")
    t = peek(state, p["target"], "target")
    conscious(a, ctx, "attacker")
    alive(t, ctx, "target")
    require(
        p["iterative"] < len(a.bab),
        f"{a.name}'s base attack bonus {'/'.join(f'{b:+d}' for b in a.bab)} has no attack "
        f"{p['iterative'] + 1} (DH-8)",
        "ITERATIVE_UNAVAILABLE",
        ctx,
        "iterative",
    )
    if p["opportunity"]:
        require(
            not (a.flat_footed and state.flags["dh.flat_footed_no_aoo"]),
            f"{a.name} is flat-footed and makes no attacks of opportunity (B-DH-11)",
            "FLAT_FOOTED",
            ctx,
            "attacker",
        )
        require(
            a.aoo_used < a.aoo_per_round,
            f"{a.name} already made {a.aoo_used} attack(s) of opportunity this round (B-DH-14)",
            "AOO_LIMIT",
            ctx,
            "attacker",
        )
        turn = a.turn
    else:
        turn = _spend_attack(a, p, full, ctx)
    hand = "off_hand" if p["two_weapon"] == "off" else weapon["grip"]
    parts = _attack_parts(a, p, kind, ctx)
    roll = p["roll"]
    natural = dice.natural(roll)
    bonus = sum(x["value"] for x in parts)
    total = dice.roll_total(roll) + bonus
    ac, ac_parts, lost = armor_class(t, p["vs"], state.flags)
    hit = natural == 20 or (natural != 1 and total >= ac)
    threat = natural == 20
    hit, hit_overridden = override(ctx, "hit", hit)
    threat, threat_overridden = override(ctx, "threat", threat)
    threat = bool(threat) and bool(hit)
    # every precondition holds: apply
    a = owned(state, a.id, "attacker")
    a.turn = turn
    if p["opportunity"]:
        a.aoo_used += 1
    out: dict[str, Any] = {
        "attacker": a.id,
        "target": t.id,
        "weapon": weapon["name"],
        "natural": natural,
        "attack_total": total,
        "attack_parts": [{"source": "d20", "value": dice.roll_total(roll)}, *parts],
        "defense": p["vs"],
        "ac": ac,
        "ac_parts": ac_parts,
        "agility_lost": lost,
        "hit": bool(hit),
        "threat": threat,
        "opportunity": p["opportunity"],
        "overridden": sorted(k for k, v in (("hit", hit_overridden), ("threat", threat_overridden)) if v),
    }
    if hit:
        state.attacks[str(ctx.seq)] = {
            "attacker": a.id,
            "target": t.id,
            "bonus": bonus,
            "ac": ac,
            "threat": threat,
            "critical": None if threat else False,
            "weapon": dict(weapon),
            "static": _static_damage(a, weapon, hand),
            "penalties": a.penalty("damage"),
        }
        out["awaits"] = "confirmation" if threat else "damage"
    out.update(strenuous_cost(state, a, True))  # attacking is strenuous (DH-11)
    return out


def _spend_attack(a: Creature, p: dict[str, Any], full: bool, ctx: Any) -> dict[str, Any] | None:
    """DH-4 / DH-8: one attack is a standard action; iterative and two-weapon attacks need a
    full attack (a full-round action), each iterative and the off hand once."""
    if not full:
        return actions.spend(a, "standard", False, ctx)
    actions.check_possible(a, "full_round", ctx)
    turn = a.turn
    if turn is None:
        return None
    fa = turn.get("full_attack")
    if fa is None:
        turn = actions.spend(a, "full_round", False, ctx)
        assert turn is not None
        fa = {"iteratives": [], "off_hand": False}
    key = "off_hand" if p["two_weapon"] == "off" else "iteratives"
    if key == "off_hand":
        require(not fa["off_hand"], f"{a.name} already attacked with its off hand", "ALREADY_ACTED", ctx)
        fa = {**fa, "off_hand": True}
    else:
        require(
            p["iterative"] not in fa["iteratives"],
            f"{a.name} already made attack {p['iterative'] + 1} of this full attack",
            "ALREADY_ACTED",
            ctx,
            "iterative",
        )
        fa = {**fa, "iteratives": [*fa["iteratives"], p["iterative"]]}
    return {**turn, "full_attack": fa}


def _attack_parts(a: Creature, p: dict[str, Any], kind: str, ctx: Any) -> list[dict[str, Any]]:
    """DH-6 / DH-8: BAB (or the iterative's) + Strength (melee) or Agility (ranged, thrown)
    + size + range penalty, the weapon's enhancement, the two-weapon penalty, conditions, and
    the modifiers the table declares (cover, flanking...: their values are ABSENT from the
    seed, so each is an input, optionally citing a ruling)."""
    ability = ATTACK_ABILITY[kind]
    bab = a.bab[p["iterative"]]
    parts = [
        {
            "source": "base attack bonus"
            if p["iterative"] == 0
            else f"iterative attack {p['iterative'] + 1}",
            "value": bab,
        },
        {"source": ABILITY_NAMES[ability], "value": a.mod(ability)},
        {"source": "size", "value": a.size},
        {"source": "range", "value": p["range_penalty"]},
        {"source": "enhancement", "value": p["weapon"]["enhancement"]},
    ]
    if p["two_weapon"] is not None:
        light = (
            p["off_hand_light"] or p["double_weapon"] or (p["two_weapon"] == "off" and p["weapon"]["light"])
        )
        parts.append(
            {
                "source": f"two-weapon fighting ({p['two_weapon']} hand)",
                "value": two_weapon_penalty(a, "primary" if p["two_weapon"] == "primary" else "off", light),
            }
        )
    parts += a.penalty("attack")
    parts = [x for x in parts if x["value"] or x["source"] == "base attack bonus"]
    parts += declared_modifiers(p["modifiers"], ctx)
    return parts


def _static_damage(a: Creature, weapon: dict[str, Any], hand: str) -> list[dict[str, Any]]:
    """DH-9: Strength to melee, thrown and sling damage; a bonus is halved for the off hand and
    1 1/2 times with two hands (not a light weapon), rounded down; a penalty counts once. The
    weapon's enhancement. These are the weapon's static modifiers (B-DH-5)."""
    out = []
    adds = weapon["strength"] if weapon["strength"] is not None else STRENGTH_TO_DAMAGE[weapon["kind"]]
    strength = a.mod("str")
    if adds and strength:
        grip = "one_hand" if hand == "two_hands" and weapon["light"] else hand
        num, den = STRENGTH_FACTOR[grip]
        value = strength * num // den if strength > 0 else strength
        label = {
            "one_hand": "Strength",
            "two_hands": "Strength x1 1/2 (two hands)",
            "off_hand": "Strength x1/2 (off hand)",
        }
        out.append({"source": label[grip], "value": value})
    if weapon["enhancement"]:
        out.append({"source": "enhancement", "value": weapon["enhancement"]})
    return out


def _open_attack(state: D20State, position: int, what: str) -> dict[str, Any]:
    rec = state.attacks.get(str(position))
    if rec is None:
        raise RuleViolation(
            f"no attack at position {position} awaits {what}: it missed, its damage is recorded, "
            "or it is not an AttackRolled",
            field="attack",
            code="NO_OPEN_ATTACK",
        )
    return rec


def confirmation(state: D20State, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """DH-7 / B-DH-13: roll the attack again with the same bonuses: a success makes the
    threat a critical hit, otherwise it is a regular hit."""
    rec = _open_attack(state, p["attack"], "a confirmation roll")
    require(
        rec["threat"],
        f"the attack at {p['attack']} did not threaten a critical (DH-7)",
        "NOT_A_THREAT",
        ctx,
        "attack",
    )
    require(
        rec["critical"] is None,
        f"the attack at {p['attack']} is already confirmed or not",
        "CONFIRMATION_ROLLED",
        ctx,
        "attack",
    )
    natural = dice.natural(p["roll"])
    total = dice.roll_total(p["roll"]) + rec["bonus"]
    if state.flags["dh.confirmation_natural_rules"]:
        critical = natural == 20 or (natural != 1 and total >= rec["ac"])
    else:
        critical = total >= rec["ac"]
    critical, overridden = override(ctx, "critical", critical)
    state.attacks[str(p["attack"])] = {**rec, "critical": bool(critical)}
    return {
        "attack": p["attack"],
        "attacker": rec["attacker"],
        "target": rec["target"],
        "natural": natural,
        "total": total,
        "ac": rec["ac"],
        "critical": bool(critical),
        "overridden": ["critical"] if overridden else [],
    }


def _shape(roll: dict[str, Any]) -> list[tuple[int, int]]:
    return [(t["sides"], len(t["faces"])) for t in roll["terms"]]


def damage_rolled(state: D20State, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """DH-7 / DH-9 / B-DH-5 / B-DH-12 / B-DH-1."""
    rec = _open_attack(state, p["attack"], "damage")
    require(
        rec["critical"] is not None,
        f"the attack at {p['attack']} threatens a critical: roll the confirmation first (DH-7)",
        "CONFIRMATION_PENDING",
        ctx,
        "attack",
    )
    critical = bool(rec["critical"])
    if critical:
        require(
            p["crit_weapon"] is not None and _shape(p["crit_weapon"]) == _shape(p["weapon"]),
            "a critical hit rolls the weapon's damage dice twice: give the second set (crit_weapon)",
            "CRITICAL_DICE_MISMATCH",
            ctx,
            "crit_weapon",
        )
    else:
        require(
            p["crit_weapon"] is None,
            "not a critical hit: the weapon's dice are rolled once (no crit_weapon)",
            "CRITICAL_DICE_MISMATCH",
            ctx,
            "crit_weapon",
        )
    t = peek(state, rec["target"], "attack")
    alive(t, ctx, "attack")
    double_static = critical and state.flags["dh.crit_doubles_static_mods"]
    parts: list[dict[str, Any]] = [{"source": "weapon dice", "value": dice.roll_total(p["weapon"])}]
    if critical and p["crit_weapon"] is not None:
        parts.append({"source": "weapon dice again (critical)", "value": dice.roll_total(p["crit_weapon"])})
    for x in rec["static"]:
        parts.append(
            {
                "source": x["source"] + (" x2 (critical)" if double_static else ""),
                "value": x["value"] * (2 if double_static else 1),
            }
        )
    parts += [{"source": "extra dice", "value": dice.roll_total(r)} for r in p["extra"]]
    if p["extra_flat"]:
        parts.append({"source": "extra", "value": p["extra_flat"]})
    parts += declared_modifiers(p["modifiers"], ctx)
    penalties = list(rec["penalties"])
    raw = sum(x["value"] for x in parts)
    minimum = 1
    if state.flags["dh.minimum_damage_after_penalties"]:
        amount = max(minimum, raw + sum(x["value"] for x in penalties))
    else:
        amount = max(0, max(minimum, raw) + sum(x["value"] for x in penalties))
    amount, overridden = override(ctx, "amount", amount)
    amount = max(0, int(amount))
    # apply
    t = owned(state, t.id, "attack")
    dealt = life.damage(t, amount)
    del state.attacks[str(p["attack"])]
    out: dict[str, Any] = {
        "attack": p["attack"],
        "attacker": rec["attacker"],
        "target": t.id,
        "critical": critical,
        "parts": [*parts, *penalties],
        "overridden": ["amount"] if overridden else [],
        **dealt,
    }
    massive = state.flags["dh.massive_damage"]
    if massive["enabled"] and amount >= massive["threshold"] and t.dead_by is None:
        owed = {"attack": p["attack"], "damage": amount, "dc": massive["dc"]}
        t.massive_saves = [*t.massive_saves, owed]
        out["massive_damage_save_owed"] = owed
    return out


def massive_damage_save(state: D20State, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """B-DH-1: the Fortitude save a creature owes after one attack dealt it at least the
    threshold and left it alive; failure kills (``dead_by: massive_damage``)."""
    c = peek(state, p["creature"])
    alive(c, ctx)
    owed = [s for s in c.massive_saves if s["attack"] == p["attack"]]
    require(
        bool(owed),
        f"{c.name} owes no massive-damage save for the attack at {p['attack']} (B-DH-1)",
        "NO_MASSIVE_DAMAGE_SAVE_OWED",
        ctx,
        "attack",
    )
    dc = owed[0]["dc"] if owed else state.flags["dh.massive_damage"]["dc"]
    result = save_result(c, "fort", p["roll"], dc, p["modifiers"], ctx)
    c = owned(state, c.id)
    c.massive_saves = [s for s in c.massive_saves if s["attack"] != p["attack"]]
    before = life.snapshot(c)
    if not result["success"]:
        die(c, "massive_damage")
    return {"creature": c.id, "attack": p["attack"], **result, **life.report(before, c)}


HANDLERS = {
    "AttackRolled": attack_rolled,
    "CriticalConfirmationRolled": confirmation,
    "DamageRolled": damage_rolled,
    "MassiveDamageSaveRolled": massive_damage_save,
}
