"""Observability: structured logs carrying a request id, and Prometheus metrics.

Logs
    :func:`configure_logging` is called once at start (``chronicle serve``, ``chronicle
    worker``). With ``CHRONICLE_LOG_FORMAT=json`` (the default) every line on stderr is one
    JSON object: ``time`` (UTC, ISO 8601), ``level``, ``logger``, ``message``,
    ``request_id`` (``null`` outside a request) and any extras passed with ``extra=``;
    ``exc_info`` holds a traceback when there is one. ``text`` gives one readable line.
    uvicorn's own loggers propagate to the same handler (``log_config=None``), so the
    whole process speaks one format.

Request ids
    :class:`RequestContext` (pure ASGI middleware, outermost) takes ``X-Request-ID`` from
    the request when it is sane (1-128 characters of ``A-Z a-z 0-9 . _ : -``), else makes
    one; stores it in the :data:`REQUEST_ID` context variable, echoes it in the response's
    ``X-Request-ID`` header and writes one ``request`` log line per HTTP request (method,
    path, status, duration). A logging filter copies the context variable onto every
    record, so a line logged anywhere while serving the request (including in worker
    threads: ``run_in_threadpool`` copies the context) carries the id. The GraphQL layer's
    "Unexpected error (request id ...)" uses the same id (``api.graphql.extensions``).

Metrics
    One registry per process (:data:`REGISTRY`), exposed at ``GET /metrics`` in the
    Prometheus text format. See ``docs/operations.md`` for the list.
"""

from __future__ import annotations

import json
import logging
import re
import sys
import time
import traceback
import uuid
from collections.abc import Iterable
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Any, TextIO

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    PlatformCollector,
    ProcessCollector,
    generate_latest,
)
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = [
    "CONTENT_TYPE_LATEST",
    "REGISTRY",
    "REQUEST_ID",
    "JsonFormatter",
    "RequestContext",
    "RequestIdFilter",
    "accept_request_id",
    "configure_logging",
    "current_request_id",
    "facts_appended",
    "metrics_text",
    "new_request_id",
]

TRACE_LEVEL = 5  # uvicorn's "trace", below DEBUG
REQUEST_ID_HEADER = "x-request-id"
REQUEST_ID: ContextVar[str | None] = ContextVar("chronicle_request_id", default=None)
_SANE_ID = re.compile(r"[A-Za-z0-9._:\-]{1,128}")

logger = logging.getLogger("chronicle.http")


# ------------------------------------------------------------------- request ids
def new_request_id() -> str:
    return uuid.uuid4().hex[:16]


def accept_request_id(raw: str | None) -> str:
    """The client's ``X-Request-ID`` if it is sane, else a fresh id."""
    if raw is not None and _SANE_ID.fullmatch(raw):
        return raw
    return new_request_id()


def current_request_id() -> str | None:
    return REQUEST_ID.get()


# ------------------------------------------------------------------------ logging
# Attributes every LogRecord has; anything else on a record came in through ``extra=``.
_STANDARD = set(logging.makeLogRecord({}).__dict__) | {"message", "asctime", "request_id", "color_message"}


class RequestIdFilter(logging.Filter):
    """Copies the current request id onto every record (``record.request_id``)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "request_id", None) is None:
            record.request_id = REQUEST_ID.get()
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message, request_id, extras."""

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
            "request_id": getattr(record, "request_id", None),
        }
        for key, value in record.__dict__.items():
            if key not in _STANDARD and not key.startswith("_"):
                out[key] = value
        if record.exc_info and record.exc_info[0] is not None:
            out["exc_info"] = "".join(traceback.format_exception(*record.exc_info)).rstrip()
        if record.stack_info:
            out["stack_info"] = record.stack_info
        return json.dumps(out, default=str, ensure_ascii=False)


class TextFormatter(logging.Formatter):
    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)-7s %(name)s [%(request_id)s] %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        if getattr(record, "request_id", None) is None:
            record.request_id = "-"
        return super().format(record)


def log_level(name: str) -> int:
    return TRACE_LEVEL if name == "trace" else int(logging.getLevelName(name.upper()))


def configure_logging(
    level: str = "info", fmt: str = "json", stream: TextIO | None = None
) -> logging.Handler:
    """Send every logger (Chronicle's, uvicorn's, libraries') to one handler on ``stream``
    (stderr) in ``fmt``. Idempotent: a handler installed by an earlier call is replaced."""
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(JsonFormatter() if fmt == "json" else TextFormatter())
    handler.addFilter(RequestIdFilter())
    handler.set_name("chronicle")
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(log_level(level))
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access", "uvicorn.asgi"):
        child = logging.getLogger(name)
        child.handlers = []
        child.propagate = True
    # Libraries chatty at debug level stay at info unless asked for trace.
    if level != "trace":
        for name in ("psycopg", "psycopg.pool", "httpx", "httpcore", "asyncio"):
            logging.getLogger(name).setLevel(max(log_level(level), logging.INFO))
    return handler


# ------------------------------------------------------------------------ metrics
REGISTRY = CollectorRegistry()
ProcessCollector(registry=REGISTRY)
PlatformCollector(registry=REGISTRY)

HTTP_REQUESTS = Counter(
    "chronicle_http_requests",
    "HTTP requests answered, by route and status.",
    ["method", "route", "status"],
    registry=REGISTRY,
)
HTTP_DURATION = Histogram(
    "chronicle_http_request_duration_seconds",
    "HTTP request latency, by route.",
    ["method", "route"],
    registry=REGISTRY,
)
GRAPHQL_OPERATIONS = Counter(
    "chronicle_graphql_operations",
    "GraphQL operations, by operation (its name, else its root fields), type and outcome.",
    ["operation", "type", "outcome"],
    registry=REGISTRY,
)
GRAPHQL_DURATION = Histogram(
    "chronicle_graphql_operation_duration_seconds",
    "GraphQL operation latency, by operation and type.",
    ["operation", "type"],
    registry=REGISTRY,
)
FACTS_APPENDED = Counter(
    "chronicle_facts_appended",
    "Facts stored by this process, by fact type.",
    ["fact_type"],
    registry=REGISTRY,
)
PROJECTION_LAG = Gauge(
    "chronicle_projection_lag",
    "Facts the read models are behind the store head (measured at scrape; -1: not measurable).",
    registry=REGISTRY,
)
PROJECTION_QUARANTINED = Gauge(
    "chronicle_projection_quarantined_campaigns",
    "Campaigns whose read models are stopped at a fact that failed to project (measured at scrape from "
    "the view_quarantine table; -1: not measurable). Repair: chronicle rebuild --campaign ID.",
    registry=REGISTRY,
)
PROJECTION_QUARANTINES = Counter(
    "chronicle_projection_quarantines",
    "Campaigns quarantined by the read-model follower running in this process (the embedded "
    "SQLite store; `chronicle worker` logs them instead).",
    registry=REGISTRY,
)
SUBSCRIPTIONS = Gauge(
    "chronicle_graphql_subscriptions_active", "GraphQL subscriptions streaming now.", registry=REGISTRY
)
CAMPAIGNS_CACHED = Gauge(
    "chronicle_campaigns_cached", "Campaigns held in the command service's cache.", registry=REGISTRY
)
CACHE_FACTS = Gauge(
    "chronicle_cache_facts",
    "Facts the cached campaigns hold in memory (bounded by CHRONICLE_CACHE_MAX_FACTS).",
    registry=REGISTRY,
)
CAMPAIGN_LOADS = Counter(
    "chronicle_campaign_loads",
    "Cold loads of a campaign, by source: a persisted snapshot and the facts after it, or every fact.",
    ["source"],
    registry=REGISTRY,
)
LOST_RACES = Counter(
    "chronicle_lost_races",
    "Commits that lost the race for their positions to another process (replicas), by how the "
    "cached campaign was brought up to date: caught_up (its unsaved facts taken back out, the "
    "other's facts read) or reloaded.",
    ["recovery"],
    registry=REGISTRY,
)
CAMPAIGNS_EVICTED = Counter(
    "chronicle_campaigns_evicted",
    "Campaigns dropped from the cache to keep it within bounds.",
    registry=REGISTRY,
)
SNAPSHOTS = Counter(
    "chronicle_snapshots",
    "Snapshots of the fold by outcome: written, failed (to write), discarded (did not fit on load).",
    ["outcome"],
    registry=REGISTRY,
)

# Label values chosen by clients (operation names) are capped so a client cannot blow up
# the number of series.
MAX_OPERATION_LABELS = 200
_GRAPHQL_NAME = re.compile(r"[_A-Za-z][_0-9A-Za-z]{0,63}(\+[_A-Za-z][_0-9A-Za-z]{0,63}){0,3}")
_operations_seen: set[str] = set()


def operation_label(name: str | None) -> str:
    if not name:
        return "anonymous"
    if not _GRAPHQL_NAME.fullmatch(name):
        return "other"
    if name not in _operations_seen:
        if len(_operations_seen) >= MAX_OPERATION_LABELS:
            return "other"
        _operations_seen.add(name)
    return name


def observe_graphql(operation: str | None, kind: str, ok: bool, seconds: float) -> None:
    label = operation_label(operation)
    GRAPHQL_OPERATIONS.labels(label, kind, "ok" if ok else "error").inc()
    GRAPHQL_DURATION.labels(label, kind).observe(seconds)


def facts_appended(fact_types: Iterable[str]) -> None:
    """Count facts stored (called by the application after a successful save)."""
    for fact_type in fact_types:
        FACTS_APPENDED.labels(fact_type).inc()


def metrics_text() -> bytes:
    return generate_latest(REGISTRY)


# ----------------------------------------------------------------- the middleware
_QUIET = {"/healthz", "/readyz", "/metrics"}  # probes and scrapes log at debug level


class RequestContext:
    """Request id, one ``request`` log line and the HTTP metrics, for every request."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        raw = None
        for name, value in scope.get("headers", []):
            if name == b"x-request-id":
                raw = value.decode("latin-1")
                break
        rid = accept_request_id(raw)
        token = REQUEST_ID.set(rid)
        status = 500
        began = time.perf_counter()

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] in ("http.response.start", "websocket.accept"):
                status = int(message.get("status", 101))
                message.setdefault("headers", [])
                headers = MutableHeaders(scope=message)
                headers["X-Request-ID"] = rid
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        finally:
            if scope["type"] == "http":
                seconds = time.perf_counter() - began
                route = _route(scope)
                method = scope.get("method", "GET")
                HTTP_REQUESTS.labels(method, route, str(status)).inc()
                HTTP_DURATION.labels(method, route).observe(seconds)
                path = scope.get("path", "")
                logger.log(
                    logging.DEBUG if path in _QUIET else logging.INFO,
                    "%s %s %d",
                    method,
                    path,
                    status,
                    extra={
                        "method": method,
                        "path": path,
                        "status": status,
                        "duration_ms": round(seconds * 1000, 2),
                    },
                )
            REQUEST_ID.reset(token)


def _route(scope: Scope) -> str:
    """The matched route's template (``/graphql``), never the raw path (unbounded labels)."""
    route = scope.get("route")
    if route is None:
        return "unmatched"
    template = str(getattr(route, "path", ""))
    # The GraphQL router's routes have an empty template: they match its prefix exactly.
    return template or str(scope.get("path", "/"))
