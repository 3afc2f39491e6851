"""Input objects built from a plan made once per input type, not worked out on every request.

Strawberry converts a mutation's ``input`` argument into its input class field by field, and for
every field, every request, it works out the field's GraphQL name and resolves its type
annotation before it looks at the value: a third of the cost of an attack's arguments went to
that (yappi, 50 writers). :func:`install` gives each input type of a schema a
``from_input`` (Strawberry's hook for types that build their own value) that does the same
conversion from a plan made on first use: for each field its GraphQL name, its Python name and
how to convert its value -- as is for a scalar, a copy of the list for a list of scalars (as
Strawberry does: graphql-core hands every request the same default list), and Strawberry's own
conversion (``InputContext.convert``) for everything else (enums, nested inputs, which have their own plan).
``tests/unit/test_fast_input.py`` checks the law: the same instance as Strawberry's conversion.

Types with a ``Maybe`` field keep Strawberry's conversion (a ``from_input`` would also turn off
Strawberry's null check for them); so do types that already have a ``from_input``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

from strawberry.relay.types import GlobalID
from strawberry.scalars import is_scalar
from strawberry.types.base import (
    StrawberryList,
    StrawberryMaybe,
    StrawberryObjectDefinition,
    StrawberryOptional,
    StrawberryType,
)
from strawberry.types.unset import UNSET

Convert = Callable[[Any, Any], Any]  # (value, InputContext) -> the field's Python value


def install(schema: Any) -> int:
    """Give the schema's input types their planned ``from_input``; returns how many got one."""
    done = 0
    for entry in schema.schema_converter.type_map.values():
        definition = entry.definition
        if (
            isinstance(definition, StrawberryObjectDefinition)
            and definition.is_input
            and definition.from_input is None
            and not any(isinstance(f.type, StrawberryMaybe) for f in definition.fields)
        ):
            definition.from_input = PlannedInput(definition)
            done += 1
    return done


class PlannedInput:
    """``from_input`` for one input type (see the module docstring)."""

    def __init__(self, definition: StrawberryObjectDefinition) -> None:
        self.definition = definition
        self.defaults = {
            f.python_name: None
            for f in definition.fields
            if f.default_value is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        }
        # One plan per schema the type serves: the names come from the schema's config, the
        # scalars from its registry (two schemas may share an input type and differ in both).
        # Keyed by the config's identity; the entry holds the config so that it stays unique.
        self.plans: dict[int, tuple[Any, Any, list[tuple[str, str, Convert]]]] = {}

    def _make_plan(self, context: Any) -> list[tuple[str, str, Convert]]:
        definition, config, registry = self.definition, context.config, context.scalar_registry
        plan = []
        for field in definition.fields:
            name = config.name_converter.from_field(field)
            type_ = field.resolve_type(type_definition=definition)
            plan.append((name, field.python_name, _converter(type_, registry, name)))
        self.plans[id(config)] = (config, registry, plan)
        return plan

    def __call__(self, cls: type, value: Mapping[str, Any], context: Any) -> Any:
        found = self.plans.get(id(context.config))
        if found is not None and found[1] is context.scalar_registry:
            plan = found[2]
        else:
            plan = self._make_plan(context)
        kwargs: dict[str, Any] = dict(self.defaults)
        for name, python_name, convert in plan:
            if name in value:
                kwargs[python_name] = convert(value[name], context)
        return cls(**kwargs)


def _leaf(type_: Any, registry: Mapping[object, Any]) -> bool:
    return type_ is not GlobalID and not isinstance(type_, StrawberryType) and is_scalar(type_, registry)


def _converter(type_: Any, registry: Mapping[object, Any], name: str) -> Convert:
    """How to convert a value of ``type_``: what ``convert_argument`` does, decided once."""
    inner = type_.of_type if isinstance(type_, StrawberryOptional) else type_
    if _leaf(inner, registry):
        return _as_is
    if isinstance(inner, StrawberryList):
        item = inner.of_type.of_type if isinstance(inner.of_type, StrawberryOptional) else inner.of_type
        if _leaf(item, registry):
            return _list_copy

    def general(value: Any, context: Any) -> Any:
        return context.convert(value, type_, name)

    return general


def _as_is(value: Any, context: Any) -> Any:
    return value


def _list_copy(value: Any, context: Any) -> Any:
    if value is None or value is UNSET:
        return value
    return list(value)


__all__ = ["PlannedInput", "install"]
