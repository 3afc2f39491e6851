"""Per-operation services: the application, access control, caches, the caller."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any, TypeVar
from uuid import UUID

from starlette.concurrency import run_in_threadpool
from strawberry.types import Info

from api.graphql import data
from api.graphql.errors import ChronicleError
from api.graphql.events import Broadcaster
from api.service.application import CampaignView, ChronicleApplication
from api.service.auth import AccessControl, Principal
from domain.errors import DomainError

T = TypeVar("T")

CACHE = "chronicle_cache"
# True on the worker threads that run operations off the event loop (api.graphql.schema): there a
# store call is simply made, the thread is the operation's own.
OFF_LOOP: ContextVar[bool] = ContextVar("chronicle_off_loop", default=False)
# What a request without a usable token is told (none given, or an unknown or revoked one).
NO_TOKEN = (
    "a valid bearer token is required (Authorization: Bearer ...); none was given, or it is unknown"
    " or revoked"
)


def app_of(info: Info) -> ChronicleApplication:
    app: ChronicleApplication = info.context["application"]
    return app


def access_of(info: Info) -> AccessControl:
    access: AccessControl = info.context["access"]
    return access


def broadcaster_of(info: Info) -> Broadcaster:
    b: Broadcaster = info.context["broadcaster"]
    return b


def cache_of(info: Info) -> dict[Any, Any]:
    cache = info.context.get(CACHE)
    if cache is None:
        cache = info.context[CACHE] = {}
    return cache  # type: ignore[no-any-return]


def request_id(context: dict[str, Any]) -> str:
    rid = context.get("request_id")
    if not rid:
        rid = context["request_id"] = uuid.uuid4().hex[:16]
    return str(rid)


async def call(fn: Callable[..., T], *args: Any) -> T:
    """Run a synchronous (store-touching) call off the event loop; domain refusals become typed."""
    try:
        if OFF_LOOP.get():
            return fn(*args)
        return await run_in_threadpool(fn, *args)
    except DomainError as err:
        raise ChronicleError.from_domain(err) from None


async def cached(info: Info, key: tuple[Any, ...], fn: Callable[..., T], *args: Any) -> T:
    cache = cache_of(info)
    if key in cache:
        found: T = await cache[key]
        return found
    future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
    cache[key] = future
    try:
        value = await call(fn, *args)
    except BaseException as exc:
        cache.pop(key, None)
        future.set_exception(exc)
        future.exception()  # mark retrieved
        raise
    future.set_result(value)
    return value


def bearer(context: dict[str, Any]) -> str | None:
    """The bearer token of this operation: the Authorization header, or over WebSocket the
    ``authorization`` connection parameter."""
    params = context.get("connection_params")
    raw: Any = None
    if isinstance(params, dict):
        raw = params.get("authorization") or params.get("Authorization")
    if raw is None:
        request = context.get("request")
        headers = getattr(request, "headers", None)
        if headers is not None:
            raw = headers.get("authorization")
    if not isinstance(raw, str):
        return None
    scheme, _, token = raw.strip().partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()


async def principal(info: Info) -> Principal | None:
    token = bearer(info.context)
    if token is None:
        return None
    return await cached(info, ("principal", token), access_of(info).authenticate, token)


async def reader(info: Info, campaign_id: UUID) -> Principal:
    """The caller, if it may read this campaign; else UNAUTHENTICATED or NOT_FOUND (never FORBIDDEN:
    a token for another campaign learns nothing, not even that this one exists)."""
    who = await principal(info)
    if who is None:
        raise ChronicleError("UNAUTHENTICATED", NO_TOKEN)
    if who.campaign_id != campaign_id:
        raise ChronicleError("NOT_FOUND", "no such campaign", "campaignId")
    return who


# --- cached reads ------------------------------------------------------------------------
async def view(
    info: Info, campaign_id: UUID, at: int | None = None, axis: str = data.CORRECTED
) -> CampaignView:
    """The campaign now or at a position, once per operation (see ``CampaignView``)."""
    return await cached(info, ("view", campaign_id, at, axis), app_of(info).view, campaign_id, at, axis)


async def campaign_info(info: Info, campaign_id: UUID) -> dict[str, Any]:
    return await cached(info, ("info", campaign_id), data.campaign_info, app_of(info), campaign_id)


async def history(info: Info, campaign_id: UUID) -> list[data.FactRecord]:
    return await cached(info, ("history", campaign_id), data.history, app_of(info), campaign_id)


def remember_view(info: Info, view: CampaignView) -> None:
    """Make ``view`` this operation's view of its campaign now (what a command just left)."""
    future: asyncio.Future[CampaignView] = asyncio.get_running_loop().create_future()
    future.set_result(view)
    cache_of(info)[("view", view.campaign_id, None, data.CORRECTED)] = future


def forget(info: Info) -> None:
    """Drop cached reads (after a write)."""
    cache = cache_of(info)
    for key in [k for k in cache if k[0] != "principal"]:
        del cache[key]
