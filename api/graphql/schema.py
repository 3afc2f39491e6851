"""The schema, built from settings (limits, introspection)."""

from __future__ import annotations

from typing import Any

import strawberry
from graphql.error import GraphQLError
from strawberry.types import ExecutionContext

from api.graphql.extensions import extensions, log_errors
from api.graphql.mutations import PAYLOADS, Mutation
from api.graphql.queries import Query
from api.graphql.subscriptions import Subscription
from api.graphql.types import AccessToken, Campaign, Character, Encounter, Fact, GenericCharacter
from api.rulesets import plugins
from api.service.settings import Settings


class ChronicleSchema(strawberry.Schema):
    def process_errors(
        self, errors: list[GraphQLError], execution_context: ExecutionContext | None = None
    ) -> None:
        log_errors(errors, execution_context.context if execution_context is not None else None)


def build_schema(settings: Settings | None = None) -> ChronicleSchema:
    s = settings or Settings(database_url="memory:")
    return ChronicleSchema(
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
            *PAYLOADS.values(),
        ],
        extensions=extensions(
            introspection=s.graphql_introspection,
            max_depth=s.graphql_max_depth,
            max_aliases=s.graphql_max_aliases,
            max_tokens=s.graphql_max_tokens,
        ),
    )


def schema_sdl() -> str:
    return build_schema().as_str() + "\n"


__all__: list[Any] = ["ChronicleSchema", "build_schema", "schema_sdl"]
