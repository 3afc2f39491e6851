"""What an export reads: a private, consistent copy of one campaign, and the part to show.

``load(app, campaign_id)`` copies the campaign's facts under its lock into a private
:class:`~domain.ledger.Ledger`, so an export streams without holding any lock and without
seeing a command that is half done. ``select`` turns ``--encounter`` / ``--from`` / ``--to``
into a :class:`~api.exports.story.Selection`, refusing what does not exist.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from uuid import UUID

from api.exports.story import Selection
from api.service.application import IMPORT_EXPECTS, ChronicleApplication
from domain.errors import InvalidInput, NotFound
from domain.ledger import Entry, Ledger
from domain.rulesets import get_ruleset


@dataclass(frozen=True)
class CampaignSource:
    name: str
    ruleset: str
    flags: dict[str, Any]
    meta: dict[str, Any]
    ledger: Ledger

    @property
    def first(self) -> int:
        return self.ledger.first_seq

    @property
    def last(self) -> int:
        return self.ledger.last_seq


def load(app: ChronicleApplication, campaign_id: UUID) -> CampaignSource:
    """A consistent private copy of the campaign (raises ``NotFound``)."""
    campaign, entries = app.snapshot(campaign_id)
    ledger = Ledger(get_ruleset(campaign.ruleset), campaign.flags, first_seq=2)
    for e in entries:
        ledger.append(Entry(e.seq, e.type, e.version, e.payload, e.meta, e.timestamp))
    meta = {k: v for k, v in campaign.meta.items() if k != IMPORT_EXPECTS}  # bookkeeping, not the campaign's
    return CampaignSource(campaign.name, campaign.ruleset, dict(campaign.flags), meta, ledger)


def select(
    source: CampaignSource, *, encounter: str | None = None, first: int | None = None, last: int | None = None
) -> Selection:
    """The positions to export: the whole campaign, one encounter, or a range (inclusive)."""
    lo, hi = source.first, source.last
    if encounter is not None:
        if first is not None or last is not None:
            raise InvalidInput("give either an encounter or a position range, not both", field="encounter")
        start = end = None
        for e in source.ledger.entries:
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
