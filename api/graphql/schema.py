"""The schema, built from settings (limits, introspection), and where operations run.

Queries and mutations do not run on the server's event loop: each runs on a worker thread of
its own (:data:`OPERATION_THREADS` at most at once, the others wait in line), in a private
event loop, where its store calls are made directly (``api.graphql.context.call``). So
however long one operation resolves, ``/healthz``, ``/readyz`` and every other request keep
being answered. Each operation reads a campaign as the store held it at its first read of it
(plus this process's writes: ``api.service.application.operation``). Subscriptions stay on
the event loop (they wait most of the time; each event's selection is small and cost-limited
like every operation).
"""

from __future__ import annotations

import asyncio
import contextvars
import re
import threading
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import strawberry
from graphql import OperationType as CoreOperationType
from graphql import get_operation_ast, parse
from graphql.error import GraphQLError
from strawberry.exceptions import MissingQueryError
from strawberry.schema.exceptions import CannotGetOperationTypeError, InvalidOperationTypeError
from strawberry.types import ExecutionContext, ExecutionResult
from strawberry.types.graphql import OperationType

from api.graphql import fastinput
from api.graphql.context import OFF_LOOP
from api.graphql.extensions import CostedExecutor, extensions, log_errors
from api.graphql.mutations import PAYLOADS, Mutation
from api.graphql.queries import Query
from api.graphql.subscriptions import Subscription
from api.graphql.types import AccessToken, Campaign, Character, Encounter, Fact, GenericCharacter, Proposal
from api.rulesets import plugins
from api.service.application import operation
from api.service.settings import Settings

T = TypeVar("T")

# 16, not 32: every operation holds the interpreter lock while it computes, so a thread per
# operation in flight only shares one core among more of them -- and with the event loop, which
# reads the requests and writes the answers. Under 50 writers on one campaign 32 threads made the
# slowest answers slower (they waited on the lock at every step; the operations waiting for a
# thread wait in line instead, in order): 50-writer p99 at 10k facts 314 -> 249 ms, at 100k 322
# -> 264 ms (medians of 9 phases each, the same session, a loaded 2-core machine).
OPERATION_THREADS = 16
_POOL = ThreadPoolExecutor(max_workers=OPERATION_THREADS, thread_name_prefix="chronicle-graphql")
_LOOPS = threading.local()
_SUBSCRIPTION_WORD = re.compile(r"\bsubscription\b")


def _new_loop() -> asyncio.AbstractEventLoop:
    """A worker thread's event loop, which remembers the tasks made on it (``_LOOPS.tasks``):
    ``asyncio.all_tasks(loop)`` would scan every task of the process (the server's loop holds one
    per connection) to find this loop's few, after every operation."""
    loop = asyncio.new_event_loop()
    made: list[asyncio.Task[Any]] = []
    _LOOPS.tasks = made

    def task(loop: asyncio.AbstractEventLoop, coro: Any, **kwargs: Any) -> asyncio.Task[Any]:
        t = asyncio.Task(coro, loop=loop, **kwargs)
        made.append(t)
        return t

    loop.set_task_factory(task)  # type: ignore[arg-type]
    return loop


def _run_on_thread_loop(make: Callable[[], Awaitable[T]]) -> T:
    """Run a coroutine to completion on this worker thread's own event loop."""
    loop = getattr(_LOOPS, "loop", None)
    if loop is None or loop.is_closed():
        loop = _LOOPS.loop = _new_loop()
    made: list[asyncio.Task[Any]] = _LOOPS.tasks
    OFF_LOOP.set(True)

    async def main() -> T:
        with operation():  # each campaign is caught up from the store once per operation
            return await make()

    try:
        return loop.run_until_complete(main())
    finally:
        leftover = [t for t in made if not t.done()]
        made.clear()
        for task in leftover:  # e.g. list items still running when a query was stopped
            task.cancel()
        if leftover:
            loop.run_until_complete(asyncio.gather(*leftover, return_exceptions=True))
            made.clear()


async def off_loop(make: Callable[[], Awaitable[T]]) -> T:
    """Await ``make()`` run on a worker thread's event loop (context variables copied)."""
    context = contextvars.copy_context()
    return await asyncio.get_running_loop().run_in_executor(_POOL, context.run, _run_on_thread_loop, make)


def _is_subscription(query: str | None, operation_name: str | None) -> bool:
    if not query or not _SUBSCRIPTION_WORD.search(query):
        return False
    try:
        operation = get_operation_ast(parse(query, no_location=True), operation_name)
    except GraphQLError:
        return False
    return operation is not None and operation.operation == CoreOperationType.SUBSCRIPTION


class ChronicleSchema(strawberry.Schema):
    def process_errors(
        self, errors: list[GraphQLError], execution_context: ExecutionContext | None = None
    ) -> None:
        log_errors(errors, execution_context.context if execution_context is not None else None)

    async def execute(  # noqa: PLR0917
        self,
        query: str | None,
        variable_values: dict[str, Any] | None = None,
        context_value: Any | None = None,
        root_value: Any | None = None,
        operation_name: str | None = None,
        allowed_operation_types: Iterable[OperationType] | None = None,
        operation_extensions: dict[str, Any] | None = None,
    ) -> ExecutionResult:
        """Run a query or mutation on a worker thread (see the module docstring)."""
        run = super().execute
        return await off_loop(
            lambda: run(
                query,
                variable_values,
                context_value,
                root_value,
                operation_name,
                allowed_operation_types,
                operation_extensions,
            )
        )

    async def stream(  # noqa: PLR0917
        self,
        query: str | None,
        variable_values: dict[str, Any] | None = None,
        context_value: Any | None = None,
        root_value: Any | None = None,
        operation_name: str | None = None,
        operation_extensions: dict[str, Any] | None = None,
        allowed_operation_types: Iterable[OperationType] | None = None,
    ) -> Any:
        """WebSocket operations: queries and mutations off the loop too, as one result."""
        allowed = None if allowed_operation_types is None else set(allowed_operation_types)
        if (allowed is None or {OperationType.QUERY, OperationType.MUTATION} <= allowed) and not (
            _is_subscription(query, operation_name)
        ):
            run = super().execute
            stream = super().stream

            async def single() -> AsyncGenerator[Any, None]:
                try:
                    result = await off_loop(
                        lambda: run(
                            query,
                            variable_values,
                            context_value,
                            root_value,
                            operation_name,
                            allowed_operation_types,
                            operation_extensions,
                        )
                    )
                except (MissingQueryError, CannotGetOperationTypeError, InvalidOperationTypeError):
                    # a document that names no single operation: Strawberry's stream reports it
                    source = await stream(
                        query,
                        variable_values,
                        context_value,
                        root_value,
                        operation_name,
                        operation_extensions,
                        allowed_operation_types,
                    )
                    async for item in source:
                        yield item
                    return
                yield result

            return single()
        return await super().stream(
            query,
            variable_values,
            context_value,
            root_value,
            operation_name,
            operation_extensions,
            allowed_operation_types,
        )


def build_schema(settings: Settings | None = None) -> ChronicleSchema:
    s = settings or Settings(database_url="memory:")
    schema = ChronicleSchema(
        query=Query,
        mutation=Mutation,
        subscription=Subscription,
        types=[
            Campaign,
            Character,
            GenericCharacter,
            *(p.character_type for p in plugins().values()),
            *(t for p in plugins().values() for t in p.types),
            Encounter,
            Fact,
            AccessToken,
            Proposal,
            *PAYLOADS.values(),
        ],
        extensions=extensions(
            introspection=s.graphql_introspection,
            max_depth=s.graphql_max_depth,
            max_aliases=s.graphql_max_aliases,
            max_tokens=s.graphql_max_tokens,
            max_cost=s.graphql_max_cost,
            timeout=s.graphql_timeout,
        ),
        execution_context_class=CostedExecutor,
    )
    fastinput.install(schema)  # input objects built from a plan per type (api/graphql/fastinput.py)
    return schema


def schema_sdl() -> str:
    return build_schema().as_str() + "\n"


__all__: list[Any] = ["ChronicleSchema", "build_schema", "off_loop", "schema_sdl"]
