"""Subscriptions (graphql-transport-ws only): a campaign's facts, resumable from a position.

The stream first catches up from the ledger after ``afterPosition`` and then follows live.
There is one reading loop: read every fact after the last one sent, send them, wait. It is
woken at once by the in-process broadcaster (after a save through this process), and at the
latest after ``CHRONICLE_SUBSCRIPTION_POLL_SECONDS`` (facts written by another process or
replica: the read fast-forwards the campaign from the store). Positions are gap-free per
campaign, so "everything after the last position sent" can neither skip nor repeat a fact.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator
from typing import Any

import strawberry
from strawberry.scalars import JSON
from strawberry.types import Info

from api.graphql import context as ctx
from api.graphql import data, ids
from api.graphql.errors import ChronicleError
from api.graphql.proposals import ProposalEvent, build_events
from api.graphql.proposals import events as proposal_events
from api.graphql.types import CharacterChange, DiceRoll, character_changes, rolls_in
from api.service.observability import SUBSCRIPTIONS


@strawberry.type(description="One fact as it streamed: its outcome and the state changes it made.")
class FactEvent:
    position: int
    type: str
    payload: JSON
    outcome: JSON | None
    orphan_reason: str | None
    recorded_at: str
    changes: list[CharacterChange] = strawberry.field(
        description="Per character, the fields this fact changed (as the table saw it then)."
    )

    @strawberry.field
    def dice(self) -> list[DiceRoll]:
        return rolls_in(self.payload)


def _event(raw: dict[str, Any]) -> FactEvent:
    return FactEvent(
        position=raw["position"],
        type=raw["type"],
        payload=raw["payload"],
        outcome=raw["outcome"],
        orphan_reason=raw["orphan_reason"],
        recorded_at=raw["recorded_at"],
        changes=character_changes(raw["changes"]),
    )


async def _follow(
    info: Info, campaign_id: strawberry.ID, after_position: int | None
) -> AsyncGenerator[list[dict[str, Any]], None]:
    """Batches of the campaign's facts after ``after_position`` (default: from now), then live."""
    _, cid, _ = ids.decode(campaign_id, "Campaign", "campaignId")
    await ctx.reader(info, cid)
    app = ctx.app_of(info)
    latest = await ctx.call(data.latest_position, app, cid)
    last = latest if after_position is None else after_position
    if last < 0 or last > latest:
        raise ChronicleError(
            "POSITION_OUT_OF_RANGE", f"afterPosition must be from 0 to {latest}", "afterPosition"
        )
    broadcaster = ctx.broadcaster_of(info)
    poll = float(info.context["settings"].subscription_poll_seconds)
    token = ctx.bearer(info.context)
    wake = broadcaster.subscribe(cid)
    SUBSCRIPTIONS.inc()
    try:
        while True:
            wake.clear()
            batch = await ctx.call(data.facts_after, app, cid, last)
            if batch:
                yield batch
                last = batch[-1]["position"]
                continue  # more may be waiting: read again before sleeping
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(wake.wait(), timeout=poll)
            # a revoked token ends the stream
            if token is None or await ctx.call(ctx.access_of(info).authenticate, token) is None:
                raise ChronicleError("UNAUTHENTICATED", "the token was revoked")
    finally:
        SUBSCRIPTIONS.dec()
        broadcaster.unsubscribe(cid, wake)


@strawberry.type
class Subscription:
    @strawberry.subscription(
        description="Every fact after `afterPosition` (default: from now), then live. "
        "Resume a dropped stream with the last position received."
    )
    async def campaign_facts(
        self, info: Info, campaign_id: strawberry.ID, after_position: int | None = None
    ) -> AsyncGenerator[FactEvent, None]:
        async for batch in _follow(info, campaign_id, after_position):
            for raw in batch:
                yield _event(raw)

    @strawberry.subscription(
        description="The approval queue live: an event when a proposal arrives, is decided or is "
        "withdrawn, after `afterPosition` (default: from now). Resume with the last position received."
    )
    async def campaign_proposals(
        self, info: Info, campaign_id: strawberry.ID, after_position: int | None = None
    ) -> AsyncGenerator[ProposalEvent, None]:
        _, cid, _ = ids.decode(campaign_id, "Campaign", "campaignId")
        async for batch in _follow(info, campaign_id, after_position):
            if not any(True for _ in proposal_events(batch)):
                continue
            current = await ctx.call(ctx.app_of(info).proposals, cid)
            for event in build_events(cid, batch, current):
                yield event
