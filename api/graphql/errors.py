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

from domain import rulesets
from domain.errors import CORE_CODES, DomainError

__all__ = ["DOMAIN_CODES", "ChronicleError", "UserError", "UserErrorCode", "user_error"]


def _domain_codes() -> tuple[str, ...]:
    """The core's codes, then each installed ruleset's (in ruleset id order, first use wins)."""
    found = list(CORE_CODES)
    for ruleset_id in rulesets.available():
        found.extend(rulesets.get_ruleset(ruleset_id).error_codes)
    return tuple(dict.fromkeys(found))


# Codes raised by the domain: the ledger and encounter engine's, and every installed game system's.
DOMAIN_CODES = _domain_codes()
# Codes the API adds.
API_CODES = (
    "WRONG_RULESET",
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
        self.details: dict[str, Any] | None = None  # the domain refusal's structured details

    @classmethod
    def from_domain(cls, err: DomainError) -> ChronicleError:
        out = cls(err.code, err.message, err.field)
        out.details = err.details
        return out


def user_error(err: DomainError | ChronicleError, field: str | None = None) -> UserError:
    """A typed user error; ``field`` overrides the error's own (mapped to the input's name)."""
    code = err.code if err.code in ALL_CODES else "INVALID_INPUT"
    return UserError(code=UserErrorCode[code], message=err.message, field=field or err.field)  # type: ignore[misc]
