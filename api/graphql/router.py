"""The FastAPI side of GraphQL: the router, its context, and the request-body limit."""

from __future__ import annotations

from typing import Any

from starlette.responses import HTMLResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from strawberry.fastapi import GraphQLRouter
from strawberry.subscriptions import GRAPHQL_TRANSPORT_WS_PROTOCOL

from api.graphql.events import Broadcaster
from api.graphql.schema import build_schema
from api.service import observability
from api.service.application import ChronicleApplication
from api.service.auth import AccessControl
from api.service.settings import Settings


class _Router(GraphQLRouter[Any, None]):
    """Strawberry's router, with the page a browser gets at GET /graphql given by the caller
    (``api.http.graphiql``: GraphiQL served offline) instead of Strawberry's CDN page."""

    ide_page: str | None = None

    async def render_graphql_ide(self, request: Any) -> HTMLResponse:
        return HTMLResponse(self.ide_page or "")


def graphql_router(
    application: ChronicleApplication, settings: Settings, ide_page: str | None = None
) -> GraphQLRouter[Any, None]:
    """The GraphQL router; ``ide_page`` is the HTML a browser gets at GET /graphql (none: no IDE)."""
    access = AccessControl(application)
    broadcaster = Broadcaster()

    # Takes no Request parameter on purpose: it serves WebSocket connections too. Strawberry
    # merges this dict into its default context (request or websocket, response, ...).
    async def graphql_context() -> dict[str, Any]:
        return {
            "application": application,
            "settings": settings,
            "access": access,
            "broadcaster": broadcaster,
            "request_id": observability.current_request_id() or observability.new_request_id(),
        }

    router = _Router(
        build_schema(settings),
        graphql_ide="graphiql" if ide_page else None,  # rendered by _Router from ide_page, not the CDN
        context_getter=graphql_context,
        subscription_protocols=(GRAPHQL_TRANSPORT_WS_PROTOCOL,),
    )
    router.ide_page = ide_page
    return router


class BodySizeLimit:
    """Answer 413 to an HTTP request whose body is larger than ``limit`` bytes."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app, self.limit = app, limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope.get("headers", []):
            if name == b"content-length" and value.isdigit() and int(value) > self.limit:
                await _too_large(send, self.limit)
                return
        seen = 0
        started = False

        async def limited_receive() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:
                    raise _TooLarge
            return message

        async def tracking_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, limited_receive, tracking_send)
        except _TooLarge:
            if not started:
                await _too_large(send, self.limit)


class _TooLarge(Exception):
    pass


async def _too_large(send: Send, limit: int) -> None:
    body = (
        b'{"errors":[{"message":"request body larger than %d bytes",'
        b'"extensions":{"code":"PAYLOAD_TOO_LARGE"}}]}' % limit
    )
    await send(
        {
            "type": "http.response.start",
            "status": 413,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})
