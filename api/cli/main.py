"""The ``chronicle`` command.

``chronicle serve`` reads the ``CHRONICLE_*`` variables (see ``api.service.settings``), opens the
store and runs the HTTP/GraphQL server. A bad configuration exits with status 78
(``EX_CONFIG``) and one line on stderr, never a traceback.
"""

from __future__ import annotations

import logging
import uuid
from typing import Annotated, NoReturn

import typer
import uvicorn

from api.cli.exports import register as register_exports
from api.http.app import create_app
from api.service.observability import configure_logging
from api.service.settings import DEFAULT_HOST, DEFAULT_PORT, ConfigError, Settings

__all__ = ["EXIT_CONFIG", "app", "main"]

EXIT_CONFIG = 78  # sysexits.h EX_CONFIG

app = typer.Typer(
    name="chronicle",
    help="Chronicle: an event-sourced backend for tabletop campaigns.",
    no_args_is_help=True,
    add_completion=False,
    # Locals may hold the database password: never print them in a traceback.
    pretty_exceptions_show_locals=False,
)


@app.callback()
def _root() -> None:
    """Chronicle: an event-sourced backend for tabletop campaigns."""


@app.command()
def serve(
    host: Annotated[
        str | None,
        typer.Option(help=f"Interface to listen on. [default: $CHRONICLE_HOST or {DEFAULT_HOST}]"),
    ] = None,
    port: Annotated[
        int | None,
        typer.Option(
            min=1, max=65535, help=f"TCP port to listen on. [default: $CHRONICLE_PORT or {DEFAULT_PORT}]"
        ),
    ] = None,
) -> None:
    """Serve the GraphQL API (GraphiQL at /graphql) with /healthz and /readyz."""
    try:
        settings = Settings.from_env().with_overrides(host=host, port=port)
        web = create_app(settings)
    except ConfigError as exc:
        _config_error(exc)
    shown_host = f"[{settings.host}]" if ":" in settings.host else settings.host
    typer.echo(
        f"Chronicle serving GraphiQL at http://{shown_host}:{settings.port}/graphql "
        f"(store: {settings.database.describe()})"
    )
    _configure_logging(settings)
    # SIGTERM: uvicorn stops accepting, lets in-flight requests finish for up to
    # CHRONICLE_SHUTDOWN_TIMEOUT seconds (then cancels them; WebSocket subscriptions are
    # closed), runs the lifespan shutdown (closes the store) and exits.
    uvicorn.run(
        web,
        host=settings.host,
        port=settings.port,
        log_level=settings.log_level,
        log_config=None,  # our handler (api.service.observability) formats uvicorn's lines too
        access_log=False,  # RequestContext writes one `request` line per request, with its id
        timeout_graceful_shutdown=max(1, round(settings.shutdown_timeout)),
    )


@app.command()
def worker(
    batch_size: Annotated[int, typer.Option(min=1, max=10_000, help="Events per transaction.")] = 500,
) -> None:
    """Keep the read models current (catch up, then follow) until SIGTERM or SIGINT."""
    import signal

    from api.service.views import follower

    try:
        settings = Settings.from_env()
        if settings.database.kind == "memory":
            raise ConfigError("CHRONICLE_DATABASE_URL", "read models need sqlite or postgresql, not memory:")
        runner = follower(settings, batch_size=batch_size)
        runner.views.tracking()  # fail fast on a bad configuration
    except ConfigError as exc:
        _config_error(exc)
    _configure_logging(settings)
    log = logging.getLogger("chronicle.worker")

    def stop(signum: int, _: object) -> None:
        # Only sets a flag: the batch being projected commits (rows and tracking together),
        # then the loop ends and the connections are closed.
        log.info("%s received: stopping after the current batch", signal.Signals(signum).name)
        runner.stopping.set()

    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, stop)
    typer.echo(f"Chronicle worker following {settings.database.describe()}")
    log.info("worker started", extra={"store": settings.database.describe(), "batch_size": batch_size})
    runner.run()
    log.info("worker stopped", extra={"events": runner.events})
    typer.echo(f"Chronicle worker stopped after {runner.events} events")


@app.command()
def rebuild(
    projection: Annotated[str, typer.Option(help="creatures, encounters, facts, log, or all.")] = "all",
    campaign: Annotated[
        str | None,
        typer.Option(
            help="Only this campaign (its UUID): re-derive all its rows from its log and lift its "
            "quarantine. The other campaigns are not touched; a running worker keeps going."
        ),
    ] = None,
    batch_size: Annotated[int, typer.Option(min=1, max=10_000, help="Events per transaction.")] = 500,
) -> None:
    """Drop read models and rebuild them from the event log (or repair one campaign)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from api.service.views import rebuild as rebuild_views
    from api.service.views import rebuild_campaign
    from projections.projector import PROJECTIONS
    from projections.runner import RebuildFailed

    names = PROJECTIONS if projection == "all" else (projection,)
    if projection != "all" and projection not in PROJECTIONS:
        choices = ", ".join(PROJECTIONS)
        typer.echo(f"chronicle: unknown projection {projection!r} (use {choices} or all)", err=True)
        raise typer.Exit(2)
    campaign_id = None
    if campaign is not None:
        try:
            campaign_id = uuid.UUID(campaign.strip())
        except ValueError:
            typer.echo(f"chronicle: --campaign takes a campaign's UUID, got {campaign!r}", err=True)
            raise typer.Exit(2) from None
        if projection != "all":
            typer.echo("chronicle: --campaign rebuilds all of a campaign's rows; drop --projection", err=True)
            raise typer.Exit(2)
    try:
        settings = Settings.from_env()
        if settings.database.kind == "memory":
            raise ConfigError("CHRONICLE_DATABASE_URL", "read models need sqlite or postgresql, not memory:")
    except ConfigError as exc:
        _config_error(exc)
    columns = (
        TextColumn("rebuilding {task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    with Progress(*columns, transient=False) as bar:
        task = bar.add_task(f"campaign {campaign_id}" if campaign_id else ", ".join(names), total=None)

        def progress(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        if campaign_id is not None:
            try:
                one = rebuild_campaign(settings, campaign_id, batch_size=batch_size, progress=progress)
            except ValueError as exc:
                typer.echo(f"chronicle: {exc}", err=True)
                raise typer.Exit(1) from None
            except RebuildFailed as exc:
                typer.echo(f"chronicle: {exc}; it stays quarantined", err=True)
                raise typer.Exit(1) from None
        else:
            result = rebuild_views(settings, names, batch_size=batch_size, progress=progress)
    if campaign_id is not None:
        typer.echo(
            f"Rebuilt campaign {one.campaign_id}: {one.facts} events in {one.seconds:.2f}s; "
            "its read models are live again"
        )
        return
    typer.echo(
        f"Rebuilt {', '.join(result.projections)}: {result.events} events in {result.seconds:.2f}s "
        f"({result.rate:,.0f} events/s)"
    )


@app.command()
def quarantine() -> None:
    """List the campaigns whose read models are stopped at a fact that failed to project."""
    from api.service.views import quarantined

    try:
        settings = Settings.from_env()
        if settings.database.kind == "memory":
            raise ConfigError("CHRONICLE_DATABASE_URL", "read models need sqlite or postgresql, not memory:")
    except ConfigError as exc:
        _config_error(exc)
    rows = quarantined(settings)
    if not rows:
        typer.echo("No campaign is quarantined: every campaign's read models are live.")
        return
    for row in rows:
        typer.echo(
            f"{row['campaign_id']}  since {row['quarantined_at']}  at position {row['position']} "
            f"(notification {row['notification_id']}): {row['error']}"
        )
    typer.echo(f"{len(rows)} quarantined; repair each with: chronicle rebuild --campaign ID")


register_exports(app)  # chronicle demo / export / import (api/cli/exports.py)


def _configure_logging(settings: Settings) -> None:
    """Once per process: every logger (Chronicle's and uvicorn's) at CHRONICLE_LOG_LEVEL, one line
    per record on stderr, as JSON or text (CHRONICLE_LOG_FORMAT; see api/service/observability.py)."""
    configure_logging(settings.log_level, settings.log_format)


def _config_error(exc: ConfigError) -> NoReturn:
    typer.echo(f"chronicle: configuration error: {exc}", err=True)
    raise typer.Exit(EXIT_CONFIG)


def main() -> None:
    """Console-script entry point."""
    app(prog_name="chronicle")


if __name__ == "__main__":
    main()
