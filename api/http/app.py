"""The bootstrap: the one place where the FastAPI app, the GraphQL router and the store meet.

``create_app(settings)`` opens the application on the configured store (so a bad
configuration fails before the server starts) and closes it on shutdown. Pass
``application`` to reuse one that the caller opened and will close.

Routes:

- ``/graphql``: GraphQL over HTTP (GraphiQL in a browser) and WebSocket
  (``graphql-transport-ws`` only: the legacy ``graphql-ws`` protocol breaks mutations in
  common clients);
- ``/static/graphiql/``: GraphiQL's assets, served here so the page works offline
  (``api.http.graphiql``);
- ``/campaigns/{campaign}/export.{md,jsonl,html}``: streamed exports (``api.http.exports``);
- ``/campaigns/{campaign}/table``: the live table page, its assets under ``/static/table/``
  (``api.http.table``);
- ``/healthz``: liveness, never touches the store: 200 ``{"status": "ok"}``;
- ``/readyz``: readiness: the store answers a cheap query and, where read models exist
  (SQLite, PostgreSQL), they are at most ``CHRONICLE_READY_MAX_LAG`` facts behind the store
  head: 200 ``{"status": "ready", "projection_lag": N}``, or 503
  ``{"status": "not ready", "reason": ...}``; within ``CHRONICLE_READY_TIMEOUT`` seconds even
  when the database hangs (the check runs in its own thread with its own deadline);
- ``/metrics``: Prometheus text format (``api.service.observability``).

Every request gets a request id (``X-Request-ID``, echoed; on every log line of the request).

eventsourcing is synchronous, so every store call runs in a worker thread (anyio's pool,
40 threads by default), never on the event loop: ``/healthz`` answers while mutations wait
on the database (``tests/integration/test_ops_observability.py`` shows it).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from eventsourcing.persistence import PersistenceError
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response
from starlette.concurrency import run_in_threadpool
from strawberry.fastapi import GraphQLRouter

from api.graphql.router import BodySizeLimit, GraphQLPost, graphql_router
from api.graphql.served import server_version
from api.http import graphiql, table
from api.http.exports import router as exports_router
from api.service import observability, views
from api.service.application import ChronicleApplication
from api.service.auth import AccessControl
from api.service.settings import Settings
from api.service.store import Probe, check_store, open_application, unavailable
from projections.storage import ViewStore

__all__ = ["ProjectionLag", "create_app"]

logger = logging.getLogger("chronicle.http")


def create_app(settings: Settings, application: ChronicleApplication | None = None) -> FastAPI:
    """Build the ASGI app. Raises :class:`~api.service.settings.ConfigError` if the store cannot be opened."""
    owned = application is None
    chronicle = open_application(settings) if application is None else application

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        # Read models: in process for the embedded SQLite store; `chronicle worker` for PostgreSQL.
        # The in-process follower shares the server's memory: a catch-up holds the rows of at most
        # 10,000 facts (about 20 MB; `chronicle worker` holds 100,000 to refold less).
        projections = (
            views.follower(settings, chronicle, lookahead=10_000) if views.in_process(settings) else None
        )
        if projections is not None:
            projections.start()
        try:
            yield
        finally:
            probe.close()
            await run_in_threadpool(lag.close)
            if projections is not None:
                await run_in_threadpool(projections.close)
            if owned:
                await run_in_threadpool(chronicle.close)

    app = FastAPI(title="Chronicle", version=server_version(), lifespan=lifespan)
    app.state.settings = settings
    app.state.application = chronicle
    lag = ProjectionLag(settings)
    app.state.projection_lag = lag
    probe = Probe()  # readiness and lag checks, each with its own deadline

    # GraphQL (api/graphql): schema built from the settings (limits, introspection), bearer-token
    # access, subscriptions over graphql-transport-ws only; bodies over the limit get 413.
    graphql: GraphQLRouter[Any, None] = graphql_router(chronicle, settings, ide_page=graphiql.page())
    app.include_router(graphql, prefix="/graphql")
    # innermost of these three (added first): POST /graphql without FastAPI's routing
    app.add_middleware(GraphQLPost, router=graphql, path="/graphql", handlers=app.exception_handlers)
    app.add_middleware(BodySizeLimit, limit=settings.max_body_bytes)
    app.add_middleware(observability.RequestContext)  # outermost: request id, access log, HTTP metrics
    graphiql.mount(app)  # GraphiQL's assets, served here (works offline): api/http/graphiql.py
    # Streamed downloads of the campaign log (api/exports): same bearer tokens as GraphQL.
    app.state.access = AccessControl(chronicle)
    app.include_router(exports_router)
    # The live table page for a TV or a phone (api/http/table.py): a shell and its script, which
    # reads everything through the GraphQL API with the page's token.
    table.mount(app)

    @app.exception_handler(PersistenceError)
    async def store_error(request: Request, exc: PersistenceError) -> JSONResponse:
        """A route that is not GraphQL (the downloads) met a store error: 503 STORE_UNAVAILABLE
        (retryable) for an outage, else a 500 whose details are only in the log."""
        if unavailable(exc):
            logger.warning("store unavailable at %s: %s", request.url.path, exc)
            body = {"code": "STORE_UNAVAILABLE", "message": "the store is unavailable; retry later"}
            return JSONResponse({"error": {**body, "retryable": True}}, status_code=503)
        logger.error("store error at %s", request.url.path, exc_info=exc)
        return JSONResponse({"error": {"code": "INTERNAL_SERVER_ERROR"}}, status_code=500)

    @app.get("/healthz", tags=["operations"])
    async def healthz() -> dict[str, str]:
        """Liveness: the process answers. Does not touch the store."""
        return {"status": "ok"}

    @app.get("/readyz", tags=["operations"], response_model=None)
    async def readyz(request: Request) -> dict[str, Any] | JSONResponse:
        """Readiness: the store answers a cheap query and the read models are not too far behind."""
        application = request.app.state.application

        def check() -> int | None:
            check_store(application)
            return lag.measure(application)

        try:
            behind = await probe.run("ready", check, settings.ready_timeout)
        except Exception as exc:  # any failure means "not ready"; the reason is reported and logged
            reason = " ".join(str(exc).split()) or type(exc).__name__
            logger.warning("readiness check failed: %s", reason)
            return JSONResponse({"status": "not ready", "reason": reason}, status_code=503)
        if behind is None:
            return {"status": "ready"}
        limit = settings.ready_max_lag
        if limit and behind > limit:
            reason = (
                f"projection lag {behind} > CHRONICLE_READY_MAX_LAG {limit} (is `chronicle worker` running?)"
            )
            logger.warning("readiness check failed: %s", reason)
            return JSONResponse(
                {"status": "not ready", "reason": reason, "projection_lag": behind}, status_code=503
            )
        return {"status": "ready", "projection_lag": behind}

    @app.get("/metrics", tags=["operations"], response_class=Response)
    async def metrics(request: Request) -> Response:
        """Prometheus metrics (text exposition format)."""
        try:
            behind = await probe.run(
                "lag", lambda: lag.measure(request.app.state.application), settings.ready_timeout
            )
        except Exception:  # a scrape must not fail because the store is away; readiness reports it
            behind = -1
        observability.PROJECTION_LAG.set(-1 if behind is None else behind)
        try:
            stopped = await run_in_threadpool(lag.quarantined)
        except Exception:  # as above: the scrape answers, the gauge says "not measurable"
            stopped = -1
        observability.PROJECTION_QUARANTINED.set(-1 if stopped is None else stopped)
        return Response(observability.metrics_text(), media_type=observability.CONTENT_TYPE_LATEST)

    return app


class ProjectionLag:
    """How many facts the read models are behind the store head; ``None`` without read models
    (the in-memory store). Keeps one view-store connection, reopened after an error."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._views: ViewStore | None = None
        self._lock = threading.Lock()

    def measure(self, application: ChronicleApplication) -> int | None:
        if self.settings.database.kind == "memory":
            return None
        head = application.recorder.max_notification_id() or 0
        with self._lock:
            try:
                if self._views is None:
                    self._views = views.open_views(self.settings)
                tracked = self._views.tracking_position()
            except Exception:
                self._close()
                raise
        return max(0, head - tracked)

    def quarantined(self) -> int | None:
        """How many campaigns' read models are quarantined (``None`` without read models)."""
        if self.settings.database.kind == "memory":
            return None
        with self._lock:
            try:
                if self._views is None:
                    self._views = views.open_views(self.settings)
                return self._views.quarantine_count()
            except Exception:
                self._close()
                raise

    def _close(self) -> None:
        views_, self._views = self._views, None
        if views_ is not None:
            try:
                views_.close()
            except Exception:  # closing a broken connection may fail too; it is being dropped
                logger.debug("error closing the view store", exc_info=True)

    def close(self) -> None:
        with self._lock:
            self._close()
