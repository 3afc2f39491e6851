"""A generated campaign stored through a real application (no snapshot: a load folds every fact)."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from api.service.settings import Settings
from api.service.store import open_application
from bench.generator import CampaignGenerator
from domain.rulesets import get_ruleset

Fact = tuple[str, int, dict[str, Any], dict[str, Any]]


def generated_facts(n: int, seed: int = 5, ruleset: str = "stellar-winds") -> list[Fact]:
    """``n`` facts of the bench's generator, each with its type's current version."""
    catalogue = get_ruleset(ruleset).catalogue
    return [(t, catalogue.version(t), p, m) for t, p, m in CampaignGenerator(n, seed=seed).facts()]


def stored_campaign(
    database_url: str, header: dict[str, Any], facts: list[Fact], **settings: Any
) -> tuple[Settings, UUID]:
    """Import ``facts`` as a new campaign with ``snapshot_every=0`` (and ``settings``); the
    settings to open the store with again, and the campaign's id."""
    opened = Settings(database_url=database_url, snapshot_every=0, **settings)
    writer = open_application(opened)
    try:
        return opened, writer.import_campaign(header, facts)
    finally:
        writer.close()
