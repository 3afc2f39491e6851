"""What an export reads: one campaign's stored facts up to a position read once, and the part to show.

``load(app, campaign_id)`` reads the campaign's creation (name, ruleset, starting flags, meta)
and the position of its newest stored fact, without loading or folding the campaign. Stored
facts never change, so the facts up to that position, read afterwards a page at a time, are a
consistent copy: a command stored during the export is not in it, and no lock is held while
the export streams. JSONL writes those facts as they are read (:meth:`CampaignSource.facts`);
the story formats fold them in a paged ledger (:attr:`CampaignSource.ledger`) that keeps only
a window of them in memory. ``select`` turns ``--encounter`` / ``--from`` / ``--to`` into a
:class:`~api.exports.story.Selection`, refusing what does not exist.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from uuid import UUID

from api.exports.story import Selection
from api.service.application import IMPORT_EXPECTS, LEDGER_WINDOW, LOAD_PAGE, ChronicleApplication
from domain.errors import InvalidInput, NotFound
from domain.ledger import Entry, EntryLoader, Ledger
from domain.rulesets import get_ruleset


class CampaignSource:
    """One campaign's facts ``first`` .. ``last`` and what its header says.

    Either over a ledger that holds them (a generated campaign, a test), or over a store:
    ``loader`` reads stored facts back, ``last`` is the newest position exported.
    """

    def __init__(
        self,
        name: str,
        ruleset: str,
        flags: dict[str, Any],
        meta: dict[str, Any],
        ledger: Ledger | None = None,
        *,
        loader: EntryLoader | None = None,
        last: int | None = None,
        window: int = LEDGER_WINDOW,
        page: int = LOAD_PAGE,
    ) -> None:
        if ledger is None and (loader is None or last is None):
            raise TypeError("a CampaignSource reads a ledger, or a loader up to a last position")
        self.name, self.ruleset, self.flags, self.meta = name, ruleset, flags, meta
        self._ledger = ledger
        self._loader = loader
        self._window, self._page = window, page
        self.first = ledger.first_seq if ledger is not None else 2
        self.last = ledger.last_seq if ledger is not None else int(last)  # type: ignore[arg-type]
        self.catalogue = ledger.catalogue if ledger is not None else get_ruleset(ruleset).catalogue

    def facts(self, first: int | None = None, last: int | None = None) -> Iterator[Entry]:
        """The facts ``first`` .. ``last`` (inclusive, default all) in position order, payloads
        upcast to the catalogue's current version, read a page at a time."""
        first = self.first if first is None else max(first, self.first)
        last = self.last if last is None else min(last, self.last)
        if self._ledger is not None:
            lg = self._ledger
            yield from lg.entries.range(first - lg.first_seq, last - lg.first_seq + 1)
            return
        catalogue = self.catalogue
        for e in self._stored(first, last):
            e.payload = catalogue.upcast(e.type, e.version, e.payload)
            yield e

    def _stored(self, first: int, last: int) -> Iterator[Entry]:
        """Stored facts as the loader gives them (at their stored versions), a page at a time."""
        assert self._loader is not None
        for lo in range(first, last + 1, self._page):
            yield from self._loader(lo, min(last, lo + self._page - 1))

    @property
    def ledger(self) -> Ledger:
        """The facts in a ledger, for the formats that fold (the story, the printable page).

        Over a store it is built on first use: paged, holding about ``window`` facts (older
        ones are read back from the store when a fold needs them), never past ``last``."""
        if self._ledger is None:
            assert self._loader is not None
            ledger = Ledger(get_ruleset(self.ruleset), self.flags, first_seq=self.first)
            ledger.attach(_upto(self._loader, self.last), self._window)
            for e in self._stored(self.first, self.last):
                ledger.append(e)  # (the ledger upcasts)
            self._ledger = ledger
        return self._ledger


def _upto(loader: EntryLoader, head: int) -> EntryLoader:
    def load(first: int, last: int) -> list[Entry]:  # (never past the exported position)
        return list(loader(first, min(last, head))) if first <= head else []

    return load


def load(app: ChronicleApplication, campaign_id: UUID, *, page: int = LOAD_PAGE) -> CampaignSource:
    """The campaign's stored facts up to its newest one now, read ``page`` facts per query
    (raises ``NotFound``)."""
    campaign, head = app.stored(campaign_id)
    meta = {k: v for k, v in campaign.meta.items() if k != IMPORT_EXPECTS}  # bookkeeping, not the campaign's
    return CampaignSource(
        campaign.name,
        campaign.ruleset,
        dict(campaign.flags),
        meta,
        loader=app.fact_reader(campaign_id),
        last=head,
        window=app.ledger_window,
        page=page,
    )


def select(
    source: CampaignSource, *, encounter: str | None = None, first: int | None = None, last: int | None = None
) -> Selection:
    """The positions to export: the whole campaign, one encounter, or a range (inclusive)."""
    lo, hi = source.first, source.last
    if encounter is not None:
        if first is not None or last is not None:
            raise InvalidInput("give either an encounter or a position range, not both", field="encounter")
        start = end = None
        for e in source.facts():
            if e.type == "EncounterStarted" and e.payload["encounter_id"] == encounter and start is None:
                start = e.seq
            elif e.type == "EncounterEnded" and e.payload["encounter_id"] == encounter and start is not None:
                end = e.seq
        if start is None:
            raise NotFound(f"no encounter {encounter!r} in this campaign", field="encounter")
        return Selection(start, end if end is not None else hi, encounter)
    if first is None and last is None:
        return Selection(lo, hi)  # the whole campaign (empty when nothing was recorded yet)
    first = lo if first is None else first
    last = hi if last is None else last
    if hi < lo:
        raise InvalidInput("this campaign has no facts to export yet", field="from")
    if not lo <= first <= hi:
        raise InvalidInput(f"--from {first} is outside this campaign's facts ({lo}..{hi})", field="from")
    if not lo <= last <= hi:
        raise InvalidInput(f"--to {last} is outside this campaign's facts ({lo}..{hi})", field="to")
    if first > last:
        raise InvalidInput(f"--from {first} is after --to {last}", field="from")
    return Selection(first, last)
