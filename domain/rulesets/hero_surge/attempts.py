"""Attempts and success levels (RULES.md A2.3): what follows from a level the table ruled.

The table rules each attempt's success level (B-HS-1, ruling 4); the fold applies the natural-1
rule (HS-7), lets a natural 20 be exchanged for a Fortune Die, counts the Devastating and
Hampering Effects the level gives and applies the chosen ones, resolves one defense roll
against several attacks (HS-9), and keeps damage rolls (maximised on a critical success, the
additional die, Brutal rerolls: B-HS-16) for ``DamageApplied``.

Attempt records live in ``state.attempts`` and are replaced, never changed in place.
"""

from __future__ import annotations

from typing import Any

from domain import dice
from domain.core.rules import owned, peek, require
from domain.errors import InvalidInput, NotFound, RuleViolation
from domain.rulesets.hero_surge import rounds
from domain.rulesets.hero_surge.state import HSState, current_round
from domain.rulesets.hero_surge.tables import (
    BAND,
    DEVASTATING,
    HAMPERING,
    LEVELS,
    NORMAL,
    RANKS_SPARED_NATURAL_1,
    SUCCESS_LEVELS,
    Option,
)

Handler = Any


def attempt_of(state: HSState, attempt_id: str, field: str = "attempt_id") -> dict[str, Any]:
    found = state.attempts.get(attempt_id)
    if found is None:
        raise NotFound(f"no attempt {attempt_id!r}", field=field)
    return found


def effective_level(ruled: str, natural: int | None, rank: str | None) -> tuple[str, bool]:
    """HS-7: a failed attempt with a natural 1 is a critical failure unless the rank is Legendary
    or Godlike. Returns the level and whether the natural-1 rule changed it."""
    if ruled == "failure" and natural == 1 and (rank or "").strip().lower() not in RANKS_SPARED_NATURAL_1:
        return "critical_failure", True
    return ruled, False


def attempt_rolled(state: HSState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """C2.2 AttemptRolled: the ruled level (B-HS-1), the natural-1 rule (HS-7), what it allows (HS-8)."""
    aid = p["attempt_id"]
    if aid in state.attempts:
        raise RuleViolation(f"attempt {aid!r} already exists", field="attempt_id", code="ALREADY_EXISTS")
    who = peek(state, p["creature"])
    require(not who.dead, f"{who.name} is dead", "CREATURE_DEAD", ctx)
    for t in p["targets"]:
        peek(state, t, "targets")
    natural = dice.natural(p["roll"])
    level, natural_1 = effective_level(p["success_level"], natural, p["rank"])
    overridden = ctx.overrides.get("success_level")
    if overridden in SUCCESS_LEVELS:
        level = overridden
    row = LEVELS[level]
    record = {
        "creature": who.id,
        "kind": p["kind"],
        "targets": list(p["targets"]),
        "ruled_level": p["success_level"],
        "level": level,
        "natural": natural,
        "rank": p["rank"],
        "seq": ctx.seq,
        "devastating": row.devastating,
        "hampering": row.hampering,
        "chosen": [],
        "allows": [],
        "exchanged": False,
        "used": False,
        "resolved": False,
        "brutal": None,
    }
    state.attempts[aid] = record
    out: dict[str, Any] = {
        "attempt_id": aid,
        "creature": who.id,
        "kind": p["kind"],
        "success_level": level,
        "ruled_level": p["success_level"],
        "natural": natural,
        "natural_1_critical_failure": natural_1,
        "devastating_effects": row.devastating,
        "hampering_effects": row.hampering,
        "may_exchange_for_fortune_die": natural == 20 and BAND[level] < NORMAL,
        "dm_may_call_luck_roll": row.may_call_luck_roll and (level != "critical_success" or natural == 20),
    }
    if overridden in SUCCESS_LEVELS:
        out["overridden"] = True
    if p["kind"] == "attack" and who.broken_up:
        c = owned(state, who.id)
        c.broken_up = False
        out["broken_up"] = True  # HS-8 Break Up: this attack is not coordinated with others
    return out


def _unused(state: HSState, aid: str, a: dict[str, Any], ctx: Any) -> None:
    require(
        not a["used"],
        f"attempt {aid!r}'s success level was already used (effects chosen or damage rolled)",
        "LEVEL_USED",
        ctx,
        "attempt_id",
    )


def fortune_die_exchanged(state: HSState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """HS-7 / HS-8 / B-HS-4: a roll of 20 may be downgraded to a normal success for a Fortune Die."""
    aid = p["attempt_id"]
    a = attempt_of(state, aid)
    require(
        a["natural"] == 20, f"attempt {aid!r} did not roll a 20 (HS-7)", "NOT_NATURAL_20", ctx, "attempt_id"
    )
    require(
        not a["exchanged"], f"attempt {aid!r} was already exchanged", "ALREADY_EXCHANGED", ctx, "attempt_id"
    )
    require(
        BAND[a["level"]] < NORMAL,
        f"attempt {aid!r} is a {a['level'].replace('_', ' ')}: nothing to downgrade to a normal success",
        "NOTHING_TO_DOWNGRADE",
        ctx,
        "attempt_id",
    )
    _unused(state, aid, a, ctx)
    who = peek(state, a["creature"])
    require(not who.dead, f"{who.name} is dead", "CREATURE_DEAD", ctx)
    c = owned(state, who.id)
    c.fortune_dice += 1
    row = LEVELS["normal_success"]
    state.attempts[aid] = {
        **a,
        "level": "normal_success",
        "exchanged": True,
        "devastating": row.devastating,
        "hampering": row.hampering,
    }
    return {
        "attempt_id": aid,
        "creature": c.id,
        "from": a["level"],
        "success_level": "normal_success",
        "fortune_dice": c.fortune_dice,
    }


def _target(state: HSState, option: Option, p: dict[str, Any]) -> str | None:
    if p["target"] is None:
        if option.needs_target:
            raise InvalidInput(f"{p['option']} names the creature it affects", field="target")
        return None
    return str(peek(state, p["target"], "target").id)


def devastating_chosen(state: HSState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """HS-8: a critical success gives one Devastating Effect."""
    aid = p["attempt_id"]
    a = attempt_of(state, aid)
    require(
        a["devastating"] > 0,
        f"attempt {aid!r} ({a['level'].replace('_', ' ')}) has no Devastating Effect to choose (HS-8)",
        "NO_DEVASTATING_EFFECT",
        ctx,
        "attempt_id",
    )
    option = DEVASTATING[p["option"]]
    target = _target(state, option, p)
    out: dict[str, Any] = {"attempt_id": aid, "option": p["option"], "target": target}
    if option.knocks_initiative_back and target is not None:
        out["knock_back"] = rounds.knock_back(state, target, aid, ctx)
    state.attempts[aid] = {
        **a,
        "devastating": a["devastating"] - 1,
        "hampering": a["hampering"] + option.grants_hampering,
        "chosen": [*a["chosen"], p["option"]],
        "allows": [*a["allows"], option.allows] if option.allows else a["allows"],
        "used": True,
    }
    if option.grants_hampering:
        out["hampering_effects"] = a["hampering"] + option.grants_hampering
    return out


def hampering_chosen(state: HSState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """HS-8: a major or limited success (or a critical's Two Hampering Effects) gives Hampering Effects."""
    aid = p["attempt_id"]
    a = attempt_of(state, aid)
    require(
        a["hampering"] > 0,
        f"attempt {aid!r} ({a['level'].replace('_', ' ')}) has no Hampering Effect left (HS-8)",
        "NO_HAMPERING_EFFECT",
        ctx,
        "attempt_id",
    )
    option = HAMPERING[p["option"]]
    target = _target(state, option, p)
    out: dict[str, Any] = {"attempt_id": aid, "option": p["option"], "target": target}
    if target is not None and (option.rank_penalty or option.breaks_up_attack):
        t = owned(state, target, "target")
        require(not t.dead, f"{t.name} is dead", "CREATURE_DEAD", ctx, "target")
        if option.rank_penalty:
            now = current_round(state)
            penalty = {
                "id": state.new_effect_id(),
                "amount": option.rank_penalty,
                "by": aid,
                "source": a["creature"],
                "seq": ctx.seq,
                "until_round": [now[0], now[1] + 1] if now else None,  # B-HS-5: end of the next round
            }
            t.rank_penalties = [*t.rank_penalties, penalty]
            out["rank_penalty"] = penalty
            out["rank_penalty_total"] = sum(x["amount"] for x in t.rank_penalties)
        if option.breaks_up_attack:
            t.broken_up = True
    state.attempts[aid] = {
        **a,
        "hampering": a["hampering"] - 1,
        "chosen": [*a["chosen"], p["option"]],
        "allows": [*a["allows"], option.allows] if option.allows else a["allows"],
        "used": True,
    }
    return out


def rank_penalty_consumed(state: HSState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """B-HS-5: the applier chooses the target's attempt that suffers the penalties (they stack)."""
    who = peek(state, p["target"], "target")
    a = attempt_of(state, p["attempt_id"])
    require(
        a["creature"] == who.id,
        f"attempt {p['attempt_id']!r} is not {who.name}'s",
        "WRONG_ATTEMPT",
        ctx,
        "attempt_id",
    )
    pending = {x["id"]: x for x in who.rank_penalties}
    wanted = p["penalty_ids"] if p["penalty_ids"] is not None else list(pending)
    require(bool(wanted), f"{who.name} has no rank penalty pending", "NO_RANK_PENALTY", ctx, "target")
    for pid in wanted:
        require(
            pid in pending,
            f"{who.name} has no rank penalty {pid!r} pending",
            "NO_RANK_PENALTY",
            ctx,
            "penalty_ids",
        )
        require(
            pid not in pending or pending[pid]["seq"] < a["seq"],
            f"attempt {p['attempt_id']!r} came before rank penalty {pid!r}: it suffers only later attempts",
            "WRONG_ATTEMPT",
            ctx,
            "attempt_id",
        )
    c = owned(state, who.id, "target")
    c.rank_penalties = [x for x in c.rank_penalties if x["id"] not in wanted]
    total = sum(pending[pid]["amount"] for pid in wanted if pid in pending)
    return {"target": c.id, "attempt_id": p["attempt_id"], "consumed": list(wanted), "rank_penalty": total}


def multi_attack_defense(state: HSState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """HS-9 / B-HS-19 / B-HS-20: one defense roll against several attacks."""
    aid = p["defense_attempt_id"]
    a = attempt_of(state, aid, "defense_attempt_id")
    require(
        a["kind"] == "defense",
        f"attempt {aid!r} is not a defense attempt",
        "WRONG_ATTEMPT",
        ctx,
        "defense_attempt_id",
    )
    require(
        not a["resolved"],
        f"defense {aid!r} was already resolved",
        "ALREADY_RESOLVED",
        ctx,
        "defense_attempt_id",
    )
    incoming = p["incoming"]
    if not incoming or len(set(incoming)) != len(incoming):
        raise InvalidInput("incoming lists each attack once (at least one)", field="incoming")
    for key in ("blocked", "bypass_armor", "crit"):
        stray = [x for x in p[key] if x not in incoming]
        if stray or len(set(p[key])) != len(p[key]):
            raise InvalidInput(f"{key} must name incoming attacks, once each: {stray}", field=key)
    again = [x for x in incoming if x in state.incoming]
    require(
        not again,
        f"attack(s) {again} were already resolved by a defense",
        "ALREADY_RESOLVED",
        ctx,
        "incoming",
    )
    defender = peek(state, a["targets"][0] if a["targets"] else a["creature"], "defense_attempt_id")
    roller = peek(state, a["creature"], "defense_attempt_id")
    level = a["level"]
    row = LEVELS[level]
    defending = 1 if roller.defend is not None else 0
    extras = roller.extra_blocks + defending + len(p["extra_block_sources"])
    allowed = row.blocks + extras
    everything = level == "critical_success" and a["natural"] == 20  # B-HS-20
    blocked = list(incoming) if everything else list(p["blocked"])
    unblocked = [x for x in incoming if x not in blocked]
    problems = []
    if not everything and len(blocked) > allowed:
        problems.append(f"a {level.replace('_', ' ')} blocks {allowed} attack(s), not {len(blocked)}")
    if set(p["bypass_armor"]) & set(blocked) or set(p["crit"]) & set(blocked):
        problems.append("a blocked attack neither bypasses armor nor crits")
    want_bypass = min(row.bypass_armor, len(unblocked))
    if len(p["bypass_armor"]) != want_bypass:
        problems.append(
            f"{want_bypass} attack(s) of the defender's choice bypass armor on a {level.replace('_', ' ')}"
        )
    if row.critical_hits and unblocked and not p["crit"]:
        problems.append("a critical failure makes one or more attacks critical hits: name them (B-HS-19)")
    if not row.critical_hits and p["crit"]:
        problems.append(f"a {level.replace('_', ' ')} makes no attack a critical hit")
    require(not problems, "; ".join(problems) + " (HS-9)", "BLOCKS_WRONG", ctx, "blocked")
    for label in incoming:
        state.incoming[label] = {
            "defender": defender.id,
            "defense": aid,
            "blocked": label in blocked,
            "bypass_dr": label in p["bypass_armor"] or label in p["crit"],
            "critical": label in p["crit"],
            "no_ill_effect": everything,
            "seq": ctx.seq,
        }
    state.attempts[aid] = {**a, "resolved": True, "used": True}
    over = max(0, allowed - len(incoming)) if not everything else 0
    return {
        "defense_attempt_id": aid,
        "defender": defender.id,
        "success_level": level,
        "blocks_allowed": "all" if everything else allowed,
        "extra_blocks": {
            "sheet": roller.extra_blocks,
            "defend": defending,
            "sources": list(p["extra_block_sources"]),
        },
        "blocked": blocked,
        "landed": unblocked,
        "bypass_armor": sorted(set(p["bypass_armor"]) | set(p["crit"])),
        "critical_hits": list(p["crit"]),
        "no_ill_effect": everything,
        "may_harry": over if level in ("critical_success", "major_success") else 0,
    }


def damage_rolled(state: HSState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """C2.2 DamageRolled / B-HS-16: a critical success maximises the damage dice; the Devastating
    Additional Damage Die is rolled and added."""
    did = p["damage_id"]
    if did in state.damage:
        raise RuleViolation(f"damage roll {did!r} already exists", field="damage_id", code="ALREADY_EXISTS")
    a = attempt_of(state, p["attempt_id"]) if p["attempt_id"] is not None else None
    if a is not None:
        require(
            LEVELS[a["level"]].succeeds,
            f"attempt {p['attempt_id']!r} is a {a['level'].replace('_', ' ')}: it does not hit, so it "
            "deals no damage (HS-8: a normal success or better)",
            "WRONG_ATTEMPT",
            ctx,
            "attempt_id",
        )
    maximised = a is not None and a["level"] == "critical_success"
    sides = {s for s, _ in dice.dice_of(p["roll"])}
    if p["additional_die"] is not None:
        require(
            a is not None and "additional_die" in a["allows"],
            "no Additional Damage Die: the attempt did not choose that Devastating Effect (HS-8)",
            "NO_ADDITIONAL_DIE",
            ctx,
            "additional_die",
        )
        extra = dice.dice_of(p["additional_die"])
        kinds = ", ".join(f"d{n}" for n in sorted(sides))
        if len(extra) != 1 or extra[0][0] not in sides:
            raise RuleViolation(
                f"the additional die is one die of the damage's kind ({kinds})",
                field="additional_die",
                code="WRONG_DICE",
            )
    state.damage[did] = {
        "attempt": p["attempt_id"],
        "roll": p["roll"],
        "maximized": maximised,
        "additional": p["additional_die"],
        "applied": False,
        "seq": ctx.seq,
    }
    if a is not None:
        allows = list(a["allows"])
        if p["additional_die"] is not None:
            allows.remove("additional_die")
        state.attempts[p["attempt_id"]] = {**a, "allows": allows, "used": True}
    total = dice.maximum(p["roll"]) if maximised else dice.roll_total(p["roll"])
    extra_total = dice.roll_total(p["additional_die"]) if p["additional_die"] is not None else 0
    return {
        "damage_id": did,
        "attempt_id": p["attempt_id"],
        "maximized": maximised,
        "dice": total,
        "additional_die": extra_total if p["additional_die"] is not None else None,
        "total": total + extra_total,
    }


def dice_rerolled(state: HSState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """B-HS-16 Brutal Damage: reroll one chosen damage die until it shows a higher result.

    Each reroll is a fact; a result that is not higher changes nothing (roll again); a higher
    one replaces the face and ends the Brutal reroll. A die at its maximum and a maximised
    roll cannot be rerolled."""
    rid = p["roll_id"]
    d = state.damage.get(rid)
    if d is None:
        raise NotFound(f"no damage roll {rid!r}", field="roll_id")
    a = state.attempts.get(d["attempt"]) if d["attempt"] is not None else None
    require(
        a is not None and "brutal" in a["allows"],
        f"damage {rid!r}: its attempt did not choose Brutal Damage (HS-8)",
        "NO_BRUTAL_REROLL",
        ctx,
        "roll_id",
    )
    assert a is not None
    require(
        not d["maximized"],
        f"damage {rid!r} is maximised: nothing to reroll (B-HS-16)",
        "NO_BRUTAL_REROLL",
        ctx,
        "roll_id",
    )
    require(not d["applied"], f"damage {rid!r} was already applied", "NO_BRUTAL_REROLL", ctx, "roll_id")
    brutal = a["brutal"]
    if brutal is not None:
        require(
            not brutal["done"] and brutal["roll"] == rid and brutal["die"] == p["die_index"],
            "Brutal Damage rerolls one damage die until it is higher"
            + (" (done)" if brutal["done"] else f": die {brutal['die']} of {brutal['roll']!r}"),
            "NO_BRUTAL_REROLL",
            ctx,
            "die_index",
        )
    faces = dice.dice_of(d["roll"])
    if not 0 <= p["die_index"] < len(faces):
        raise InvalidInput(f"damage {rid!r} has dice 0..{len(faces) - 1}", field="die_index")
    sides, face = faces[p["die_index"]]
    require(
        face < sides,
        f"die {p['die_index']} shows {face}, its maximum: no reroll (B-HS-16)",
        "DIE_AT_MAXIMUM",
        ctx,
        "die_index",
    )
    higher = p["new_face"] > face
    rolled = dice.with_face(d["roll"], p["die_index"], p["new_face"])  # checks the face fits the die
    if higher:
        state.damage[rid] = {**d, "roll": rolled}
    state.attempts[d["attempt"]] = {**a, "brutal": {"roll": rid, "die": p["die_index"], "done": higher}}
    return {
        "roll_id": rid,
        "die_index": p["die_index"],
        "old_face": face,
        "new_face": p["new_face"],
        "replaced": higher,
        "total": dice.roll_total(rolled if higher else d["roll"]),
        "note": "higher: replaces the die" if higher else "not higher: roll again",
    }


def defend_declared(state: HSState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """HS-5: advantage on defense attempts until the start of its next turn, and one extra block (HS-9)."""
    c = owned(state, p["creature"])
    require(not c.dead, f"{c.name} is dead", "CREATURE_DEAD", ctx)
    require(not c.unconscious, f"{c.name} is unconscious", "NOT_CONSCIOUS", ctx)
    if p["mode"] != "self":
        if p["target"] is None:
            raise InvalidInput(f"defend ({p['mode']}) names the creature defended", field="target")
        peek(state, p["target"], "target")
    c.defend = {"id": state.new_effect_id(), "mode": p["mode"], "target": p["target"], "since": ctx.seq}
    return {
        "creature": c.id,
        "mode": p["mode"],
        "target": p["target"],
        "advantage_on_defense": True,
        "extra_block": 1,
    }


def full_round_started(state: HSState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """HS-6: starting a full-round action uses the action; it engages until the next turn starts."""
    c = owned(state, p["creature"])
    require(not c.dead, f"{c.name} is dead", "CREATURE_DEAD", ctx)
    require(
        c.full_round is None, f"{c.name} is already in a full-round action", "FULL_ROUND_IN_PROGRESS", ctx
    )
    c.full_round = {
        "action": p["action"],
        "moved_before": p["moved_before"],
        "maintained": False,
        "since": current_round(state),
    }
    return {"creature": c.id, "action": p["action"], "moved_before": p["moved_before"]}


def _full_round_end(state: HSState, p: dict[str, Any], ctx: Any, how: str) -> dict[str, Any]:
    c = owned(state, p["creature"])
    require(c.full_round is not None, f"{c.name} is in no full-round action", "NO_FULL_ROUND_ACTION", ctx)
    assert c.full_round is not None
    action = c.full_round["action"]
    out = {"creature": c.id, "action": action, how: True}
    if how == "maintained":
        c.full_round = {**c.full_round, "maintained": True}
        return out
    if how == "completed" and c.full_round["moved_before"]:
        c.movement_forfeited = True  # HS-6: moved before starting it: no movement this turn
        out["movement_forfeited"] = True
    c.full_round = None
    return out


HANDLERS: dict[str, Handler] = {
    "AttemptRolled": attempt_rolled,
    "FortuneDieExchanged": fortune_die_exchanged,
    "DevastatingEffectChosen": devastating_chosen,
    "HamperingEffectChosen": hampering_chosen,
    "RankPenaltyConsumed": rank_penalty_consumed,
    "MultiAttackDefenseResolved": multi_attack_defense,
    "DamageRolled": damage_rolled,
    "DiceRerolled": dice_rerolled,
    "DefendDeclared": defend_declared,
    "FullRoundActionStarted": full_round_started,
    "FullRoundActionMaintained": lambda s, p, c: _full_round_end(s, p, c, "maintained"),
    "FullRoundActionAborted": lambda s, p, c: _full_round_end(s, p, c, "aborted"),
    "FullRoundActionCompleted": lambda s, p, c: _full_round_end(s, p, c, "completed"),
}
