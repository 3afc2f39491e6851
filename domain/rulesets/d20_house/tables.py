"""The d20 house rules as data (RULES.md A3): abilities, conditions, attack and damage
factors, two-weapon penalties, action sets, rests. The fold reads these; tests check the
rows against the rule ids.
"""

from __future__ import annotations

from dataclasses import dataclass

# A3: Stamina takes the place of Constitution, Agility of Dexterity, Spirit of Wisdom.
ABILITIES = ("str", "stamina", "agility", "int", "spirit", "cha")
ABILITY_NAMES = {
    "str": "Strength",
    "stamina": "Stamina",
    "agility": "Agility",
    "int": "Intelligence",
    "spirit": "Spirit",
    "cha": "Charisma",
}

# DH-15: Fortitude uses Stamina, Reflex uses Agility, Will uses Spirit.
SAVES = ("fort", "ref", "will")
SAVE_ABILITY = {"fort": "stamina", "ref": "agility", "will": "spirit"}
SAVE_NAMES = {"fort": "Fortitude", "ref": "Reflex", "will": "Will"}

# The life bands of DH-10 (C3.1 ``band``), from best to worst.
BANDS = ("fine", "disabled", "dying", "dead")
# How a creature died (C3.1 ``dead_by``).
DEATH_CAUSES = ("hp_threshold", "massive_damage", "stamina_zero", "declared")


@dataclass(frozen=True)
class Condition:
    """What a condition does (A3.4, DH-2, DH-11, DH-12). Numbers are modifiers."""

    attack: int = 0  # to its attack rolls (DH-11)
    damage: int = 0  # to its damage rolls (DH-11)
    saves: int = 0  # to its saving throws (DH-11)
    checks: int = 0  # to its checks (DH-11: the Heal check, Concentration)
    actions: str = "all"  # "all" | "one" (a standard or a move action) | "none"
    conscious: bool = True
    loses_agility_to_ac: bool = False  # DH-2
    makes_opportunity_attacks: bool = True  # B-DH-11 (flag dh.flat_footed_no_aoo)


# A3.6: the only conditions the seed has. Each is derived from the state (band, stable,
# flat-footed, running), never recorded on its own.
CONDITIONS: dict[str, Condition] = {
    "disabled": Condition(attack=-2, damage=-2, saves=-2, checks=-2, actions="one"),  # DH-11
    "dying": Condition(actions="none", conscious=False),  # DH-12
    "stable": Condition(actions="none", conscious=False),  # B-DH-4 (below -B)
    "unconscious": Condition(actions="none", conscious=False),  # DH-12
    "dead": Condition(actions="none", conscious=False),  # DH-13
    "flat_footed": Condition(loses_agility_to_ac=True, makes_opportunity_attacks=False),  # DH-2, B-DH-11
    "running": Condition(loses_agility_to_ac=True),  # DH-4 (unless the Run feat)
}


@dataclass(frozen=True)
class Feat:
    """What a feat the seed names changes (A3.2, A3.3)."""

    two_weapon: tuple[int, int] = (0, 0)  # DH-8: (primary, off-hand) penalty reduction
    keeps_agility_running: bool = False  # DH-4: the Run feat
    concentration: int = 0  # DH-5: Combat Casting, +4 to cast defensively


# Feats with an effect the fold applies; a sheet may list any other feat (kept, no effect).
FEATS: dict[str, Feat] = {
    "two_weapon_fighting": Feat(two_weapon=(2, 6)),
    "run": Feat(keeps_agility_running=True),
    "combat_casting": Feat(concentration=4),
}

# DH-8: two-weapon fighting penalties (primary hand, off hand) before the feat; a light
# off-hand weapon reduces both by 2 (a double weapon's off-hand end counts as light).
TWO_WEAPON_BASE = (-6, -10)
TWO_WEAPON_LIGHT_REDUCTION = 2

# DH-6: the ability an attack adds, by kind. Thrown weapons are ranged attacks.
ATTACK_KINDS = ("melee", "ranged", "thrown")
ATTACK_ABILITY = {"melee": "str", "ranged": "agility", "thrown": "agility"}
# DH-9: Strength to damage for melee and thrown weapons (a sling says so on its weapon).
STRENGTH_TO_DAMAGE = {"melee": True, "ranged": False, "thrown": True}
# DH-9: how much of a Strength *bonus* a grip adds, as (numerator, denominator), rounded
# down; two hands give 1 1/2 times, except with a light weapon; the off hand 1/2.
GRIPS = ("one_hand", "two_hands", "off_hand")
STRENGTH_FACTOR = {"one_hand": (1, 1), "two_hands": (3, 2), "off_hand": (1, 2)}

# What a defense leaves out (DH-6, DH-2): touch attacks ignore armor and shield; a
# flat-footed (or running) target loses its Agility.
AC_KINDS = ("ac", "touch", "flat_footed", "flat_footed_touch")

# DH-4 / B-DH-11: the action sets a round may use (each is {kind: count}); free actions are
# not counted; a 5-foot step is allowed once with any set when the creature made no other
# movement that round.
ACTION_KINDS = ("standard", "move", "full_round", "free", "five_foot_step")
ACTION_SETS: dict[str, tuple[dict[str, int], ...]] = {
    "all": ({"standard": 1, "move": 1}, {"move": 2}, {"full_round": 1}),  # DH-4
    "one": ({"standard": 1}, {"move": 1}),  # DH-11 disabled, B-DH-11 surprise round
    "none": (),  # DH-12 dying, unconscious, dead
}


@dataclass(frozen=True)
class Rest:
    """A rest that returns lost ability scores (DH-14 house rule)."""

    min_hours: int
    label: str


RESTS: dict[str, Rest] = {
    "sleep": Rest(4, "at least 4 hours of sleep"),
    "rest": Rest(8, "8 hours of rest"),
}

# DH-5: casting defensively is a Concentration check against 15 + the spell's level.
DEFENSIVE_CASTING_DC_BASE = 15
