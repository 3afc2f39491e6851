"""``chronicle demo``: a scripted campaign of any game system that has one.

Each ruleset's API plug-in may bring a demo (``ApiPlugin.demo``: a function that records a
campaign on an application and returns its id); this picks the one asked for, or the default
ruleset's.
"""

from __future__ import annotations

from uuid import UUID

from api.rulesets import plugin_for
from api.service.application import ChronicleApplication
from domain import rulesets
from domain.errors import InvalidInput


def demo_rulesets() -> list[str]:
    """The installed rulesets that bring a demo campaign."""
    return [r for r in rulesets.available() if (p := plugin_for(r)) is not None and p.demo is not None]


def create_demo(app: ChronicleApplication, ruleset: str | None = None) -> UUID:
    """Record the demo campaign of ``ruleset`` (default: the product's default ruleset)."""
    ruleset = ruleset or rulesets.default_ruleset()
    rulesets.get_ruleset(ruleset)  # an unknown ruleset is INVALID_INPUT naming the known ones
    plugin = plugin_for(ruleset)
    if plugin is None or plugin.demo is None:
        known = ", ".join(demo_rulesets()) or "none"
        raise InvalidInput(f"the {ruleset} ruleset has no demo campaign (demos: {known})", field="ruleset")
    return plugin.demo(app)
