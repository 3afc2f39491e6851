"""``chronicle demo``, ``chronicle export`` and ``chronicle import`` (registered by ``api.cli.main``)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, NoReturn
from uuid import UUID

import typer
from rich.console import Console
from rich.progress import (
    BarColumn,
    DownloadColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
)

from api.exports import service
from api.exports.jsonl import ImportRefused
from api.service.application import ChronicleApplication
from api.service.auth import AccessControl
from api.service.settings import ConfigError, Settings
from api.service.store import open_application
from domain.errors import DomainError

EXIT_DATAERR = 65  # sysexits.h: the input data was incorrect
EXIT_CONFIG = 78
EXIT_NOT_FOUND = 66  # sysexits.h EX_NOINPUT
EXIT_USAGE = 64  # sysexits.h EX_USAGE: a wrong option value (e.g. an unknown ruleset)


def _open() -> tuple[Settings, ChronicleApplication]:
    try:
        settings = Settings.from_env()
        return settings, open_application(settings)
    except ConfigError as exc:
        typer.echo(f"chronicle: configuration error: {exc}", err=True)
        raise typer.Exit(EXIT_CONFIG) from None


def _fail(message: str, code: int) -> NoReturn:
    typer.echo(f"chronicle: {message}", err=True)
    raise typer.Exit(code)


def demo(
    ruleset: Annotated[
        str | None, typer.Option(help="The game system (default: the product's default ruleset).")
    ] = None,
) -> None:
    """Record a demo campaign (every feature, one contested ruling) on the configured store."""
    from api.service.demo import create_demo

    settings, app = _open()
    try:
        try:
            cid = create_demo(app, ruleset)
        except DomainError as exc:
            _fail(exc.message, EXIT_USAGE)
        token = AccessControl(app).grant_gm(cid)
    finally:
        app.close()
    typer.echo(f"Demo campaign {cid} recorded on {settings.database.describe()}")
    typer.echo(f"GM token (shown once; keep it): {token}")
    typer.echo(f"Read it: chronicle export {cid} --format html -o demo.html")


def export(
    campaign_id: Annotated[UUID, typer.Argument(help="The campaign's id.")],
    fmt: Annotated[
        str, typer.Option("--format", "-f", help="md (story), jsonl (data) or html (printable).")
    ] = "md",
    encounter: Annotated[str | None, typer.Option(help="Only this encounter.")] = None,
    first: Annotated[int | None, typer.Option("--from", help="First position to export.")] = None,
    last: Annotated[int | None, typer.Option("--to", help="Last position to export.")] = None,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write here instead of stdout.")
    ] = None,
) -> None:
    """Export a campaign (or one encounter, or a range of positions) as Markdown, JSONL or HTML."""
    if fmt not in service.FORMATS:
        _fail(f"unknown format {fmt!r}: use md, jsonl or html", 2)
    _, app = _open()
    try:
        try:
            source, sel = service.prepare(app, campaign_id, encounter=encounter, first=first, last=last)
        except DomainError as exc:
            _fail(exc.message, EXIT_NOT_FOUND if exc.code == "NOT_FOUND" else 2)
        if output is None:
            for chunk in service.chunks(source, sel, fmt):  # type: ignore[arg-type]
                sys.stdout.write(chunk)
            return
        columns = (
            TextColumn("exporting {task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
        )
        tmp = output.with_name(output.name + ".part")
        with Progress(*columns, console=Console(stderr=True)) as bar, tmp.open("w", encoding="utf-8") as out:
            task = bar.add_task(fmt, total=max(0, sel.last - sel.first + 1))
            for chunk in service.chunks(
                source,
                sel,
                fmt,  # type: ignore[arg-type]
                lambda seq: bar.update(task, completed=seq - sel.first + 1),
            ):
                out.write(chunk)
            bar.update(task, completed=max(0, sel.last - sel.first + 1))
        tmp.replace(output)
        typer.echo(f"Wrote {output}", err=True)
    finally:
        app.close()


def import_(
    file: Annotated[
        Path,
        typer.Argument(
            help="A JSONL export (chronicle export --format jsonl).",
            exists=True,
            dir_okay=False,
            readable=True,
        ),
    ],
) -> None:
    """Import a JSONL export as a NEW campaign: validated first, then stored (never served half-done)."""
    settings, app = _open()
    try:
        columns = (TextColumn("{task.description}"), BarColumn(), DownloadColumn(), TimeElapsedColumn())
        with Progress(*columns, console=Console(stderr=True)) as bar, file.open("rb") as handle:
            task = bar.add_task("validating", total=file.stat().st_size)
            try:
                checked = service.jsonl.read_export(handle, lambda n: bar.advance(task, n))
            except ImportRefused as exc:
                bar.stop()
                _fail(f"import refused, nothing stored: {file}: {exc}", EXIT_DATAERR)
            writing = bar.add_task(f"storing {len(checked.facts)} facts", total=None)
            cid = app.import_campaign(checked.header, checked.facts)
            token = AccessControl(app).grant_gm(cid)
            bar.update(writing, total=1, completed=1)
    finally:
        app.close()
    typer.echo(f"Imported {file} as campaign {cid} on {settings.database.describe()}")
    typer.echo(f"GM token (shown once; keep it): {token}")


def token(campaign_id: Annotated[UUID, typer.Argument(help="The campaign.")]) -> None:
    """Mint a new GM token for a campaign (one made outside GraphQL, or whose GM lost theirs)."""
    _settings, app = _open()
    try:
        try:
            minted = AccessControl(app).grant_gm(campaign_id)
        except DomainError as exc:
            _fail(exc.message, EXIT_DATAERR)
    finally:
        app.close()
    typer.echo(minted)


def register(app: typer.Typer) -> None:
    app.command("demo")(demo)
    app.command("export")(export)
    app.command("import")(import_)
    app.command("token")(token)
