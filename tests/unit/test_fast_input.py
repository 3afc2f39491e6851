"""The law of ``api.graphql.fastinput``: an input object built from its type's plan equals the one
Strawberry's own conversion builds, for every input type of the schema and any value of it
(nulls, omitted fields, lists, enums and nested inputs included)."""

from __future__ import annotations

import functools
from typing import Any

import pytest
import strawberry
from graphql import (
    GraphQLEnumType,
    GraphQLInputObjectType,
    GraphQLList,
    GraphQLNonNull,
    GraphQLScalarType,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strawberry.schema.config import StrawberryConfig
from strawberry.types.arguments import convert_argument

from api.graphql import fastinput
from api.graphql.schema import build_schema


@functools.cache
def _schema() -> Any:
    return build_schema()


def _inputs() -> list[str]:
    schema = _schema()
    return sorted(
        name
        for name, entry in schema.schema_converter.type_map.items()
        if isinstance(getattr(entry.definition, "from_input", None), fastinput.PlannedInput)
    )


SCALARS = {
    "Int": st.integers(-(2**31), 2**31 - 1),
    "Float": st.floats(allow_nan=False, allow_infinity=False),
    "String": st.text(max_size=8),
    "Boolean": st.booleans(),
    "ID": st.text(max_size=8),
}
JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=6,
)


def _values(gtype: Any, depth: int = 0) -> st.SearchStrategy[Any]:
    """Values of a GraphQL input type as graphql-core hands them to Strawberry (coerced)."""
    if isinstance(gtype, GraphQLNonNull):
        return _values(gtype.of_type, depth)
    nullable = st.none()
    if isinstance(gtype, GraphQLList):
        if depth >= 3:
            return nullable | st.just([])
        return nullable | st.lists(_values(gtype.of_type, depth + 1), max_size=3)
    if isinstance(gtype, GraphQLEnumType):
        return nullable | st.sampled_from([v.value for v in gtype.values.values()])
    if isinstance(gtype, GraphQLScalarType):
        return nullable | SCALARS.get(gtype.name, JSONISH)
    if isinstance(gtype, GraphQLInputObjectType):
        if depth > 3:
            return nullable
        fields = {name: _values(f.type, depth + 1) for name, f in gtype.fields.items()}
        return nullable | st.fixed_dictionaries({}, optional=fields)
    raise AssertionError(f"unexpected input type {gtype}")


@pytest.mark.parametrize("name", _inputs())
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_planned_input_builds_what_strawberry_builds(name: str, data: st.DataObject) -> None:
    schema = _schema()
    entry = schema.schema_converter.type_map[name]
    value = data.draw(_values(entry.implementation).filter(lambda v: v is not None), label="value")
    cls = entry.definition.origin
    config, registry = schema.config, schema.schema_converter.scalar_registry
    planned = convert_argument(value, cls, registry, config)
    planned_types = [schema.schema_converter.type_map[n].definition for n in _inputs()]
    saved = [d.from_input for d in planned_types]
    try:
        for d in planned_types:
            d.from_input = None
        general = convert_argument(value, cls, registry, config)
    finally:
        for d, hook in zip(planned_types, saved, strict=True):
            d.from_input = hook
    assert type(planned) is type(general)
    assert planned == general


def test_every_input_type_of_the_schema_has_a_plan() -> None:
    schema = _schema()
    inputs = [
        e
        for e in schema.schema_converter.type_map.values()
        if isinstance(e.implementation, GraphQLInputObjectType)
    ]
    assert len(_inputs()) == len(inputs) > 50


@strawberry.input
class Wound:
    hit_points: int
    note: str | None = None


@strawberry.type
class WoundQuery:
    @strawberry.field
    def take(self, wound: Wound) -> int:
        return wound.hit_points


def test_two_schemas_sharing_an_input_type_each_convert_with_their_own_names() -> None:
    """An input type's plan is the schema's: one schema names the field ``hitPoints``, another
    (``auto_camel_case=False``) ``hit_points``; each builds the value it was sent."""
    camel = strawberry.Schema(query=WoundQuery)
    snake = strawberry.Schema(query=WoundQuery, config=StrawberryConfig(auto_camel_case=False))
    assert fastinput.install(camel) == 1
    fastinput.install(snake)  # the type has its plan holder already; it serves both
    for _ in range(2):  # the second time from the plans made the first
        assert camel.execute_sync("{ take(wound: {hitPoints: 7}) }").data == {"take": 7}
        assert snake.execute_sync("{ take(wound: {hit_points: 9}) }").data == {"take": 9}
