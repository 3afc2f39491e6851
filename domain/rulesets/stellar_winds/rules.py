"""Stellar Winds character ledger: one handler per fact type.

Each handler checks every precondition *before* it changes anything (a
refused command stores nothing; an orphaned fact leaves the state as it was),
then applies the fact and returns its outcome with a breakdown. The rule ids
in the docstrings point into RULES.md.
"""

from __future__ import annotations

from typing import Any

from domain import dice
from domain.core.catalogue import check_field
from domain.core.encounters import clock as core_clock
from domain.errors import InvalidInput, NotFound, RuleViolation
from domain.rulesets.stellar_winds import bonuses, effects, overrides
from domain.rulesets.stellar_winds import damage as dmg
from domain.rulesets.stellar_winds.facts import ABILITIES, DEFENSES, FACTS
from domain.rulesets.stellar_winds.state import (
    SHEET_FIELDS,
    Creature,
    SWState,
    current_level,
    initiative_bonus,
    level_for_xp,
    new_creature,
    xp_table,
)
from domain.rulesets.stellar_winds.tables import DAMAGE_TYPES, RESTS

Handler = Any
# SW-37 / B-SW-23: +2 to all defenses until the start of the creature's next turn.
SECOND_WIND_EFFECT = {
    "name": "second wind",
    "components": [{"defense_mod": {"defense": "all", "value": 2}}],
    "duration": {"kind": "until_start_of_turn"},
}


def creature(state: SWState, cid: str, field: str = "creature") -> Creature:
    """The creature, as this state's own copy (safe to change)."""
    if cid not in state.creatures:
        raise NotFound(f"no creature {cid!r} in this campaign", field=field)
    owned: Creature = state.own(cid)
    return owned


def require(ok: bool, message: str, code: str, ctx: Any, field: str | None = None) -> None:
    """A precondition: refuse (or orphan) unless the GM waived it with an override."""
    if not ok and not ctx.waived:
        raise RuleViolation(message, field=field, code=code)


def not_dead(c: Creature, ctx: Any, field: str = "creature") -> None:
    if c.life == "dead":  # (the message is built only when it is needed)
        require(False, f"{c.name} is dead", "CREATURE_DEAD", ctx, field)


def in_turn(state: SWState, c: Creature, ctx: Any, what: str) -> None:
    """SW-15 and friends: inside a running encounter, only on the creature's own turn."""
    enc = state.encounter
    if enc is None or not state.flags["sw.enforce_turns"] or c.id not in enc.participants:
        return
    current = enc.current
    if current != c.id:  # (the message is built only when it is needed)
        require(
            False,
            f"{what} only on {c.name}'s own turn "
            + (f"(it is {current}'s turn)" if current else "(no turn is in progress)"),
            "NOT_YOUR_TURN",
            ctx,
        )


# --------------------------------------------------------------- registration
def _check_sheet(p: dict[str, Any]) -> None:
    if "abilities" in p and set(p["abilities"]) != set(ABILITIES):
        raise InvalidInput("abilities must give exactly str, con, dex, int, wis and cha", field="abilities")
    if "abilities" in p and not all(1 <= v <= 40 for v in p["abilities"].values()):
        raise InvalidInput("ability scores run from 1 to 40", field="abilities")
    if "defenses" in p and set(p["defenses"]) != set(DEFENSES):
        raise InvalidInput("defenses must give exactly ac, fort, ref and will", field="defenses")
    for key in ("resist", "vuln"):
        if key in p and any(v < 0 for v in p[key].values()):
            raise InvalidInput(f"{key} values must not be negative", field=key)


def creature_registered(state: SWState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """C1.2 CreatureRegistered: hp = max, wounds = max wounds, AP 1 for a PC (SW-14)."""
    _check_sheet(p)
    cid = p["creature_id"]
    if cid in state.creatures:
        raise RuleViolation(f"creature {cid!r} already exists", field="creature_id", code="ALREADY_EXISTS")
    thresholds = xp_table(state.flags)
    if p["kind"] == "pc" and p["xp"] is None and p["level"] > len(thresholds):
        raise InvalidInput(
            f"the campaign's XP table stops at level {len(thresholds)}: give this PC's XP", field="level"
        )
    c = new_creature(cid)
    c.name, c.kind, c.heroic, c.level = p["name"], p["kind"], p["heroic"], p["level"]
    c.abilities, c.max_hp, c.surges_per_day = dict(p["abilities"]), p["max_hp"], p["surges_per_day"]
    c.defenses, c.speed = dict(p["defenses"]), p["speed"]
    c.resist, c.vuln, c.regeneration = dict(p["resist"]), dict(p["vuln"]), p["regeneration"]
    c.crit_min, c.initiative_misc = p["crit_min"], p["initiative_misc"]
    c.max_wounds_override, c.second_wind = p["max_wounds"], p["second_wind"]
    c.hp, c.temp_hp, c.wounds, c.surges = c.max_hp, 0, c.max_wounds(state.flags), c.surges_per_day
    c.second_wind_used, c.life, c.death_fails = False, "active", 0
    c.ap = 1 if c.is_pc else 0
    c.ap_locked, c.encounters_since_rest = False, 0
    # adopted ruling 9: a PC registered at level N without XP has that level's threshold
    c.xp = (p["xp"] if p["xp"] is not None else thresholds[c.level - 1]) if c.is_pc else None
    c.level_pinned = None
    c.last_extended_rest_at = None
    c.care_day = None
    c.effects = []
    state.creatures[cid] = c
    return {"creature": cid}


# What a recorded sheet update may change: the sheet, but not what kind of creature it is.
SHEET_CHANGES = (set(SHEET_FIELDS) - {"kind", "max_wounds_override"}) | {"max_wounds"}


def sheet_updated(state: SWState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """C1.2 LevelChanged / MaxHpAdjusted / AbilityScoresChanged as one recorded sheet update."""
    c = creature(state, p["creature_id"], "creature_id")
    unknown = set(p["changes"]) - SHEET_CHANGES
    if unknown:
        raise InvalidInput(f"cannot change {', '.join(sorted(unknown))} on a sheet", field="changes")
    checked = _validate_changes(p["changes"])
    _check_sheet(checked)
    delta_hp = checked.get("max_hp", c.max_hp) - c.max_hp
    for key, value in checked.items():
        setattr(c, "max_wounds_override" if key == "max_wounds" else key, value)
    if delta_hp > 0:
        c.hp += delta_hp  # C1.2: the max HP difference is added to current HP
    c.hp = max(0, min(c.hp, c.max_hp))
    c.wounds = min(c.wounds, c.max_wounds(state.flags))
    c.surges = min(c.surges, c.surges_per_day)
    return {"creature": c.id, "changed": sorted(checked)}


def _validate_changes(changes: dict[str, Any]) -> dict[str, Any]:
    """Check each changed value against the registration schema."""
    schema = FACTS["CreatureRegistered"]
    return {key: check_field("SheetUpdated", key, schema[key], value) for key, value in changes.items()}


# ------------------------------------------------------------------- damage
def damage_taken(state: SWState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """Damage from a source other than an attack (SW-31, SW-30 pipeline, SW-32 layers)."""
    unknown = [t for t in p["types"] if t not in DAMAGE_TYPES]
    if unknown:  # an unknown type would silently bypass resistance and vulnerability (SW-27)
        raise InvalidInput(
            f"unknown damage type(s) {', '.join(unknown)}; known: {', '.join(sorted(DAMAGE_TYPES))}",
            field="types",
        )
    c = creature(state, p["target"], "target")
    not_dead(c, ctx, "target")
    rolled = (dice.roll_total(p["roll"]) if p["roll"] else 0) + p["amount"]
    amount, steps = dmg.modify(c, rolled, p["types"], half=p["half"], flags=state.flags)
    fiat, given = overrides.value(ctx, "amount")  # C0.4
    if given:
        amount = int(fiat)
        steps.append({"step": "GM override (C0.4)", "value": amount})
    result = dmg.deliver(state, c, amount, wounding=p["wounding"], nonlethal=p["nonlethal"])
    return {"target": c.id, "types": p["types"], "steps": steps, **result}


def healing_applied(state: SWState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """SW-35, SW-36, SW-40, B-SW-9, adopted ruling 6 (no surge: no HP, no wounds)."""
    c = creature(state, p["target"], "target")
    not_dead(c, ctx, "target")
    dmg.can_heal(c)  # even a kept orphan: nothing changes before this holds
    if p["healer"] is not None:
        creature(state, p["healer"], "healer")
    surge_spent = False
    if p["requires_surge"] and c.surges <= 0:
        require(
            state.flags["sw.heal_without_surge"] != "refuse",
            f"{c.name} has no healing surge left (SW-36, flag sw.heal_without_surge)",
            "NO_HEALING_SURGE",
            ctx,
        )
        return {
            "target": c.id,
            "surge_spent": False,
            "amount": 0,
            "hp_healed": 0,
            "wounds_healed": 0,
            "note": f"{c.name} has no healing surge left: the healing restores nothing",
        }
    if p["requires_surge"]:
        c.surges -= 1
        surge_spent = True
    parts = [
        {
            "source": f"{p['surge_multiplier']} x surge value",
            "value": c.surge_value(state.flags) * p["surge_multiplier"],
        },
        {"source": "dice", "value": dice.roll_total(p["roll"]) if p["roll"] else 0},
        {"source": "flat", "value": p["flat"]},
    ]
    parts = [x for x in parts if x["value"] or x["source"] == "dice" and p["roll"]]
    fiat, given = overrides.value(ctx, "amount")  # C0.4
    if given:
        parts.append({"source": "GM override (C0.4)", "value": int(fiat) - sum(x["value"] for x in parts)})
    result = dmg.heal(state, c, max(0, sum(x["value"] for x in parts)), magical=p["magical"])
    return {"target": c.id, "surge_spent": surge_spent, "parts": parts, **result}


def temporary_hp(state: SWState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """SW-34 / B-SW-17: temp HP do not add; the larger pool stays (flag ``sw.temp_hp_grant``)."""
    c = creature(state, p["target"], "target")
    not_dead(c, ctx, "target")
    amount = p["amount"] + (dice.roll_total(p["roll"]) if p["roll"] else 0)
    before = c.temp_hp
    add = state.flags["sw.temp_hp_grant"] == "add"
    c.temp_hp = c.temp_hp + amount if add else max(c.temp_hp, amount)
    return {"target": c.id, "granted": amount, "temp_hp_before": before, "temp_hp_after": c.temp_hp}


def surge_spent(state: SWState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """Spend a healing surge to regain its value in HP (SW-36; adopted ruling 6: refused with none)."""
    c = creature(state, p["creature"])
    not_dead(c, ctx)
    require(c.surges > 0, f"{c.name} has no healing surge left", "NO_HEALING_SURGE", ctx)
    require(
        c.conscious, f"{c.name} is not conscious and cannot spend a surge on its own", "NOT_CONSCIOUS", ctx
    )
    dmg.can_heal(c)
    c.surges = max(0, c.surges - 1)
    return {
        "creature": c.id,
        "surges_left": c.surges,
        **dmg.heal(state, c, c.surge_value(state.flags), magical=False),
    }


def second_wind(state: SWState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """SW-37 / B-SW-23: PCs only, once until a rest, spends a surge, +2 defenses to its next turn."""
    c = creature(state, p["creature"])
    not_dead(c, ctx)
    allowed = c.second_wind if c.second_wind is not None else c.is_pc
    require(allowed, f"{c.name} cannot use second wind (PCs only, SW-37)", "NOT_ALLOWED", ctx)
    require(
        not c.second_wind_used,
        f"{c.name} has already used second wind; a rest regains it",
        "SECOND_WIND_USED",
        ctx,
    )
    require(c.surges > 0, f"{c.name} has no healing surge left", "NO_HEALING_SURGE", ctx)
    require(c.conscious, f"{c.name} is not conscious", "NOT_CONSCIOUS", ctx)
    in_turn(state, c, ctx, "second wind")
    dmg.can_heal(c)
    c.surges = max(0, c.surges - 1)
    c.second_wind_used = True
    healed = dmg.heal(state, c, c.surge_value(state.flags), magical=False)
    if state.encounter is not None and c.id in state.encounter.participants:
        effects.apply(state, c, SECOND_WIND_EFFECT, source=c.id, ctx=ctx)
    return {"creature": c.id, "surges_left": c.surges, **healed}


def death_save(state: SWState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """SW-42 with B-SW-7, B-SW-8 and adopted ruling 11."""
    c = creature(state, p["creature"])
    require(c.life == "dying", f"{c.name} is not dying", "NOT_DYING", ctx)
    require(c.makes_death_saves, f"{c.name} makes no death saves (B-SW-13)", "NOT_ALLOWED", ctx)
    if state.flags["sw.death_save_timing"] == "end_of_own_turn":
        in_turn(state, c, ctx, "a death saving throw is rolled at the end of the creature's turn:")
    enc = state.encounter
    turn_log = enc.turn_log if enc is not None and enc.current == c.id else None  # its own turn
    if turn_log is not None:
        require(
            not turn_log.get("death_save"),
            f"{c.name} has already rolled its death save this turn",
            "ALREADY_ROLLED",
            ctx,
        )
    natural = dice.natural(p["roll"])
    mods = bonuses.total(bonuses.declared(p["modifiers"], lambda m: _holds(m, ctx), state.flags))
    total = dice.roll_total(p["roll"]) + mods
    fiat, given = overrides.value(ctx, "total")  # C0.4
    if given:
        total = int(fiat)
    if total >= 20 and c.surges > 0:
        dmg.can_heal(c)
    outcome: dict[str, Any] = {"creature": c.id, "natural": natural, "total": total}
    if total < 10:
        c.death_fails += 1
        if state.flags["sw.death_save_failure_costs_wound"]:
            c.wounds -= 1
        outcome["result"] = "failure"
        if (
            c.death_fails >= state.flags["sw.death_save_failures_to_die"]
            or c.wounds <= state.flags["sw.death_wounds_threshold"]
        ):
            c.life = "dead"
    elif total < 20:
        outcome["result"] = "no change"
    elif c.surges > 0:
        c.surges -= 1
        outcome["result"] = "spends a surge and wakes"
        outcome.update(dmg.heal(state, c, c.surge_value(state.flags), magical=False))
    else:
        outcome["result"] = "20 or higher, but no surge left: no change"
    if turn_log is not None:
        turn_log["death_save"] = True
    outcome["death_save_failures"] = c.death_fails
    outcome["life_after"] = c.life
    return outcome


def _holds(modifier: dict[str, Any], ctx: Any) -> bool:
    rid = modifier.get("ruling")
    return rid is None or ctx.ruling_holds(rid)


def stabilization(state: SWState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """B-SW-10: a first-aid check (DC 15 by default) stops the death saves."""
    c = creature(state, p["target"], "target")
    require(c.life == "dying", f"{c.name} is not dying", "NOT_DYING", ctx, "target")
    if p["healer"] is not None:
        h = creature(state, p["healer"], "healer")
        require(h.conscious, f"{h.name} is not conscious", "NOT_CONSCIOUS", ctx, "healer")
    dc = p["dc"] if p["dc"] is not None else state.flags["sw.first_aid_stabilize_dc"]
    total = dice.roll_total(p["roll"]) if p["roll"] else None
    success = total is None or total >= dc
    fiat, given = overrides.value(ctx, "success")  # C0.4
    if given:
        success = bool(fiat)
    if success:
        c.life = "stabilized"
    return {"target": c.id, "total": total, "dc": dc, "success": success, "life_after": c.life}


def wounds_restored(state: SWState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """SW-40, B-SW-27: magic, medical treatment, or Long Term-Care (1 per patient per day)."""
    c = creature(state, p["target"], "target")
    not_dead(c, ctx, "target")
    amount = p["amount"]
    if p["method"] == "long_term_care":
        day = state.minutes // 1440
        per_day = state.flags["sw.long_term_care_per_day"]
        require(c.care_day != day, f"{c.name} already had Long Term-Care today", "ALREADY_CARED_TODAY", ctx)
        require(
            amount <= per_day,
            f"Long Term-Care restores at most {per_day} wound per day",
            "TOO_MUCH",
            ctx,
            "amount",
        )
        c.care_day = day
    before = c.wounds
    c.wounds = min(c.max_wounds(state.flags), c.wounds + amount)
    if c.wounds > 0 and c.life in ("dying", "stabilized", "knocked_out"):
        c.life = "active"
    return {"target": c.id, "wounds_before": before, "wounds_after": c.wounds, "life_after": c.life}


def death_declared(state: SWState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    c = creature(state, p["creature"])
    not_dead(c, ctx)
    c.life = "dead"
    return {"creature": c.id, "cause": p["cause"]}


def creature_raised(state: SWState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    c = creature(state, p["creature"])
    require(c.life == "dead", f"{c.name} is not dead", "NOT_DEAD", ctx)
    c.life, c.death_fails = "active", 0
    c.effects = []  # whatever held it before it died is over
    c.hp, c.wounds = min(p["hp"], c.max_hp), min(p["wounds"], c.max_wounds(state.flags))
    return {"creature": c.id, "hp": c.hp, "wounds": c.wounds}


# ------------------------------------------------------------- rests and time
def _is_pc(c: Creature) -> bool:
    return c.is_pc


def _participants(state: SWState, p: dict[str, Any]) -> list[Creature]:
    if p["participants"] is None:
        creatures = state.creatures
        pcs = state.registered("pcs", _is_pc)
        return [state.own(cid) for cid in pcs if creatures[cid].life != "dead"]
    return [creature(state, cid, "participants") for cid in p["participants"]]


def _rest(kind: str) -> Handler:
    rest = RESTS[kind]

    def handler(state: SWState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
        """SW-48, SW-49 (contents in tables.RESTS), B-SW-25."""
        who = _participants(state, p)
        enc = state.encounter
        require(
            enc is None,
            f"the encounter {enc.name if enc else ''!s} is still running; end it before resting",
            "ENCOUNTER_RUNNING",
            ctx,
        )
        for c in who:
            not_dead(c, ctx, "participants")
            require(
                c.life != "dying",
                f"{c.name} is dying; stabilise or heal first",
                "CREATURE_DYING",
                ctx,
                "participants",
            )
            sustaining = [
                e
                for other in state.holding("sustained")
                for e in other.effects
                # the sustainer is the duration's anchor, else the source (as EffectSustained reads it)
                if e["duration"].get("kind") == "sustained"
                and (e["duration"].get("anchor") or e.get("source")) == c.id
            ]
            require(
                not sustaining,
                f"{c.name} is sustaining an effect and cannot rest (SW-44)",
                "SUSTAINING",
                ctx,
                "participants",
            )
            if rest.once_per_day and c.last_extended_rest_at is not None:
                wait = state.flags["sw.extended_rest_interval_hours"] * 60
                require(
                    state.minutes - c.last_extended_rest_at >= wait,
                    f"{c.name} had an extended rest less than {wait // 60} game hours ago",
                    "EXTENDED_REST_TOO_SOON",
                    ctx,
                    "participants",
                )
        minutes = p["minutes"] if kind == "short" else p["hours"] * 60
        start = state.minutes
        for c in who:
            _restore(state, c, rest, start)
        state.minutes += minutes
        out = {
            "participants": [c.id for c in who],
            "minutes": minutes,
            "clock": state.minutes,
            # what the rest does to the clock (issue 14): from when to when, in day and hour
            "clock_from": core_clock(start),
            "clock_to": core_clock(state.minutes),
        }
        if rest.once_per_day:  # B-SW-25: the next extended rest, counted from this one's start
            out["next_extended_rest_from"] = core_clock(
                start + state.flags["sw.extended_rest_interval_hours"] * 60
            )
        return out

    return handler


def _restore(state: SWState, c: Creature, rest: Any, start: int) -> None:
    flags = state.flags
    if rest.revives_knocked_out and c.life == "knocked_out":
        c.life, c.hp, c.wounds = "active", max(c.hp, 1), max(c.wounds, 1)  # B-SW-11
    if (
        rest.wakes_stabilized
        and c.life == "stabilized"
        and flags["sw.stabilized_rest_sets_wounds_to"] is not None
    ):
        c.wounds = max(c.wounds, flags["sw.stabilized_rest_sets_wounds_to"])  # B-SW-10
        c.life = "active"
    if rest.regains_second_wind:
        c.second_wind_used = False
    if rest.clears_action_point_lock:
        c.ap_locked = False
    if rest.ends_temporary_hp:
        c.temp_hp = 0
    if rest.resets_death_save_failures:
        c.death_fails = 0
    if rest.ends_encounter_effects:
        c.effects = [e for e in c.effects if e["duration"].get("kind") != "end_of_encounter"]
    if rest.restores_hp:
        c.hp = c.max_hp
    if rest.restores_surges:
        c.surges = c.surges_per_day
    if rest.resets_action_points and c.is_pc:
        c.ap = flags["sw.ap_reset_on_extended_rest"]
    if rest.resets_milestones:
        c.encounters_since_rest = 0
    if rest.once_per_day:
        c.last_extended_rest_at = start


# ------------------------------------------------------ action points and XP
def milestone(state: SWState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """SW-14: +1 action point at a milestone."""
    who = [creature(state, cid, "creatures") for cid in p["creatures"]]
    for c in who:
        c.ap += 1
    return {"creatures": [c.id for c in who]}


def action_point_spent(state: SWState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """SW-15: one per short rest, on your own turn, never in a surprise round; B-SW-29."""
    c = creature(state, p["creature"])
    not_dead(c, ctx)
    require(c.conscious, f"{c.name} is not conscious", "NOT_CONSCIOUS", ctx)
    require(c.ap > 0, f"{c.name} has no action point", "NO_ACTION_POINT", ctx)
    if c.is_pc:  # adopted ruling 12: until a rest
        require(
            not c.ap_locked,
            f"{c.name} already spent an action point; a short rest is needed first",
            "ACTION_POINT_LOCKED",
            ctx,
        )
    else:  # SW-15: a monster's sheet says how many per encounter
        require(
            c.ap_spent_encounter < c.action_points_per_encounter,
            f"{c.name} already spent {c.ap_spent_encounter} action point(s) in this encounter "
            f"(its sheet allows {c.action_points_per_encounter})",
            "ACTION_POINT_LOCKED",
            ctx,
        )
    enc = state.encounter
    if enc is not None and c.id in enc.participants:
        require(
            not enc.surprise_round, "no action points in the surprise round (SW-5)", "SURPRISE_ROUND", ctx
        )
        if not state.flags["sw.ap_while_dazed"]:
            require(not c.has_condition("dazed"), f"{c.name} is dazed", "DAZED", ctx)
    in_turn(state, c, ctx, "an action point can be spent")
    c.ap -= 1
    if c.is_pc:
        c.ap_locked = True
    else:
        c.ap_spent_encounter += 1
        c.ap_locked = c.ap_spent_encounter >= c.action_points_per_encounter
    if enc is not None and c.id in enc.participants:
        extra = {"extra_standard": "standard", "extra_move": "move", "extra_minor": "minor"}.get(p["use"])
        if extra:
            budget = enc.turn_log.setdefault("extra", {})
            budget[extra] = budget.get(extra, 0) + 1
    return {"creature": c.id, "use": p["use"], "action_points_left": c.ap}


def xp_awarded(state: SWState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """Adopted rulings 3 and 9: XP for PCs; level follows from the XP table."""
    who = [creature(state, cid, "creatures") for cid in p["creatures"]]
    for c in who:
        if c.kind != "pc":
            raise RuleViolation(
                f"{c.name} is a {c.kind}: monsters and NPCs track no XP (adopted ruling 9)",
                field="creatures",
                code="NOT_ALLOWED",
            )
    levels = {}
    for c in who:
        before = current_level(c, state.flags)
        c.xp = (c.xp or 0) + p["amount"]
        levels[c.id] = {"xp": c.xp, "level_before": before, "level_after": current_level(c, state.flags)}
    return {"amount": p["amount"], "creatures": levels}


def level_set(state: SWState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """A GM sets a level explicitly (adopted ruling 3); null returns a PC to its XP level."""
    c = creature(state, p["creature"])
    if c.kind == "pc":
        c.level_pinned = p["level"]
    else:
        if p["level"] is None:
            raise InvalidInput("a monster or NPC needs a level", field="level")
        c.level = p["level"]
    xp_level = level_for_xp(c.xp, xp_table(state.flags)) if c.xp is not None else None
    return {"creature": c.id, "level": current_level(c, state.flags), "xp_level": xp_level}


def explosive_save(state: SWState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """B-SW-20 ruling 3 (flag ``sw.explosive_save``): d20 + (Reflex defense - 10) against the
    explosive's DC; a success halves the damage, which then goes through SW-30 and SW-32."""
    unknown = [t for t in p["types"] if t not in DAMAGE_TYPES]
    if unknown:
        raise InvalidInput(f"unknown damage type(s) {', '.join(unknown)}", field="types")
    c = creature(state, p["target"], "target")
    not_dead(c, ctx, "target")
    natural = dice.natural(p["roll"])
    if natural is None:
        raise InvalidInput("an explosive save is a single d20 (plus modifiers)", field="roll")
    if state.flags["sw.explosive_save"] == "half_level_plus_dex":
        bonus = {
            "source": "half level + Dexterity modifier",
            "value": initiative_bonus(c, state.flags) - c.initiative_misc,
        }
    else:
        bonus = {"source": "Reflex defense - 10", "value": c.defenses["ref"] - 10}
    parts = [bonus, *bonuses.declared(p["modifiers"], lambda m: _holds(m, ctx), state.flags)]
    total = dice.roll_total(p["roll"]) + bonuses.total(parts)
    success = total >= p["dc"]
    fiat, given = overrides.value(ctx, "success")  # C0.4
    if given:
        success = bool(fiat)
    rolled = (dice.roll_total(p["damage"]) if p["damage"] else 0) + p["amount"]
    amount, steps = dmg.modify(c, rolled, p["types"], half=success, flags=state.flags)
    if success:
        steps[1]["step"] = "half damage (explosive save)"
    delivered = dmg.deliver(state, c, amount)
    return {
        "target": c.id,
        "natural": natural,
        "save_parts": parts,
        "total": total,
        "dc": p["dc"],
        "success": success,
        "types": p["types"],
        "steps": steps,
        **delivered,
    }


def dice_rerolled(state: SWState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """C0.3: an in-game reroll (not an amendment: the first face stays in the log). The fact
    that uses the roll comes next, with the new face; this one changes no state."""
    if p["creature"] is not None:
        creature(state, p["creature"], "creature")
    faces = dice.dice_of(p["roll"])
    rerolled = dice.with_face(p["roll"], p["die_index"], p["new_face"])  # the die exists, the face fits
    return {
        "creature": p["creature"],
        "die_index": p["die_index"],
        "old_face": faces[p["die_index"]][1],
        "new_face": p["new_face"],
        "total_before": dice.roll_total(p["roll"]),
        "total_after": dice.roll_total(rerolled),
        "reason": p["reason"],
    }


HANDLERS: dict[str, Handler] = {
    "CreatureRegistered": creature_registered,
    "SheetUpdated": sheet_updated,
    "DamageTaken": damage_taken,
    "HealingApplied": healing_applied,
    "TemporaryHitPointsGranted": temporary_hp,
    "HealingSurgeSpent": surge_spent,
    "SecondWindUsed": second_wind,
    "DeathSavingThrowRolled": death_save,
    "StabilizationAttempted": stabilization,
    "WoundsRestored": wounds_restored,
    "DeathDeclared": death_declared,
    "CreatureRaised": creature_raised,
    "ShortRestTaken": _rest("short"),
    "ExtendedRestTaken": _rest("extended"),
    "MilestoneReached": milestone,
    "ActionPointSpent": action_point_spent,
    "ExperienceAwarded": xp_awarded,
    "LevelSet": level_set,
    "ExplosiveSaveRolled": explosive_save,
    "DiceRerolled": dice_rerolled,
}
