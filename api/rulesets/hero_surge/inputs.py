"""Hero's-surge GraphQL inputs (RULES.md A2, B-HS, C2.2): sheets, initiative checks, attempts with
the success level the table ruled (ruling 4), Devastating and Hampering Effects, a defense against
several attacks, damage, luck rolls, healing, hero's surges, rests and levels.

Every die is a ``DiceInput`` (``expression`` and optional ``faces`` read off physical dice; the
server rolls otherwise, where a default die exists). Every type is prefixed ``HeroSurge`` so no
other system's names collide.
"""

from __future__ import annotations

import enum

import strawberry
from strawberry.scalars import JSON

from api.graphql.inputs import DiceInput, MutationInput


@strawberry.enum(description="C2.1 kind: a player character (a hero by default), an NPC or a monster.")
class HeroSurgeKind(enum.Enum):
    PC = "pc"
    NPC = "npc"
    MONSTER = "monster"


@strawberry.enum(
    description="HS-7: the six success levels, best first. The table rules which one an attempt reached "
    "(B-HS-1, ruling 4); the fold derives only the consequences."
)
class HeroSurgeSuccessLevel(enum.Enum):
    CRITICAL_SUCCESS = "critical_success"
    MAJOR_SUCCESS = "major_success"
    NORMAL_SUCCESS = "normal_success"
    LIMITED_SUCCESS = "limited_success"
    FAILURE = "failure"
    CRITICAL_FAILURE = "critical_failure"


@strawberry.enum(description="A2.3: what an attempt is.")
class HeroSurgeAttemptKind(enum.Enum):
    ATTACK = "attack"
    DEFENSE = "defense"
    MANEUVER = "maneuver"
    SPELL = "spell"
    MEDICAL = "medical"
    ABILITY = "ability"
    SKILL = "skill"
    OTHER = "other"


@strawberry.enum(
    description="HS-4: the action a fact takes in a running encounter (NONE: none; an attack, spell, "
    "maneuver or medical attempt takes the ACTION by default)."
)
class HeroSurgeAction(enum.Enum):
    ACTION = "action"
    MOVE = "move"
    FREE = "free"
    NONE = "none"


@strawberry.enum(description="HS-4: the action kinds of the turn economy.")
class HeroSurgeActionKind(enum.Enum):
    ACTION = "action"
    MOVE = "move"
    FREE = "free"


@strawberry.enum(description="HS-8: the Devastating Effects of a critical success.")
class HeroSurgeDevastatingEffect(enum.Enum):
    ADDITIONAL_DAMAGE_DIE = "additional_damage_die"
    KNOCK_BACK = "knock_back"
    KNOCK_INITIATIVE_BACK = "knock_initiative_back"
    WEAPON_MANEUVER = "weapon_maneuver"
    TWO_HAMPERING_EFFECTS = "two_hampering_effects"


@strawberry.enum(description="HS-8: the Hampering Effects of a major or limited success.")
class HeroSurgeHamperingEffect(enum.Enum):
    BREAK_UP_ATTACK = "break_up_attack"
    BRUTAL_DAMAGE = "brutal_damage"
    RANK_PENALTY = "rank_penalty"
    MOVE_5FT = "move_5ft"


@strawberry.enum(description="HS-5: defend yourself, defend another, or intercept attacks on it.")
class HeroSurgeDefendMode(enum.Enum):
    SELF = "self"
    TARGET = "target"
    INTERCEPT = "intercept"


@strawberry.enum(description="HS-6: the steps of a full-round action.")
class HeroSurgeFullRoundStep(enum.Enum):
    START = "start"
    MAINTAIN = "maintain"
    ABORT = "abort"
    COMPLETE = "complete"


@strawberry.enum(
    description="HS-14 / HS-8 / B-HS-9 / ruling 25: when a luck roll is made. DYING_TURN_START and "
    "DYING_DAMAGE only when owed."
)
class HeroSurgeLuckContext(enum.Enum):
    DYING_TURN_START = "dying_turn_start"
    DYING_DAMAGE = "dying_damage"
    CRIT_SUCCESS = "crit_success"
    CRIT_FAILURE = "crit_failure"
    OTHER = "other"


@strawberry.enum(description="B-HS-2: the table's ruled result of a luck roll (a 20 ends dying).")
class HeroSurgeLuckResult(enum.Enum):
    LUCKY = "lucky"
    UNLUCKY = "unlucky"


@strawberry.enum(description="HS-15 / B-HS-13 / B-HS-14: why a hero's surge is spent.")
class HeroSurgeSurgePurpose(enum.Enum):
    CLASS_FEATURE = "class_feature"
    HEALING = "healing"
    HEROISM = "heroism"
    SPELL = "spell"


@strawberry.enum(description="HS-16: what restores hero's surges.")
class HeroSurgeRestoreSource(enum.Enum):
    REST = "rest"
    SPELL = "spell"
    ABILITY = "ability"
    OTHER = "other"


@strawberry.enum(description="B-HS-12 / B-HS-21: a rest's kind.")
class HeroSurgeRestKind(enum.Enum):
    LONG = "long"
    SHORT = "short"
    OTHER = "other"


# ------------------------------------------------------------------ sheets
@strawberry.input(
    description="A sheet (C2.1). A PC is a hero unless `hero` says otherwise; a hero's surges default to "
    "the maximum for its level (HS-15: 4 + floor(level / 2)); monsters and NPCs have none (B-HS-6)."
)
class HeroSurgeRegisterCreatureInput(MutationInput):
    name: str
    kind: HeroSurgeKind
    level: int
    con_score: int
    max_hp: int
    hero: bool | None = None
    con_mod: int | None = None
    hit_die: int | None = strawberry.field(default=None, description="The class Hit Die's size (HS-13).")
    damage_reduction: int = strawberry.field(default=0, description="Armor damage reduction (B-HS-24).")
    extra_blocks: int = strawberry.field(
        default=0, description="Extra blocks against several attacks (HS-9)."
    )
    hero_surges: int | None = None
    fortune_dice: int = 0
    creature_id: str | None = strawberry.field(default=None, description="Local id (default: from the name).")


@strawberry.input(description="A recorded sheet change (level only by heroSurgeGainLevel, ruling 22).")
class HeroSurgeUpdateSheetInput(MutationInput):
    character_id: strawberry.ID
    changes: JSON = strawberry.field(
        description="name, con_score, con_mod, hit_die, max_hp, damage_reduction, extra_blocks."
    )
    reason: str = ""


# ------------------------------------------------------------------ rounds
@strawberry.input(
    description="HS-2 / HS-3: an initiative check with its ruled success level. In setup it is for the "
    "first round (the surprise round, when there is one); while the encounter runs, for the next round."
)
class HeroSurgeCheckInitiativeInput(MutationInput):
    encounter_id: strawberry.ID
    character_id: strawberry.ID
    success_level: HeroSurgeSuccessLevel
    roll: DiceInput | None = strawberry.field(default=None, description="Default: 1d20 rolled by the server.")
    success_level_ruling: str | None = strawberry.field(
        default=None,
        description="A RulingRecorded id whose value is the success level (ruling 4): overturned, the "
        "fact is read again with the new value.",
    )


@strawberry.input(
    description="HS-2 / B-HS-18: the order of one side (heroes or foes) of one success-level band, as "
    "the players decide (heroes) or the GM orders (foes): every creature of that side of the band."
)
class HeroSurgeChooseOrderInput(MutationInput):
    encounter_id: strawberry.ID
    character_ids: list[strawberry.ID] = strawberry.field(description="First to act first.")
    decided_by: str = ""


@strawberry.input(description="HS-4: an action through the turn economy (move, action, free).")
class HeroSurgeTakeActionInput(MutationInput):
    character_id: strawberry.ID
    action: HeroSurgeActionKind
    name: str = strawberry.field(default="", description="Assist, Move, Use, ... (HS-4).")
    instead_of_action: bool = strawberry.field(
        default=False, description="A move taken with the action (HS-4: move twice)."
    )
    gm_exception: bool = False


@strawberry.input(
    description="HS-4 Ready: readying takes the action; when the trigger happens (triggerReadiedAction) the "
    "readied action is taken as a free action on the other creature's turn."
)
class HeroSurgeReadyActionInput(MutationInput):
    character_id: strawberry.ID
    action: HeroSurgeActionKind
    trigger: str


@strawberry.input(
    description="HS-5: defend (takes the action); advantage and one extra block until its next turn."
)
class HeroSurgeDefendInput(MutationInput):
    character_id: strawberry.ID
    mode: HeroSurgeDefendMode = HeroSurgeDefendMode.SELF
    target_id: strawberry.ID | None = None


@strawberry.input(
    description="HS-6: start (takes the action), maintain, abort or complete a full-round action."
)
class HeroSurgeFullRoundActionInput(MutationInput):
    character_id: strawberry.ID
    step: HeroSurgeFullRoundStep
    action: str | None = strawberry.field(default=None, description="START: what the action is.")
    moved_before: bool = strawberry.field(default=False, description="START: it moved before starting.")


# ------------------------------------------------------------------ attempts
@strawberry.input(
    description="A2.3: an attempt with its dice and the success level the table ruled (B-HS-1, ruling 4). "
    "A natural 1 on a failure becomes a critical failure unless the rank is Legendary or Godlike (HS-7)."
)
class HeroSurgeAttemptInput(MutationInput):
    attempt_id: str
    character_id: strawberry.ID
    kind: HeroSurgeAttemptKind
    success_level: HeroSurgeSuccessLevel
    roll: DiceInput | None = strawberry.field(default=None, description="Default: 1d20 rolled by the server.")
    target_ids: list[strawberry.ID] = strawberry.field(default_factory=list)
    dc: int | None = None
    rank: str | None = strawberry.field(
        default=None, description="The attempt's rank (B-HS-5), e.g. legendary."
    )
    action: HeroSurgeAction | None = strawberry.field(
        default=None, description="The action it takes (default: by its kind, HS-4)."
    )
    note: str = ""
    success_level_ruling: str | None = strawberry.field(
        default=None,
        description="A RulingRecorded id whose value is the success level (ruling 4): overturned, the "
        "fact is read again with the new value.",
    )


@strawberry.input(description="HS-7: a natural 20 downgraded to a normal success for a Fortune Die.")
class HeroSurgeExchangeFortuneDieInput(MutationInput):
    attempt_id: str


@strawberry.input(description="B-HS-4: a Fortune Die spent; its effect as the table ruled it.")
class HeroSurgeSpendFortuneDieInput(MutationInput):
    character_id: strawberry.ID
    effect: str


@strawberry.input(description="HS-8: the Devastating Effect a critical success chose.")
class HeroSurgeDevastatingEffectInput(MutationInput):
    attempt_id: str
    option: HeroSurgeDevastatingEffect
    target_id: strawberry.ID | None = None
    note: str = ""


@strawberry.input(description="HS-8: a Hampering Effect of a major or limited success.")
class HeroSurgeHamperingEffectInput(MutationInput):
    attempt_id: str
    option: HeroSurgeHamperingEffect
    target_id: strawberry.ID | None = None
    note: str = ""


@strawberry.input(description="B-HS-5: the attempt a pending rank penalty is used on.")
class HeroSurgeConsumeRankPenaltyInput(MutationInput):
    character_id: strawberry.ID
    attempt_id: str
    penalty_ids: list[str] | None = strawberry.field(default=None, description="Default: every pending one.")


@strawberry.input(
    description="HS-9 / B-HS-19 / B-HS-20: one defense roll against several attacks: which incoming "
    "attacks (labels) it blocks, which bypass armor (failure), which are critical hits (critical failure)."
)
class HeroSurgeResolveDefenseInput(MutationInput):
    defense_attempt_id: str
    incoming: list[str]
    blocked: list[str] = strawberry.field(default_factory=list)
    bypass_armor: list[str] = strawberry.field(default_factory=list)
    critical: list[str] = strawberry.field(default_factory=list)
    extra_block_sources: list[str] = strawberry.field(default_factory=list)


# ------------------------------------------------------------------ damage
@strawberry.input(
    description="HS-10 / B-HS-16: an attack's damage roll (maximised on a critical success, plus the "
    "Additional Damage Die when chosen)."
)
class HeroSurgeRollDamageInput(MutationInput):
    damage_id: str
    roll: DiceInput
    attempt_id: str | None = None
    additional_die: DiceInput | None = None


@strawberry.input(description="B-HS-16: Brutal Damage rerolls one die until it shows a higher value.")
class HeroSurgeRerollDamageDieInput(MutationInput):
    damage_id: str
    die_index: int
    new_face: int


@strawberry.input(
    description="HS-10 / HS-11 / B-HS-24: damage to a creature: a rolled damage (damageId), a roll, or an "
    "amount; armor DR first (unless bypassed), then temporary HP, then HP."
)
class HeroSurgeApplyDamageInput(MutationInput):
    character_id: strawberry.ID
    damage_id: str | None = None
    roll: DiceInput | None = None
    amount: int = 0
    attack: str | None = strawberry.field(default=None, description="The incoming attack's label (HS-9).")
    bypass_dr: bool = False
    critical: bool = False
    source: str = ""


@strawberry.input(description="HS-11 / B-HS-15: temporary hit points; the larger pool stays.")
class HeroSurgeGrantTemporaryHitPointsInput(MutationInput):
    character_id: strawberry.ID
    amount: int = 0
    roll: DiceInput | None = None
    duration_minutes: int | None = strawberry.field(default=None, description="Null: until a long rest.")
    source: str = ""


@strawberry.input(description="HS-17 / B-HS-11: healing, added to the actual (negative) value, capped.")
class HeroSurgeHealInput(MutationInput):
    character_id: strawberry.ID
    amount: int = 0
    roll: DiceInput | None = None
    healer_id: strawberry.ID | None = None
    source: str = ""


# ------------------------------------------------------------------ dying
@strawberry.input(
    description="HS-14 / B-HS-2 / B-HS-9 / ruling 25: a luck roll with its dice and (optionally) the "
    "table's ruled result; without one, the flag hs.luck_roll decides. A 20 ends dying."
)
class HeroSurgeLuckRollInput(MutationInput):
    character_id: strawberry.ID
    context: HeroSurgeLuckContext
    roll: DiceInput | None = strawberry.field(default=None, description="Default: 1d20 rolled by the server.")
    result: HeroSurgeLuckResult | None = None
    attempt_id: str | None = strawberry.field(
        default=None, description="CRIT_SUCCESS / CRIT_FAILURE: the attempt."
    )
    roll_id: str | None = strawberry.field(
        default=None, description="An id an instant kill may cite (B-HS-23)."
    )
    result_ruling: str | None = strawberry.field(
        default=None, description="A RulingRecorded id whose value is the result (lucky / unlucky)."
    )


@strawberry.input(description="HS-14: a medical attempt (its AttemptRolled, kind MEDICAL) on a dying hero.")
class HeroSurgeMedicalAttemptInput(MutationInput):
    healer_id: strawberry.ID
    character_id: strawberry.ID
    attempt_id: str


@strawberry.input(description="HS-14: a healer's kit ends dying (takes the healer's action).")
class HeroSurgeUseHealersKitInput(MutationInput):
    healer_id: strawberry.ID
    character_id: strawberry.ID


@strawberry.input(
    description="B-HS-23: an instant kill, citing the attempt and its two natural-20 luck rolls."
)
class HeroSurgeRuleInstantKillInput(MutationInput):
    character_id: strawberry.ID
    attempt_id: str
    luck_roll_ids: list[str]


@strawberry.input(description="A dead creature restored to life (by the means the table names).")
class HeroSurgeRestoreToLifeInput(MutationInput):
    character_id: strawberry.ID
    means: str
    hp: int = 1


# ------------------------------------------------------------------ hero's surges, rests, levels
@strawberry.input(
    description="HS-15 / B-HS-13 / B-HS-14 / ruling 6: spend a hero's surge (healing: 1/4 max HP, once an "
    "hour, takes the action)."
)
class HeroSurgeSpendSurgeInput(MutationInput):
    character_id: strawberry.ID
    purpose: HeroSurgeSurgePurpose
    bonus: int = 0
    note: str = ""


@strawberry.input(description="HS-16 / B-HS-8: an involuntary surge loss; with none left, the 1/4-HP loss.")
class HeroSurgeDrainSurgeInput(MutationInput):
    character_id: strawberry.ID
    source: str = ""


@strawberry.input(description="HS-16: surges restored (never above the maximum).")
class HeroSurgeRestoreSurgesInput(MutationInput):
    character_id: strawberry.ID
    amount: int
    source: HeroSurgeRestoreSource = HeroSurgeRestoreSource.OTHER


@strawberry.input(description="B-HS-12 / B-HS-21 / HS-11: a rest (null characterIds: every hero).")
class HeroSurgeTakeRestInput(MutationInput):
    kind: HeroSurgeRestKind
    character_ids: list[strawberry.ID] | None = None
    hours: int | None = None


@strawberry.input(
    description="Ruling 22 / HS-13 / B-HS-17: the next level with its Hit Dice: the pair, the Con extra "
    "dice (Con >= 12), the swaps chosen, the rerolls of a 1-1 pair."
)
class HeroSurgeGainLevelInput(MutationInput):
    character_id: strawberry.ID
    new_level: int
    hit_dice: DiceInput
    con_extra: DiceInput | None = None
    swaps: JSON | None = strawberry.field(default=None, description="[{extra: index, pair: 0 or 1}, ...]")
    rerolls: DiceInput | None = None
