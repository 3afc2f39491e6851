"""The GraphQL schema served at ``/graphql``.

A placeholder that the API issue replaces: it only proves the wiring. ``api.http`` imports
``schema`` from here and nothing else, so this module can be rewritten freely.

Resolvers receive ``info.context`` as a dict holding Strawberry's defaults (``request``,
``response``, ``background_tasks``) plus ``application`` (the
:class:`~api.application.ChronicleApplication`) and ``settings``.
"""

from __future__ import annotations

from importlib import metadata

import strawberry

__all__ = ["Query", "schema", "server_version"]


def server_version() -> str:
    """The installed ``chronicle`` distribution's version (``0+unknown`` when not installed)."""
    try:
        return metadata.version("chronicle")
    except metadata.PackageNotFoundError:
        return "0+unknown"


@strawberry.type(description="Read-only entry points.")
class Query:
    version: str = strawberry.field(resolver=server_version, description="The server's version.")


schema = strawberry.Schema(query=Query)
