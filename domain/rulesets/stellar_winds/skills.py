"""Skill uses the fold reads (RULES.md SW-13, SW-31, B-SW-32, C1.2): Bluff for combat advantage,
escaping a grab, falling.

* ``BluffForCombatAdvantageRolled`` (C1.2): the Bluff check against the target's Insight (the
  number the table gives); on a success the target carries an effect that gives the bluffer
  combat advantage against it (its duration is the table's: by default until the end of the
  bluffer's next turn, SW-44 anchoring). Once per encounter per creature (C1.1
  ``bluff_ca_used_this_encounter``). A standard action by default.
* ``EscapeAttempted`` (SW-13, B-SW-32 4E-DEFAULT): Acrobatics against the grabber's Reflex or
  Athletics against its Fortitude; a success ends the grab and the creature may shift 1 square.
  A move action by default.
* ``FallTaken`` (SW-31, B-SW-32): 1d10 per full 10 feet (flag ``sw.falling``: or, past 50
  feet, 25 per 50 feet and 1d10 per 10 extra feet); a trained jumper's Acrobatics check
  (recorded with its die) reduces the damage by half its result; the damage goes through SW-30
  and SW-32; the creature lands prone unless it takes no damage.
"""

from __future__ import annotations

from typing import Any

from domain import dice
from domain.core import encounters as core
from domain.errors import InvalidInput, RuleViolation
from domain.rulesets.stellar_winds import damage as dmg
from domain.rulesets.stellar_winds import effects, overrides
from domain.rulesets.stellar_winds.attacks import defense_of
from domain.rulesets.stellar_winds.rules import creature, not_dead, require
from domain.rulesets.stellar_winds.state import SWState, divide
from domain.rulesets.stellar_winds.tables import PRONE_EFFECT

# B-SW-32 / SW-13: which skill escapes against which of the grabber's defenses
ESCAPE_DEFENSE = {"acrobatics": "ref", "athletics": "fort"}
# SW-13: "Grab creates an immobilizing effect": the conditions an escape ends
ESCAPABLE = ("grabbed", "immobilized", "restrained")
FALL_DIE, FALL_STEP_FEET = 10, 10  # SW-31: 1d10 per 10 feet
FAST_FALL_FEET, FAST_FALL_DAMAGE = 50, 25  # SW-31 [001 L789]: 25 damage per 50 feet


def _d20(roll: dict[str, Any], field: str = "roll") -> int:
    natural = dice.natural(roll)
    if natural is None:
        raise InvalidInput("a check is a single d20 (plus its modifiers)", field=field)
    return natural


def bluff(state: SWState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """C1.2 BluffForCombatAdvantageRolled: Bluff against Insight; on a success, combat advantage
    against the target (read by the attacks of the bluffer: ``powers.bluffed_for``)."""
    c = creature(state, p["creature"])
    target = creature(state, p["target"], "target")
    if target.id == c.id:
        raise InvalidInput("a creature bluffs another", field="target")
    not_dead(c, ctx)
    not_dead(target, ctx, "target")
    require(c.conscious, f"{c.name} is not conscious", "NOT_CONSCIOUS", ctx)
    natural = _d20(p["roll"])
    enc = core.running_for(state, c.id)
    if enc is not None:
        require(
            c.bluff_used_in != enc.id,
            f"{c.name} already bluffed for combat advantage in this encounter",
            "BLUFF_USED",
            ctx,
        )
    duration = p["duration"] or {"kind": "until_end_of_turn", "anchor": c.id}
    spec = effects.check_spec(
        {
            "name": f"bluffed by {c.name}",
            "components": [{"combat_advantage_for": c.id}],
            "duration": duration,
        },
        state,
        "duration",
    )
    total = dice.roll_total(p["roll"])
    success = total >= p["vs_insight"]
    fiat, given = overrides.value(ctx, "success")  # C0.4
    if given:
        success = bool(fiat)
    out: dict[str, Any] = {
        "creature": c.id,
        "target": target.id,
        "natural": natural,
        "total": total,
        "vs_insight": p["vs_insight"],
        "success": success,
    }
    if enc is not None:
        c.bluff_used_in = enc.id
    if success:
        out["effect"] = effects.apply(state, target, spec, source=c.id, ctx=ctx)
    return out


def escape(state: SWState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """SW-13, B-SW-32: Acrobatics vs the grabber's Reflex or Athletics vs its Fortitude; a
    success ends the grab and the creature may shift 1 square."""
    c = creature(state, p["creature"])
    carrier, e = effects.find(state, p["effect_id"])
    if carrier.id != c.id:
        raise RuleViolation(
            f"effect {e['effect_id']} is on {carrier.name}, not {c.name}",
            field="effect_id",
            code="NOT_AFFECTED",
        )
    grabber = state.creatures.get(e.get("source") or "")
    holds = {comp.get("condition") for comp in e["components"]} & set(ESCAPABLE)
    if grabber is None or grabber.id == c.id or not holds:
        raise RuleViolation(
            "an escape is from a grab (grabbed, immobilized or restrained) held by another creature, "
            "the effect's source",
            field="effect_id",
            code="NOT_A_GRAB",
        )
    not_dead(c, ctx)
    require(c.conscious, f"{c.name} is not conscious", "NOT_CONSCIOUS", ctx)
    natural = _d20(p["roll"])
    defense = ESCAPE_DEFENSE[p["skill"]]
    value, parts = defense_of(grabber, defense, "melee", flags=state.flags)
    total = dice.roll_total(p["roll"])
    success = total >= value
    fiat, given = overrides.value(ctx, "success")  # C0.4
    if given:
        success = bool(fiat)
    out: dict[str, Any] = {
        "creature": c.id,
        "effect_id": e["effect_id"],
        "grabber": grabber.id,
        "skill": p["skill"],
        "natural": natural,
        "total": total,
        "defense": defense,
        "defense_value": value,
        "success": success,
    }
    if success:
        effects.remove(c, {e["effect_id"]})
        out["may_shift"] = 1
    return out


def fall_dice(feet: int, flags: dict[str, Any]) -> tuple[int, int]:
    """SW-31: the fixed damage and the number of d10s of a fall (flag ``sw.falling``)."""
    if flags.get("sw.falling", "dice") == "fast_over_50" and feet > FAST_FALL_FEET:
        return FAST_FALL_DAMAGE * (feet // FAST_FALL_FEET), (feet % FAST_FALL_FEET) // FALL_STEP_FEET
    return 0, feet // FALL_STEP_FEET


def fall(state: SWState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """SW-31, B-SW-32: 1d10 per 10 feet, less half a trained jumper's Acrobatics check; then the
    damage pipeline; prone unless no damage."""
    c = creature(state, p["creature"])
    not_dead(c, ctx)
    fixed, count = fall_dice(p["feet"], state.flags)
    roll = p["roll"]
    faces = dice.dice_of(roll) if roll else []
    if (
        len(faces) != count
        or any(sides != FALL_DIE for sides, _ in faces)
        or (roll is not None and dice.roll_total(roll) != sum(f for _, f in faces))
    ):
        raise InvalidInput(
            f"a fall of {p['feet']} feet deals {count}d10 (SW-31): give exactly those dice", field="roll"
        )
    rolled = sum(f for _, f in faces)
    steps: list[dict[str, Any]] = []
    if fixed:
        steps.append({"step": "25 per 50 feet (SW-31, sw.falling = fast_over_50)", "value": fixed})
    steps.append({"step": f"{count}d10 for {p['feet']} feet (SW-31)", "value": rolled})
    rolled += fixed
    if p["acrobatics"] is not None:
        _d20(p["acrobatics"], "acrobatics")
        check = dice.roll_total(p["acrobatics"])
        cut = divide(max(0, check), 2, state.flags)
        rolled = max(0, rolled - cut)
        steps.append({"step": f"Acrobatics {check}: less half the result (B-SW-32)", "value": -cut})
    amount, more = dmg.modify(c, rolled, [], flags=state.flags)
    fiat, given = overrides.value(ctx, "amount")  # C0.4
    if given:
        amount = int(fiat)
        more.append({"step": "GM override (C0.4)", "value": amount})
    out: dict[str, Any] = {"creature": c.id, "feet": p["feet"], "steps": steps + more}
    out.update(dmg.deliver(state, c, amount))
    if amount > 0 and c.life != "dead" and "prone" not in c.conditions():
        out["prone"] = effects.apply(state, c, PRONE_EFFECT, source=c.id, ctx=ctx)
    return out
