"""The d20 house rules' API plug-in: ``D20Character`` and the ``d20``-prefixed mutations.

Found through the ``chronicle.api`` entry point ``d20`` (pyproject.toml)."""

from __future__ import annotations

from api.rulesets import ApiPlugin
from api.rulesets.d20_house.demo import create_demo
from api.rulesets.d20_house.mutations import MUTATIONS, RULESET
from api.rulesets.d20_house.types import D20Character

PLUGIN = ApiPlugin(ruleset_id=RULESET, character_type=D20Character, mutations=MUTATIONS, demo=create_demo)
