"""Streaming downloads: ``GET /campaigns/{campaign}/export.md``, ``.jsonl`` and ``.html``.

Mount with ``app.include_router(api.http.exports.router)``. The ``application`` is read from
``request.app.state.application`` (set by ``api.http.app.create_app``).

``{campaign}`` is the campaign's id (a UUID) or its GraphQL ID (``campaign { id }``).

Access: every endpoint depends on :func:`authorize` (a bearer token of this campaign, any
role; 401 without one, 404 for another campaign's or a missing campaign), so that no endpoint
here can be reached without it.

Errors: every refusal, whatever refused it (the token check, the campaign reference, a query
parameter FastAPI could not read, the selection), is one JSON shape,
``{"error": {"code": ..., "message": ..., "field": ...}}``, with a code from docs/errors.md
(docs/exports.md lists which status goes with which).
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Annotated, Any
from uuid import UUID

from fastapi import APIRouter, Depends, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, StreamingResponse
from fastapi.routing import APIRoute
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from api.exports import service
from api.exports.source import CampaignSource
from api.exports.story import Selection
from api.service.application import ChronicleApplication
from api.service.auth import AccessControl
from api.service.campaign_ref import BadCampaignRef, campaign_ref
from domain.errors import DomainError

__all__ = ["Refused", "Target", "authorize", "router"]


class Refused(Exception):
    """A refusal of an export request, answered as ``{"error": {code, message, field}}``."""

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        field: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.field, self.headers = status, code, message, field, headers

    def response(self) -> JSONResponse:
        body = {"error": {"code": self.code, "message": self.message, "field": self.field}}
        return JSONResponse(body, status_code=self.status, headers=self.headers)


def _refused(status: int, exc: DomainError) -> Refused:
    return Refused(status, exc.code, exc.message, exc.field)


class _OneErrorShape(APIRoute):
    """Answers :class:`Refused`, and FastAPI's own validation errors (a query parameter that is
    not a number), in the one error shape instead of ``{"detail": ...}``."""

    def get_route_handler(self) -> Callable[[Request], Awaitable[Response]]:
        handler = super().get_route_handler()

        async def route(request: Request) -> Response:
            try:
                return await handler(request)
            except Refused as exc:
                return exc.response()
            except RequestValidationError as exc:
                return _invalid(exc.errors()).response()

        return route


def _invalid(errors: Any) -> Refused:
    first = dict(next(iter(errors), {}))
    loc = [str(part) for part in first.get("loc", ()) if part not in ("query", "path")]
    field = loc[-1] if loc else None
    given = first.get("input")
    message = f"{field}: {first.get('msg', 'invalid value')}"
    if given is not None:
        message += f", got {given!r}"
    return Refused(400, "INVALID_INPUT", message, field)


router = APIRouter(tags=["exports"], route_class=_OneErrorShape)


@dataclass(frozen=True)
class Target:
    """What an authorized request exports: the application and the campaign's UUID."""

    application: ChronicleApplication
    campaign_id: UUID


async def authorize(campaign: str, request: Request) -> Target:
    """The same access rule as the GraphQL API: a bearer token of this campaign, any role (the
    GM, a player, a viewer may all export). No token: 401. A token of another campaign learns
    nothing: the same 404 as a campaign that does not exist. ``campaign`` is the campaign's id
    or its GraphQL ID; anything else is 400 ``INVALID_ID``."""
    application: ChronicleApplication = request.app.state.application
    access = getattr(request.app.state, "access", None)
    if access is None:
        access = request.app.state.access = AccessControl(application)
    header = request.headers.get("authorization", "")
    token = header[7:].strip() if header[:7].lower() == "bearer " else ""
    who = await run_in_threadpool(access.authenticate, token) if token else None
    if who is None:
        raise Refused(
            401,
            "UNAUTHENTICATED",
            "a valid bearer token is required",
            headers={"WWW-Authenticate": "Bearer"},
        )
    try:
        campaign_id = campaign_ref(campaign)
    except BadCampaignRef as exc:
        raise Refused(400, "INVALID_ID", str(exc), "campaign") from None
    if who.campaign_id != campaign_id:
        raise Refused(404, "NOT_FOUND", f"no campaign {campaign_id}", "campaign")
    try:
        await run_in_threadpool(application.campaign, campaign_id)
    except DomainError as exc:
        raise _refused(404, exc) from None
    return Target(application, campaign_id)


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
Authorized = Annotated[Target, Depends(authorize)]


def _endpoint(fmt: service.Format) -> None:
    async def download(
        target: Authorized,
        encounter: Encounter = None,
        first: First = None,
        last: Last = None,
    ) -> StreamingResponse:
        try:
            return await _download(target.application, target.campaign_id, fmt, encounter, first, last)
        except DomainError as exc:
            raise _refused(404 if exc.code == "NOT_FOUND" else 400, exc) from None

    download.__name__ = f"export_{fmt}"
    download.__doc__ = {
        "md": "The story of play as Markdown.",
        "jsonl": "The campaign as JSONL data (importable).",
        "html": "A printable page: timelines, encounter summaries, the story.",
    }[fmt]
    router.add_api_route(
        f"/campaigns/{{campaign}}/export.{fmt}",
        download,
        methods=["GET"],
        response_model=None,
        name=f"export_{fmt}",
    )


for _fmt in service.FORMATS:
    _endpoint(_fmt)
