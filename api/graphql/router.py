"""The FastAPI side of GraphQL: the router, its context, and the request-body limit."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from cross_web import HTTPException
from fastapi.routing import APIRoute
from starlette.background import BackgroundTasks
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from strawberry.fastapi import GraphQLRouter
from strawberry.subscriptions import GRAPHQL_TRANSPORT_WS_PROTOCOL
from strawberry.types.unset import UNSET

from api.graphql import sanitize
from api.graphql.events import Broadcaster
from api.graphql.schema import build_schema
from api.service import observability
from api.service.application import ChronicleApplication
from api.service.auth import AccessControl
from api.service.settings import Settings


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

    router = ChronicleRouter(
        build_schema(settings),
        graphql_ide="graphiql" if ide_page else None,  # rendered from ide_page, not the CDN
        context_getter=graphql_context,
        subscription_protocols=(GRAPHQL_TRANSPORT_WS_PROTOCOL,),
    )
    router.ide_page = ide_page
    router.custom_context = graphql_context
    return router


class ChronicleRouter(GraphQLRouter[Any, None]):
    """Strawberry's router, with the page a browser gets at GET /graphql given by the caller
    (``api.http.graphiql``: GraphiQL served offline) instead of Strawberry's CDN page, and
    reading bodies within the input limits (``api.graphql.sanitize``).

    A body nested too deeply, with a huge integer or with NaN/Infinity is answered 400 with a
    JSON body ``{"errors": [{"message": ..., "extensions": {"code": "INVALID_INPUT"}}]}``
    (Strawberry would answer a plain-text 500 for the first two, and accept the third)."""

    ide_page: str | None = None
    custom_context: Callable[[], Awaitable[dict[str, Any]]] | None = None

    async def get_sub_response(self, request: Any) -> Response:
        """The request's own sub-response (``GraphQLPost``), else Strawberry's: the one FastAPI
        made for the request, which Strawberry parks on the router (``temporal_response``)."""
        own = request.scope.get(SUB_RESPONSE)
        return own if own is not None else await super().get_sub_response(request)

    async def render_graphql_ide(self, request: Any) -> HTMLResponse:
        return HTMLResponse(self.ide_page or "")

    def decode_json(self, data: str | bytes) -> object:
        return sanitize.decode_json(data)

    async def run(self, request: Any, context: Any = UNSET, root_value: Any = UNSET) -> Any:
        try:
            return await super().run(request, context=context, root_value=root_value)
        except Exception as exc:  # Strawberry's HTTPException (400), raised from our BodyRefused
            refused = exc.__cause__
            if not isinstance(refused, sanitize.BodyRefused):
                raise
            body = {"errors": [{"message": refused.reason, "extensions": {"code": "INVALID_INPUT"}}]}
            return JSONResponse(body, status_code=400)


SUB_RESPONSE = "chronicle.sub_response"


class GraphQLPost:
    """``POST /graphql`` straight to the GraphQL router's ``run``, as FastAPI's route for it
    would call it (the same context, a fresh sub-response, background tasks, Strawberry's 4xx
    as plain text), without FastAPI's routing and dependency solving on the way: that was a
    tenth of a mutation's CPU (py-spy, 50 writers). Everything else (GET, WebSocket, other
    paths) goes on to the app. Sits inside ``BodySizeLimit`` and ``RequestContext``, outside the
    app's exception middleware: an exception escaping the router is answered by the app's own
    handler for it (``handlers``: the app's ``exception_handlers``, read when it is raised: a store
    error is 503 ``STORE_UNAVAILABLE`` here as on the FastAPI route), else it propagates."""

    def __init__(
        self,
        app: ASGIApp,
        router: ChronicleRouter,
        path: str = "/graphql",
        handlers: Mapping[Any, Callable[[Request, Exception], Awaitable[Response]]] | None = None,
    ) -> None:
        self.app, self.router, self.path = app, router, path
        self.handlers = {} if handlers is None else handlers
        self.route = next(r for r in router.routes if isinstance(r, APIRoute) and "POST" in (r.methods or ()))

    def _handler(self, exc: Exception) -> Callable[[Request, Exception], Awaitable[Response]] | None:
        for cls in type(exc).__mro__:  # the nearest class with a handler, as Starlette looks
            handler = self.handlers.get(cls)
            if handler is not None:
                return handler
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or scope["path"] != self.path:
            await self.app(scope, receive, send)
            return
        router = self.router
        sub = Response()  # as FastAPI makes a route's ``response`` parameter
        del sub.headers["content-length"]
        sub.status_code = None  # type: ignore[assignment]
        scope[SUB_RESPONSE] = sub
        scope["route"] = self.route  # (the metrics' route label)
        request = Request(scope, receive, send)
        background = BackgroundTasks()
        custom = await router.custom_context() if router.custom_context is not None else {}
        context = {"request": request, "background_tasks": background, "response": sub, **custom}
        try:
            response = await router.run(request, context=context, root_value=None)
        except HTTPException as e:
            response = PlainTextResponse(e.reason, status_code=e.status_code)
        except Exception as exc:
            handler = self._handler(exc)
            if handler is None:
                raise
            response = await handler(request, exc)
        if response.background is None:
            response.background = background
        await response(scope, receive, send)


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
