"""The GraphQL schema served at ``/graphql`` (thin export point; the code is in ``api.graphql``).

``schema`` is built with the default settings (what ``schema.graphql`` at the repository root
records: ``make schema`` rewrites it, a test compares). ``api.http.app`` builds the served schema
from the configured settings (limits, introspection) with :func:`build_schema`.

Resolvers receive ``info.context`` as a dict holding Strawberry's defaults (``request``,
``response``, ``background_tasks``) plus ``application`` (the
:class:`~api.service.application.ChronicleApplication`), ``settings``, ``access`` (token checks) and
``broadcaster`` (wakes subscriptions).
"""

from __future__ import annotations

from api.graphql.queries import Query, server_version
from api.graphql.schema import build_schema, schema_sdl

__all__ = ["Query", "build_schema", "schema", "schema_sdl", "server_version"]

schema = build_schema()
