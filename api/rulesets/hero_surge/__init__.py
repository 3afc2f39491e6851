"""The hero's-surge system's API plug-in: ``HeroSurgeCharacter`` and the ``heroSurge``-prefixed
mutations.

Found through the ``chronicle.api`` entry point ``hero-surge`` (pyproject.toml)."""

from __future__ import annotations

from api.rulesets import ApiPlugin
from api.rulesets.hero_surge.demo import create_demo
from api.rulesets.hero_surge.mutations import MUTATIONS, RULESET
from api.rulesets.hero_surge.types import HeroSurgeCharacter

PLUGIN = ApiPlugin(
    ruleset_id=RULESET, character_type=HeroSurgeCharacter, mutations=MUTATIONS, demo=create_demo
)
