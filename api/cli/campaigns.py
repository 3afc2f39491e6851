"""``chronicle campaigns``: every campaign in the configured store (registered by ``api.cli.main``)."""

from __future__ import annotations

from datetime import UTC

import typer

from api.cli.exits import Exit, fail

HEADINGS = ("ID", "NAME", "RULESET", "FACTS", "LAST ACTIVITY (UTC)")


def campaigns() -> None:
    """List the campaigns in the store.

    Each one's id, name, ruleset, number of facts and last activity, the most recent first.
    """
    from api.service.catalogue import list_campaigns
    from api.service.settings import ConfigError, Settings
    from api.service.store import open_application

    try:
        settings = Settings.from_env()
        app = open_application(settings)
    except ConfigError as exc:
        fail(f"configuration error: {exc}", Exit.CONFIG)
    try:
        found = list_campaigns(app)
    finally:
        app.close()
    if not found:
        typer.echo(f"No campaigns on {settings.database.describe()} (chronicle demo records one).")
        return
    rows = [
        (
            str(c.campaign_id),
            c.name,
            c.ruleset,
            f"{c.facts:,}" if c.complete else f"{c.facts:,} of {c.expected:,} (import incomplete)",
            c.last_activity.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S"),
        )
        for c in found
    ]
    widths = [max(len(row[i]) for row in (HEADINGS, *rows)) for i in range(len(HEADINGS))]
    for row in (HEADINGS, *rows):
        cells = [
            cell.rjust(width) if i == 3 else cell.ljust(width)
            for i, (cell, width) in enumerate(zip(row, widths, strict=True))
        ]
        typer.echo("  ".join(cells).rstrip())


def register(app: typer.Typer) -> None:
    app.command("campaigns")(campaigns)
