"""The live table page: ``GET /campaigns/{campaign}/table``, for a TV or a phone at the table.

``{campaign}`` is the campaign's id (a UUID) or its GraphQL ID, like the export URLs. The page
shows the initiative order (whose turn, the round), every character's hit points and the
system's other tracks as bars (``Character.tracks``, so any game system works), conditions and
effects with their durations, and the last lines of the log with corrections marked. It
updates live from the ``campaignFacts`` subscription and resumes after a dropped connection
from the last position it received (docs/api.md, "The table page").

The HTML is a shell with no campaign data in it: the script (``static/table/table.js``, plain
JavaScript served here, no build step and no CDN) reads everything through the public GraphQL
API with a token. The token is given once in the URL's fragment, ``#token=...`` (a fragment
never leaves the browser: no server or proxy log sees it), or as ``?token=...``; the script
keeps it in the browser's local storage for this campaign and removes it from the address
bar. So the shell answers the same for any well-formed campaign reference without a token
(a malformed one is 400 ``INVALID_ID``), and learns nothing about campaigns; the security
trade-off (a token kept on the device) is in docs/operations.md.
"""

from __future__ import annotations

import hashlib
from functools import cache
from html import escape
from pathlib import Path

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import HTMLResponse, JSONResponse
from starlette.staticfiles import StaticFiles

from api.graphql.ids import campaign_gid
from api.service.campaign_ref import BadCampaignRef, campaign_ref

__all__ = ["ASSETS", "MOUNT", "mount", "page", "router"]

ASSETS = Path(__file__).resolve().parent / "static" / "table"
MOUNT = "/static/table"

router = APIRouter(tags=["table"])


@cache
def _version(name: str) -> str:
    """A short digest of an asset, so a browser never runs a stale script after an upgrade."""
    return hashlib.sha256((ASSETS / name).read_bytes()).hexdigest()[:12]


def page(campaign_gid_: str) -> str:
    """The shell. Asset and API URLs are relative to the page, so it also works behind a proxy
    that serves Chronicle under a path prefix."""
    gid = escape(campaign_gid_)
    css = f"../../static/table/table.css?v={_version('table.css')}"
    js = f"../../static/table/table.js?v={_version('table.js')}"
    return f"""<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>Chronicle table</title>
    <link rel="icon" href="data:,">
    <link rel="stylesheet" href="{css}">
  </head>
  <body data-campaign="{gid}" data-graphql="../../graphql">
    <header>
      <h1 id="campaign-name">Chronicle table</h1>
      <p class="meta"><span id="clock"></span> <span id="position"></span>
        <span id="status" class="status connecting">connecting</span></p>
    </header>
    <form id="login" hidden>
      <p id="login-reason">This page needs a token of the campaign (a viewer token is enough).</p>
      <label>Token <input id="token" name="token" type="password" autocomplete="off" required></label>
      <button type="submit">Show the table</button>
    </form>
    <main id="table" hidden>
      <section id="encounter" aria-labelledby="encounter-title">
        <h2 id="encounter-title">No encounter running</h2>
        <p id="round" class="round"></p>
        <ol id="initiative"></ol>
      </section>
      <section id="characters" aria-label="Characters"></section>
      <section id="log" aria-labelledby="log-title">
        <h2 id="log-title">Log</h2>
        <ol id="log-lines"></ol>
      </section>
    </main>
    <footer><button id="forget" type="button">Forget the token on this device</button></footer>
    <script src="{js}" defer></script>
  </body>
</html>
"""


def _headers(request: Request) -> dict[str, str]:
    host = request.headers.get("host", "")
    sockets = f" ws://{host} wss://{host}" if host else ""
    return {
        # only this server: its script and styles, its API over HTTP and WebSocket; no framing
        "Content-Security-Policy": (
            "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
            f"connect-src 'self'{sockets}; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
        ),
        "Referrer-Policy": "no-referrer",
        "Cache-Control": "no-store",
        "X-Content-Type-Options": "nosniff",
    }


@router.get("/campaigns/{campaign}/table", response_class=HTMLResponse, response_model=None)
async def table(campaign: str, request: Request) -> HTMLResponse | JSONResponse:
    """The live table page (HTML; the data comes from the GraphQL API with the page's token)."""
    try:
        campaign_id = campaign_ref(campaign)
    except BadCampaignRef as exc:
        body = {"error": {"code": "INVALID_ID", "message": str(exc), "field": "campaign"}}
        return JSONResponse(body, status_code=400)
    return HTMLResponse(page(campaign_gid(campaign_id)), headers=_headers(request))


def mount(app: FastAPI) -> None:
    """The page's route and its assets under :data:`MOUNT`."""
    app.include_router(router)
    app.mount(MOUNT, StaticFiles(directory=ASSETS), name="table-assets")
