"""Laws of the Orcus fold on generated campaigns (hypothesis).

A campaign is a hero or two and a monster with small HP, then a random sequence of attacks
(natural 1s and 20s included), damage of several types, healing, temporary HP, surges, Rally,
death saves, stabilising, effects and saves (with aftereffects and First Failed Save riders),
powers and their recharge, XP and rests. Refused commands are dropped (and store nothing).
Laws:

* at every step: the life state follows the A4.9 placeholders from the HP (a monster alive has
  HP above 0; a hero alive is above minus its bloodied value, active exactly when above 0);
  HP never exceed the maximum; temporary HP, surges, action points and death save failures stay
  in range; a hero's level is the one its XP earns (A4.2); the HP track's lines are ordered;
* folding every stored fact afresh gives the state the commands built (one fold);
* revoking any fact and restoring it gives back the same state.
"""

from __future__ import annotations

import os
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from api.service.application import ChronicleApplication
from domain.core import xp
from domain.errors import DomainError
from domain.rulesets import LIFE_STATES
from tests.unit.conftest import memory_application
from tests.unit.orcus.helpers import RULESET, OrcusTable, d20, roll

SETTINGS = settings(
    max_examples=int(os.environ.get("CHRONICLE_PROPERTY_EXAMPLES", "60")),
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
WHO = ["ana", "bo", "orc"]
SPECS = [
    {
        "name": "burn",
        "components": [{"persistent": {"type": "fire", "amount": 3}}],
        "duration": {"kind": "save_ends"},
    },
    {
        "name": "rattled",
        "components": [{"condition": "rattled"}],
        "duration": {"kind": "save_ends"},
        "first_failed_save": {"components": [{"condition": "blinded"}], "instead": True},
    },
    {
        "name": "blinded",
        "components": [{"condition": "blinded"}],
        "duration": {"kind": "save_ends"},
        "aftereffect": {"name": "echo", "damage": {"amount": 2, "types": ["psychic"]}},
    },
    {"name": "prone", "components": [{"condition": "prone"}]},
]
POWER = {"name": "Smash", "kind": "melee", "defense": "ac", "attack_bonus": 4, "damage": "1d8+2"}

sheets = st.fixed_dictionaries(
    {
        "hp": st.lists(st.integers(4, 24), min_size=3, max_size=3),
        "surges": st.integers(0, 2),
        "xp": st.integers(0, 6000),
    }
)
who = st.integers(0, 2)
commands = st.lists(
    st.one_of(
        st.tuples(st.just("attack"), who, who, st.integers(1, 20), st.integers(1, 8)),
        st.tuples(
            st.just("damage"), who, st.integers(0, 20), st.sampled_from([[], ["fire"], ["fire", "cold"]])
        ),
        st.tuples(st.just("damage"), who, st.integers(0, 6), st.just([])),
        st.tuples(st.just("damage"), who, st.integers(0, 6), st.just([])),
        st.tuples(st.just("drop"), st.integers(0, 1), st.integers(0, 3)),
        st.tuples(st.just("heal"), who, st.integers(0, 12), st.booleans()),
        st.tuples(st.just("temp"), who, st.integers(0, 8)),
        st.tuples(st.just("surge"), who),
        st.tuples(st.just("rally"), who),
        st.tuples(st.just("death_save"), who, st.integers(1, 20)),
        st.tuples(st.just("stabilize"), who, st.integers(1, 20)),
        st.tuples(st.just("effect"), who, st.integers(0, len(SPECS) - 1)),
        st.tuples(st.just("save"), who, st.integers(0, 5), st.integers(1, 20)),
        st.tuples(st.just("power"), st.integers(0, 1), st.sampled_from(["lance", "stand"])),
        st.tuples(st.just("power"), st.just(2), st.just("rage")),
        st.tuples(st.just("recharge_if"), st.just(2)),
        st.tuples(st.just("xp"), who, st.integers(0, 3000)),
        st.tuples(st.just("rest"), st.sampled_from(["ShortRestTaken", "LongRestTaken"])),
    ),
    min_size=4,
    max_size=30,
)


def setup(sheet: dict[str, Any]) -> OrcusTable:
    t = OrcusTable(memory_application())
    powers = [{"id": "lance", "frequency": "encounter"}, {"id": "stand", "frequency": "daily"}]
    t.hero(
        "ana",
        max_hp=sheet["hp"][0],
        surges_per_day=sheet["surges"],
        xp=sheet["xp"],
        powers=powers,
        resist={"fire": 2},
    )
    t.hero("bo", max_hp=sheet["hp"][1], surges_per_day=1, powers=powers)
    t.monster(
        "orc",
        "elite",
        level=2,
        max_hp=sheet["hp"][2],
        action_points=1,
        powers=[{"id": "rage", "frequency": "recharge_if", "condition": "hurt"}],
    )
    return t


def send(t: OrcusTable, cmd: tuple[Any, ...]) -> Any:
    kind = cmd[0]
    if kind == "attack":
        _, a, b, face, dmg = cmd
        return t.attack(WHO[a], dict(POWER), [{"target": WHO[b], "face": face}], damage=[dmg])
    if kind == "damage":
        return t.damage(WHO[cmd[1]], cmd[2], cmd[3])
    if kind == "drop":  # just enough to take a hero to 0 HP or a little below (dying)
        v = t.v(WHO[cmd[1]])
        return t.damage(WHO[cmd[1]], max(0, v["hp"]) + v["temp_hp"] + cmd[2])
    if kind == "heal":
        return t.record(
            "HealingApplied", target=WHO[cmd[1]], flat=cmd[2], requires_surge=cmd[3], surge_multiplier=1
        )
    if kind == "temp":
        return t.record("TemporaryHitPointsGranted", target=WHO[cmd[1]], amount=cmd[2])
    if kind == "surge":
        return t.record("HealingSurgeSpent", creature=WHO[cmd[1]])
    if kind == "rally":
        return t.record("RallyUsed", creature=WHO[cmd[1]])
    if kind in ("death_save", "stabilize"):  # aimed at a dying hero when there is one
        dying = [w for w in WHO if t.v(w)["life"] == "dying"] or WHO
        who = dying[cmd[1] % len(dying)]
        if kind == "death_save":
            return t.record("DeathSavingThrowRolled", creature=who, roll=d20(cmd[2]))
        return t.record("Stabilized", creature=who, roll=roll("1d20", cmd[2]))
    if kind == "effect":
        return t.effect(WHO[cmd[1]], "orc", **SPECS[cmd[2]])
    if kind == "save":  # against one of the effects in play, by its carrier
        effects = [(w, e["effect_id"]) for w in WHO for e in t.v(w)["effects"]] or [(WHO[cmd[1]], "e0")]
        carrier, eid = effects[cmd[2] % len(effects)]
        return t.save(carrier, eid, cmd[3])
    if kind == "power":
        return t.record("PowerUsed", creature=WHO[cmd[1]], power_id=cmd[2])
    if kind == "recharge_if":
        return t.record("RechargeConditionMet", creature=WHO[cmd[1]], power_id="rage")
    if kind == "xp":
        return t.record("ExperienceAwarded", creatures=[WHO[cmd[1]]], amount=cmd[2])
    return t.record(cmd[1])


def play(t: OrcusTable, cmds: list[tuple[Any, ...]], check: Any = None) -> list[int]:
    stored = []
    for cmd in cmds:
        before = t.store_max()
        try:
            rec = send(t, cmd)
        except DomainError:
            assert t.store_max() == before  # a refused command stores nothing
            continue
        stored.append(rec.position)
        if check:
            check(t)
    return stored


def invariants(t: OrcusTable) -> None:
    state = t.ledger.state
    for cid in state.creatures:
        v = RULESET.creature_view(state, cid)
        assert v["life"] in LIFE_STATES
        assert v["hp"] <= v["max_hp"] and v["temp_hp"] >= 0
        assert 0 <= v["surges"] <= v["surges_per_day"] and v["action_points"] >= 0
        assert 0 <= v["death_save_failures"] <= 3
        if v["life"] != "dead":
            if v["rank"] == "hero":
                assert v["hp"] > v["dies_at"]
                assert (v["life"] == "active") == (v["hp"] > 0), v
            else:
                assert v["hp"] > 0 and v["life"] == "active"
        if v["rank"] == "hero":
            assert v["level"] == v["xp_level"] == xp.level_for_xp(v["xp"], xp.ORCUS_XP)
        hp_track, ap_track = RULESET.tracks(v)
        lines = dict(hp_track.thresholds)
        assert lines.get("dead", -1) < lines["dying"] == 0 <= lines["bloodied"]
        assert hp_track.value == v["hp"] and ap_track.value == v["action_points"] >= 0
        ids = [e["effect_id"] for e in v["effects"]]
        assert len(ids) == len(set(ids))


def fresh(t: OrcusTable) -> OrcusTable:
    app = ChronicleApplication.__new__(ChronicleApplication)
    app.__dict__.update(t.app.__dict__)
    app._campaigns = {}  # same store, nothing cached: loads and folds every stored fact
    other = OrcusTable.__new__(OrcusTable)
    other.app, other.cid = app, t.cid
    return other


@SETTINGS
@given(sheets, commands)
def test_the_placeholder_pack_holds_at_every_step_and_one_fold_gives_the_same_state(
    sheet: Any, cmds: Any
) -> None:
    t = setup(sheet)
    play(t, cmds, check=invariants)
    assert fresh(t).app.summary(t.cid) == t.app.summary(t.cid)


@SETTINGS
@given(sheets, commands, st.integers(0, 1000))
def test_revoking_a_fact_then_restoring_it_is_the_identity(sheet: Any, cmds: Any, pick: int) -> None:
    t = setup(sheet)
    stored = play(t, cmds)
    if not stored:
        return
    before = t.app.summary(t.cid)
    revocation = t.revoke(stored[pick % len(stored)]).position
    invariants(t)
    t.restore(revocation)
    after = t.app.summary(t.cid)
    assert after["creatures"] == before["creatures"] and after["orphans"] == before["orphans"]
