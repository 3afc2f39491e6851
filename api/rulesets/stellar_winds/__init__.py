"""Stellar Winds' API plug-in: ``StellarWindsCharacter`` and the Stellar Winds mutations.

Found through the ``chronicle.api`` entry point ``stellar-winds`` (pyproject.toml)."""

from __future__ import annotations

from api.rulesets import ApiPlugin
from api.rulesets.stellar_winds.demo import create_demo
from api.rulesets.stellar_winds.gear import MUTATIONS as GEAR_MUTATIONS
from api.rulesets.stellar_winds.mutations import MUTATIONS, RULESET
from api.rulesets.stellar_winds.types import StellarWindsCharacter

PLUGIN = ApiPlugin(
    ruleset_id=RULESET,
    character_type=StellarWindsCharacter,
    mutations=[*MUTATIONS, *GEAR_MUTATIONS],
    demo=create_demo,
)
