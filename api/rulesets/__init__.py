"""API plug-ins of the game systems: what a ruleset adds to GraphQL.

A ruleset (``domain.rulesets``) works without one: its creatures are served as
``GenericCharacter`` (the fields every system shares, plus ``raw``) and its facts through the
core mutations and ``recordFact``. A plug-in gives clients typed access: a concrete
``Character`` type with the system's own resources, and mutations with typed inputs.

Plug-ins are found through the entry-point group ``chronicle.api``; an entry's name is the
ruleset id and its value an :class:`ApiPlugin`. Stellar Winds' is
``api.rulesets.stellar_winds:PLUGIN``. A plug-in whose ruleset is not installed is ignored.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import metadata
from typing import Any
from uuid import UUID

from api.graphql.planning import MutationSpec

log = logging.getLogger(__name__)

ENTRY_POINT_GROUP = "chronicle.api"


@dataclass(frozen=True)
class ApiPlugin:
    """A game system's part of the GraphQL schema.

    ``character_type``: a Strawberry type implementing ``Character`` (built with
    ``api.graphql.types.character_fields``), constructed like ``GenericCharacter``;
    ``mutations``: its mutations (each names this ruleset, so other systems' campaigns refuse
    them); ``types``: any further types only reachable through interfaces; ``demo``: records
    its demo campaign (``chronicle demo --ruleset``).
    """

    ruleset_id: str
    character_type: type[Any]
    mutations: Sequence[MutationSpec] = ()
    types: Sequence[type[Any]] = ()
    demo: Callable[[Any], UUID] | None = None  # records a scripted campaign, returns its id


_PLUGINS: dict[str, ApiPlugin] | None = None


def plugins() -> dict[str, ApiPlugin]:
    """Every installed plug-in whose ruleset is installed too, by ruleset id."""
    global _PLUGINS
    if _PLUGINS is None:
        from domain import rulesets

        found: dict[str, ApiPlugin] = {}
        installed = set(rulesets.available())
        for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
            if ep.name not in installed:
                continue
            try:
                plugin = ep.load()
            except Exception:  # a broken plug-in must not take the API down; it is reported
                log.exception("cannot load the API plug-in %s (%s)", ep.name, ep.value)
                continue
            if isinstance(plugin, ApiPlugin) and plugin.ruleset_id == ep.name:
                found[ep.name] = plugin
            else:
                log.error("the API plug-in %s (%s) is not an ApiPlugin for %s", ep.name, ep.value, ep.name)
        _PLUGINS = found
    return _PLUGINS


def plugin_for(ruleset_id: str) -> ApiPlugin | None:
    return plugins().get(ruleset_id)
