"""Hero's-surge handlers for creatures, damage, healing, dying, surges, rests and levels.

One handler per fact type (RULES.md C2.2). Each checks every precondition *before* it
changes anything (a refused command stores nothing; an orphaned fact leaves the state as it
was), then applies the fact through ``vitality`` and returns its outcome with the working.
"""

from __future__ import annotations

from typing import Any

from domain import dice
from domain.core.catalogue import check_field
from domain.core.rules import ability_modifier, owned, peek, require
from domain.errors import InvalidInput, NotFound, RuleViolation
from domain.rulesets.hero_surge import vitality as vit
from domain.rulesets.hero_surge.facts import FACTS
from domain.rulesets.hero_surge.state import Creature, HSState, current_round, new_creature
from domain.rulesets.hero_surge.tables import (
    INSTAGIB_LUCK_ROLLS,
    LEVELS,
    LUCK_CONTEXTS,
    RESTS,
    SURGE_HEALING_INTERVAL_MINUTES,
    SURGE_PURPOSES,
    hero_surges_max,
)

Handler = Any


def _words(name: str) -> str:
    return name.replace("_", " ")


def alive(c: Creature, ctx: Any, field: str = "creature") -> None:
    require(not c.dead, f"{c.name} is dead", "CREATURE_DEAD", ctx, field)


def a_hero(c: Creature, ctx: Any, what: str, field: str = "creature") -> None:
    """B-HS-6: monsters and NPCs have no hero's surges, no dying state, no luck rolls to stay alive."""
    if not c.hero:
        raise RuleViolation(f"{c.name} is not a hero: no {what} (B-HS-6)", field=field, code="NOT_A_HERO")


def with_life(
    c: Creature, before: dict[str, Any], events: list[dict[str, Any]], **out: Any
) -> dict[str, Any]:
    """An outcome: what the fact did, the creature's numbers before and after, and the events."""
    return {**out, "before": before, "after": vit.snapshot(c), "events": events}


# --------------------------------------------------------------- registration
def _modifier(c: Creature, flags: dict[str, Any]) -> int:
    """The Constitution modifier for extra level-up dice (flag hs.con_modifier)."""
    if c.con_mod is not None:
        return c.con_mod
    return ability_modifier(c.con_score) if flags["hs.con_modifier"] == "score" else 0


def creature_registered(state: HSState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """C2.2 CreatureRegistered: HP at the maximum; a hero's surges default to the maximum (HS-15)."""
    cid = p["creature_id"]
    if cid in state.creatures:
        raise RuleViolation(f"creature {cid!r} already exists", field="creature_id", code="ALREADY_EXISTS")
    hero = p["hero"] if p["hero"] is not None else p["kind"] == "pc"
    if not hero and p["hero_surges"] is not None:
        raise InvalidInput("monsters and NPCs have no hero's surges (B-HS-6)", field="hero_surges")
    limit = hero_surges_max(p["level"])
    if p["hero_surges"] is not None and p["hero_surges"] > limit:
        raise InvalidInput(
            f"a level-{p['level']} hero has at most {limit} hero's surges (HS-15)", field="hero_surges"
        )
    c = new_creature(cid)
    c.name, c.kind, c.hero, c.level = p["name"], p["kind"], hero, p["level"]
    c.con_score, c.con_mod, c.hit_die = p["con_score"], p["con_mod"], p["hit_die"]
    c.max_hp, c.damage_reduction, c.extra_blocks = p["max_hp"], p["damage_reduction"], p["extra_blocks"]
    c.hp, c.temp_hp, c.temp_until = c.max_hp, 0, None
    c.surges = (p["hero_surges"] if p["hero_surges"] is not None else limit) if hero else None
    c.fortune_dice = p["fortune_dice"]
    c.unconscious = c.dying = c.dead = False
    c.luck_owed, c.luck_advantage, c.rank_penalties = [], False, []
    c.defend = c.initiative = None
    c.knockback_pending = 0
    c.acted_round = c.class_feature_round = None
    c.heroism_used = False
    c.last_surge_heal = None
    c.full_round = None
    c.movement_forfeited = c.broken_up = False
    state.creatures[cid] = c
    return {"creature": cid, "hero": hero, "hero_surges": c.surges, "hero_surges_max": c.surges_max}


SHEET_CHANGES = ("name", "con_score", "con_mod", "hit_die", "max_hp", "damage_reduction", "extra_blocks")


def sheet_updated(state: HSState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """A recorded sheet change (C2.2 EquipmentChanged among others). Level changes only by
    LevelGained (ruling 22); a lower max HP caps current HP."""
    unknown = set(p["changes"]) - set(SHEET_CHANGES)
    if unknown:
        raise InvalidInput(
            f"cannot change {', '.join(sorted(unknown))} on a sheet (level: LevelGained)", field="changes"
        )
    schema = FACTS["CreatureRegistered"]
    checked = {k: check_field("SheetUpdated", k, schema[k], v) for k, v in p["changes"].items()}
    c = owned(state, p["creature_id"], "creature_id")
    before = vit.snapshot(c)
    for key, value in checked.items():
        setattr(c, key, value)
    c.hp = min(c.hp, c.max_hp)
    events: list[dict[str, Any]] = []
    vit.check_death(c, state.flags, events)
    return with_life(c, before, events, creature=c.id, changed=sorted(checked))


# ------------------------------------------------------------------- damage
def _damage_total(state: HSState, p: dict[str, Any], target: Creature, critical: bool) -> dict[str, Any]:
    """The damage before reduction: a DamageRolled (maximised on a critical success, B-HS-16,
    with its additional die and Brutal rerolls), a roll, or an amount; maximised against a
    hero on a critical hit (B-HS-19)."""
    max_vs_hero = critical and target.hero and state.flags["hs.crit_against_hero"] == "max_damage"
    parts: list[dict[str, Any]] = []
    if p["damage_id"] is not None:
        d = state.damage.get(p["damage_id"])
        if d is None:
            raise NotFound(f"no damage roll {p['damage_id']!r}", field="damage_id")
        maximised = d["maximized"] or max_vs_hero
        value = dice.maximum(d["roll"]) if maximised else dice.roll_total(d["roll"])
        parts.append({"source": "maximum damage" if maximised else "damage dice", "value": value})
        if d["additional"] is not None:
            parts.append({"source": "additional damage die", "value": dice.roll_total(d["additional"])})
    if p["roll"] is not None:
        value = dice.maximum(p["roll"]) if max_vs_hero else dice.roll_total(p["roll"])
        parts.append({"source": "maximum damage" if max_vs_hero else "damage dice", "value": value})
    if p["amount"]:
        parts.append({"source": "amount", "value": p["amount"]})
    return {"parts": parts, "total": max(0, sum(x["value"] for x in parts)), "maximised_vs_hero": max_vs_hero}


def damage_applied(state: HSState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """C2.2 DamageApplied: DR unless bypassed, temporary HP, HP; then B-HS-6..9."""
    if p["damage_id"] is None and p["roll"] is None and not p["amount"]:
        raise InvalidInput("give the damage: a damage_id, a roll or an amount", field="amount")
    target = peek(state, p["target"], "target")
    alive(target, ctx, "target")
    bypass, critical, resolved = p["bypass_dr"], p["critical"], None
    if p["attack"] is not None:
        resolved = state.incoming.get(p["attack"])
        if resolved is None:
            raise NotFound(f"no incoming attack {p['attack']!r} was resolved by a defense", field="attack")
        require(
            not resolved["blocked"],
            f"attack {p['attack']!r} was blocked by {resolved['defender']}'s defense (HS-9)",
            "ATTACK_BLOCKED",
            ctx,
            "attack",
        )
        require(
            resolved["defender"] == target.id,
            f"attack {p['attack']!r} was aimed at {resolved['defender']}, not {target.id}",
            "WRONG_ATTEMPT",
            ctx,
            "attack",
        )
        bypass = bypass or resolved["bypass_dr"]
        critical = critical or resolved["critical"]
    if critical and target.hero:
        bypass = True  # B-HS-19: a critical hit against a hero bypasses armor DR
    total = _damage_total(state, p, target, critical)
    by = None
    if p["damage_id"] is not None:
        rolled = state.damage[p["damage_id"]]
        state.damage[p["damage_id"]] = {**rolled, "applied": True}
        attempt = state.attempts.get(rolled["attempt"]) if rolled["attempt"] is not None else None
        by = attempt["creature"] if attempt is not None else None
    c = owned(state, target.id, "target")
    before = vit.snapshot(c)
    events: list[dict[str, Any]] = []
    dealt = vit.take_damage(state, c, total["total"], bypass_dr=bypass, seq=ctx.seq, events=events)
    return with_life(
        c,
        before,
        events,
        target=c.id,
        by=by,
        parts=total["parts"],
        amount=total["total"],
        bypass_dr=bypass,
        critical=critical,
        **dealt,
    )


def temporary_hp(state: HSState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """HS-11 / B-HS-15: the larger pool stays; without a duration it lasts until a long rest."""
    c = owned(state, p["target"], "target")
    alive(c, ctx, "target")
    amount = p["amount"] + (max(0, dice.roll_total(p["roll"])) if p["roll"] else 0)
    until = state.minutes + p["duration_minutes"] if p["duration_minutes"] is not None else None
    before = c.temp_hp
    kept_new = vit.grant_temp_hp(c, amount, until)
    return {
        "target": c.id,
        "granted": amount,
        "temp_hp_before": before,
        "temp_hp_after": c.temp_hp,
        "kept": "new" if kept_new else "old",
        "until": "long rest" if c.temp_until is None else c.temp_until,
    }


def healing_applied(state: HSState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """HS-17, B-HS-11; HS-14: any healing ends dying. The dead need RestoredToLife (HS-12)."""
    if not p["amount"] and p["roll"] is None:
        raise InvalidInput("give the healing: an amount or a roll", field="amount")
    c = owned(state, p["target"], "target")
    alive(c, ctx, "target")
    if p["healer"] is not None:
        peek(state, p["healer"], "healer")
    amount = p["amount"] + (max(0, dice.roll_total(p["roll"])) if p["roll"] else 0)
    before = vit.snapshot(c)
    events: list[dict[str, Any]] = []
    gained = vit.heal(c, state.flags, amount, events)
    return with_life(c, before, events, target=c.id, amount=amount, hp_gained=gained)


# -------------------------------------------------------------------- dying
def luck_roll_dice(state: HSState, creature: str, context: str) -> str:
    """The dice of a luck roll (HS-14, B-HS-2, B-HS-3): one die of the flag ``hs.luck_roll``, or
    two keeping the higher when a dying hero has advantage on it. What the server rolls and what
    ``endTurn`` says is owed, so that both are what :func:`luck_roll_made` accepts."""
    die = state.flags["hs.luck_roll"]["die"]
    c = state.creatures.get(creature)
    ctx_row = LUCK_CONTEXTS.get(context)
    dying = ctx_row is not None and ctx_row.dying
    if dying and c is not None and c.luck_advantage and state.flags["hs.advantage"] == "2d20kh1":
        return f"2d{die}kh1"
    return f"1d{die}"


def _luck_faces(state: HSState, c: Creature, p: dict[str, Any], dying: bool, ctx: Any) -> tuple[int, bool]:
    """The kept face of a luck roll and whether it kept the higher of two dice (advantage, B-HS-3)."""
    die = state.flags["hs.luck_roll"]["die"]
    terms = [t for t in p["roll"]["terms"] if "faces" in t]
    single = len(terms) == 1 and terms[0]["sign"] > 0 and terms[0]["sides"] == die
    plain = single and len(terms[0]["faces"]) == 1 and "keep" not in terms[0]
    advantage = single and len(terms[0]["faces"]) == 2 and terms[0].get("keep") == "h1"
    if not (plain or advantage):
        raise RuleViolation(
            f"a luck roll is one d{die} (two keeping the higher with advantage); "
            f"got {p['roll']['expression']} (B-HS-2, B-HS-3)",
            field="roll",
            code="WRONG_DICE",
        )
    if dying and c.luck_advantage and state.flags["hs.advantage"] == "2d20kh1":
        require(
            advantage,
            f"{c.name} has advantage on this luck roll: roll two dice and keep the higher (HS-14, B-HS-3)",
            "WRONG_DICE",
            ctx,
            "roll",
        )
    return max(terms[0]["faces"]), advantage


def luck_roll_made(state: HSState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """HS-14, HS-8, B-HS-2, B-HS-9, ruling 25.

    A dying hero's luck roll is refused unless one is owed in its context: after damage taken
    while already dying (``dying_damage``), or at the start of its own turn while dying
    (``dying_turn_start``). Unlucky loses a surge (the 1/4-HP rule when none is left); a 20
    ends dying; the result is the table's ruling (the flag's threshold when none is given).
    A luck roll never kills by itself (HS-14 PROPOSAL): only through the surge it costs.
    """
    context = LUCK_CONTEXTS[p["context"]]
    who = peek(state, p["creature"])
    alive(who, ctx)
    attempt = None
    if context.attempt_level is not None:
        if p["attempt_id"] is None:
            raise InvalidInput(f"a {p['context']} luck roll names the attempt it follows", field="attempt_id")
        attempt = state.attempts.get(p["attempt_id"])
        if attempt is None:
            raise NotFound(f"no attempt {p['attempt_id']!r}", field="attempt_id")
        require(
            attempt["creature"] == who.id and attempt["level"] == context.attempt_level,
            f"attempt {p['attempt_id']!r} is not {who.name}'s {_words(context.attempt_level)} (HS-8)",
            "WRONG_ATTEMPT",
            ctx,
            "attempt_id",
        )
        if context.natural_20:
            require(
                attempt["natural"] == 20,
                f"attempt {p['attempt_id']!r} did not roll a 20: no luck roll for it (HS-8)",
                "NOT_NATURAL_20",
                ctx,
                "attempt_id",
            )
    if context.owed:
        a_hero(who, ctx, "luck rolls for dying")
        owed = [o for o in who.luck_owed if o["context"] == p["context"]]
        why = (
            "it is not the start of its own turn while dying"
            if p["context"] == "dying_turn_start"
            else "it took no damage while already dying"
        )
        require(
            bool(owed),
            f"{who.name} owes no luck roll now: {why} (B-HS-9, ruling 25)",
            "NO_LUCK_ROLL_OWED",
            ctx,
        )
    if p["roll_id"] is not None and p["roll_id"] in state.luck_rolls:
        raise RuleViolation(
            f"luck roll {p['roll_id']!r} already exists", field="roll_id", code="ALREADY_EXISTS"
        )
    kept, advantage = _luck_faces(state, who, p, context.dying, ctx)
    spec = state.flags["hs.luck_roll"]
    result = p["result"] or ("lucky" if kept >= spec["lucky_min"] else "unlucky")
    c = owned(state, who.id)
    before = vit.snapshot(c)
    events: list[dict[str, Any]] = []
    used_advantage = False
    if context.owed:
        first = next((i for i, o in enumerate(c.luck_owed) if o["context"] == p["context"]), None)
        if first is not None:
            c.luck_owed = c.luck_owed[:first] + c.luck_owed[first + 1 :]
        used_advantage, c.luck_advantage = c.luck_advantage, False
    if context.dying and (c.dying or ctx.waived):  # a kept orphan (C0.5) stands with its consequence
        if kept == 20:
            vit.end_dying(c, "a luck roll of 20", events)
        if result == "unlucky":
            vit.lose_surge(c, state.flags, "an unlucky luck roll while dying", events)
    if p["roll_id"] is not None:
        state.luck_rolls[p["roll_id"]] = {
            "creature": c.id,
            "context": p["context"],
            "attempt": p["attempt_id"],
            "natural": kept,
            "seq": ctx.seq,
        }
    return with_life(
        c,
        before,
        events,
        creature=c.id,
        context=p["context"],
        face=kept,
        result=result,
        ruled=p["result"] is not None,
        advantage=advantage,
        advantage_pending_used=used_advantage,
    )


def _dying_target(state: HSState, p: dict[str, Any], ctx: Any) -> Creature:
    healer = peek(state, p["healer"], "healer")
    alive(healer, ctx, "healer")
    target: Creature = peek(state, p["target"], "target")
    alive(target, ctx, "target")
    require(target.dying, f"{target.name} is not dying", "NOT_DYING", ctx, "target")
    return target


def medical_attempt(state: HSState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """HS-14: a successful medical attempt on a dying creature ends dying; a limited success
    grants advantage on its next luck roll."""
    target = _dying_target(state, p, ctx)
    attempt = state.attempts.get(p["attempt_id"])
    if attempt is None:
        raise NotFound(f"no attempt {p['attempt_id']!r}", field="attempt_id")
    require(
        attempt["kind"] == "medical" and attempt["creature"] == p["healer"],
        f"attempt {p['attempt_id']!r} is not {p['healer']}'s medical attempt",
        "WRONG_ATTEMPT",
        ctx,
        "attempt_id",
    )
    c = owned(state, target.id, "target")
    before = vit.snapshot(c)
    events: list[dict[str, Any]] = []
    level = attempt["level"]
    if LEVELS[level].succeeds:
        vit.end_dying(c, "a successful medical attempt", events)
    elif level == "limited_success":
        c.luck_advantage = True
        events.append({"event": "luck_advantage_granted"})
    return with_life(c, before, events, healer=p["healer"], target=c.id, success_level=level)


def healers_kit(state: HSState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """HS-14: a healer's kit on a dying creature ends dying (it is stable: B-HS-10)."""
    target = _dying_target(state, p, ctx)
    c = owned(state, target.id, "target")
    before = vit.snapshot(c)
    events: list[dict[str, Any]] = []
    vit.end_dying(c, "a healer's kit", events)
    return with_life(c, before, events, healer=p["healer"], target=c.id)


def instant_kill(state: HSState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """B-HS-23: the Instagib is never automatic; the GM rules it, citing a critical success
    with a 20 and two luck rolls of 20 that followed it."""
    target = peek(state, p["target"], "target")
    alive(target, ctx, "target")
    attempt = state.attempts.get(p["attempt_id"])
    if attempt is None:
        raise NotFound(f"no attempt {p['attempt_id']!r}", field="attempt_id")
    require(
        attempt["level"] == "critical_success" and attempt["natural"] == 20,
        f"attempt {p['attempt_id']!r} is not a critical success with a 20 (B-HS-23)",
        "NOT_NATURAL_20",
        ctx,
        "attempt_id",
    )
    require(
        not attempt["targets"] or target.id in attempt["targets"],
        f"attempt {p['attempt_id']!r} was not made against {target.name}",
        "WRONG_ATTEMPT",
        ctx,
        "target",
    )
    twenties = set()
    for rid in p["luck_roll_ids"]:
        roll = state.luck_rolls.get(rid)
        if roll is None:
            raise NotFound(f"no luck roll {rid!r}", field="luck_roll_ids")
        if roll["attempt"] == p["attempt_id"] and roll["context"] == "crit_success" and roll["natural"] == 20:
            twenties.add(rid)
    require(
        len(twenties) >= INSTAGIB_LUCK_ROLLS,
        f"an Instagib needs three successive 20s: the attempt and {INSTAGIB_LUCK_ROLLS} luck rolls of 20 "
        f"after it (got {len(twenties)})",
        "NOT_NATURAL_20",
        ctx,
        "luck_roll_ids",
    )
    c = owned(state, target.id, "target")
    before = vit.snapshot(c)
    events: list[dict[str, Any]] = []
    vit.die(c, "Instagib", events)
    return with_life(c, before, events, target=c.id, attempt_id=p["attempt_id"], luck_rolls=sorted(twenties))


def restored_to_life(state: HSState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """HS-12: only miraculous power restores the dead, at the HP given."""
    c = owned(state, p["creature"])
    require(c.dead, f"{c.name} is not dead", "NOT_DEAD", ctx)
    before = vit.snapshot(c)
    c.dead, c.dying = False, False
    c.hp = min(p["hp"], c.max_hp)
    events: list[dict[str, Any]] = [{"event": "restored_to_life", "means": p["means"]}]
    vit.wake(c, events)
    return with_life(c, before, events, creature=c.id)


# ----------------------------------------------------------------- surges
def _surge_limit(state: HSState, c: Creature, purpose: str, ctx: Any) -> None:
    limit = SURGE_PURPOSES[purpose].limit
    if limit == "round":
        now = current_round(state)
        require(
            now is None or c.class_feature_round != now,
            f"{c.name} already spent a hero's surge on a class feature this round (HS-15)",
            "CLASS_FEATURE_SURGE_USED",
            ctx,
        )
    elif limit == "turn":
        require(
            not (
                c.heroism_used
                and state.flags["hs.heroism_once_per_turn"]
                and current_round(state) is not None
            ),
            f"{c.name} already spent a hero's surge on heroism this turn (B-HS-13)",
            "HEROISM_USED",
            ctx,
        )
    elif limit == "hour":
        last = c.last_surge_heal
        require(
            last is None or state.minutes >= last + SURGE_HEALING_INTERVAL_MINUTES,
            f"{c.name} spent a hero's surge for healing at minute {last}; once per hour (HS-15, B-HS-14)",
            "SURGE_HEALING_USED",
            ctx,
        )


def surge_spent(state: HSState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """HS-15 / B-HS-13 / B-HS-14; ruling 6: a surge the hero does not have is refused, except
    when a spell makes it spend one: accepted, restores nothing."""
    purpose = SURGE_PURPOSES[p["purpose"]]
    who = peek(state, p["creature"])
    alive(who, ctx)
    a_hero(who, ctx, "hero's surges")
    assert who.surges is not None
    if purpose.conscious:
        require(not who.unconscious, f"{who.name} is unconscious", "NOT_CONSCIOUS", ctx)
    if who.surges <= 0 and purpose.forced:
        return {
            "creature": who.id,
            "purpose": p["purpose"],
            "surge_spent": False,
            "hp_gained": 0,
            "note": f"{who.name} has no hero's surge: the spell restores nothing (ruling 6)",
            "events": [],
        }
    require(who.surges > 0, f"{who.name} has no hero's surge to spend (ruling 6)", "NO_HERO_SURGE", ctx)
    _surge_limit(state, who, p["purpose"], ctx)
    c = owned(state, who.id)
    before = vit.snapshot(c)
    events: list[dict[str, Any]] = []
    assert c.surges is not None
    c.surges -= 1
    events.append({"event": "surge_spent", "purpose": p["purpose"], "hero_surges": c.surges})
    if p["purpose"] == "class_feature":
        c.class_feature_round = current_round(state)
    elif p["purpose"] == "heroism":
        c.heroism_used = True
    elif p["purpose"] == "healing":
        c.last_surge_heal = state.minutes
    gained = 0
    if purpose.heals:
        gained = vit.heal(c, state.flags, c.max_hp // 4 + p["bonus"], events)
    return with_life(
        c,
        before,
        events,
        creature=c.id,
        purpose=p["purpose"],
        surge_spent=True,
        hp_gained=gained,
        uses_action=purpose.action,
    )


def surge_drained(state: HSState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """HS-16: an involuntary loss (spells, creatures): with none left, the 1/4-HP loss (B-HS-8)."""
    c = owned(state, p["creature"])
    alive(c, ctx)
    a_hero(c, ctx, "hero's surges")
    before = vit.snapshot(c)
    events: list[dict[str, Any]] = []
    vit.lose_surge(c, state.flags, p["source"] or "drained", events)
    return with_life(c, before, events, creature=c.id, source=p["source"])


def surges_restored(state: HSState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """HS-16: restored, never above the maximum; consciousness may return."""
    c = owned(state, p["creature"])
    alive(c, ctx)
    a_hero(c, ctx, "hero's surges")
    before = vit.snapshot(c)
    events: list[dict[str, Any]] = []
    vit.restore_surges(c, p["amount"], events)
    return with_life(c, before, events, creature=c.id, source=p["source"])


def fortune_die_spent(state: HSState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """B-HS-4: what a Fortune Die does is the table's ruling (``effect``); it costs one."""
    c = owned(state, p["creature"])
    alive(c, ctx)
    require(c.fortune_dice > 0, f"{c.name} has no Fortune Die", "NO_FORTUNE_DIE", ctx)
    c.fortune_dice -= 1
    return {"creature": c.id, "effect": p["effect"], "fortune_dice": c.fortune_dice}


# ------------------------------------------------------------------- rests
def _rest_surges(c: Creature, setting: Any, events: list[dict[str, Any]]) -> None:
    assert c.surges is not None and c.surges_max is not None
    if setting == "full":
        if c.surges < c.surges_max:
            vit.restore_surges(c, c.surges_max - c.surges, events)
    elif setting:
        vit.restore_surges(c, int(setting), events)


def rest_participants(state: HSState, participants: list[str] | None) -> list[str]:
    """Who rests: those named, or every living hero when nobody is named (B-HS-21)."""
    if participants is None:
        return [cid for cid, c in state.creatures.items() if c.hero and not c.dead]
    return list(dict.fromkeys(participants))


def rest_taken(state: HSState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """B-HS-12, B-HS-21, HS-11: what a rest restores comes from the RESTS table and its flags.
    A dying creature cannot rest (it owes luck rolls); the dead are skipped when nobody is named."""
    rest = RESTS[p["kind"]]
    names = rest_participants(state, p["participants"])
    for cid in names:
        c = peek(state, cid, "participants")
        alive(c, ctx, "participants")
        require(not c.dying, f"{c.name} is dying: no rest", "CREATURE_DYING", ctx, "participants")
    results = {}
    for cid in names:
        c = owned(state, cid, "participants")
        before = vit.snapshot(c)
        events: list[dict[str, Any]] = []
        if rest.surges_flag and c.hero:
            _rest_surges(c, state.flags[rest.surges_flag], events)
        if rest.ends_undated_temp_hp and c.temp_hp and c.temp_until is None:
            events.append({"event": "temporary_hp_ended", "amount": c.temp_hp})
            c.temp_hp = 0
        if rest.hp_flag and state.flags[rest.hp_flag] == "full" and c.hp < c.max_hp:
            vit.heal(c, state.flags, c.max_hp - c.hp, events)
        vit.wake(c, events)
        results[cid] = {"before": before, "after": vit.snapshot(c), "events": events}
    return {"kind": p["kind"], "hours": p["hours"], "participants": results}


def time_advanced(state: HSState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """The game clock; timed temporary HP pools end (HS-11)."""
    state.minutes += p["minutes"]
    ended = []
    for cid, c in state.creatures.items():
        if c.temp_hp and c.temp_until is not None and c.temp_until <= state.minutes:
            mine = state.own(cid)
            mine.temp_hp, mine.temp_until = 0, None
            ended.append(cid)
    return {"clock_minutes": state.minutes, "temporary_hp_ended": ended}


# ------------------------------------------------------------------ levels
def _dice_of(roll: dict[str, Any], sides: int, field: str, what: str) -> list[int]:
    found = dice.dice_of(roll)
    if any(s != sides for s, _ in found) or any("keep" in t for t in roll["terms"]):
        raise RuleViolation(
            f"{what} must be d{sides} Hit Dice; got {roll['expression']}", field=field, code="WRONG_DICE"
        )
    return [f for _, f in found]


def level_gained(state: HSState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """Ruling 22 (level only by this fact), HS-13 / B-HS-17 (hit points), HS-15 (surge maximum)."""
    c = peek(state, p["creature"])
    alive(c, ctx)
    a_hero(c, ctx, "levels by LevelGained")
    if p["new_level"] != c.level + 1:
        raise RuleViolation(
            f"{c.name} is level {c.level}: the next level is {c.level + 1}, not {p['new_level']}",
            field="new_level",
            code="NOT_NEXT_LEVEL",
        )
    if c.hit_die is None:
        raise RuleViolation(f"{c.name}'s sheet names no Hit Die", field="creature", code="WRONG_DICE")
    sides = c.hit_die
    pair = _dice_of(p["hit_dice"], sides, "hit_dice", "the pair")
    if len(pair) != 2:
        raise RuleViolation("roll the Hit Die twice (HS-13)", field="hit_dice", code="WRONG_DICE")
    extra = _dice_of(p["con_extra"], sides, "con_extra", "the Con dice") if p["con_extra"] else []
    allowed = _modifier(c, state.flags) if c.con_score >= 12 else 0
    if len(extra) > allowed:
        raise RuleViolation(
            f"{c.name} may roll {allowed} extra Hit Dice (Con {c.con_score}, HS-13); got {len(extra)}",
            field="con_extra",
            code="WRONG_DICE",
        )
    used_extra, used_pair = set(), set()
    for s in p["swaps"]:
        if set(s) != {"extra", "pair"} or not all(
            isinstance(v, int) and not isinstance(v, bool) for v in s.values()
        ):
            raise InvalidInput("a swap is {extra: index, pair: 0 or 1}", field="swaps")
        if (
            not (0 <= s["extra"] < len(extra))
            or s["pair"] not in (0, 1)
            or s["extra"] in used_extra
            or s["pair"] in used_pair
        ):
            raise InvalidInput(f"swap {s} does not fit {len(extra)} extra dice and a pair", field="swaps")
        used_extra.add(s["extra"])
        used_pair.add(s["pair"])
    final = vit.final_pair(pair, extra, p["swaps"])
    rerolls = _dice_of(p["rerolls"], sides, "rerolls", "the rerolls") if p["rerolls"] else []
    if final == [1, 1]:
        if not rerolls or rerolls[-1] == 1 or any(f != 1 for f in rerolls[:-1]):
            raise RuleViolation(
                "two 1s: reroll the Hit Die until it shows a number other than 1 (HS-13); give every reroll",
                field="rerolls",
                code="WRONG_DICE",
            )
    elif rerolls:
        raise RuleViolation(
            "rerolls are only for a final pair of two 1s (HS-13)", field="rerolls", code="WRONG_DICE"
        )
    working = vit.level_up_gain(sides, pair, extra, p["swaps"], rerolls, state.flags)
    c = owned(state, c.id)
    before = vit.snapshot(c)
    old_max = c.surges_max
    c.level = p["new_level"]
    c.max_hp += working["gain"]
    c.hp += working["gain"]
    events: list[dict[str, Any]] = []
    assert c.surges is not None and old_max is not None and c.surges_max is not None
    if c.surges_max > old_max and state.flags["hs.level_up_gains_surge"]:
        c.surges += c.surges_max - old_max
        events.append({"event": "surge_gained", "hero_surges": c.surges})
    if c.hp >= 0:  # dying is a state of negative hit points (HS-14): risen out of them, it ends
        vit.end_dying(c, "hit points no longer negative", events)
    vit.wake(c, events)
    return with_life(
        c,
        before,
        events,
        creature=c.id,
        level=c.level,
        max_hp=c.max_hp,
        hero_surges_max=c.surges_max,
        **working,
    )


HANDLERS: dict[str, Handler] = {
    "CreatureRegistered": creature_registered,
    "SheetUpdated": sheet_updated,
    "DamageApplied": damage_applied,
    "TemporaryHitPointsGranted": temporary_hp,
    "HealingApplied": healing_applied,
    "LuckRollMade": luck_roll_made,
    "MedicalAttemptMade": medical_attempt,
    "HealersKitUsed": healers_kit,
    "InstantKillRuled": instant_kill,
    "RestoredToLife": restored_to_life,
    "HeroSurgeSpent": surge_spent,
    "HeroSurgeDrained": surge_drained,
    "HeroSurgesRestored": surges_restored,
    "FortuneDieSpent": fortune_die_spent,
    "RestTaken": rest_taken,
    "TimeAdvanced": time_advanced,
    "LevelGained": level_gained,
}
