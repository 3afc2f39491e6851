"""Entry points shared by the CLI and the HTTP endpoints."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Literal
from uuid import UUID

from api.exports import jsonl, render
from api.service.application import ChronicleApplication

__all__ = ["FORMATS", "MEDIA_TYPES", "chunks", "export", "import_lines", "jsonl", "prepare"]
from api.exports.source import CampaignSource, load, select
from api.exports.story import Selection

Format = Literal["md", "jsonl", "html"]
Progress = Callable[[str, int, int], None]  # phase, done, total
FORMATS: tuple[Format, ...] = ("md", "jsonl", "html")
MEDIA_TYPES = {
    "md": "text/markdown; charset=utf-8",
    "jsonl": "application/jsonl; charset=utf-8",
    "html": "text/html; charset=utf-8",
}


def prepare(
    app: ChronicleApplication,
    campaign_id: UUID,
    *,
    encounter: str | None = None,
    first: int | None = None,
    last: int | None = None,
) -> tuple[CampaignSource, Selection]:
    """Load the campaign and check the selection (raises typed ``DomainError`` before any output)."""
    source = load(app, campaign_id)
    return source, select(source, encounter=encounter, first=first, last=last)


def chunks(
    source: CampaignSource, sel: Selection, fmt: Format, progress: Progress | None = None
) -> Iterator[str]:
    """The export as a stream of text chunks.

    ``progress(phase, done, total)`` reports each pass over the facts as it goes: Markdown and
    HTML first ``"summarising"`` (every fact up to the selection's end, for the tallies and
    timelines that lead the page), then ``"writing"`` (the selected facts); JSONL only writes.
    """
    writing: Callable[[int], None] | None = None
    reading: Callable[[int], None] | None = None
    if progress is not None:
        report = progress
        size = max(0, sel.last - sel.first + 1)
        upto = max(0, sel.last - source.first + 1)

        def _writing(seq: int) -> None:
            report("writing", seq - sel.first + 1, size)

        def _reading(seq: int) -> None:
            report("summarising", seq - source.first + 1, upto)

        writing, reading = _writing, _reading

    if fmt == "md":
        return render.markdown(source, sel, writing, reading)
    if fmt == "html":
        return render.html_page(source, sel, writing, reading)
    return jsonl.export_lines(source, sel, writing)


def export(app: ChronicleApplication, campaign_id: UUID, fmt: Format, **selection: object) -> Iterator[str]:
    source, sel = prepare(app, campaign_id, **selection)  # type: ignore[arg-type]
    return chunks(source, sel, fmt)


def import_lines(
    app: ChronicleApplication, lines: Iterable[bytes | str], progress: Callable[[int], None] | None = None
) -> UUID:
    """Validate a whole JSONL export, then store it as a new campaign (not served until complete).

    Memory stays flat however long the file: the validated facts wait in a temporary file, the
    validation folds in a scratch ledger paged over it (the app's ledger window), and they are
    read back from it to be stored, in batches."""
    checked = jsonl.read_export(lines, progress, window=app.ledger_window)
    try:
        return app.import_campaign(checked.header, checked.facts, folded=checked.ledger)
    finally:
        checked.close()
