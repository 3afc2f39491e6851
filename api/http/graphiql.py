"""GraphiQL served by Chronicle itself: the page at ``/graphql`` (in a browser) and its assets
under ``/static/graphiql/``, so it works on a machine without internet access.

The assets are GraphiQL's browser build with React and ReactDOM, vendored from the npm registry
by ``scripts/refresh_graphiql.py`` into ``static/graphiql/vendor`` with ``MANIFEST.json`` (each
package's version and integrity, each file's sha256). The page loads every asset with a
subresource-integrity hash taken from the manifest, so a file that does not match is refused by
the browser; ``tests/unit/test_graphiql_assets.py`` checks the files against the manifest.

``static/graphiql/start.js`` is ours: it renders GraphiQL with a fetcher that sends queries and
mutations over HTTP and subscriptions over WebSocket (graphql-transport-ws), passing the
Headers tab (``{"Authorization": "Bearer ..."}``) as the connection parameters.
"""

from __future__ import annotations

import base64
import json
from functools import cache
from html import escape
from pathlib import Path
from typing import Any

from fastapi import FastAPI
from starlette.staticfiles import StaticFiles

__all__ = ["ASSETS", "MOUNT", "VENDOR", "manifest", "mount", "page"]

ASSETS = Path(__file__).resolve().parent / "static" / "graphiql"
VENDOR = ASSETS / "vendor"
MOUNT = "/static/graphiql"


@cache
def manifest() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((VENDOR / "MANIFEST.json").read_text(encoding="utf-8"))
    return data


def _sri(sha256_hex: str) -> str:
    return "sha256-" + base64.b64encode(bytes.fromhex(sha256_hex)).decode()


@cache
def page() -> str:
    """The HTML page: every script and stylesheet from this server, in the manifest's order."""
    tags: list[str] = []
    for package in manifest()["packages"]:
        for entry in package["files"]:
            url = escape(f"{MOUNT}/vendor/{entry['file']}")
            integrity = _sri(entry["sha256"])
            if entry["file"].endswith(".css"):
                tags.append(f'<link rel="stylesheet" href="{url}" integrity="{integrity}">')
            elif entry["file"].endswith(".js"):
                tags.append(f'<script src="{url}" integrity="{integrity}"></script>')
    versions = ", ".join(f"{p['name']} {p['version']}" for p in manifest()["packages"])
    assets = "\n    ".join(tags)
    return f"""<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>Chronicle GraphiQL</title>
    <!-- Served by Chronicle, no CDN: {escape(versions)} -->
    <link rel="icon" href="data:,">
    <style>
      body {{ margin: 0; height: 100vh; overflow: hidden; }}
      #graphiql {{ height: 100vh; }}
    </style>
    {assets}
  </head>
  <body>
    <div id="graphiql">Loading GraphiQL...</div>
    <script src="{MOUNT}/start.js"></script>
  </body>
</html>
"""


def mount(app: FastAPI) -> None:
    """Serve the assets under :data:`MOUNT` (the page itself is rendered by the GraphQL router)."""
    app.mount(MOUNT, StaticFiles(directory=ASSETS), name="graphiql-assets")
