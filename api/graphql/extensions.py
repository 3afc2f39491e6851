"""Schema extensions: per-operation cache, masking of unexpected errors, limits."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from typing import Any

from graphql.error import GraphQLError
from strawberry.extensions import (
    DisableIntrospection,
    MaskErrors,
    MaxAliasesLimiter,
    MaxTokensLimiter,
    QueryDepthLimiter,
    SchemaExtension,
)
from strawberry.extensions.query_depth_limiter import IgnoreContext

from api.graphql.context import CACHE, request_id
from api.graphql.errors import ChronicleError

logger = logging.getLogger("chronicle.graphql")


def expected(error: GraphQLError) -> bool:
    """Errors a client may see as they are: parse/validation errors and typed refusals."""
    original = error.original_error
    return original is None or isinstance(original, (ChronicleError, GraphQLError))


class FreshCache(SchemaExtension):
    """Each operation (also each one on a WebSocket connection) starts with empty read caches."""

    def on_operation(self) -> Iterator[None]:
        context = self.execution_context.context
        if isinstance(context, dict):
            context[CACHE] = {}
            context.pop("request_id", None)
        yield


class MaskUnexpectedErrors(MaskErrors):
    """Unexpected errors reach the client as "Unexpected error" with a request id (logged in full)."""

    def __init__(self) -> None:
        super().__init__(should_mask_error=lambda e: not expected(e))

    def anonymise_error(self, error: GraphQLError) -> GraphQLError:
        context = self.execution_context.context
        rid = request_id(context) if isinstance(context, dict) else "unknown"
        return GraphQLError(
            message=f"Unexpected error (request id {rid}).",
            nodes=error.nodes,
            source=error.source,
            positions=error.positions,
            path=error.path,
            original_error=None,
            extensions={"code": "INTERNAL_SERVER_ERROR", "requestId": rid},
        )


def log_errors(errors: list[GraphQLError], context: Any) -> None:
    for error in errors:
        if expected(error):
            logger.debug("refused: %s", error.message)
            continue
        rid = request_id(context) if isinstance(context, dict) else "unknown"
        logger.error(
            "unexpected error (request id %s) at %s: %s",
            rid,
            error.path,
            error.message,
            exc_info=error.original_error,
        )


def _ignore_introspection(ctx: IgnoreContext) -> bool:
    return ctx.field_name.startswith("__")


def extensions(
    *, introspection: bool, max_depth: int, max_aliases: int, max_tokens: int
) -> list[Callable[[], SchemaExtension] | type[SchemaExtension]]:
    found: list[Callable[[], SchemaExtension] | type[SchemaExtension]] = [
        FreshCache,
        lambda: QueryDepthLimiter(max_depth=max_depth, should_ignore=_ignore_introspection),
        lambda: MaxAliasesLimiter(max_alias_count=max_aliases),
        lambda: MaxTokensLimiter(max_token_count=max_tokens),
        MaskUnexpectedErrors,
    ]
    if not introspection:
        found.append(DisableIntrospection)
    return found
