"""``chronicle demo``, ``export``, ``import`` and ``token`` (registered by ``api.cli.main``).

Each command imports the store and the exports when it runs (see ``api.cli.main`` on start-up
cost); failures exit with the status of their kind (``api.cli.exits``).
"""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated
from uuid import UUID

import typer

from api.cli.exits import Exit, fail
from api.service.campaign_ref import BadCampaignRef, campaign_ref

if TYPE_CHECKING:
    from api.service.application import ChronicleApplication
    from api.service.settings import Settings

# --format: the name and its aliases -> the export format.
FORMATS = {"md": "md", "markdown": "md", "jsonl": "jsonl", "html": "html"}


def _open() -> tuple[Settings, ChronicleApplication]:
    from api.service.settings import ConfigError, Settings
    from api.service.store import open_application

    try:
        settings = Settings.from_env()
        return settings, open_application(settings)
    except ConfigError as exc:
        fail(f"configuration error: {exc}", Exit.CONFIG)


def _campaign(value: str) -> UUID:
    try:
        return campaign_ref(value)
    except BadCampaignRef as exc:
        raise typer.BadParameter(str(exc)) from None


CampaignArg = Annotated[
    UUID,
    typer.Argument(
        metavar="CAMPAIGN",
        parser=_campaign,
        help="The campaign: its id (chronicle campaigns lists them) or its GraphQL ID.",
        show_default=False,
    ),
]


def demo(
    ruleset: Annotated[
        str | None,
        typer.Option(metavar="RULESET", help="The game system (default: the product's default ruleset)."),
    ] = None,
) -> None:
    """Record a demo campaign on the configured store.

    An encounter of the game system that shows every feature, with one contested ruling. Prints
    the campaign's id and a GM token.
    """
    from api.service.auth import AccessControl
    from api.service.demo import create_demo
    from domain.errors import DomainError

    settings, app = _open()
    try:
        try:
            cid = create_demo(app, ruleset)
        except DomainError as exc:
            fail(exc.message, Exit.USAGE)
        token = AccessControl(app).grant_gm(cid)
    finally:
        app.close()
    typer.echo(f"Demo campaign {cid} recorded on {settings.database.describe()}")
    typer.echo(f"GM token (shown once; keep it): {token}")
    typer.echo(f"Read it: {_me()} export {cid} --format html -o demo.html")


def _me() -> str:
    """How to run this command again: ``chronicle`` when that is on PATH, else its path."""
    import shutil

    script = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if script is not None and script.name == "chronicle":
        found = shutil.which("chronicle")
        if found is not None and Path(found).resolve() == script.resolve():
            return "chronicle"
        return str(script)
    return "chronicle"


def export(
    campaign_id: CampaignArg,
    fmt: Annotated[
        str,
        typer.Option(
            "--format",
            "-f",
            metavar="FORMAT",
            help="md or markdown (the story), jsonl (data) or html (printable).",
        ),
    ] = "md",
    encounter: Annotated[str | None, typer.Option(metavar="ID", help="Only this encounter.")] = None,
    first: Annotated[
        int | None, typer.Option("--from", metavar="N", help="First position to export.")
    ] = None,
    last: Annotated[int | None, typer.Option("--to", metavar="N", help="Last position to export.")] = None,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", metavar="FILE", help="Write here instead of stdout.")
    ] = None,
) -> None:
    """Export a campaign as Markdown, JSONL or HTML.

    The whole campaign, one encounter (--encounter) or a range of positions (--from, --to), to
    stdout or, with a progress bar, to a file (-o).
    """
    if fmt.lower() not in FORMATS:
        fail(f"unknown format {fmt!r}: use md (or markdown), jsonl or html", Exit.USAGE)
    kind = FORMATS[fmt.lower()]
    from api.exports import service
    from domain.errors import DomainError

    _, app = _open()
    try:
        if output is None:
            try:
                source, sel = service.prepare(app, campaign_id, encounter=encounter, first=first, last=last)
            except DomainError as exc:
                fail(exc.message, Exit.NOT_FOUND if exc.code == "NOT_FOUND" else Exit.USAGE)
            for chunk in service.chunks(source, sel, kind):  # type: ignore[arg-type]
                sys.stdout.write(chunk)
            return
        _export_to_file(app, campaign_id, kind, encounter, first, last, output)
    finally:
        app.close()


def _export_to_file(
    app: ChronicleApplication,
    campaign_id: UUID,
    kind: str,
    encounter: str | None,
    first: int | None,
    last: int | None,
    output: Path,
) -> None:
    """Export into ``output`` (written to ``output.part``, renamed when complete) with a bar that
    moves through each phase: loading the campaign, summarising it (a pass over every fact: the
    timelines and tallies that lead the page), writing the story."""
    from api.cli.progress import abandon, bar
    from api.exports import service
    from domain.errors import DomainError

    tmp = output.with_name(output.name + ".part")
    try:
        out = tmp.open("w", encoding="utf-8")
    except OSError as exc:
        fail(f"cannot write {output}: {exc.strerror}", Exit.CANT_WRITE)
    try:
        with out, bar("facts") as shown:
            task = shown.add_task(f"loading campaign ({kind})", total=None)
            try:
                source, sel = service.prepare(app, campaign_id, encounter=encounter, first=first, last=last)
            except DomainError as exc:
                abandon(shown)
                fail(exc.message, Exit.NOT_FOUND if exc.code == "NOT_FOUND" else Exit.USAGE)

            def progress(phase: str, done: int, total: int) -> None:
                shown.update(task, description=f"{phase} ({kind})", completed=done, total=total)

            for chunk in service.chunks(source, sel, kind, progress):  # type: ignore[arg-type]
                out.write(chunk)
    except BaseException:
        tmp.unlink(missing_ok=True)  # no half file left behind (a refusal, Ctrl-C, a full disk)
        raise
    tmp.replace(output)
    typer.echo(f"Wrote {output}", err=True)


def import_(
    file: Annotated[
        Path,
        typer.Argument(
            metavar="FILE",
            help="A JSONL export (chronicle export --format jsonl).",
            exists=True,
            dir_okay=False,
            readable=True,
        ),
    ],
) -> None:
    """Import a JSONL export as a new campaign.

    The whole file is validated first (refused: exit 65, nothing stored), then stored; the
    campaign is never served half-imported. Prints its id and a GM token.
    """
    from api.cli.progress import abandon, bar
    from api.exports import service
    from api.exports.jsonl import ImportRefused
    from api.service.auth import AccessControl

    settings, app = _open()
    try:
        with bar(download=True) as shown, file.open("rb") as handle:
            task = shown.add_task("validating", total=file.stat().st_size)
            try:
                checked = service.jsonl.read_export(handle, lambda n: shown.advance(task, n))
            except ImportRefused as exc:
                abandon(shown)
                fail(f"import refused, nothing stored: {file}: {exc}", Exit.DATA)
        with bar("facts") as shown, contextlib.closing(checked):  # (temporary files)
            writing = shown.add_task("storing", total=len(checked.facts))
            cid = app.import_campaign(
                checked.header,
                checked.facts,
                progress=lambda stored: shown.update(writing, completed=stored),
                folded=checked.ledger,
            )
        # the dry run's fold is stored (the campaign's snapshot): let it go before the token's
        # grant reads the campaign back from that snapshot (at 100k facts: +14 MB at the peak
        # with both in memory)
        checked.ledger = None
        token = AccessControl(app).grant_gm(cid)
    finally:
        app.close()
    typer.echo(f"Imported {file} as campaign {cid} on {settings.database.describe()}")
    typer.echo(f"GM token (shown once; keep it): {token}")


def token(campaign_id: CampaignArg) -> None:
    """Mint a new GM token for a campaign.

    For a campaign made outside GraphQL, or whose GM lost theirs.
    """
    from api.service.auth import AccessControl
    from domain.errors import DomainError

    _settings, app = _open()
    try:
        try:
            minted = AccessControl(app).grant_gm(campaign_id)
        except DomainError as exc:
            fail(exc.message, Exit.NOT_FOUND if exc.code == "NOT_FOUND" else Exit.DATA)
    finally:
        app.close()
    typer.echo(minted)


def register(app: typer.Typer) -> None:
    app.command("demo")(demo)
    app.command("export")(export)
    app.command("import")(import_)
    app.command("token")(token)
