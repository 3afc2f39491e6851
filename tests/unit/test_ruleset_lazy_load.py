"""``get_ruleset`` imports only the plug-in it names until something needs them all: a process
that folds one system's campaigns (``chronicle rebuild``) does not import the other systems."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from domain import rulesets
from domain.rulesets.orcus import ORCUS
from domain.rulesets.stellar_winds import STELLAR_WINDS


class _Plugin:
    """An entry point as ``importlib.metadata`` gives it (name, value, load), counting its loads."""

    def __init__(self, name: str, found: Any, loads: list[str]) -> None:
        self.name, self.value, self._found, self._loads = name, f"fake:{name}", found, loads

    def load(self) -> Any:
        self._loads.append(self.name)
        if isinstance(self._found, Exception):
            raise self._found
        return self._found


@pytest.fixture
def plugins(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    loads: list[str] = []
    installed = [
        _Plugin("broken", ImportError("no such module"), loads),
        _Plugin("orcus", ORCUS, loads),
        _Plugin("stellar-winds", ValueError("a first, broken plug-in of that name"), loads),
        _Plugin("stellar-winds", STELLAR_WINDS, loads),
    ]

    def entry_points(*, group: str, name: str | None = None) -> list[_Plugin]:
        assert group == rulesets.ENTRY_POINT_GROUP
        return [p for p in installed if name is None or p.name == name]

    monkeypatch.setattr(rulesets.metadata, "entry_points", entry_points)
    rulesets.rediscover()
    try:
        yield loads
    finally:
        monkeypatch.undo()
        rulesets.rediscover()


def test_a_ruleset_asked_for_by_id_loads_only_its_plug_ins(plugins: list[str]) -> None:
    assert rulesets.get_ruleset("stellar-winds") is STELLAR_WINDS
    assert plugins == ["stellar-winds", "stellar-winds"]  # the broken one first, as discovery would
    assert rulesets.get_ruleset("stellar-winds") is STELLAR_WINDS
    assert plugins == ["stellar-winds", "stellar-winds"]  # kept
    assert rulesets.get_ruleset("orcus") is ORCUS
    assert plugins[2:] == ["orcus"]


def test_what_needs_every_plug_in_still_discovers_them_all(plugins: list[str]) -> None:
    rulesets.get_ruleset("stellar-winds")
    assert rulesets.available() == ["orcus", "stellar-winds"]
    assert set(rulesets.problems()) == {"broken", "stellar-winds"}
    with pytest.raises(Exception, match="unknown ruleset 'nope'"):
        rulesets.get_ruleset("nope")
