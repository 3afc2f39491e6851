"""Streaming downloads: ``GET /campaigns/{id}/export.md``, ``.jsonl`` and ``.html``.

Mount with ``app.include_router(api.http.exports.router)``. The ``application`` is read from
``request.app.state.application`` (set by ``api.http.app.create_app``).

Access: every endpoint depends on :func:`authorize` (a bearer token of this campaign, any
role; 401 without one, 404 for another campaign's or a missing campaign), so that no endpoint
here can be reached without it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Annotated
from uuid import UUID

from fastapi import APIRouter, Depends, HTTPException, Query, Request
from fastapi.responses import JSONResponse, StreamingResponse
from starlette.concurrency import run_in_threadpool

from api.exports import service
from api.exports.source import CampaignSource
from api.exports.story import Selection
from api.service.application import ChronicleApplication
from api.service.auth import AccessControl
from domain.errors import DomainError

__all__ = ["authorize", "router"]

router = APIRouter(tags=["exports"])


def _error(status: int, exc: DomainError) -> JSONResponse:
    return JSONResponse(
        {"error": {"code": exc.code, "message": exc.message, "field": exc.field}}, status_code=status
    )


async def authorize(campaign_id: UUID, request: Request) -> ChronicleApplication:
    """The same access rule as the GraphQL API: a bearer token of this campaign, any role (the
    GM, a player, a viewer may all export). No token: 401. A token of another campaign learns
    nothing: the same 404 as a campaign that does not exist."""
    application: ChronicleApplication = request.app.state.application
    access = getattr(request.app.state, "access", None)
    if access is None:
        access = request.app.state.access = AccessControl(application)
    header = request.headers.get("authorization", "")
    token = header[7:].strip() if header[:7].lower() == "bearer " else ""
    who = await run_in_threadpool(access.authenticate, token) if token else None
    if who is None:
        raise HTTPException(
            401,
            {"code": "UNAUTHENTICATED", "message": "a valid bearer token is required", "field": None},
            headers={"WWW-Authenticate": "Bearer"},
        )
    not_found = {"code": "NOT_FOUND", "message": f"no campaign {campaign_id}", "field": "campaign"}
    if who.campaign_id != campaign_id:
        raise HTTPException(404, not_found)
    try:
        await run_in_threadpool(application.campaign, campaign_id)
    except DomainError as exc:
        raise HTTPException(404, {"code": exc.code, "message": exc.message, "field": exc.field}) from None
    return application


def _filename(name: str, fmt: str) -> str:
    slug = re.sub(r"[^A-Za-z0-9]+", "-", name).strip("-").lower() or "campaign"
    return f"{slug[:60]}.{fmt}"


async def _download(
    application: ChronicleApplication,
    campaign_id: UUID,
    fmt: service.Format,
    encounter: str | None,
    first: int | None,
    last: int | None,
) -> StreamingResponse:
    source: CampaignSource
    sel: Selection
    source, sel = await run_in_threadpool(
        service.prepare, application, campaign_id, encounter=encounter, first=first, last=last
    )
    body: Iterator[str] = service.chunks(source, sel, fmt)  # a sync iterator: run in a worker thread
    return StreamingResponse(
        body,
        media_type=service.MEDIA_TYPES[fmt],
        headers={"Content-Disposition": f'attachment; filename="{_filename(source.name, fmt)}"'},
    )


Encounter = Annotated[str | None, Query(description="Only this encounter.")]
First = Annotated[int | None, Query(alias="from", description="First position.")]
Last = Annotated[int | None, Query(alias="to", description="Last position.")]
Authorized = Annotated[ChronicleApplication, Depends(authorize)]


def _endpoint(fmt: service.Format) -> None:
    async def download(
        campaign_id: UUID,
        application: Authorized,
        encounter: Encounter = None,
        first: First = None,
        last: Last = None,
    ) -> StreamingResponse | JSONResponse:
        try:
            return await _download(application, campaign_id, fmt, encounter, first, last)
        except DomainError as exc:
            return _error(404 if exc.code == "NOT_FOUND" else 400, exc)

    download.__name__ = f"export_{fmt}"
    download.__doc__ = {
        "md": "The story of play as Markdown.",
        "jsonl": "The campaign as JSONL data (importable).",
        "html": "A printable page: timelines, encounter summaries, the story.",
    }[fmt]
    router.add_api_route(
        f"/campaigns/{{campaign_id}}/export.{fmt}",
        download,
        methods=["GET"],
        response_model=None,
        name=f"export_{fmt}",
    )


for _fmt in service.FORMATS:
    _endpoint(_fmt)
