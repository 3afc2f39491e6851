"""GraphiQL's vendored assets match their manifest, and the page loads them from this server only."""

from __future__ import annotations

import base64
import hashlib
import re

from fastapi.testclient import TestClient

from api.http import graphiql
from api.http.app import create_app
from api.service.settings import Settings


def vendored() -> dict[str, dict[str, object]]:
    """file name -> its manifest entry (with the package's name and version)."""
    found: dict[str, dict[str, object]] = {}
    for package in graphiql.manifest()["packages"]:
        for entry in package["files"]:
            assert entry["file"] not in found, f"{entry['file']} listed twice"
            found[entry["file"]] = {**entry, "package": package["name"], "version": package["version"]}
    return found


def test_every_vendored_file_is_in_the_manifest_with_its_checksum() -> None:
    files = vendored()
    on_disk = {p.name for p in graphiql.VENDOR.iterdir()} - {"MANIFEST.json"}
    assert on_disk == set(files)
    for name, entry in files.items():
        data = (graphiql.VENDOR / name).read_bytes()
        assert len(data) == entry["bytes"], name
        assert hashlib.sha256(data).hexdigest() == entry["sha256"], f"{name} does not match MANIFEST.json"


def test_the_manifest_names_each_package_version_and_registry_integrity() -> None:
    packages = {p["name"]: p for p in graphiql.manifest()["packages"]}
    assert set(packages) == {"react", "react-dom", "graphiql"}
    for package in packages.values():
        assert re.fullmatch(r"\d+\.\d+\.\d+", package["version"]), package
        assert package["integrity"].startswith("sha512-"), package
        assert any(e["file"].startswith("LICENSE") for e in package["files"]), package["name"]
    # GraphiQL 4 is the last with a browser build; React 18 the last with UMD builds.
    assert packages["graphiql"]["version"].startswith("4.")
    assert packages["react"]["version"] == packages["react-dom"]["version"]


def test_the_page_loads_every_asset_from_this_server_with_its_integrity() -> None:
    page = graphiql.page()
    urls = re.findall(r'(?:src|href)="([^"]+)"', page)
    assert urls and not [u for u in urls if "://" in u or u.startswith("//")], urls
    for name, entry in vendored().items():
        if name.endswith((".js", ".css")):
            integrity = "sha256-" + base64.b64encode(bytes.fromhex(str(entry["sha256"]))).decode()
            assert f'"{graphiql.MOUNT}/vendor/{name}" integrity="{integrity}"' in page, name
    assert f"{graphiql.MOUNT}/start.js" in urls


def test_a_browser_at_graphql_gets_the_offline_page_and_its_assets() -> None:
    with TestClient(create_app(Settings(database_url="memory:"))) as client:
        page = client.get("/graphql", headers={"Accept": "text/html"})
        assert page.status_code == 200 and page.text == graphiql.page()
        assert "unpkg.com" not in page.text  # Strawberry's page loads GraphiQL from there
        for url in re.findall(r'(?:src|href)="(/[^"]+)"', page.text):
            asset = client.get(url)
            assert asset.status_code == 200, url
            local = graphiql.ASSETS / url.removeprefix(graphiql.MOUNT + "/")
            assert asset.content == local.read_bytes(), url
        # A GraphQL client is still answered at the same URL.
        answer = client.post("/graphql", json={"query": "{ __typename }"})
        assert answer.json() == {"data": {"__typename": "Query"}}
