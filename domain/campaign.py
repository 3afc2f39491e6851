"""The campaign aggregate: the consistency boundary.

A campaign is one table. Its facts are totally ordered by the aggregate
version (the *position*, 1 = the campaign's creation), and every command
sees the state that all earlier facts produce. Events are small classes
beside the aggregate, with explicit topics so a module rename never orphans
stored events.

The aggregate holds a :class:`~domain.ledger.Ledger`, the ruleset-neutral
timeline that applies corrections and runs the one fold.
"""

from __future__ import annotations

from typing import Any

from eventsourcing.domain import Aggregate, event

from domain.ledger import Entry, Ledger
from domain.rulesets import get_ruleset


class Campaign(Aggregate):
    TOPIC = "chronicle:Campaign"

    class Created(Aggregate.Created):
        TOPIC = "chronicle:Campaign.Created"

    class Started(Aggregate.Created):
        """The campaign was created: its name, ruleset and starting rules flags."""

        TOPIC = "chronicle:Campaign.Started"
        name: str
        ruleset: str
        flags: dict[str, Any]
        meta: dict[str, Any]

    class FactRecorded(Aggregate.Event):
        """One fact of play (or one correction), ruleset-neutral.

        ``fact_type`` names the fact, ``fact_version`` its payload schema
        version (upcast on read by the ruleset's catalogue), ``payload`` holds the
        inputs as they were at the table (dice faces included) and ``meta``
        the envelope: correlation and causation, who recorded it, the
        idempotency key.
        """

        TOPIC = "chronicle:Campaign.FactRecorded"
        fact_type: str
        fact_version: int
        payload: dict[str, Any]
        meta: dict[str, Any]

        def apply(self, aggregate: Campaign) -> None:
            aggregate.ledger.append(self.entry())

        def entry(self) -> Entry:
            """The ledger entry of this stored fact (also what a paged ledger reads back)."""
            return Entry(
                seq=self.originator_version,
                type=self.fact_type,
                version=self.fact_version,
                payload=self.payload,
                meta=self.meta,
                timestamp=self.timestamp.isoformat(),
            )

    @event(Started)
    def __init__(self, name: str, ruleset: str, flags: dict[str, Any], meta: dict[str, Any]) -> None:
        self.name = name
        self.ruleset = ruleset
        self.flags = dict(flags)
        self.meta = dict(meta)
        self.ledger = Ledger(get_ruleset(ruleset), flags, first_seq=2)

    def record(self, entry: Entry) -> None:
        """Append a fact whose validity the ledger has already checked."""
        self.trigger_event(
            self.FactRecorded,
            fact_type=entry.type,
            fact_version=entry.version,
            payload=entry.payload,
            meta=entry.meta,
        )
