"""Effects, saves, riders (RULES.md OR-17, OR-18, OR-19, B-OR-12, rulings 20, 23) out of an
encounter; their turn timing is in test_turns.py."""

from __future__ import annotations

from typing import Any

import pytest

from domain.errors import InvalidInput
from tests.unit.orcus.helpers import OrcusTable, effect_ids, refused

RATTLED = {
    "name": "rattled",
    "components": [{"condition": "rattled"}],
    "duration": {"kind": "save_ends"},
    "first_failed_save": {"components": [{"condition": "blinded"}], "instead": True},
}


def put(t: OrcusTable, target: str = "mira", source: str = "ogre", **spec: Any) -> str:
    return str(t.effect(target, source, **spec).outcome["effect_id"])


def test_or_19_a_save_of_10_or_more_ends_the_effect(t: OrcusTable) -> None:
    eid = put(t, name="slowed", components=[{"condition": "dazed"}], duration={"kind": "save_ends"})
    out = t.save("mira", eid, 9).outcome
    assert (out["total"], out["success"]) == (9, False) and effect_ids(t.v("mira")) == [eid]
    out = t.save("mira", eid, 8, modifiers=[{"source": "cloak", "value": 2}]).outcome
    assert (out["total"], out["success"]) == (10, True) and t.v("mira")["effects"] == []


def test_or_19_aftereffect_begins_when_the_save_succeeds(t: OrcusTable) -> None:
    """OR-19's example: blinded (save ends); Aftereffect: dazed (save ends). Out of an encounter
    there is no end of turn to wait for: it begins at once."""
    eid = put(
        t,
        name="blinded",
        components=[{"condition": "blinded"}],
        duration={"kind": "save_ends"},
        aftereffect={
            "name": "dazed",
            "components": [{"condition": "dazed"}],
            "duration": {"kind": "save_ends"},
        },
    )
    out = t.save("mira", eid, 14).outcome
    assert out["aftereffect"]["name"] == "dazed"
    assert t.v("mira")["conditions"] == ["dazed"]


def test_or_19_an_aftereffect_can_be_one_off_damage(t: OrcusTable) -> None:
    eid = put(
        t,
        name="mind spike",
        components=[{"condition": "dazed"}],
        duration={"kind": "save_ends"},
        aftereffect={"name": "echo", "damage": {"amount": 4, "types": ["psychic"]}},
    )
    out = t.save("mira", eid, 10).outcome
    assert out["aftereffect"]["damage"]["amount"] == 4
    assert (t.hp("mira"), t.v("mira")["effects"]) == (26, [])


def test_b_or_12_first_failed_save_replaces_the_effect_and_keeps_its_id(t: OrcusTable) -> None:
    """OR-19's example: rattled (save ends); First Failed Save: instead blinded (save ends). The
    rider applies once, on the first failure; the effect keeps its id and stays save-ends."""
    eid = put(t, **RATTLED)
    out = t.save("mira", eid, 4).outcome
    assert out["first_failed_save"] == {
        "instead": True,
        "components": [{"condition": "blinded"}],
        "duration": "save_ends",
    }
    v = t.v("mira")
    assert (effect_ids(v), v["conditions"]) == ([eid], ["blinded"])
    assert v["effects"][0]["duration"]["kind"] == "save_ends" and "first_failed_save" not in v["effects"][0]
    assert "first_failed_save" not in t.save("mira", eid, 3).outcome  # only the first failure
    t.save("mira", eid, 11)
    assert t.v("mira")["effects"] == []


def test_b_or_12_a_first_save_that_succeeds_never_triggers_the_rider(t: OrcusTable) -> None:
    eid = put(t, **RATTLED)
    assert "first_failed_save" not in t.save("mira", eid, 12).outcome
    assert t.v("mira")["conditions"] == []


def test_b_or_12_a_rider_without_instead_adds_to_the_effect(t: OrcusTable) -> None:
    eid = put(
        t, **{**RATTLED, "first_failed_save": {"components": [{"condition": "prone"}], "instead": False}}
    )
    t.save("mira", eid, 2)
    assert t.v("mira")["conditions"] == ["prone", "rattled"]


def test_ruling_20_persistent_damage_same_type_is_two_effects_with_two_saves(t: OrcusTable) -> None:
    """Ruling 20 (ruling 7): two fire persistent effects (5 and 3) are two effects; the view
    shows the 5 taken; saving against the 5 leaves the 3."""
    five = put(
        t,
        name="burning",
        components=[{"persistent": {"type": "fire", "amount": 5}}],
        duration={"kind": "save_ends"},
    )
    three = put(
        t,
        name="embers",
        components=[{"persistent": {"type": "fire", "amount": 3}}],
        duration={"kind": "save_ends"},
    )
    assert t.v("mira")["persistent_damage"] == {"fire": {"amount": 5, "effect_id": five}}
    t.save("mira", five, 15)
    assert t.v("mira")["persistent_damage"] == {"fire": {"amount": 3, "effect_id": three}}


def test_or_19_only_save_ends_effects_take_saves_and_only_their_carrier_rolls(t: OrcusTable) -> None:
    timed = put(t, components=[{"condition": "dazed"}], duration={"kind": "end_of_target_next"})
    with refused("NOT_SAVE_ENDS"):
        t.save("mira", timed, 15)
    other = put(t, target="gob", components=[{"condition": "dazed"}], duration={"kind": "save_ends"})
    with refused("NOT_AFFECTED"):
        t.save("mira", other, 15)
    with refused("NOT_FOUND"):
        t.save("mira", "e999", 15)


def test_or_18_maintain_needs_a_turn_and_the_user_may_end_it_at_any_time(t: OrcusTable) -> None:
    eid = put(
        t,
        target="gob",
        source="mira",
        name="tentacles",
        components=[{"condition": "restrained"}],
        duration={"kind": "maintain", "action": "swift"},
    )
    v = t.v("gob")["effects"][0]
    assert v["duration"] == {
        "kind": "maintain",
        "action": "swift",
        "anchor": "mira",
        "applied_turn": None,
        "applied_round": None,
    }
    with refused("NO_TURN"):
        t.record("EffectMaintained", effect_id=eid, action="swift")
    out = t.record("EffectEndedByChoice", effect_id=eid).outcome
    assert out == {"effect_id": eid, "target": "gob", "ended_by": "mira"} and t.v("gob")["effects"] == []
    timed = put(
        t, target="gob", source="mira", components=[{"condition": "dazed"}], duration={"kind": "save_ends"}
    )
    with refused("NOT_MAINTAINED"):
        t.record("EffectEndedByChoice", effect_id=timed)


def test_or_17_durations_name_their_anchor(t: OrcusTable) -> None:
    for kind, anchor in (
        ("end_of_target_next", "gob"),
        ("end_of_user_next", "mira"),
        ("start_of_target_next", "gob"),
        ("start_of_user_next", "mira"),
    ):
        put(t, target="gob", source="mira", components=[{"condition": "dazed"}], duration={"kind": kind})
        assert t.v("gob")["effects"][-1]["duration"]["anchor"] == anchor, kind
    with pytest.raises(InvalidInput, match="name the duration's anchor"):
        t.effect("gob", "a trap", components=[{"condition": "dazed"}], duration={"kind": "end_of_user_next"})
    t.effect(
        "gob",
        "a trap",
        components=[{"condition": "dazed"}],
        duration={"kind": "end_of_user_next", "anchor": "mira"},
    )


@pytest.mark.parametrize(
    "spec",
    [
        {"components": []},
        {"components": [{"condition": "on fire"}]},
        {"components": [{"persistent": {"type": "plasma", "amount": 5}}]},
        {"components": [{"condition": "dazed"}], "duration": {"kind": "until_dawn"}},
        {
            "components": [{"condition": "dazed"}],
            "duration": {"kind": "end_of_target_next"},
            "first_failed_save": {"components": [{"condition": "blinded"}], "instead": True},
        },
        {"components": [{"condition": "dazed"}], "duration": {"kind": "maintain", "action": "minor"}},
        {"components": [{"condition": "dazed"}], "damage": {"amount": 3}},
    ],
)
def test_bad_effects_are_refused_and_store_nothing(t: OrcusTable, spec: dict[str, Any]) -> None:
    before = t.store_max()
    with pytest.raises(InvalidInput):
        t.effect("mira", "ogre", **spec)
    assert t.store_max() == before


def test_an_effect_ended_by_the_gm_has_no_aftereffect(t: OrcusTable) -> None:
    eid = put(
        t,
        name="grappled",
        components=[{"condition": "grappled"}],
        duration={"kind": "save_ends"},
        aftereffect={"components": [{"condition": "prone"}]},
    )
    out = t.record("EffectEnded", effect_id=eid, reason="the ogre lets go").outcome
    assert out["reason"] == "the ogre lets go" and t.v("mira")["effects"] == []
