"""Schema extensions: per-operation cache, masking of unexpected errors, limits.

Query cost (``QueryCost``, ``CostedExecutor``): every GraphQL operation's cost is bounded
before and while it runs.

- Before it runs, the operation's cost is estimated from the document and its variables
  (:func:`estimate_cost`): each selected field costs 1 (``asOf`` and ``whatIf``, which
  replay the campaign, and ``proposalPreview`` cost :data:`WEIGHTS`), times the size of
  every list it is inside.
  A connection's ``edges``/``nodes`` count its page size (``first``/``last``, default 50);
  any other list of objects counts the items :data:`LIST_SIZES` gives for its name (30
  for ``characters``, 10 for ``encounters``, 5 for ``effects``, ...; else
  :data:`LIST_ESTIMATE`). Lists of scalars count as one field, introspection (``__schema``,
  ``__type``) as one. An operation estimated above
  ``CHRONICLE_GRAPHQL_MAX_COST`` is refused, before anything runs, with
  ``QUERY_TOO_COMPLEX`` (``extensions.cost`` and ``extensions.maxCost`` say by how much).
- While a query runs, the fields actually resolved are counted with the real list sizes
  (a campaign may have more creatures than the estimate): past the limit the query stops
  with ``QUERY_TOO_COMPLEX``; past ``CHRONICLE_GRAPHQL_TIMEOUT`` seconds it stops with
  ``QUERY_TIMEOUT``. Both are checked at every field; the whole response is then
  ``data: null`` with that one error. Mutations are only checked before they run: one that
  has stored its facts is never cut off half-way.
"""

from __future__ import annotations

import inspect
import logging
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextvars import ContextVar
from typing import Any, ClassVar, Generic, TypeVar

from graphql import (
    DocumentNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLInterfaceType,
    GraphQLList,
    GraphQLNonNull,
    GraphQLObjectType,
    GraphQLSchema,
    InlineFragmentNode,
    IntValueNode,
    SelectionSetNode,
    VariableNode,
    get_named_type,
)
from graphql.error import GraphQLError, located_error
from graphql.language import FieldNode, OperationDefinitionNode
from graphql.pyutils import Path
from starlette.websockets import WebSocket
from strawberry.extensions import (
    AddValidationRules,
    DisableIntrospection,
    MaskErrors,
    MaxTokensLimiter,
    ParserCache,
    SchemaExtension,
)
from strawberry.extensions.max_aliases import create_validator as aliases_rule
from strawberry.extensions.query_depth_limiter import IgnoreContext
from strawberry.extensions.query_depth_limiter import create_validator as depth_rule
from strawberry.schema.schema import StrawberryGraphQLCoreExecutionContext, validate_document
from strawberry.types.graphql import OperationType

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
    *,
    introspection: bool,
    max_depth: int,
    max_aliases: int,
    max_tokens: int,
    max_cost: int = 10_000,
    timeout: float = 10.0,
) -> list[Callable[[], SchemaExtension] | type[SchemaExtension]]:
    limit_rules = [depth_rule(max_depth, _ignore_introspection), aliases_rule(max_aliases)]
    costs = CostCache()  # one per schema, shared by its requests
    validated: Recent[tuple[str, tuple[Any, ...]], list[GraphQLError]] = Recent(VALIDATED_MAX)  # likewise
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
        lambda: ValidationByText(validated),
        lambda: MaxTokensLimiter(max_token_count=max_tokens),
        InputSanitiser,  # every string, number and nesting of the input, before anything runs
        lambda: QueryCost(max_cost=max_cost, timeout=timeout, costs=costs),
        MaskUnexpectedErrors,
    ]
    if not introspection:
        found.append(DisableIntrospection)
    return [lambda: Combined([make() for make in found])]


VALIDATED_MAX = 512

K = TypeVar("K")
V = TypeVar("V")


class Recent(Generic[K, V]):
    """A bounded mapping that forgets the least recently used entry when full (as Strawberry's
    ``ParserCache``, an ``lru_cache``, does): a burst of odd documents evicts the odd ones first
    and the few documents companion apps send over and over stay (emptying a full cache made
    every app's documents pay again). Shared by an operation's threads: one lock."""

    def __init__(self, maxsize: int) -> None:
        self.maxsize = maxsize
        self._entries: dict[K, V] = {}
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        with self._lock:
            value = self._entries.pop(key, None)
            if value is not None:
                self._entries[key] = value  # now the most recent
            return value

    def put(self, key: K, value: V) -> None:
        with self._lock:
            entries = self._entries
            entries.pop(key, None)
            if len(entries) >= self.maxsize:
                del entries[next(iter(entries))]  # the least recently used
            entries[key] = value

    def __len__(self) -> int:
        return len(self._entries)

    def keys(self) -> list[K]:
        """The keys, least recently used first."""
        with self._lock:
            return list(self._entries)

    def __contains__(self, key: object) -> bool:
        return key in self._entries


class ValidationByText(SchemaExtension):
    """Strawberry's ``ValidationCache``, keyed by the document's text instead of the parsed
    document: its key hashed the whole syntax tree on every request (graphql-core's nodes hash
    field by field), a tenth of what validating it costs. The same text parses to the same
    document (``ParserCache``), so the text stands for it. Bounded (:class:`Recent`)."""

    def __init__(self, found: Recent[tuple[str, tuple[Any, ...]], list[GraphQLError]]) -> None:
        self.found = found

    def on_validate(self) -> Iterator[None]:
        ec = self.execution_context
        query, rules = ec.query, ec.validation_rules
        errors = None if query is None else self.found.get((query, rules))
        if errors is None:
            errors = validate_document(ec.schema._schema, ec.graphql_document, rules)
            if query is not None:
                self.found.put((query, rules), errors)
        ec.pre_execution_errors = errors
        yield


_HOOKS = ("on_operation", "on_parse", "on_validate", "on_execute", "on_stream_result")


class Combined(SchemaExtension):
    """Several extensions run as one: Strawberry wraps every hook of every extension in its own
    context manager (a ``contextlib`` wrapper built per request, entered through an exit stack),
    four phases a request, ten hooks here: that bookkeeping cost more than the hooks did. This
    runs the parts' generator hooks itself, in the same order (entered in list order, left in
    reverse; an exception is thrown into each, as a context manager's exit would), so each part
    behaves exactly as it would alone. The parts' hooks must be generator functions (all of
    ours and Strawberry's are), and none may implement ``resolve`` (a field middleware)."""

    # per part class: its generator hooks by phase (None: the base class's no-op)
    _found: ClassVar[dict[type[SchemaExtension], dict[str, Callable[..., Any] | None]]] = {}

    def __init__(self, parts: list[SchemaExtension]) -> None:
        super().__init__()
        self.parts = parts
        self._by_hook: dict[str, list[Any]] = {name: [] for name in _HOOKS}
        for part in parts:
            hooks = self._hooks_of(type(part))
            for name in _HOOKS:
                fn = hooks[name]
                if fn is not None:
                    self._by_hook[name].append((fn, part))

    @classmethod
    def _hooks_of(cls, kind: type[SchemaExtension]) -> dict[str, Callable[..., Any] | None]:
        found = cls._found.get(kind)
        if found is None:
            if kind._implements_resolve():
                raise TypeError(f"{kind.__name__} implements resolve: it cannot be combined")
            found = {}
            for name in _HOOKS:
                fn = getattr(kind, name)
                if fn is getattr(SchemaExtension, name):
                    found[name] = None
                elif inspect.isgeneratorfunction(fn):
                    found[name] = fn
                else:
                    raise TypeError(f"{kind.__name__}.{name} is not a generator function")
            cls._found[kind] = found
        return found

    def __setattr__(self, name: str, value: Any) -> None:
        object.__setattr__(self, name, value)
        if name == "execution_context":  # Strawberry sets it on each extension of the request
            for part in self.parts:
                part.execution_context = value

    def _run(self, name: str, *args: Any) -> Iterator[None]:
        hooks = self._by_hook[name]
        if not hooks:
            yield
            return
        entered: list[Iterator[None]] = []
        try:
            for fn, part in hooks:
                gen = fn(part, *args)
                next(gen)
                entered.append(gen)
        except BaseException as exc:
            left = _unwind(entered, exc)
            if left is None or left is exc:
                raise
            raise left from exc
        try:
            yield
        except BaseException as exc:
            left = _unwind(entered, exc)
            if left is None:
                return  # a hook handled it
            if left is exc:
                raise
            raise left from exc
        left = _unwind(entered, None)
        if left is not None:
            raise left

    def on_operation(self) -> Iterator[None]:
        yield from self._run("on_operation")

    def on_parse(self) -> Iterator[None]:
        yield from self._run("on_parse")

    def on_validate(self) -> Iterator[None]:
        yield from self._run("on_validate")

    def on_execute(self) -> Iterator[None]:
        yield from self._run("on_execute")

    def on_stream_result(self, result: Any) -> Iterator[None]:  # type: ignore[override]
        yield from self._run("on_stream_result", result)

    def get_results(self) -> dict[str, Any]:
        results: dict[str, Any] = {}
        for part in self.parts:
            found = part.get_results()
            if isinstance(found, dict):
                results.update(found)
        return results


def _unwind(entered: list[Iterator[None]], exc: BaseException | None) -> BaseException | None:
    """Leave entered generator hooks in reverse order, as ``contextlib.ExitStack`` leaves
    ``contextmanager``s: the exception (if any) is thrown into each; one that returns handles
    it, one that raises another replaces it for the hooks left after. Returns what is left."""
    pending = exc
    while entered:
        gen = entered.pop()
        try:
            if pending is None:
                next(gen)
            else:
                gen.throw(pending)
        except StopIteration:
            pending = None
            continue
        except BaseException as raised:  # noqa: BLE001 - handed on, as an exit stack does
            pending = raised
            continue
        raise RuntimeError("an extension hook yielded more than once")
    return pending


# ------------------------------------------------------------------------- query cost
# Items assumed in a list of objects that has no page size, by field name (else LIST_ESTIMATE).
LIST_SIZES = {
    "campaigns": 1,  # a token sees one campaign
    "characters": 30,  # creatures of a campaign
    "participants": 30,
    "initiativeOrder": 30,
    "initiative": 30,
    "readied": 30,
    "changes": 30,
    "encounters": 10,
    "accessTokens": 10,
    "orphans": 10,
    "fields": 10,
    "effects": 5,
    "modifiers": 5,
    "dice": 3,
    "tracks": 3,  # the numbers a game system charts per creature (hit points and its own)
    "thresholds": 3,  # labelled lines on one track (dying, dead...)
}
LIST_ESTIMATE = 10
DEFAULT_PAGE = 50  # a connection's page without first/last (api.graphql.types.DEFAULT_PAGE)
MAX_PAGE = 100  # the largest page (api.graphql.types.MAX_PAGE); larger ones are refused anyway
# fields that replay the campaign (or fold proposed commands on a copy of the present)
WEIGHTS = {"asOf": 25, "whatIf": 100, "proposalPreview": 25}
PAGE_ARGUMENTS = ("first", "last")


def estimate_cost(
    schema: GraphQLSchema,
    document: DocumentNode,
    operation_name: str | None = None,
    variables: Mapping[str, Any] | None = None,
) -> int:
    """The estimated cost of the operation (see the module docstring); 0 if there is none."""
    return _estimate(schema, document, operation_name, variables)[0]


def _estimate(
    schema: GraphQLSchema,
    document: DocumentNode,
    operation_name: str | None,
    variables: Mapping[str, Any] | None,
) -> tuple[int, tuple[str, ...]]:
    """(the cost, the variables it read: page sizes)."""
    operation = None
    fragments: dict[str, FragmentDefinitionNode] = {}
    for definition in document.definitions:
        if isinstance(definition, OperationDefinitionNode):
            if operation_name is None or (definition.name and definition.name.value == operation_name):
                operation = operation or definition
        elif isinstance(definition, FragmentDefinitionNode):
            fragments[definition.name.value] = definition
    if operation is None:
        return 0, ()
    root = schema.get_root_type(operation.operation)
    if root is None:
        return 0, ()
    estimator = _Estimator(schema, fragments, dict(variables or {}))
    cost = estimator.selection(operation.selection_set, root, None)
    return cost, tuple(sorted(estimator.read))


COST_CACHE_SIZE = 512


class CostCache:
    """Estimated costs per document, operation and the values of the variables the estimate read
    (page sizes): companion apps send the same few documents over and over, and the estimate
    walked each one on every request. Bounded (:class:`Recent`, both the documents and each
    one's variable values): odd documents cannot grow it, nor evict the usual ones first."""

    def __init__(self, maxsize: int = COST_CACHE_SIZE) -> None:
        self.maxsize = maxsize
        # (query, operation) -> (variables read, {their values: cost})
        self._costs: Recent[tuple[str, str | None], tuple[tuple[str, ...], Recent[tuple[str, ...], int]]]
        self._costs = Recent(maxsize)
        self.hits = 0

    def cost(
        self,
        schema: GraphQLSchema,
        query: str | None,
        document: DocumentNode,
        operation_name: str | None,
        variables: Mapping[str, Any] | None,
    ) -> int:
        if query is None:
            return estimate_cost(schema, document, operation_name, variables)
        values = variables or {}
        found = self._costs.get((query, operation_name))
        if found is not None:
            cost = found[1].get(tuple(repr(values.get(name)) for name in found[0]))
            if cost is not None:
                self.hits += 1
                return cost
        cost, read = _estimate(schema, document, operation_name, values)
        if found is None or found[0] != read:
            found = (read, Recent(self.maxsize))
            self._costs.put((query, operation_name), found)
        found[1].put(tuple(repr(values.get(name)) for name in read), cost)
        return cost


class _Estimator:
    def __init__(
        self, schema: GraphQLSchema, fragments: dict[str, FragmentDefinitionNode], variables: dict[str, Any]
    ) -> None:
        self.schema = schema
        self.fragments = fragments
        self.variables = variables
        self.memo: dict[tuple[str, int | None], int] = {}
        self.read: set[str] = set()  # the variables the estimate depends on

    def selection(self, selection_set: SelectionSetNode, parent: Any, page: int | None) -> int:
        total = 0
        for node in selection_set.selections:
            if isinstance(node, FieldNode):
                total += self.field(node, parent, page)
            elif isinstance(node, InlineFragmentNode):
                condition = node.type_condition
                typ = self.schema.get_type(condition.name.value) if condition else parent
                total += self.selection(node.selection_set, typ or parent, page)
            elif isinstance(node, FragmentSpreadNode):
                name = node.name.value
                key = (name, page)
                if key not in self.memo:
                    self.memo[key] = 0  # a cycle (refused by validation anyway) counts nothing
                    fragment = self.fragments.get(name)
                    if fragment is not None:
                        typ = self.schema.get_type(fragment.type_condition.name.value) or parent
                        self.memo[key] = self.selection(fragment.selection_set, typ, page)
                total += self.memo[key]
        return total

    def field(self, node: FieldNode, parent: Any, page: int | None) -> int:
        name = node.name.value
        if name.startswith("__") or not isinstance(parent, (GraphQLObjectType, GraphQLInterfaceType)):
            return 1  # __typename, and introspection (bounded by the schema) as one field
        definition = parent.fields.get(name)
        if definition is None:
            return 1
        returns = definition.type.of_type if isinstance(definition.type, GraphQLNonNull) else definition.type
        own = WEIGHTS.get(name, 1)
        if node.selection_set is None:
            return own  # a scalar, or a list of scalars
        inner = self.selection(node.selection_set, get_named_type(returns), self.page_size(node, definition))
        items = 1
        if isinstance(returns, GraphQLList):
            items = page if page is not None else LIST_SIZES.get(name, LIST_ESTIMATE)
        return items * (own + inner)

    def page_size(self, node: FieldNode, definition: Any) -> int | None:
        """The page a connection field returns (None: not a connection)."""
        if not any(a in definition.args for a in PAGE_ARGUMENTS):
            return None
        sizes = []
        for argument in node.arguments or ():
            if argument.name.value not in PAGE_ARGUMENTS:
                continue
            value = argument.value
            if isinstance(value, VariableNode):
                self.read.add(value.name.value)
            raw = (
                value.value
                if isinstance(value, IntValueNode)
                else self.variables.get(value.name.value)
                if isinstance(value, VariableNode)
                else None
            )
            try:
                sizes.append(min(MAX_PAGE, max(1, int(raw))) if raw is not None else DEFAULT_PAGE)
            except (TypeError, ValueError):
                sizes.append(MAX_PAGE)
        return min(sizes) if sizes else DEFAULT_PAGE


def too_complex(cost: int, limit: int) -> GraphQLError:
    return GraphQLError(
        f"the operation is too complex: its estimated cost is {cost}, the limit is {limit} "
        "(ask for fewer fields, smaller pages or less nesting; see docs/api.md, Query cost)",
        extensions={"code": "QUERY_TOO_COMPLEX", "cost": cost, "maxCost": limit},
    )


class Budget:
    """What a running query may still spend: fields resolved, and time."""

    __slots__ = ("deadline", "error", "limit", "remaining", "timeout")

    def __init__(self, limit: int, timeout: float) -> None:
        self.limit = limit
        self.remaining = limit
        self.timeout = timeout
        self.deadline = time.monotonic() + timeout
        self.error: GraphQLError | None = None

    def spend(self) -> bool:
        """Count one field; False (and :attr:`error` set) once a limit is passed."""
        if self.error is not None:
            return False
        self.remaining -= 1
        if self.remaining < 0:
            self.error = GraphQLError(
                f"the query is too complex: it resolved more than {self.limit} fields (its lists are "
                "larger than the estimate); ask for less (see docs/api.md, Query cost)",
                extensions={"code": "QUERY_TOO_COMPLEX", "maxCost": self.limit},
            )
        elif time.monotonic() > self.deadline:
            self.error = GraphQLError(
                f"the query ran longer than {self.timeout:g} seconds and was stopped; ask for less "
                "or try again later",
                extensions={"code": "QUERY_TIMEOUT", "timeoutSeconds": self.timeout},
            )
        return self.error is None


BUDGET: ContextVar[Budget | None] = ContextVar("chronicle_query_budget", default=None)


class QueryCost(SchemaExtension):
    """Refuses operations estimated above the limit; gives each query a :class:`Budget`."""

    def __init__(self, *, max_cost: int, timeout: float, costs: CostCache | None = None) -> None:
        self.max_cost = max_cost
        self.timeout = timeout
        self.costs = costs or CostCache()

    def on_execute(self) -> Iterator[None]:
        ec = self.execution_context
        document = ec.graphql_document
        if document is not None:
            cost = self.costs.cost(ec.schema._schema, ec.query, document, ec.operation_name, ec.variables)
            if cost > self.max_cost:
                raise too_complex(cost, self.max_cost)  # nothing runs, nothing is stored
        try:
            query = ec.operation_type == OperationType.QUERY
        except Exception:  # no single operation: graphql-core reports it
            query = False
        token = BUDGET.set(Budget(self.max_cost, self.timeout) if query else None)
        try:
            yield
        finally:
            BUDGET.reset(token)


class CostedExecutor(StrawberryGraphQLCoreExecutionContext):
    """Strawberry's executor, counting the fields a query resolves against its :class:`Budget`.

    Once the budget is spent, the next field raises, and the error propagates to the root
    (nullable fields included), so the response is ``data: null`` with that one error.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.budget = BUDGET.get()

    def execute_field(
        self,
        parent_type: GraphQLObjectType,
        source: Any,
        field_details_list: Any,
        path: Path,
        position_context: Any = None,
    ) -> Any:
        budget = self.budget
        # Introspection (types named __*) is bounded by the schema, not counted.
        if budget is not None and not parent_type.name.startswith("__") and not budget.spend():
            assert budget.error is not None
            raise located_error(budget.error, [d.node for d in field_details_list], path.as_list())
        return super().execute_field(parent_type, source, field_details_list, path, position_context)

    def handle_field_error(
        self, raw_error: Exception, return_type: Any, field_details_list: Any, path: Path
    ) -> None:
        budget = self.budget
        if budget is not None and budget.error is not None:
            raise located_error(raw_error, [d.node for d in field_details_list], path.as_list())
        super().handle_field_error(raw_error, return_type, field_details_list, path)
