"""Attack resolution (A1.4-A1.6): one fact per attack, every number derived.

``AttackMade`` records the power as declared, each target's d20 as it fell,
the declared circumstances and modifiers (each may cite a ruling), and the
damage dice. The fold derives the rest and returns it with its breakdown:
attack total, defense, hit / miss / crit (SW-19, SW-20), damage through the
pipeline (SW-30) and the layers (SW-32). Melee and ranged attacks roll damage
per target; close and area attacks roll once for all (SW-23).
"""

from __future__ import annotations

from typing import Any

from domain import dice
from domain.errors import InvalidInput
from domain.rulesets.stellar_winds import bonuses, effects, overrides
from domain.rulesets.stellar_winds import damage as dmg
from domain.rulesets.stellar_winds.rules import creature, not_dead, require
from domain.rulesets.stellar_winds.state import Creature, SWState
from domain.rulesets.stellar_winds.tables import (
    ATTACK_PENALTY,
    CANNOT_SEE,
    CIRCUMSTANCES,
    COMBAT_ADVANTAGE_BONUS,
    CONDITIONS,
    DAMAGE_TYPES,
    GRANTS_CA,
    GRANTS_CA_MELEE,
    HALF_DAMAGE_DEALT,
    MARKED_PENALTY,
    UNSEEN,
)

KINDS = ("melee", "ranged", "close", "area")
DEFENSE_NAMES = {"ac": "AC", "fort": "Fortitude", "ref": "Reflex", "will": "Will"}


def check_power(power: dict[str, Any]) -> dict[str, Any]:
    """Validate the declared power and fill defaults."""
    out = {
        "name": power.get("name") or "attack",
        "kind": power.get("kind"),
        "defense": power.get("defense"),
        "attack_bonus": power.get("attack_bonus", 0),
        "damage_types": power.get("damage_types", []),
        "miss": power.get("miss", "none"),
        "damage": power.get("damage"),
        "weapon": power.get("weapon"),
        "effects": power.get("effects", []),
    }
    if out["kind"] not in KINDS:
        raise InvalidInput(f"power.kind must be one of {', '.join(KINDS)}", field="power.kind")
    if out["defense"] not in DEFENSE_NAMES:
        raise InvalidInput("power.defense must be ac, fort, ref or will", field="power.defense")
    if (
        isinstance(out["attack_bonus"], bool)
        or not isinstance(out["attack_bonus"], int)
        or abs(out["attack_bonus"]) > 1000
    ):
        raise InvalidInput("power.attack_bonus must be a whole number", field="power.attack_bonus")
    types = out["damage_types"]
    known = isinstance(types, list)
    if known:
        for t in types:  # (a loop, not any() over a generator: every attack asks)
            if t not in DAMAGE_TYPES:
                known = False
                break
    if not known:
        raise InvalidInput(
            f"power.damage_types must be a list of {', '.join(sorted(DAMAGE_TYPES))}",
            field="power.damage_types",
        )
    if out["miss"] not in ("none", "half"):
        raise InvalidInput("power.miss must be none or half", field="power.miss")
    if not isinstance(out["effects"], list):
        raise InvalidInput("power.effects must be a list", field="power.effects")
    unknown = () if power.keys() <= out.keys() else set(power) - set(out)
    if unknown:
        raise InvalidInput(f"power: unknown field(s) {', '.join(sorted(unknown))}", field="power")
    return out


def _circumstances(
    entry: dict[str, Any], kind: str, ctx: Any, ignored: list[dict[str, Any]], attacker: Creature
) -> list[tuple[str, Any]]:
    """The declared circumstances that count. One that does not apply to the attack's kind
    (concealment on an area attack) is accepted and ignored, and ``ignored`` says why (ruling 17);
    an unknown name is refused."""
    found = []
    for item in entry.get("circumstances", []):
        name, ruling = (item, None) if isinstance(item, str) else (item.get("name"), item.get("ruling"))
        spec = CIRCUMSTANCES.get(name) if isinstance(name, str) else None
        if spec is None:
            raise InvalidInput(
                f"unknown circumstance {name!r}; known: {', '.join(CIRCUMSTANCES)}",
                field="targets.circumstances",
            )
        if kind not in spec.kinds:
            why = f"{spec.label} applies only to {' or '.join(spec.kinds)} attacks, not {kind} (ruling 17)"
            ignored.append({"circumstance": name, "why": why})
        elif name == "flanking" and _cannot_flank(attacker):
            why = f"{attacker.name} is {', '.join(_cannot_flank(attacker))} and cannot flank (A1.10)"
            ignored.append({"circumstance": name, "why": why})
        elif ruling is not None and not ctx.ruling_holds(ruling):
            ignored.append({"circumstance": name, "why": f"ruling {ruling} does not hold"})
        else:
            found.append((name, spec))
    return found


def one_weapon_die(roll: dict[str, Any], weapon: str | None) -> int:
    """One [W] of a damage roll: the weapon's dice (``2d6``: the first two dice; without a
    declared weapon, the first die), without modifiers (``sw.crit_mode = "wounding_1W"``)."""
    count = dice.dice_count(weapon) if weapon else 1
    return sum(face for _sides, face in dice.dice_of(roll)[:count])


def _cannot_flank(c: Creature) -> list[str]:
    """The conditions that keep a creature from flanking (A1.10: blinded, dazed, stunned, ...)."""
    return sorted(n for n in c.conditions() if n in CONDITIONS and CONDITIONS[n].cannot_flank)


def adjacent_by_default(kind: str) -> bool:
    """Ruling 19: the engine tracks no positions; a melee attacker is adjacent unless declared
    otherwise (reach), any other attacker is not."""
    return kind == "melee"


def ranged_differs(target: Creature) -> bool:
    """Whether a defense against a ranged attack from a non-adjacent attacker can differ from
    the same defense against a melee attack (:func:`defense_of`): only a condition with a
    ranged defense modifier (prone) sets them apart."""
    return any(
        (spec := CONDITIONS.get(cond)) is not None and spec.ranged_defense_mod for cond in target.conditions()
    )


def defense_of(
    target: Creature,
    defense: str,
    kind: str,
    adjacent: bool | None = None,
    flags: dict[str, Any] | None = None,
    conditions: set[str] | None = None,
) -> tuple[int, list[dict[str, Any]]]:
    """A target's defense against this attack, with its modifiers (A1.5, effects). Prone's +2
    holds only against ranged attacks from a non-adjacent attacker (ruling 19). ``conditions``:
    the target's ``conditions()`` when the caller has them already."""
    near = adjacent_by_default(kind) if adjacent is None else adjacent
    base = target.defenses[defense]
    parts: list[dict[str, Any]] = [{"source": f"{DEFENSE_NAMES[defense]} (sheet)", "value": base}]
    conds = target.conditions() if conditions is None else conditions
    for cond in sorted(conds) if conds else ():
        spec = CONDITIONS.get(cond)
        if spec and spec.defense_mod:
            parts.append({"source": cond, "value": spec.defense_mod})
        if spec and spec.ranged_defense_mod and kind == "ranged" and not near:
            parts.append({"source": f"{cond} vs ranged, not adjacent", "value": spec.ranged_defense_mod})
    if target.effects:  # (no effect: no effect's modifier)
        parts.extend(effects.defense_mods(target, defense))
    parts = bonuses.stack(parts, flags or {})  # SW-17
    return bonuses.total(parts), parts


def _attack_parts(
    attacker: Creature,
    target: Creature,
    power: dict[str, Any],
    entry: dict[str, Any],
    ids: set[str],
    ctx: Any,
    ignored: list[dict[str, Any]],
    flags: dict[str, Any],
    tconds: set[str],
    aconds: set[str],
) -> list[dict[str, Any]]:
    """The attack roll's modifiers; ``tconds`` and ``aconds``: the target's and the attacker's
    ``conditions()``."""
    kind = power["kind"]
    parts: list[dict[str, Any]] = [{"source": "attack bonus", "value": power["attack_bonus"]}]
    has_ca = False
    declared: set[str] = set()
    for name, spec in _circumstances(entry, kind, ctx, ignored, attacker):
        declared.add(name)
        if spec.combat_advantage:
            if has_ca:
                continue
            has_ca = True
        parts.append({"source": spec.label, "value": spec.modifier})
    if tconds or aconds:  # (no condition on either side: none of these parts)
        # (the conditions tables' indexes: what a loop over each creature's conditions asks)
        granting = sorted(tconds & (GRANTS_CA_MELEE if kind == "melee" else GRANTS_CA))
        # A1.5: the attacker must be able to see the target to have combat advantage
        unseen = not UNSEEN.isdisjoint(tconds)
        blind = not CANNOT_SEE.isdisjoint(aconds)
        sees = not unseen and not blind
        if granting and not has_ca and sees:
            has_ca = True
            source = f"combat advantage (target {', '.join(granting)})"
            parts.append({"source": source, "value": COMBAT_ADVANTAGE_BONUS})
        # A1.10 Invisible: its enemies cannot see it, so it has combat advantage against them...
        if not UNSEEN.isdisjoint(aconds) and not has_ca and sees:
            has_ca = True
            parts.append({"source": "combat advantage (attacker invisible)", "value": COMBAT_ADVANTAGE_BONUS})
        # ...and attacking it, they cannot see it: total concealment for melee and ranged (A1.5),
        # unless the attacker is blinded (its own -5 already counts) or concealment was declared
        if (
            unseen
            and kind in ("melee", "ranged")
            and not blind
            and not declared & {"concealment", "total_concealment"}
        ):
            parts.append({"source": "total concealment (target invisible)", "value": -5})
        for cond in sorted(aconds & ATTACK_PENALTY):
            spec = CONDITIONS[cond]
            if kind in spec.attack_penalty_kinds:
                parts.append({"source": f"attacker {cond}", "value": spec.attack_penalty})
    markers = effects.markers(attacker) if attacker.effects else None  # (no effect: no marker)
    if markers and not markers & ids:
        parts.append({"source": "marked: attack ignores the marker", "value": MARKED_PENALTY})
    for mod in entry.get("modifiers", []):
        if (
            not isinstance(mod, dict)
            or isinstance(mod.get("value"), bool)
            or not isinstance(mod.get("value"), int)
        ):
            raise InvalidInput(
                "each modifier is {source, value, type?, ruling?} with a whole-number value",
                field="targets.modifiers",
            )
        bonuses.check_type(mod.get("type"), "targets.modifiers")
        rid = mod.get("ruling")
        if rid is None or ctx.ruling_holds(rid):
            parts.append(
                {
                    "source": str(mod.get("source", "modifier")),
                    "value": mod["value"],
                    **({"ruling": rid} if rid else {}),
                    **({"type": mod["type"]} if mod.get("type") not in (None, "untyped") else {}),
                }
            )
    if attacker.effects:
        parts.extend(effects.attack_mods(attacker))
    return bonuses.stack(parts, flags)  # SW-17


def attack_made(state: SWState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    power = check_power(p["power"])
    kind = power["kind"]
    attacker = creature(state, p["attacker"], "attacker")
    not_dead(attacker, ctx, "attacker")
    if not attacker.conscious:
        require(False, f"{attacker.name} is not conscious", "NOT_CONSCIOUS", ctx, "attacker")
    if not p["targets"]:
        raise InvalidInput("an attack needs at least one target", field="targets")
    ids = [t.get("target") for t in p["targets"]]
    if len(set(ids)) != len(ids):
        raise InvalidInput("a creature is affected only once by one attack (SW-23)", field="targets")
    shared = kind in ("close", "area")
    if shared and any(t.get("damage") for t in p["targets"]):
        raise InvalidInput(
            "close and area attacks roll damage once for all targets (SW-23): use 'damage'", field="damage"
        )
    if not shared and p["damage"] is not None and len(ids) > 1:
        raise InvalidInput(
            "melee and ranged attacks roll damage per target (SW-23): put 'damage' on each target",
            field="damage",
        )
    for spec in power["effects"]:
        effects.check_spec(spec, state)
    aconds = attacker.conditions()  # (nothing changes until every target is planned)
    weakened = not HALF_DAMAGE_DEALT.isdisjoint(aconds)
    plans = []
    id_set = set(ids)
    for i, entry in enumerate(p["targets"]):
        target = creature(state, entry.get("target", ""), "targets.target")
        not_dead(target, ctx, "targets.target")
        roll = entry["roll"]  # shape checked when recorded (facts.validate)
        natural = dice.natural(roll) or 0
        tconds = target.conditions()
        if p["coup_de_grace"]:
            require(
                "helpless" in tconds,
                f"{target.name} is not helpless: no coup de grace (SW-22)",
                "NOT_HELPLESS",
                ctx,
                "targets.target",
            )
        ignored: list[dict[str, Any]] = []
        parts = _attack_parts(
            attacker, target, power, entry, id_set, ctx, ignored, state.flags, tconds, aconds
        )
        d20 = dice.roll_total(roll)
        added = 0
        for x in parts:  # (a loop: sum() over a generator costs a frame per attack)
            added += x["value"]
        total = d20 + added
        adjacent = bool(entry.get("adjacent", adjacent_by_default(kind)))
        defense, defense_parts = defense_of(target, power["defense"], kind, adjacent, state.flags, tconds)
        reaches = total >= defense
        hit = natural == 20 or (natural != 1 and reaches)
        crit = hit and natural >= attacker.crit_min and reaches
        if p["coup_de_grace"] and hit:
            crit = True  # adopted ruling 13: any hit is a critical hit
        overridden = {}
        for key in ("hit", "crit") if ctx.overrides else ():  # C0.4 (overrides.OVERRIDABLE)
            value, given = overrides.value(ctx, key, target.id, i)
            if given:
                overridden[key] = bool(value)
        hit = overridden.get("hit", hit)
        crit = overridden.get("crit", crit) and hit
        droll = p["damage"] if (shared or p["damage"] is not None) else entry.get("damage")
        plans.append(
            (
                target,
                droll,
                {
                    "target": target.id,
                    "natural": natural,
                    "adjacent": adjacent,
                    "attack_total": total,
                    "attack_parts": [{"source": "d20", "value": d20}, *parts],
                    "defense": power["defense"],
                    "defense_value": defense,
                    "defense_parts": defense_parts,
                    "hit": hit,
                    "crit": crit,
                    "overridden": overridden,
                    **({"ignored": ignored} if ignored else {}),
                },
            )
        )
    # Every precondition has been checked: now apply, target by target.
    results = []
    for i, (target, droll, res) in enumerate(plans):
        hit, crit = res["hit"], res["crit"]
        applies = hit or power["miss"] == "half"
        fiat: Any = None
        amount_given = False
        if ctx.overrides:  # C0.4
            fiat, amount_given = overrides.value(ctx, "amount", target.id, i)
        if (droll is not None or amount_given) and applies and target.life != "dead":
            crit_mode = state.flags["sw.crit_mode"]
            if droll is None:
                raw = 0
            elif crit and crit_mode == "max":
                raw = dice.maximum(droll)
            elif crit and crit_mode == "wounding_1W":
                raw = one_weapon_die(droll, power["weapon"])  # B-SW-5 point 1, read literally
            else:
                raw = dice.roll_total(droll)
            if crit and p["extra_crit"] is not None:
                raw += dice.roll_total(p["extra_crit"])
            amount, steps = dmg.modify(
                target, raw, power["damage_types"], half=not hit, weakened=weakened, flags=state.flags
            )
            if amount_given:
                amount = int(fiat)
                steps.append({"step": "GM override (C0.4)", "value": amount})
                res["overridden"]["amount"] = amount
            wounding = crit and crit_mode in ("wounding", "wounding_1W")
            slays = state.flags["sw.coup_de_grace_kill"] == "bloodied_value"  # B-SW-12
            if p["coup_de_grace"] and crit and slays and amount >= target.bloodied_value(state.flags):
                delivered = dmg.deliver(state, target, amount, wounding=wounding)
                target.life = "dead"  # B-SW-12: slain outright
                delivered["life_after"] = "dead"
                delivered["slain_outright"] = True
            else:
                delivered = dmg.deliver(state, target, amount, wounding=wounding, nonlethal=p["nonlethal"])
            res["damage"] = {"roll": droll, "types": power["damage_types"], "steps": steps, **delivered}
        when = "hit" if hit else "miss"
        applied = []
        for spec in power["effects"]:
            if spec.get("on", "hit") in (when, "always") and target.life != "dead":
                applied.append(effects.apply(state, target, spec, source=attacker.id, ctx=ctx))
        if applied:
            res["effects"] = applied
        results.append(res)
    return {"attacker": attacker.id, "power": power["name"], "kind": kind, "targets": results}
