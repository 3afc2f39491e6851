"""Hit points, hero's surges, dying and death: the one implementation of each (RULES.md A2.4-A2.6).

Every path that changes hit points or surges goes through these functions, so damage, the
1/4-HP loss of a surge the hero does not have, luck rolls, healing, rests and level-ups
agree on what follows (unconscious, dying, stable, dead). Each appends what happened to an
``events`` list, which the handlers return in their outcome (and narration reads).
"""

from __future__ import annotations

from typing import Any

from domain.rulesets.hero_surge.state import Creature

Events = list[dict[str, Any]]


def snapshot(c: Creature) -> dict[str, Any]:
    return {"hp": c.hp, "temp_hp": c.temp_hp, "hero_surges": c.surges, "life": c.life}


# ------------------------------------------------------------------ death and dying
def die(c: Creature, cause: str, events: Events) -> None:
    if c.dead:
        return
    c.dead, c.dying, c.unconscious = True, False, True
    c.luck_owed, c.luck_advantage = [], False
    events.append({"event": "died", "cause": cause})


def end_dying(c: Creature, why: str, events: Events) -> None:
    """B-HS-10: dying ends; the hero is stable (unconscious, no more luck rolls) unless it wakes."""
    if not c.dying:
        return
    c.dying = False
    c.luck_owed, c.luck_advantage = [], False
    events.append({"event": "dying_ended", "why": why})


def check_death(c: Creature, flags: dict[str, Any], events: Events) -> None:
    """HS-12 / B-HS-22 for heroes; B-HS-6 for monsters and NPCs."""
    if c.dead:
        return
    if c.hero or not flags["hs.monsters_die_below_zero"]:
        if -c.hp > c.death_threshold:
            die(c, f"negative hit points beyond {c.death_threshold}", events)
    elif c.hp < 0:
        die(c, "reduced to negative hit points", events)


def wake(c: Creature, events: Events) -> None:
    """HS-17 / HS-16: consciousness returns at 1+ HP, for a hero only while surges are not negative."""
    if c.unconscious and not c.dead and not c.dying and c.hp >= 1 and (not c.hero or (c.surges or 0) >= 0):
        c.unconscious = False
        events.append({"event": "regained_consciousness"})


def _fall_unconscious(c: Creature, events: Events) -> None:
    if not c.unconscious:
        c.unconscious = True
        events.append({"event": "fell_unconscious"})


# ------------------------------------------------------------------ surges and HP loss
def lose_surge(c: Creature, flags: dict[str, Any], cause: str, events: Events) -> None:
    """HS-16: lose a hero's surge; with none left, lose 1/4 of max HP and gain a negative surge.

    The 1/4-HP loss is HP loss, not damage (B-HS-8, ruling 25): temporary HP and damage
    reduction do not reduce it and it calls for no luck roll; but it can take HP from above 0
    to 0 or less (one more surge loss: the chain of B-HS-8, which cannot repeat because HP are
    then already at 0 or less), start dying and kill.
    """
    assert c.surges is not None
    if c.surges > 0:
        c.surges -= 1
        events.append({"event": "surge_lost", "cause": cause, "hero_surges": c.surges})
        return
    loss = c.max_hp // 4
    before = c.hp
    c.hp -= loss
    c.surges -= 1
    events.append({"event": "hp_lost", "cause": cause, "amount": loss, "hp": c.hp, "hero_surges": c.surges})
    hp_dropped(c, flags, before, events, damage=False)


def hp_dropped(c: Creature, flags: dict[str, Any], before: int, events: Events, *, damage: bool) -> None:
    """What follows a hero's HP going down (damage or HP loss): HS-12, HS-14, B-HS-7, B-HS-8."""
    if c.dead:
        return
    if c.hero:
        crossed = before > 0 >= c.hp
        every_hit = damage and c.hp <= 0 and c.hp < before and flags["hs.surge_loss_at_zero"] == "every_hit"
        if crossed or every_hit:
            _fall_unconscious(c, events)
            lose_surge(c, flags, "reduced to 0 or fewer hit points", events)  # B-HS-7
        if c.hp < 0 and not c.dying and not c.dead:
            starts = before >= 0 or damage or flags["hs.hp_loss_restarts_dying"]
            if starts:  # HS-14; B-HS-10: damage starts dying again; ruling 25: so can HP loss
                c.dying = True
                _fall_unconscious(c, events)
                events.append({"event": "started_dying"})
    elif c.hp <= 0:
        _fall_unconscious(c, events)  # B-HS-6: unconscious at exactly 0
    check_death(c, flags, events)


# ------------------------------------------------------------------ damage
def take_damage(
    state: Any, c: Creature, amount: int, *, bypass_dr: bool, seq: int, events: Events
) -> dict[str, Any]:
    """HS-10, HS-11, B-HS-24: damage reduction (unless bypassed), then temporary HP, then HP.

    Then the thresholds (HS-12, B-HS-6, B-HS-7) and, for a hero who was already dying, one
    luck roll owed for this damage instance (B-HS-9; ruling 25).
    """
    flags = state.flags
    steps: list[dict[str, Any]] = [{"step": "damage", "value": amount}]
    after_dr = amount
    if not bypass_dr and c.damage_reduction:
        after_dr = max(min(amount, flags["hs.min_damage"]), amount - c.damage_reduction)
        steps.append({"step": "damage_reduction", "value": after_dr - amount})
    elif bypass_dr and c.damage_reduction:
        steps.append({"step": "damage_reduction_bypassed", "value": 0})
    absorbed = min(c.temp_hp, after_dr)
    if absorbed:
        c.temp_hp -= absorbed
        if c.temp_hp == 0:
            c.temp_until = None
        steps.append({"step": "temporary_hp", "value": -absorbed})
    to_hp = after_dr - absorbed
    was_dying = c.dying
    before = c.hp
    c.hp -= to_hp
    steps.append({"step": "hit_points", "value": -to_hp})
    hp_dropped(c, flags, before, events, damage=True)
    took = after_dr > 0
    if c.dying and took and (was_dying or flags["hs.luck_on_damage_that_starts_dying"]):
        owe_luck(c, "dying_damage", seq, events)
    return {"taken": after_dr, "to_hp": to_hp, "steps": steps}


def owe_luck(c: Creature, context: str, seq: int, events: Events) -> None:
    c.luck_owed = [*c.luck_owed, {"context": context, "since": seq}]
    events.append({"event": "luck_roll_owed", "context": context})


# ------------------------------------------------------------------ healing
def heal(c: Creature, flags: dict[str, Any], amount: int, events: Events) -> int:
    """HS-17 / B-HS-11: add the healing to current HP (from the negative value, by default), up
    to the maximum; any healing ends dying (HS-14); consciousness may return (HS-16, HS-17).
    Returns the HP gained."""
    before = c.hp
    start = c.hp if flags["hs.heal_from_negative"] == "add" else max(c.hp, 0)
    c.hp = max(c.hp, min(c.max_hp, start + amount))
    events.append({"event": "healed", "amount": amount, "hp": c.hp})
    end_dying(c, "healing", events)
    wake(c, events)
    return c.hp - before


def grant_temp_hp(c: Creature, amount: int, until: int | None) -> bool:
    """HS-11 / B-HS-15: temporary HP do not stack; the larger pool stays, with its own duration.
    Returns whether the new pool replaced the old."""
    if amount > c.temp_hp:
        c.temp_hp, c.temp_until = amount, until
        return True
    return False


def restore_surges(c: Creature, amount: int, events: Events) -> int:
    """HS-16: surges regained, never above the maximum. Returns how many."""
    assert c.surges is not None and c.surges_max is not None
    before = c.surges
    c.surges = max(c.surges, min(c.surges_max, c.surges + amount))
    events.append({"event": "surges_restored", "amount": c.surges - before, "hero_surges": c.surges})
    wake(c, events)
    return c.surges - before


# ------------------------------------------------------------------ level-up hit points
def half_die(sides: int, flags: dict[str, Any]) -> int:
    """B-HS-17: half the die's maximum (d8 -> 4); an odd custom die rounds by the flag."""
    return -(-sides // 2) if flags["hs.half_die_rounding"] == "up" else sides // 2


def final_pair(pair: list[int], extra: list[int], swaps: list[dict[str, int]]) -> list[int]:
    """B-HS-17 step 2: the pair after the player swapped Con extra dice in."""
    final = list(pair)
    for s in swaps:
        final[s["pair"]] = extra[s["extra"]]
    return final


def level_up_gain(
    sides: int,
    pair: list[int],
    extra: list[int],
    swaps: list[dict[str, int]],
    rerolls: list[int],
    flags: dict[str, Any],
) -> dict[str, Any]:
    """HS-13 in the order of B-HS-17.

    (1) two Hit Dice; (2) the Con extra dice may be swapped into the pair; (3) a final pair of
    two 1s rerolls until a non-1 and gains it plus every 1 rolled; (4) else the higher die if
    either is at least half the die's maximum, else the sum. ``swaps`` and ``rerolls`` are
    checked by the caller. Returns the gain with its working.
    """
    final = final_pair(pair, extra, swaps)
    half = half_die(sides, flags)
    if final == [1, 1]:
        ones = sum(1 for f in [*pair, *extra, *rerolls] if f == 1)
        gain = rerolls[-1] + ones
        how = f"two 1s: reroll until {rerolls[-1]}, plus {ones} ones rolled"
    elif max(final) >= half:
        gain = max(final)
        how = f"a die of at least {half}: the higher, {gain}"
    else:
        gain = sum(final)
        how = f"both dice under {half}: the sum, {gain}"
    return {"pair": pair, "final_pair": final, "half_die": half, "gain": gain, "how": how}
