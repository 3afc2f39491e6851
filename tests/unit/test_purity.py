"""domain/ is pure: no web, database or framework imports (DESIGN.md "Layout")."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

DOMAIN = Path(__file__).resolve().parents[2] / "domain"
FORBIDDEN = (
    "fastapi",
    "starlette",
    "strawberry",
    "uvicorn",
    "psycopg",
    "psycopg_pool",
    "sqlite3",
    "httpx",
    "eventsourcing.application",
    "eventsourcing.persistence",
    "eventsourcing.postgres",
    "eventsourcing.sqlite",
    "eventsourcing.popo",
    "eventsourcing.system",
    "eventsourcing.projection",
    "api",
    "projections",
    "socket",
    "requests",
    "typer",
    "rich",
)


def _imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
    return names


@pytest.mark.parametrize("path", sorted(DOMAIN.rglob("*.py")), ids=lambda p: str(p.relative_to(DOMAIN)))
def test_domain_module_imports_nothing_impure(path: Path) -> None:
    bad = [name for name in _imports(path) for f in FORBIDDEN if name == f or name.startswith(f + ".")]
    assert bad == [], f"{path.name} imports {bad}"
