"""Refresh the GraphiQL assets that Chronicle serves itself (``api/http/static/graphiql/vendor``).

    python scripts/refresh_graphiql.py                      # the newest release within each range
    python scripts/refresh_graphiql.py graphiql@4.1.2 react@18.3.1 react-dom@18.3.1

Each package comes from the npm registry through the ordinary npm client (``npm pack``, so
npm's own registry configuration applies). The files the page needs are copied out of the
package tarball, and ``MANIFEST.json`` records, per package, the requested range, the version
received, the tarball's integrity as the registry states it, and every copied file with its
sha256. ``tests/unit/test_graphiql_assets.py`` checks the files against the manifest (no network
needed), and the page loads each one with a subresource-integrity hash taken from it.

Ranges: GraphiQL 4 is the last release with a browser (UMD) build, and React 18 the last with
UMD builds, so the page needs no bundler. GraphiQL's build includes the graphql-ws client (the
fetcher uses it for subscriptions over graphql-transport-ws), so it is not vendored separately.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
VENDOR = REPO / "api" / "http" / "static" / "graphiql" / "vendor"

# package -> (default range, {file in the package: file name under vendor/}), in load order.
PACKAGES: dict[str, tuple[str, dict[str, str]]] = {
    "react": ("^18", {"umd/react.production.min.js": "react.production.min.js", "LICENSE": "LICENSE.react"}),
    "react-dom": (
        "^18",
        {"umd/react-dom.production.min.js": "react-dom.production.min.js", "LICENSE": "LICENSE.react-dom"},
    ),
    "graphiql": (
        "^4",
        {
            "graphiql.min.js": "graphiql.min.js",
            "graphiql.min.css": "graphiql.min.css",
            "LICENSE": "LICENSE.graphiql",
        },
    ),
}


def pack(spec: str, into: Path) -> dict[str, str]:
    """``npm pack SPEC`` into ``into``; npm's JSON report of the tarball (name, version, integrity...)."""
    done = subprocess.run(
        ["npm", "pack", "--json", "--pack-destination", str(into), spec],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"refresh_graphiql: npm pack {spec} failed:\n{done.stderr.strip()}")
    report: list[dict[str, str]] = json.loads(done.stdout)
    return report[0]


def main(argv: list[str]) -> int:
    requested = {name: spec for name, (spec, _) in PACKAGES.items()}
    for arg in argv:
        name, sep, spec = arg.rpartition("@")
        if not sep or name not in PACKAGES:
            print(
                f"refresh_graphiql: expected NAME@VERSION with NAME one of {', '.join(PACKAGES)}",
                file=sys.stderr,
            )
            return 2
        requested[name] = spec
    manifest: dict[str, object] = {
        "about": "GraphiQL's assets, served by Chronicle itself (no CDN). Written by "
        "scripts/refresh_graphiql.py; checked by tests/unit/test_graphiql_assets.py. Do not edit by hand.",
        "packages": [],
    }
    packages: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory() as tmp:
        staged = Path(tmp) / "vendor"
        staged.mkdir()
        for name, (_, files) in PACKAGES.items():
            spec = f"{name}@{requested[name]}"
            report = pack(spec, Path(tmp))
            copied = []
            with tarfile.open(Path(tmp) / report["filename"], "r:gz") as tar:
                for inner, vendored in files.items():
                    member = tar.extractfile(f"package/{inner}")
                    if member is None:
                        raise SystemExit(f"refresh_graphiql: {spec} has no {inner}")
                    data = member.read()
                    (staged / vendored).write_bytes(data)
                    copied.append(
                        {
                            "file": vendored,
                            "from": inner,
                            "bytes": len(data),
                            "sha256": hashlib.sha256(data).hexdigest(),
                        }
                    )
            packages.append(
                {
                    "name": name,
                    "range": requested[name],
                    "version": report["version"],
                    "integrity": report["integrity"],
                    "files": copied,
                }
            )
            print(f"{name} {report['version']}: {', '.join(str(c['file']) for c in copied)}")
        manifest["packages"] = packages
        (staged / "MANIFEST.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
        if VENDOR.exists():
            shutil.rmtree(VENDOR)
        VENDOR.parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(staged, VENDOR)
    print(f"wrote {VENDOR.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
