"""Copy-on-write state: a clone shares creatures until one side changes them."""

from __future__ import annotations

import pytest

from domain.core import state as core_state
from domain.rulesets.stellar_winds.rules import creature_registered
from domain.rulesets.stellar_winds.state import SWState


class _Ctx:
    waived = False
    overrides: dict[str, object] = {}


def _state_with_one_creature() -> SWState:
    s = SWState({"xp_table": "orcus"})
    creature_registered(
        s,
        {
            "creature_id": "vex",
            "name": "Vex",
            "kind": "pc",
            "level": 1,
            "heroic": False,
            "abilities": {"str": 10, "con": 12, "dex": 10, "int": 10, "wis": 10, "cha": 10},
            "max_hp": 20,
            "surges_per_day": 6,
            "defenses": {"ac": 15, "fort": 12, "ref": 12, "will": 12},
            "speed": 6,
            "resist": {},
            "vuln": {},
            "regeneration": 0,
            "crit_min": 20,
            "initiative_misc": 0,
            "max_wounds": None,
            "second_wind": None,
            "xp": None,
        },
        _Ctx(),
    )
    return s


def test_a_clone_shares_creatures_until_one_side_changes_them() -> None:
    original = _state_with_one_creature()
    copy = original.clone()
    assert copy.creatures["vex"] is original.creatures["vex"]
    mine = copy.own("vex")
    mine.hp = 3
    assert copy.creatures["vex"].hp == 3
    assert original.creatures["vex"].hp == 20
    assert original.own("vex") is not mine


def test_changing_a_shared_creature_without_owning_it_fails_loudly() -> None:
    assert core_state.GUARD  # turned on by tests/conftest.py
    original = _state_with_one_creature()
    original.clone()
    with pytest.raises(AssertionError, match="use state.own"):
        original.creatures["vex"].hp = 1
