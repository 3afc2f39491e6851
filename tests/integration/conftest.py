"""Fixtures shared by the integration tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from api.service import views as wiring
from api.service.settings import Settings
from projections.storage import ViewStore


@pytest.fixture
def views(store: Settings) -> Iterator[ViewStore]:
    """The read models' store beside the test store (closed afterwards)."""
    v = wiring.open_views(store)
    try:
        yield v
    finally:
        v.close()
