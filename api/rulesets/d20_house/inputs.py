"""The d20 house rules' GraphQL inputs (RULES.md A3): sheets, attacks with their confirmation
and damage, hit points, dying, saves, ability damage, actions, death and resurrection.

Every die is a ``DiceInput`` (``expression`` and optional ``faces`` read off physical dice; the
server rolls otherwise). A stabilisation roll is ``d%`` (its "00" face entered as 100).
Every type is prefixed ``D20`` so no other system's names collide.
"""

from __future__ import annotations

import enum

import strawberry
from strawberry.scalars import JSON

from api.graphql.enums import CreatureKind
from api.graphql.inputs import DiceInput, MutationInput

MODIFIERS = (
    "Declared modifiers: a list of {source, value} (cover, flanking...), optionally citing a "
    "ruling ({source, value, ruling})."
)


@strawberry.enum(description="The six abilities of the d20 house rules (A3).")
class D20Ability(enum.Enum):
    STRENGTH = "str"
    STAMINA = "stamina"
    AGILITY = "agility"
    INTELLIGENCE = "int"
    SPIRIT = "spirit"
    CHARISMA = "cha"


@strawberry.enum
class D20Save(enum.Enum):
    FORT = "fort"
    REF = "ref"
    WILL = "will"


@strawberry.enum(description="DH-6: melee adds Strength; ranged and thrown add Agility.")
class D20WeaponKind(enum.Enum):
    MELEE = "melee"
    RANGED = "ranged"
    THROWN = "thrown"


@strawberry.enum(description="DH-9: how the weapon is held (Strength x1, x1 1/2, x1/2 to damage).")
class D20Grip(enum.Enum):
    ONE_HAND = "one_hand"
    TWO_HANDS = "two_hands"
    OFF_HAND = "off_hand"


@strawberry.enum(description="Which armor class the attack is against (DH-6, DH-2).")
class D20Defense(enum.Enum):
    AC = "ac"
    TOUCH = "touch"
    FLAT_FOOTED = "flat_footed"
    FLAT_FOOTED_TOUCH = "flat_footed_touch"


@strawberry.enum
class D20Hand(enum.Enum):
    PRIMARY = "primary"
    OFF = "off"


@strawberry.enum(description="DH-4 action types.")
class D20ActionKind(enum.Enum):
    STANDARD = "standard"
    MOVE = "move"
    FULL_ROUND = "full_round"
    FREE = "free"
    FIVE_FOOT_STEP = "five_foot_step"


@strawberry.enum(description="DH-14: at least 4 hours of sleep, or 8 hours of rest.")
class D20RestKind(enum.Enum):
    SLEEP = "sleep"
    REST = "rest"


@strawberry.input(description="Ability scores (default 10 each); Stamina is at least 1.")
class D20AbilitiesInput:
    strength: int = 10
    stamina: int = 10
    agility: int = 10
    intelligence: int = 10
    spirit: int = 10
    charisma: int = 10

    def as_payload(self) -> dict[str, int]:
        return {
            "str": self.strength,
            "stamina": self.stamina,
            "agility": self.agility,
            "int": self.intelligence,
            "spirit": self.spirit,
            "cha": self.charisma,
        }


@strawberry.input(description="Base save bonuses from the sheet (the progressions are ABSENT).")
class D20SavesInput:
    fort: int = 0
    ref: int = 0
    will: int = 0


@strawberry.input
class D20RegisterCreatureInput(MutationInput):
    name: str
    kind: CreatureKind
    level: int
    max_hp: int
    base_attack_bonus: list[int] = strawberry.field(
        description="With its iteratives, highest first: +6/+1 is [6, 1]."
    )
    abilities: D20AbilitiesInput = strawberry.field(default_factory=D20AbilitiesInput)
    base_saves: D20SavesInput = strawberry.field(default_factory=D20SavesInput)
    creature_id: str | None = strawberry.field(default=None, description="Local id (default: from the name).")
    class_name: str = ""
    armor: int = 0
    shield: int = 0
    size: int = strawberry.field(default=0, description="The size modifier to attacks and AC.")
    initiative_misc: int = 0
    attacks_of_opportunity_per_round: int = 1
    feats: list[str] = strawberry.field(
        default_factory=list, description="two_weapon_fighting, run and combat_casting change numbers."
    )


@strawberry.input
class D20UpdateSheetInput(MutationInput):
    character_id: strawberry.ID
    changes: JSON = strawberry.field(description="Sheet fields as in the fact (level, max_hp, bab...).")
    reason: str = ""


@strawberry.input(description="The weapon as declared.")
class D20WeaponInput:
    name: str = "weapon"
    kind: D20WeaponKind = D20WeaponKind.MELEE
    grip: D20Grip = D20Grip.ONE_HAND
    light: bool = False
    enhancement: int = 0
    strength: bool | None = strawberry.field(
        default=None, description="Strength to damage: null for the kind's default (DH-9), true for a sling."
    )

    def as_payload(self) -> dict[str, object]:
        return {
            "name": self.name,
            "kind": self.kind.value,
            "grip": self.grip.value,
            "light": self.light,
            "enhancement": self.enhancement,
            "strength": self.strength,
        }


@strawberry.input(description="An attack roll (A3.3). Its confirmation and damage are facts of their own.")
class D20AttackInput(MutationInput):
    attacker_id: strawberry.ID
    target_id: strawberry.ID
    weapon: D20WeaponInput = strawberry.field(default_factory=D20WeaponInput)
    roll: DiceInput | None = strawberry.field(default=None, description="Default: 1d20 by the server.")
    vs: D20Defense = D20Defense.AC
    iterative: int = strawberry.field(default=0, description="0 for the first attack, 1 for the second...")
    full_attack: bool | None = strawberry.field(
        default=None, description="Part of a full attack (default: when iterative > 0 or two-weapon)."
    )
    two_weapon: D20Hand | None = None
    off_hand_light: bool = False
    double_weapon: bool = False
    range_penalty: int = 0
    modifiers: JSON | None = strawberry.field(default=None, description=MODIFIERS)


@strawberry.input(
    description="An attack of opportunity (B-DH-14): a single melee attack, at most one per round "
    "counted from the attacker's own turn start, none while flat-footed."
)
class D20AttackOfOpportunityInput(MutationInput):
    attacker_id: strawberry.ID
    target_id: strawberry.ID
    weapon: D20WeaponInput = strawberry.field(default_factory=D20WeaponInput)
    roll: DiceInput | None = strawberry.field(default=None, description="Default: 1d20 by the server.")
    vs: D20Defense = D20Defense.AC
    modifiers: JSON | None = strawberry.field(default=None, description=MODIFIERS)


@strawberry.input(description="The confirmation roll of a threat (DH-7, B-DH-13).")
class D20ConfirmCriticalInput(MutationInput):
    attack: int = strawberry.field(description="The position of the attack's fact (d20Attack's answer).")
    roll: DiceInput | None = strawberry.field(default=None, description="Default: 1d20 by the server.")


@strawberry.input(
    description="An attack's damage (DH-9, B-DH-5, B-DH-12): the weapon's dice only; the static "
    "modifiers come from the sheet and the weapon."
)
class D20RollDamageInput(MutationInput):
    attack: int = strawberry.field(description="The position of the attack's fact.")
    weapon: DiceInput = strawberry.field(description="The weapon's dice, e.g. 1d8 (faces optional).")
    crit_weapon: DiceInput | None = strawberry.field(
        default=None,
        description="A confirmed critical's second set of the same dice (default: the server rolls it).",
    )
    extra: list[DiceInput] = strawberry.field(
        default_factory=list, description="Extra dice (sneak attack, flaming...): never doubled."
    )
    extra_flat: int = 0
    modifiers: JSON | None = strawberry.field(default=None, description=MODIFIERS)


@strawberry.input(description="Damage that is not an attack's (a hazard, a fall): never massive damage.")
class D20DealDamageInput(MutationInput):
    character_id: strawberry.ID
    roll: DiceInput | None = None
    amount: int = 0
    source: str = "hazard"


@strawberry.input(description="Healing (DH-12): any healing stabilises a dying creature.")
class D20HealInput(MutationInput):
    character_id: strawberry.ID
    roll: DiceInput | None = None
    amount: int = 0
    healer_id: strawberry.ID | None = None
    source: str = ""


@strawberry.input(description="An ally's Heal check against 10 + |HP| to stabilise a dying creature.")
class D20HealCheckInput(MutationInput):
    healer_id: strawberry.ID
    character_id: strawberry.ID
    roll: DiceInput | None = strawberry.field(default=None, description="Default: 1d20 by the server.")
    modifiers: JSON | None = strawberry.field(default=None, description=MODIFIERS)


@strawberry.input(
    description="A dying creature's stabilisation roll (ruling 26): d%, at most its effective Stamina "
    "stabilises, otherwise it loses 1 HP."
)
class D20StabilizeInput(MutationInput):
    character_id: strawberry.ID
    roll: DiceInput | None = strawberry.field(
        default=None, description="Default: d% by the server (enter 00 as 100)."
    )
    encounter_id: strawberry.ID | None = strawberry.field(
        default=None, description="The encounter whose round this roll is for (default: the running one)."
    )
    round: int | None = strawberry.field(
        default=None, description="The round it follows (default: the encounter's current round)."
    )


@strawberry.input(description="The Fortitude save a creature owes after massive damage (B-DH-1).")
class D20MassiveDamageSaveInput(MutationInput):
    character_id: strawberry.ID
    attack: int = strawberry.field(description="The position of the attack whose damage called for it.")
    roll: DiceInput | None = strawberry.field(default=None, description="Default: 1d20 by the server.")
    modifiers: JSON | None = strawberry.field(default=None, description=MODIFIERS)


@strawberry.input(description="A saving throw (DH-15): natural 1 fails, natural 20 succeeds.")
class D20SavingThrowInput(MutationInput):
    character_id: strawberry.ID
    save: D20Save
    dc: int
    roll: DiceInput | None = strawberry.field(default=None, description="Default: 1d20 by the server.")
    effect: str = strawberry.field(default="", description="What the save is against (free words).")
    modifiers: JSON | None = strawberry.field(default=None, description=MODIFIERS)


@strawberry.input(description="Ability damage or drain (B-DH-9: Stamina moves the thresholds at once).")
class D20DamageAbilityInput(MutationInput):
    character_id: strawberry.ID
    ability: D20Ability
    amount: int
    drain: bool = False
    source: str = ""


@strawberry.input(
    description="DH-14 house rule: lost ability scores return after at least 4 hours of sleep or 8 "
    "hours of rest without spells, skills or combat."
)
class D20RecoverAbilitiesInput(MutationInput):
    character_ids: list[strawberry.ID]
    kind: D20RestKind
    hours: int
    clean: bool = strawberry.field(description="The rest had no spells, skills or combat.")


@strawberry.input(description="An action (DH-4); a disabled creature's strenuous action costs 1 HP.")
class D20TakeActionInput(MutationInput):
    character_id: strawberry.ID
    action: D20ActionKind
    name: str = ""
    strenuous: bool = False
    run: bool = strawberry.field(default=False, description="Running (a full-round action).")
    moves: bool | None = strawberry.field(
        default=None, description="The action moves the creature (default: a move action or a run)."
    )


@strawberry.input(description="DH-5: casting defensively, a Concentration check against 15 + spell level.")
class D20CastDefensivelyInput(MutationInput):
    character_id: strawberry.ID
    spell_level: int
    roll: DiceInput | None = strawberry.field(default=None, description="Default: 1d20 by the server.")
    modifiers: JSON | None = strawberry.field(default=None, description=MODIFIERS)


@strawberry.input
class D20DeclareDeathInput(MutationInput):
    character_id: strawberry.ID
    cause: str


@strawberry.input(description="DH-14 house rule: brought back to life, a character loses no levels.")
class D20ResurrectInput(MutationInput):
    character_id: strawberry.ID
    means: str
    hp: int = 1
    restore_abilities: bool = strawberry.field(
        default=False, description="The spell or power also restores lost ability scores."
    )
