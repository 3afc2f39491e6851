"""Schema extensions: per-operation cache, masking of unexpected errors, limits."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from typing import Any

from graphql.error import GraphQLError
from graphql.language import FieldNode, OperationDefinitionNode
from starlette.websockets import WebSocket
from strawberry.extensions import (
    AddValidationRules,
    DisableIntrospection,
    MaskErrors,
    MaxTokensLimiter,
    ParserCache,
    SchemaExtension,
    ValidationCache,
)
from strawberry.extensions.max_aliases import create_validator as aliases_rule
from strawberry.extensions.query_depth_limiter import IgnoreContext
from strawberry.extensions.query_depth_limiter import create_validator as depth_rule

from api.graphql.context import CACHE, request_id
from api.graphql.errors import ChronicleError
from api.graphql.sanitize import InputSanitiser
from api.service import observability
from api.service.store import unavailable

logger = logging.getLogger("chronicle.graphql")


def expected(error: GraphQLError) -> bool:
    """Errors a client may see as they are: parse/validation errors and typed refusals."""
    original = error.original_error
    return original is None or isinstance(original, (ChronicleError, GraphQLError))


class FreshCache(SchemaExtension):
    """Each operation (also each one on a WebSocket connection) starts with empty read caches.

    Its request id is the HTTP request's (``api.service.observability.RequestContext``: the one in the
    ``X-Request-ID`` response header and on the request's log lines); each operation on a
    WebSocket connection gets its own, set for its log lines too.
    """

    def on_operation(self) -> Iterator[None]:
        context = self.execution_context.context
        if isinstance(context, dict):
            context[CACHE] = {}
            rid = observability.current_request_id()
            if rid is None or isinstance(context.get("request"), WebSocket):
                rid = observability.new_request_id()
                observability.REQUEST_ID.set(rid)
            context["request_id"] = rid
        yield


class OperationMetrics(SchemaExtension):
    """Counts and times every operation by name (else its root fields) and type (``/metrics``)."""

    def on_operation(self) -> Iterator[None]:
        began = time.perf_counter()
        yield
        ec = self.execution_context
        try:
            kind = ec.operation_type.value
        except Exception:  # unparsable or ambiguous document
            kind = "invalid"
        try:
            name = ec.operation_name or _root_fields(ec.graphql_document)
        except Exception:
            name = None
        failed = bool(ec.pre_execution_errors) or bool(ec.result is not None and ec.result.errors)
        observability.observe_graphql(name, kind, not failed, time.perf_counter() - began)


def _root_fields(document: Any) -> str | None:
    if document is None:
        return None
    for definition in document.definitions:
        if isinstance(definition, OperationDefinitionNode):
            names = [f.name.value for f in definition.selection_set.selections if isinstance(f, FieldNode)]
            return "+".join(sorted(set(names))[:4]) or None
    return None


def store_unavailable(error: GraphQLError) -> bool:
    return error.original_error is not None and unavailable(error.original_error)


STORE_UNAVAILABLE_MESSAGE = "The store is unavailable; retry later (with the same idempotency key)."


class MaskUnexpectedErrors(MaskErrors):
    """Unexpected errors reach the client as "Unexpected error" with a request id (logged in full).

    A store that cannot be reached or did not answer in time (``api.service.store.unavailable``)
    is not a bug: it reaches the client as ``STORE_UNAVAILABLE`` with ``retryable: true``.
    """

    def __init__(self) -> None:
        super().__init__(should_mask_error=lambda e: not expected(e))

    def anonymise_error(self, error: GraphQLError) -> GraphQLError:
        context = self.execution_context.context
        rid = request_id(context) if isinstance(context, dict) else "unknown"
        if store_unavailable(error):
            return GraphQLError(
                message=STORE_UNAVAILABLE_MESSAGE,
                nodes=error.nodes,
                source=error.source,
                positions=error.positions,
                path=error.path,
                original_error=None,
                extensions={"code": "STORE_UNAVAILABLE", "retryable": True, "requestId": rid},
            )
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
        if store_unavailable(error):  # an outage, not a bug: one line, no traceback
            logger.warning("store unavailable (request id %s) at %s: %s", rid, error.path, error.message)
            continue
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
    limit_rules = [depth_rule(max_depth, _ignore_introspection), aliases_rule(max_aliases)]
    found: list[Callable[[], SchemaExtension] | type[SchemaExtension]] = [
        FreshCache,
        OperationMetrics,
        # Companion apps send the same few documents over and over: parsing and validating them
        # was a third of a mutation's time (py-spy). Bounded, so odd documents cannot grow them.
        lambda: ParserCache(maxsize=512),
        # The limits' validation rules are built once: the validation cache is keyed by the rule
        # classes, and QueryDepthLimiter / MaxAliasesLimiter would make new ones per request.
        # The rule classes hold no state (each validation makes its own instances).
        lambda: AddValidationRules(limit_rules),
        lambda: ValidationCache(maxsize=512),
        lambda: MaxTokensLimiter(max_token_count=max_tokens),
        InputSanitiser,  # every string, number and nesting of the input, before anything runs
        MaskUnexpectedErrors,
    ]
    if not introspection:
        found.append(DisableIntrospection)
    return found
