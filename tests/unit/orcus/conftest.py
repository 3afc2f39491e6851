"""Fixtures for the Orcus tests: a memory application and a table on it (tests/conftest.py turns
on ``domain.core.state.GUARD``: changing a shared creature without ``state.own`` fails)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from api.service.application import ChronicleApplication
from tests.unit.conftest import memory_application
from tests.unit.orcus.helpers import OrcusTable


@pytest.fixture
def app() -> Iterator[ChronicleApplication]:
    application = memory_application()
    try:
        yield application
    finally:
        application.close()


@pytest.fixture
def table(app: ChronicleApplication) -> OrcusTable:
    return OrcusTable(app)


@pytest.fixture
def t(table: OrcusTable) -> OrcusTable:
    """The cast: mira (hero), ogre (elite), gob (monster); see helpers."""
    return table.cast()


@pytest.fixture
def make_table(app: ChronicleApplication) -> Any:
    def make(flags: dict[str, Any] | None = None) -> OrcusTable:
        return OrcusTable(app, flags)

    return make
