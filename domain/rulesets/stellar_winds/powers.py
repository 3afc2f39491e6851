"""Powers, action points per the sheet, ammunition, grenades and autofire (RULES.md C1.1, C1.2,
SW-14, SW-15, SW-31, SW-49, B-SW-20, B-SW-21).

* The sheet lists powers (``CreatureRegistered.powers``: ``[{id, name?, frequency}]``, frequency
  ``at_will | encounter | daily``). ``PowerUsed`` (a power that is not an attack) and an attack
  naming ``power.power_id`` expend an encounter or daily power; an expended power is refused
  (``POWER_EXPENDED``) until a rest regains it: a short rest encounter powers, an extended rest
  daily powers too (SW-49, table ``REGAINED_BY``).
* A monster holds the action points its sheet gives (SW-14: "Monsters usually have no action
  points") and may spend up to ``action_points_per_encounter`` in an encounter (SW-15: "Some
  monsters may spend more than one per encounter"); the count starts afresh when the encounter
  ends or at a rest; an extended rest gives it its sheet's points back.
* Ammunition is a count per weapon id (``ammo``; a grenade is a weapon id too).
  ``AmmunitionExpended`` spends rounds, ``EquipmentChanged`` sets counts (reload, resupply). An
  autofire attack (B-SW-21) always spends 10 rounds; ``GrenadeThrown`` spends a grenade and finds
  where it lands (B-SW-20 ruling 1). Both attacks are Dexterity attacks against Reflex whose
  attack bonus the engine derives (half level + Dexterity modifier; autofire -4 without Firearms
  Expert; no weapon modifiers).

Handlers here wrap the ledger's own (``rules``, ``attacks``, ``encounters``): the checks run
before the wrapped handler, the changes after it succeeded, so a refused or orphaned fact
changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from domain import dice
from domain.core import encounters as core
from domain.errors import InvalidInput
from domain.rulesets.stellar_winds.rules import creature, not_dead, require
from domain.rulesets.stellar_winds.state import Creature, SWState, current_level, divide, modifier

Handler = Callable[[SWState, dict[str, Any], Any], dict[str, Any]]

FREQUENCIES = ("at_will", "encounter", "daily")
# SW-49: which rest regains which expended powers
REGAINED_BY: dict[str, tuple[str, ...]] = {"short": ("encounter",), "extended": ("encounter", "daily")}
AUTOFIRE_ROUNDS = 10  # B-SW-21: "Always spend 10 rounds of ammunition"
# B-SW-20 ruling 1 / SW-31: "1 = Upper Left, 2 = Upper right, 3 = Lower Right, 4 = Lower Left"
# (x to the right, y down)
DEVIATION: dict[int, tuple[str, tuple[int, int]]] = {
    1: ("upper left", (-1, -1)),
    2: ("upper right", (1, -1)),
    3: ("lower right", (1, 1)),
    4: ("lower left", (-1, 1)),
}
# What an attack's power may add to the power attacks.check_power reads (handled here)
GEAR_KEYS = ("power_id", "special", "weapon_id", "rounds", "firearms_expert")
SPECIALS = ("autofire", "grenade")


# ------------------------------------------------------------------ the sheet
def check_powers(value: Any, field: str = "powers") -> list[dict[str, Any]]:
    """The sheet's powers: ``[{id, name?, frequency}]`` with distinct ids."""
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for p in value:
        unknown = set(p) - {"id", "name", "frequency"}
        if unknown:
            raise InvalidInput(f"a power has unknown field(s) {', '.join(sorted(unknown))}", field=field)
        pid = p.get("id")
        if not isinstance(pid, str) or not pid or pid in seen:
            raise InvalidInput("each power has a distinct id", field=field)
        if p.get("frequency") not in FREQUENCIES:
            raise InvalidInput(f"a power's frequency is one of {', '.join(FREQUENCIES)}", field=field)
        name = p.get("name") or pid
        if not isinstance(name, str):
            raise InvalidInput("a power's name is text", field=field)
        seen.add(pid)
        out.append({"id": pid, "name": name, "frequency": p["frequency"]})
    return out


def _check_ammo(ammo: dict[str, int], field: str) -> None:
    if any(v < 0 for v in ammo.values()):
        raise InvalidInput("ammunition counts are 0 or more", field=field)


def registered(inner: Handler) -> Handler:
    """CreatureRegistered with the sheet's powers, action points (SW-14) and ammunition."""

    def handler(state: SWState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
        powers = check_powers(p.get("powers", []))
        _check_ammo(p.get("ammo", {}), "ammo")
        out = inner(state, p, ctx)
        c = state.creatures[out["creature"]]
        c.powers, c.expended, c.ammo = powers, {}, dict(p.get("ammo", {}))
        c.action_points = p.get("action_points")
        c.action_points_per_encounter = p.get("action_points_per_encounter", 1)
        c.ap_spent_encounter, c.bluff_used_in = 0, None
        if c.action_points is not None:
            c.ap = c.action_points  # SW-14: what the sheet says (a monster's, usually none)
        return out

    return handler


def sheet_updated(inner: Handler) -> Handler:
    """SheetUpdated may change the powers (an expended power that is no longer listed is gone) and
    a monster's action points (it holds what its sheet now gives)."""

    def handler(state: SWState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
        changes = p["changes"]
        if "powers" in changes:
            if not isinstance(changes["powers"], list) or not all(
                isinstance(x, dict) for x in changes["powers"]
            ):
                raise InvalidInput("powers is a list of {id, name, frequency}", field="changes")
            p = {**p, "changes": {**changes, "powers": check_powers(changes["powers"], "changes")}}
        out = inner(state, p, ctx)
        if "powers" in p["changes"]:
            c = state.own(p["creature_id"])
            listed = {x["id"] for x in c.powers}
            c.expended = {k: v for k, v in c.expended.items() if k in listed}
        c = state.creatures[p["creature_id"]]
        if p["changes"].get("action_points") is not None and not c.is_pc:
            state.own(c.id).ap = p["changes"]["action_points"]  # SW-14: what its sheet now gives
        return out

    return handler


# ------------------------------------------------------------------ powers
def power_of(c: Creature, pid: str, field: str = "power_id") -> dict[str, Any]:
    for power in c.powers:
        if power["id"] == pid:
            return power
    known = ", ".join(x["id"] for x in c.powers) or "none"
    raise InvalidInput(f"{c.name} has no power {pid!r} (its powers: {known})", field=field)


def check_usable(c: Creature, pid: str, ctx: Any, field: str = "power_id") -> dict[str, Any]:
    """C1.1 powers_used: an expended encounter or daily power waits for its rest (SW-49)."""
    power = power_of(c, pid, field)
    rest = "a short or extended rest" if power["frequency"] == "encounter" else "an extended rest"
    require(
        pid not in c.expended,
        f"{c.name}'s {power['name']} is expended until {rest} ({power['frequency'].replace('_', ' ')} power)",
        "POWER_EXPENDED",
        ctx,
        field,
    )
    return power


def expend(state: SWState, c: Creature, power: dict[str, Any]) -> bool:
    """Mark a used power expended (an at-will power never is): where and when it was used."""
    if power["frequency"] == "at_will":
        return False
    enc = core.running_for(state, c.id)
    c.expended = {
        **c.expended,
        power["id"]: {
            "frequency": power["frequency"],
            "encounter": enc.id if enc else None,
            "turn": int(enc.turn_log.get("turn_no", 0)) if enc else None,
        },
    }
    return True


def power_used(state: SWState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """C1.2 PowerUsed: marks an encounter or daily power as used; refused when it is expended."""
    c = creature(state, p["creature"])
    not_dead(c, ctx)
    require(c.conscious, f"{c.name} is not conscious", "NOT_CONSCIOUS", ctx)
    power = check_usable(c, p["power_id"], ctx)
    expended = expend(state, c, power)
    return {
        "creature": c.id,
        "power_id": power["id"],
        "name": power["name"],
        "frequency": power["frequency"],
        "expended": expended,
    }


def rest(kind: str, inner: Handler) -> Handler:
    """SW-49: a short rest regains encounter powers, an extended rest daily powers too; a
    monster's per-encounter action-point count starts afresh, and an extended rest gives it its
    sheet's action points back (SW-14)."""

    def handler(state: SWState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
        out = inner(state, p, ctx)
        regained: dict[str, list[str]] = {}
        for cid in out["participants"]:
            c = state.own(cid)
            back = sorted(k for k, v in c.expended.items() if v["frequency"] in REGAINED_BY[kind])
            if back:
                c.expended = {k: v for k, v in c.expended.items() if k not in back}
                regained[cid] = back
            if not c.is_pc:
                c.ap_spent_encounter, c.ap_locked = 0, False
                if kind == "extended" and c.action_points is not None:
                    c.ap = c.action_points
        if regained:
            out = {**out, "powers_regained": regained}
        return out

    return handler


def encounter_ended(inner: Handler) -> Handler:
    """SW-15: a monster's limit is per encounter; the count starts afresh when it ends."""

    def handler(state: SWState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
        out = inner(state, p, ctx)
        enc = state.encounters.get(p.get("encounter_id", ""))
        for cid in enc.participants if enc else ():
            c = state.creatures.get(cid)
            if c is not None and not c.is_pc and c.ap_spent_encounter:
                owned = state.own(cid)
                owned.ap_spent_encounter, owned.ap_locked = 0, False
        return out

    return handler


# ------------------------------------------------------------------ ammunition
def _rounds(c: Creature, weapon_id: str, wanted: int, ctx: Any, field: str) -> None:
    have = c.ammo.get(weapon_id, 0)
    require(
        have >= wanted,
        f"{c.name} has {have} round(s) of {weapon_id}, not {wanted}",
        "NO_AMMUNITION",
        ctx,
        field,
    )


def ammunition_expended(state: SWState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """C1.2 AmmunitionExpended: rounds of a weapon's ammunition are spent (refused without them)."""
    c = creature(state, p["creature"])
    not_dead(c, ctx)
    _rounds(c, p["weapon_id"], p["rounds"], ctx, "rounds")
    c.ammo = {**c.ammo, p["weapon_id"]: max(0, c.ammo.get(p["weapon_id"], 0) - p["rounds"])}
    return {
        "creature": c.id,
        "weapon_id": p["weapon_id"],
        "rounds": p["rounds"],
        "rounds_left": c.ammo[p["weapon_id"]],
    }


def equipment_changed(state: SWState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """C1.2 EquipmentChanged: ammunition counts set (a reload, grenades picked up)."""
    _check_ammo(p["ammo"], "ammo")
    c = creature(state, p["creature"])
    before = {k: c.ammo.get(k, 0) for k in p["ammo"]}
    c.ammo = {**c.ammo, **p["ammo"]}
    return {"creature": c.id, "before": before, "ammo": dict(c.ammo)}


def grenade_thrown(state: SWState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """B-SW-20 ruling 1: within one range increment the grenade lands on the square aimed at;
    beyond, a d4 gives the direction (SW-31) and it bounces ``increments - 1`` squares that way.
    It spends one grenade. The burst is an attack of its own (``AttackMade``, special grenade)."""
    c = creature(state, p["creature"])
    not_dead(c, ctx)
    n, roll = p["increments"], p["deviation"]
    if n > 1:
        faces = dice.dice_of(roll) if roll else []
        if len(faces) != 1 or faces[0][0] != 4:
            raise InvalidInput(
                f"beyond one range increment the grenade deviates: give the 1d4 ({n} increments)",
                field="deviation",
            )
    elif roll is not None:
        raise InvalidInput(
            "within one range increment the grenade lands where aimed: no d4", field="deviation"
        )
    _rounds(c, p["grenade_id"], 1, ctx, "grenade_id")
    x, y = p["square"]
    out: dict[str, Any] = {"creature": c.id, "grenade_id": p["grenade_id"], "aimed_at": [x, y]}
    if n > 1 and roll is not None:
        face = dice.dice_of(roll)[0][1]
        direction, (dx, dy) = DEVIATION[face]
        x, y = x + dx * (n - 1), y + dy * (n - 1)
        out.update(direction=direction, bounced=n - 1)
    c.ammo = {**c.ammo, p["grenade_id"]: c.ammo.get(p["grenade_id"], 0) - 1}
    out.update(lands_on=[x, y], grenades_left=c.ammo[p["grenade_id"]])
    return out


# ------------------------------------------------------------------ attacks
def dex_attack_parts(c: Creature, flags: dict[str, Any]) -> list[dict[str, Any]]:
    """B-SW-20 / B-SW-21: a Dexterity attack with no weapon modifiers: half level + Dex modifier."""
    return [
        {"source": "half level", "value": divide(current_level(c, flags), 2, flags)},
        {"source": "Dexterity modifier", "value": modifier(c.abilities.get("dex", 10))},
    ]


def _names(entry: dict[str, Any]) -> set[str]:
    return {x if isinstance(x, str) else str(x.get("name")) for x in entry.get("circumstances", [])}


def bluffed_for(state: SWState, target: str, attacker: str) -> bool:
    """C1.2 BluffForCombatAdvantageRolled: the target carries a bluff that gives this attacker
    combat advantage against it."""
    t = state.creatures.get(target)
    if t is None or not t.effects:  # (no effect: no bluff; most targets)
        return False
    return any(
        comp.get("combat_advantage_for") == attacker
        for e in t.effects
        if not e.get("pending")
        for comp in e["components"]
    )


def attack(inner: Handler) -> Handler:
    """AttackMade with a power from the sheet (``power.power_id``: refused when expended, expended
    after), the rounds it spends (``power.weapon_id``, ``power.rounds``: 1 by default; autofire 10),
    an autofire or grenade attack (``power.special``), and combat advantage from a bluff."""

    def handler(state: SWState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
        power = p["power"]
        if power.keys().isdisjoint(GEAR_KEYS):
            for t in p["targets"]:  # (a loop, not any() over a generator: every attack asks)
                if bluffed_for(state, t["target"], p["attacker"]) and "combat_advantage" not in _names(t):
                    break
            else:
                return inner(state, p, ctx)  # the usual attack: what the copies below would come to
        plain = {k: v for k, v in power.items() if k not in GEAR_KEYS}
        targets = [dict(t) for t in p["targets"]]
        extra: dict[str, Any] = {}
        bluffed = []
        for t in targets:  # C1.2: combat advantage against a creature it bluffed
            if bluffed_for(state, t["target"], p["attacker"]) and "combat_advantage" not in _names(t):
                t["circumstances"] = [*t.get("circumstances", []), "combat_advantage"]
                bluffed.append(t["target"])
        if bluffed:
            extra["bluff_combat_advantage"] = bluffed
        if plain == power and not bluffed:
            return inner(state, p, ctx)
        attacker = state.creatures.get(p["attacker"])
        if attacker is None:
            return inner(state, p, ctx)  # the inner handler refuses the unknown attacker
        pid, special = power.get("power_id"), power.get("special")
        used = None
        if pid is not None:
            if not isinstance(pid, str):
                raise InvalidInput(
                    "power.power_id names a power on the attacker's sheet", field="power.power_id"
                )
            used = check_usable(attacker, pid, ctx, "power.power_id")
        weapon_id = power.get("weapon_id")
        spend: tuple[str, int] | None = None  # C1.2 AmmunitionExpended: (weapon id, rounds)
        if weapon_id is not None and special != "autofire":
            if special == "grenade":
                raise InvalidInput(
                    "a grenade's burst spends no ammunition (GrenadeThrown spent the grenade)",
                    field="power.weapon_id",
                )
            rounds = power.get("rounds", 1)
            if not isinstance(weapon_id, str) or not weapon_id:
                raise InvalidInput("power.weapon_id names the weapon's ammunition", field="power.weapon_id")
            if isinstance(rounds, bool) or not isinstance(rounds, int) or not 1 <= rounds <= 10_000:
                raise InvalidInput("power.rounds is a whole number from 1", field="power.rounds")
            _rounds(attacker, weapon_id, rounds, ctx, "power.weapon_id")
            spend = (weapon_id, rounds)
        elif power.get("rounds") is not None and special != "autofire":
            raise InvalidInput("power.rounds needs power.weapon_id", field="power.rounds")
        if special is not None:
            if special not in SPECIALS:
                raise InvalidInput(f"power.special is one of {', '.join(SPECIALS)}", field="power.special")
            parts = dex_attack_parts(attacker, state.flags)
            plain.update(kind="area", defense="ref", attack_bonus=sum(x["value"] for x in parts))
            extra[special] = {"attack_bonus_parts": parts}
            if special == "autofire":
                if not isinstance(weapon_id, str) or not weapon_id:
                    raise InvalidInput(
                        "autofire names the weapon it empties (power.weapon_id)", field="power.weapon_id"
                    )
                if not isinstance(plain.get("weapon"), str):
                    raise InvalidInput(
                        "autofire deals the weapon's damage: give power.weapon (its dice)",
                        field="power.weapon",
                    )
                _rounds(attacker, weapon_id, AUTOFIRE_ROUNDS, ctx, "power.weapon_id")
                spend = (weapon_id, AUTOFIRE_ROUNDS)  # B-SW-21: always 10, whatever power.rounds says
                plain["damage"] = "1[W]"  # B-SW-21: 1[W], no ability modifier, rolled once
                if power.get("firearms_expert") is not True:
                    for t in targets:
                        t["circumstances"] = [*t.get("circumstances", []), "autofire_without_expert"]
        out = inner(state, {**p, "power": plain, "targets": targets}, ctx)
        c = state.own(attacker.id)
        if used is not None:
            extra["power_used"] = {"power_id": used["id"], "expended": expend(state, c, used)}
        if spend is not None:
            wid, n = spend
            c.ammo = {**c.ammo, wid: c.ammo.get(wid, 0) - n}
            extra["ammunition"] = {"weapon_id": wid, "rounds": n, "rounds_left": c.ammo[wid]}
            if special == "autofire":
                extra["autofire"].update(extra["ammunition"])
        return {**out, **extra}

    return handler


def view(c: Creature) -> dict[str, Any]:
    """What a character shows of its powers (with their expended state) and ammunition."""
    return {
        "powers": [
            {**x, "expended": x["id"] in c.expended, "used": dict(c.expended.get(x["id"]) or {}) or None}
            for x in c.powers
        ],
        "ammo": dict(c.ammo),
        "action_points_per_encounter": c.action_points_per_encounter,
        "action_points_spent_this_encounter": c.ap_spent_encounter,
    }
