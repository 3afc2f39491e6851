"""Typed errors: the ``UserErrorCode`` enum, ``UserError`` and the query-side exception.

Every refusal a client can branch on has a code from :class:`UserErrorCode` (documented in
``docs/errors.md``; a test checks that every code the domain raises is in both). Mutations
report refusals in their payload's ``userErrors``; queries raise :class:`ChronicleError`,
which reaches the client with the code in ``extensions.code``. Anything else is a bug: the
client sees a masked message with a request id, the log has the full traceback.
"""

from __future__ import annotations

import enum
from typing import Any

import strawberry

from domain.errors import DomainError

__all__ = ["DOMAIN_CODES", "ChronicleError", "UserError", "UserErrorCode", "user_error"]

# Codes raised by the domain (domain/errors.py classes, `code=` arguments and the rule checks).
DOMAIN_CODES = (
    "INVALID_INPUT",
    "INVALID_DICE",
    "NOT_FOUND",
    "RULE_VIOLATION",
    "ROLLS_PENDING",
    "CONFLICT",
    "ACTION_POINT_LOCKED",
    "ALREADY_ACTED",
    "ALREADY_CARED_TODAY",
    "ALREADY_EXISTS",
    "ALREADY_REVOKED",
    "ALREADY_ROLLED",
    "ALREADY_SAVED",
    "ALREADY_SUSTAINED",
    "BONUS_DECIDES",
    "CANNOT_ACT",
    "CANNOT_DELAY",
    "CREATURE_DEAD",
    "CREATURE_DYING",
    "DAZED",
    "DAZED_ONE_ACTION",
    "ENCOUNTER_ENDED",
    "ENCOUNTER_NOT_RUNNING",
    "ENCOUNTER_RUNNING",
    "EXTENDED_REST_TOO_SOON",
    "FREE_ACTIONS_ONLY",
    "IMMEDIATE_USED",
    "NOTHING_READIED",
    "NOT_ACTIVE",
    "NOT_AFFECTED",
    "NOT_ALLOWED",
    "NOT_CONSCIOUS",
    "NOT_DEAD",
    "NOT_DELAYED",
    "NOT_DYING",
    "NOT_HELPLESS",
    "NOT_IN_ENCOUNTER",
    "NOT_REVOKED",
    "NOT_ROLLED",
    "NOT_SAVE_ENDS",
    "NOT_SUSTAINED",
    "NOT_TIED",
    "NOT_YET",
    "NOT_YOUR_TURN",
    "NO_ACTION_LEFT",
    "NO_ACTION_POINT",
    "NO_HEALING_SURGE",
    "NO_TURN",
    "OPPORTUNITY_USED",
    "OWN_TURN",
    "SECOND_WIND_USED",
    "SURPRISE_ROUND",
    "SURPRISE_ROUND_ONE_ACTION",
    "SUSTAINING",
    "TIE_ORDER_WRONG",
    "TOO_MUCH",
    "WRONG_ACTION",
    # the hero's-surge ruleset's codes (domain.rulesets.hero_surge.ERROR_CODES), until the enum is
    # built from every ruleset's error_codes (the API seam)
    "ALREADY_EXCHANGED",
    "ALREADY_RESOLVED",
    "ATTACK_BLOCKED",
    "BLOCKS_WRONG",
    "CLASS_FEATURE_SURGE_USED",
    "DIE_AT_MAXIMUM",
    "FULL_ROUND_IN_PROGRESS",
    "HEROISM_USED",
    "LEVEL_USED",
    "NOTHING_TO_DOWNGRADE",
    "NOT_A_HERO",
    "NOT_NATURAL_20",
    "NOT_NEXT_LEVEL",
    "NO_ADDITIONAL_DIE",
    "NO_BRUTAL_REROLL",
    "NO_DEVASTATING_EFFECT",
    "NO_FORTUNE_DIE",
    "NO_FULL_ROUND_ACTION",
    "NO_HAMPERING_EFFECT",
    "NO_HERO_SURGE",
    "NO_LUCK_ROLL_OWED",
    "NO_RANK_PENALTY",
    "SURGE_HEALING_USED",
    "WRONG_ATTEMPT",
    "WRONG_DICE",
)
# Codes the API adds.
API_CODES = (
    "UNAUTHENTICATED",
    "FORBIDDEN",
    "IDEMPOTENCY_KEY_REUSED",
    "PAGE_SIZE_OUT_OF_RANGE",
    "INVALID_CURSOR",
    "INVALID_ID",
    "LAST_GM_TOKEN",
    "POSITION_OUT_OF_RANGE",
)
ALL_CODES = tuple(dict.fromkeys(DOMAIN_CODES + API_CODES))

UserErrorCode = strawberry.enum(
    enum.Enum("UserErrorCode", {code: code for code in ALL_CODES}),  # type: ignore[misc]
    name="UserErrorCode",
    description="Why a request was refused. Stable; see docs/errors.md for each code.",
)


@strawberry.type(description="A refusal a client can branch on (nothing was stored).")
class UserError:
    code: UserErrorCode  # type: ignore[valid-type]
    message: str
    field: str | None = strawberry.field(description="The input at fault, where one is.")


class ChronicleError(Exception):
    """A typed refusal raised from a query resolver; its code reaches the client in extensions."""

    def __init__(self, code: str, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.code = code if code in ALL_CODES else "INVALID_INPUT"
        self.message = message
        self.field = field
        self.extensions: dict[str, Any] = {"code": self.code}
        if field:
            self.extensions["field"] = field

    @classmethod
    def from_domain(cls, err: DomainError) -> ChronicleError:
        return cls(err.code, err.message, err.field)


def user_error(err: DomainError | ChronicleError, field: str | None = None) -> UserError:
    """A typed user error; ``field`` overrides the error's own (mapped to the input's name)."""
    code = err.code if err.code in ALL_CODES else "INVALID_INPUT"
    return UserError(code=UserErrorCode[code], message=err.message, field=field or err.field)  # type: ignore[misc]
