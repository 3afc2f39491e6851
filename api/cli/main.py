"""The ``chronicle`` command.

``chronicle serve`` reads the ``CHRONICLE_*`` variables (see ``api.service.settings``), opens the
store and runs the HTTP/GraphQL server. Every failure exits with one line on stderr and the
status for its kind (``api.cli.exits``: a bad configuration is 78, ``EX_CONFIG``), never a
traceback.

Start-up cost: this module imports only typer and the settings. Each command imports what it
needs (the web stack, the store, the exports) when it runs, so ``chronicle --help`` or
``chronicle campaigns`` does not pay for FastAPI, Strawberry and uvicorn.
"""

from __future__ import annotations

import signal
from types import FrameType
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer

from api.cli.exits import Exit, fail, help_table
from api.service.settings import DEFAULT_HOST, DEFAULT_PORT, ConfigError, Settings

if TYPE_CHECKING:
    import socket

__all__ = ["EXIT_CONFIG", "app", "main"]

EXIT_CONFIG = int(Exit.CONFIG)

app = typer.Typer(
    name="chronicle",
    help="Chronicle: an event-sourced backend for tabletop campaigns.",
    epilog=help_table(),
    no_args_is_help=True,
    add_completion=False,
    # Plain click help: no rich import on --help, and no `<bool>` metavar on flags.
    rich_markup_mode=None,
    # Locals may hold the database password: never print them in a traceback.
    pretty_exceptions_show_locals=False,
)


def _version(value: bool) -> None:
    if value:
        from importlib import metadata

        try:
            version = metadata.version("chronicle")
        except metadata.PackageNotFoundError:
            version = "0+unknown (not installed)"
        typer.echo(f"chronicle {version}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit."),
    ] = False,
) -> None:
    """Chronicle: an event-sourced backend for tabletop campaigns."""


@app.command()
def serve(
    host: Annotated[
        str | None,
        typer.Option(
            metavar="HOST", help=f"Interface to listen on. [default: $CHRONICLE_HOST or {DEFAULT_HOST}]"
        ),
    ] = None,
    port: Annotated[
        int | None,
        typer.Option(
            min=1,
            max=65535,
            metavar="PORT",
            help=f"TCP port to listen on. [default: $CHRONICLE_PORT or {DEFAULT_PORT}]",
        ),
    ] = None,
) -> None:
    """Serve the GraphQL API, with GraphiQL at /graphql.

    Also /healthz, /readyz, /metrics and the export downloads. SIGTERM or Ctrl-C: finish the
    requests in flight (CHRONICLE_SHUTDOWN_TIMEOUT), close the store, exit 0.
    """
    import uvicorn

    from api.http.app import create_app
    from api.service.gcpause import tune_collector

    try:
        settings = Settings.from_env().with_overrides(host=host, port=port)
    except ConfigError as exc:
        _config_error(exc)
    listening = _listen(settings.host, settings.port)  # a port in use fails here, before anything else
    try:
        web = create_app(settings)
    except ConfigError as exc:
        listening.close()
        _config_error(exc)
    shown_host = f"[{settings.host}]" if ":" in settings.host else settings.host
    typer.echo(
        f"Chronicle serving GraphiQL at http://{shown_host}:{settings.port}/graphql "
        f"(store: {settings.database.describe()})"
    )
    _configure_logging(settings)
    tune_collector()  # api/service/gcpause.py: fewer, cheaper collections under many requests
    # SIGTERM: uvicorn stops accepting, lets in-flight requests finish for up to
    # CHRONICLE_SHUTDOWN_TIMEOUT seconds (then cancels them; WebSocket subscriptions are
    # closed), runs the lifespan shutdown (closes the store) and returns.
    config = uvicorn.Config(
        web,
        log_level=settings.log_level,
        log_config=None,  # our handler (api.service.observability) formats uvicorn's lines too
        access_log=False,  # RequestContext writes one `request` line per request, with its id
        timeout_graceful_shutdown=max(1, round(settings.shutdown_timeout)),
    )
    server = uvicorn.Server(config)
    stopped: list[int] = []

    def graceful(signum: int, _frame: FrameType | None) -> None:
        # uvicorn handles the signal itself while it runs, then raises it again once it has shut
        # down; it lands here, so a requested stop ends the process with 0, not 143 or 130.
        stopped.append(signum)

    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, graceful)
    try:
        server.run(sockets=[listening])
    finally:
        listening.close()
    if not server.started:  # the lifespan startup failed; uvicorn has logged why
        raise typer.Exit(int(Exit.ERROR))


def _listen(host: str, port: int) -> socket.socket:
    """The listening socket, or one clear line and exit 69 (in use, not permitted, no such address)."""
    import errno
    import socket

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        reason = exc.strerror or str(exc)
        if exc.errno == errno.EADDRINUSE:
            reason = "the address is already in use (is another server running there?)"
        fail(f"cannot listen on {host}:{port}: {reason}", Exit.UNAVAILABLE)
    sock.set_inheritable(True)
    return sock


# The read models' options, shared by ``chronicle worker`` and ``chronicle rebuild``.
BatchSize = Annotated[int, typer.Option(min=1, max=10_000, help="Events per transaction.")]
Lookahead = Annotated[
    int,
    typer.Option(
        min=1,
        max=1_000_000,
        help="Events folded at once when that many are pending (then committed --batch-size at a "
        "time): a larger look-ahead refolds less after corrections that reach far back, and holds "
        "their rows in memory (about 2 MB per 1,000).",
    ),
]


@app.command()
def worker(
    batch_size: BatchSize = 500,
    lookahead: Lookahead = 100_000,  # projections.runner.DEFAULT_LOOKAHEAD (the CLI starts fast)
    max_window: Annotated[
        float,
        typer.Option(
            min=0.0,
            max=10.0,
            help="Longest wait, in seconds, to gather the facts written after a costly step before "
            "the next (4x that step's duration; 0.05 after a cheap one): wider spends less CPU per "
            "fact when many tables write at once, and lets the read models lag up to that much more.",
        ),
    ] = 0.25,  # projections.runner.Follower's max_window
) -> None:
    """Keep the read models current (catch up, then follow).

    Runs until SIGTERM or Ctrl-C (then exits 0). The catch-up shows its progress: a bar at a
    terminal, a `catching up` log line every few seconds otherwise.
    """
    import logging

    from api.cli.progress import catch_up
    from api.service.views import follower

    try:
        settings = Settings.from_env()
        if settings.database.kind == "memory":
            raise ConfigError("CHRONICLE_DATABASE_URL", "read models need sqlite or postgresql, not memory:")
        # a process of its own: the garbage collector runs between steps (see Follower)
        # its catch-up commits while it folds on (a writer thread; see Follower's overlap)
        runner = follower(
            settings,
            batch_size=batch_size,
            lookahead=lookahead,
            pause_gc=True,
            overlap=True,
            max_window=max_window,
        )
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
    catch_up(runner, log)  # with progress: a bar at a terminal, a log line every few seconds otherwise
    runner.run()
    log.info("worker stopped", extra={"events": runner.events})
    typer.echo(f"Chronicle worker stopped after {runner.events} events")


@app.command()
def rebuild(
    projection: Annotated[str, typer.Option(help="creatures, encounters, facts, log, or all.")] = "all",
    campaign: Annotated[
        str | None,
        typer.Option(
            metavar="CAMPAIGN",
            help="Only this campaign (its id or GraphQL ID): re-derive all its rows from its log and "
            "lift its quarantine. The other campaigns are not touched; a running worker keeps going.",
        ),
    ] = None,
    batch_size: BatchSize = 500,
    lookahead: Lookahead = 100_000,  # projections.runner.DEFAULT_LOOKAHEAD (the CLI starts fast)
) -> None:
    """Drop read models and rebuild them from the event log (or repair one campaign)."""
    from api.service.gcpause import gc_paused

    # the modules live as long as the process: no collection while they load (about 40 of the
    # 510 ms of CPU these imports took). Not frozen after: a freeze without a collection first
    # would keep whatever cycles the imports left, and in a process that runs the command in
    # process (the tests' CliRunner) it would freeze everything the process holds.
    with gc_paused():
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        from api.service.campaign_ref import BadCampaignRef, campaign_ref
        from api.service.views import rebuild as rebuild_views
        from api.service.views import rebuild_campaign
        from projections.projector import PROJECTIONS
        from projections.runner import RebuildFailed

    names = PROJECTIONS if projection == "all" else (projection,)
    if projection != "all" and projection not in PROJECTIONS:
        choices = ", ".join(PROJECTIONS)
        fail(f"unknown projection {projection!r} (use {choices} or all)", Exit.USAGE)
    campaign_id = None
    if campaign is not None:
        try:
            campaign_id = campaign_ref(campaign)
        except BadCampaignRef as exc:
            fail(f"--campaign: {exc}", Exit.USAGE)
        if projection != "all":
            fail("--campaign rebuilds all of a campaign's rows; drop --projection", Exit.USAGE)
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
                fail(str(exc), Exit.NOT_FOUND)
            except RebuildFailed as exc:
                fail(f"{exc}; it stays quarantined", Exit.ERROR)
        else:
            result = rebuild_views(
                settings, names, batch_size=batch_size, lookahead=lookahead, progress=progress, pause_gc=True
            )
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


def _register() -> None:
    from api.cli.campaigns import register as register_campaigns
    from api.cli.exports import register as register_exports
    from api.cli.rulesets import rulesets_command

    register_campaigns(app)  # chronicle campaigns (api/cli/campaigns.py)
    register_exports(app)  # chronicle demo / export / import / token (api/cli/exports.py)
    app.command("rulesets")(rulesets_command)  # chronicle rulesets (api/cli/rulesets.py)


_register()


def _configure_logging(settings: Settings) -> None:
    """Once per process: every logger (Chronicle's and uvicorn's) at CHRONICLE_LOG_LEVEL, one line
    per record on stderr, as JSON or text (CHRONICLE_LOG_FORMAT; see api/service/observability.py)."""
    from api.service.observability import configure_logging

    configure_logging(settings.log_level, settings.log_format)


def _config_error(exc: ConfigError) -> NoReturn:
    fail(f"configuration error: {exc}", Exit.CONFIG)


class _Interrupted(BaseException):
    """Ctrl-C outside serve and worker. A BaseException that is not KeyboardInterrupt, so click
    does not turn it into its generic status 1 and it reaches :func:`main`."""


def _interrupt(_signum: int, _frame: FrameType | None) -> None:
    raise _Interrupted


def main() -> None:
    """Console-script entry point."""
    signal.signal(signal.SIGINT, _interrupt)  # serve and worker install their own handlers
    try:
        app(prog_name="chronicle")
    except _Interrupted:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not cut this short
        typer.echo("\nchronicle: interrupted", err=True)
        raise SystemExit(int(Exit.INTERRUPTED)) from None


if __name__ == "__main__":
    main()
