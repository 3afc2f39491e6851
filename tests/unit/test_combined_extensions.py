"""``api.graphql.extensions.Combined`` runs several schema extensions as one: the same hooks in
the same order (entered in list order, left in reverse), exceptions thrown into each as
Strawberry's own context managers would, so a schema with the parts combined answers exactly as
one with the parts listed separately. ``ValidationByText`` caches validation by the document's
text: a cached invalid document is still refused, a valid one still runs."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
import strawberry
from graphql import GraphQLError
from hypothesis import given, settings
from hypothesis import strategies as st
from strawberry.extensions import SchemaExtension

from api.graphql.extensions import Combined, Recent, ValidationByText


def _recorder(name: str, log: list[str], *, refuse: str = "", swallow: bool = False) -> type[SchemaExtension]:
    """An extension that logs each hook's entry and exit (and an exception thrown into it);
    ``refuse``: the hook that raises on entry; ``swallow``: its on_execute handles an error."""

    def hook(phase: str) -> Any:
        def run(self: SchemaExtension) -> Iterator[None]:
            log.append(f"{name}>{phase}")
            if refuse == phase:
                raise GraphQLError(f"{name} refuses at {phase}")
            try:
                yield
            except Exception as exc:
                log.append(f"{name}!{phase}:{type(exc).__name__}")
                if swallow and phase == "on_execute":
                    return
                raise
            log.append(f"{name}<{phase}")

        run.__name__ = phase
        return run

    phases = ("on_operation", "on_parse", "on_validate", "on_execute")
    return type(name, (SchemaExtension,), {p: hook(p) for p in phases})


@strawberry.type
class Query:
    @strawberry.field
    def ok(self) -> int:
        return 1

    @strawberry.field
    def boom(self) -> int:
        raise ValueError("boom")


QUERIES = ("{ ok }", "{ boom }", "{ nope }", "{ ok", "{ ok boom }")


def _run(extensions: list[Any], query: str) -> tuple[Any, list[str]]:
    schema = strawberry.Schema(query=Query, extensions=extensions)
    result = asyncio.run(schema.execute(query))
    errors = [e.message for e in result.errors or []]
    return (result.data, errors)


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(1, 4),
    refuse=st.sampled_from(["", "on_operation", "on_parse", "on_validate", "on_execute"]),
    who=st.integers(0, 3),
    swallow=st.booleans(),
    query=st.sampled_from(QUERIES),
)
def test_combined_parts_answer_and_run_as_the_parts_listed(
    n: int, refuse: str, who: int, swallow: bool, query: str
) -> None:
    def parts(log: list[str]) -> list[type[SchemaExtension]]:
        return [
            _recorder(f"e{k}", log, refuse=refuse if k == who % n else "", swallow=swallow and k == 0)
            for k in range(n)
        ]

    alone_log: list[str] = []
    combined_log: list[str] = []
    try:
        alone = _run(list(parts(alone_log)), query)
    except Exception as exc:  # an extension's refusal outside execution escapes Strawberry
        alone = ("raised", [type(exc).__name__, str(exc)])
    kinds = parts(combined_log)
    try:
        combined = _run([lambda: Combined([k() for k in kinds])], query)
    except Exception as exc:
        combined = ("raised", [type(exc).__name__, str(exc)])
    assert combined == alone
    if not refuse:  # (a refusal on entry: Strawberry leaves the hooks entered before it open)
        assert combined_log == alone_log


def test_a_hook_that_is_no_generator_is_refused() -> None:
    class Plain(SchemaExtension):
        def on_operation(self) -> None:  # type: ignore[override]
            return None

    with pytest.raises(TypeError, match="not a generator"):
        Combined([Plain()])


def test_validation_by_text_refuses_a_cached_invalid_document_and_runs_a_valid_one() -> None:
    found: Recent[Any, Any] = Recent(8)
    schema = strawberry.Schema(query=Query, extensions=[lambda: ValidationByText(found)])
    for _ in range(3):
        bad = asyncio.run(schema.execute("{ nope }"))
        assert bad.data is None and bad.errors and "nope" in bad.errors[0].message
        good = asyncio.run(schema.execute("{ ok }"))
        assert good.data == {"ok": 1} and not good.errors
    assert len(found) == 2  # one entry per text


def test_a_full_validation_cache_forgets_the_least_recently_used_document() -> None:
    """A burst of odd documents evicts the odd ones; the document sent over and over stays."""
    found: Recent[Any, Any] = Recent(3)
    schema = strawberry.Schema(query=Query, extensions=[lambda: ValidationByText(found)])
    usual = "{ ok }"
    for k in range(10):
        assert asyncio.run(schema.execute(usual)).data == {"ok": 1}
        asyncio.run(schema.execute(f"query Odd{k} {{ ok }}"))
        assert len(found) <= 3
        assert any(key[0] == usual for key in found.keys())
    assert not any(key[0] == "query Odd0 { ok }" for key in found.keys())


def test_recent_evicts_in_order_of_last_use() -> None:
    cache: Recent[str, int] = Recent(2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1  # a is now the most recent
    cache.put("c", 3)  # evicts b
    assert "b" not in cache and cache.get("a") == 1 and cache.get("c") == 3
    cache.put("a", 10)  # replacing keeps the size
    assert len(cache) == 2 and cache.get("a") == 10
