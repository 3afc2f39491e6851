"""The bootstrap: the one place where the FastAPI app, the GraphQL router and the store meet.

``create_app(settings)`` opens the application on the configured store (so a bad
configuration fails before the server starts) and closes it on shutdown. Pass
``application`` to reuse one that the caller opened and will close.

Routes:

- ``/graphql``: GraphQL over HTTP (GraphiQL in a browser) and WebSocket
  (``graphql-transport-ws`` only: the legacy ``graphql-ws`` protocol breaks mutations in
  common clients);
- ``/healthz``: liveness, never touches the store: 200 ``{"status": "ok"}``;
- ``/readyz``: readiness, a cheap store query: 200 ``{"status": "ready"}``, or 503
  ``{"status": "not ready", "reason": ...}``.

eventsourcing is synchronous, so every store call runs in a worker thread, never on the
event loop.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool
from strawberry.fastapi import GraphQLRouter

from api import views
from api.application import ChronicleApplication
from api.graphql.router import BodySizeLimit, graphql_router
from api.schema import server_version
from api.settings import Settings
from api.store import check_store, open_application

__all__ = ["create_app"]

logger = logging.getLogger("chronicle.http")


def create_app(settings: Settings, application: ChronicleApplication | None = None) -> FastAPI:
    """Build the ASGI app. Raises :class:`~api.settings.ConfigError` if the store cannot be opened."""
    owned = application is None
    chronicle = open_application(settings) if application is None else application

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        # Read models: in process for the embedded SQLite store; `chronicle worker` for PostgreSQL.
        projections = views.follower(settings, chronicle) if views.in_process(settings) else None
        if projections is not None:
            projections.start()
        try:
            yield
        finally:
            if projections is not None:
                await run_in_threadpool(projections.close)
            if owned:
                await run_in_threadpool(chronicle.close)

    app = FastAPI(title="Chronicle", version=server_version(), lifespan=lifespan)
    app.state.settings = settings
    app.state.application = chronicle

    # GraphQL (api/graphql): schema built from the settings (limits, introspection), bearer-token
    # access, subscriptions over graphql-transport-ws only; bodies over the limit get 413.
    app.add_middleware(BodySizeLimit, limit=settings.max_body_bytes)
    graphql: GraphQLRouter[Any, None] = graphql_router(chronicle, settings)
    app.include_router(graphql, prefix="/graphql")

    @app.get("/healthz", tags=["operations"])
    async def healthz() -> dict[str, str]:
        """Liveness: the process answers. Does not touch the store."""
        return {"status": "ok"}

    @app.get("/readyz", tags=["operations"], response_model=None)
    async def readyz(request: Request) -> dict[str, str] | JSONResponse:
        """Readiness: the store answers a cheap query."""
        try:
            await run_in_threadpool(check_store, request.app.state.application)
        except Exception as exc:  # any failure means "not ready"; the reason is reported and logged
            reason = " ".join(str(exc).split()) or type(exc).__name__
            logger.warning("readiness check failed: %s", reason)
            return JSONResponse({"status": "not ready", "reason": reason}, status_code=503)
        return {"status": "ready"}

    return app
