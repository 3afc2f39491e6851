"""Orcus's API plug-in: ``OrcusCharacter`` and the ``orcus``-prefixed mutations.

Found through the ``chronicle.api`` entry point ``orcus`` (pyproject.toml)."""

from __future__ import annotations

from api.rulesets import ApiPlugin
from api.rulesets.orcus.demo import create_demo
from api.rulesets.orcus.mutations import MUTATIONS, RULESET
from api.rulesets.orcus.types import OrcusCharacter

PLUGIN = ApiPlugin(ruleset_id=RULESET, character_type=OrcusCharacter, mutations=MUTATIONS, demo=create_demo)
