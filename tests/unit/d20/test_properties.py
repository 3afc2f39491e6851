"""Laws of the d20 fold on generated campaigns (hypothesis).

A campaign is 2-3 creatures with small HP and any Stamina, then a random sequence of damage,
healing, stabilisation rolls, Heal checks, ability damage, rests, strenuous actions and
attacks (with their confirmation and damage). Refused commands are dropped (and store
nothing). Laws:

* the life bands follow DH-10 from HP, S and B at every step, death latches (DH-13,
  ruling 26), and the HP track's thresholds are ordered dead < dying <= disabled = 0 while
  Stamina is above 0;
* folding every stored fact afresh gives the state the commands built (one fold);
* revoking any fact and restoring it gives back the same state.
"""

from __future__ import annotations

import os
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from api.service.application import ChronicleApplication
from domain.errors import DomainError
from domain.rulesets import LIFE_STATES
from tests.unit.conftest import memory_application
from tests.unit.d20.helpers import RULESET, D20Table, d20, pct, roll

SETTINGS = settings(
    max_examples=int(os.environ.get("CHRONICLE_PROPERTY_EXAMPLES", "60")),
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)

sheets = st.lists(
    st.fixed_dictionaries({"max_hp": st.integers(3, 20), "stamina": st.integers(3, 18)}),
    min_size=2,
    max_size=3,
)


def commands(n: int) -> st.SearchStrategy[list[tuple[Any, ...]]]:
    who = st.integers(0, n - 1)
    return st.lists(
        st.one_of(
            st.tuples(st.just("damage"), who, st.integers(1, 25)),
            st.tuples(st.just("heal"), who, st.integers(1, 10)),
            st.tuples(st.just("stabilize"), who, st.integers(1, 100)),
            st.tuples(st.just("heal_check"), who, who, st.integers(1, 20)),
            st.tuples(st.just("ability"), who, st.sampled_from(["stamina", "agility"]), st.integers(1, 6)),
            st.tuples(st.just("rest"), who),
            st.tuples(st.just("strenuous"), who),
            st.tuples(st.just("attack"), who, who, st.integers(1, 20), st.integers(1, 20), st.integers(1, 8)),
        ),
        max_size=30,
    )


def play(t: D20Table, n: int, cmds: list[tuple[Any, ...]], check: Any = None) -> list[int]:
    """Send each command; return the positions stored. ``check`` runs after each accepted one."""
    ids = [f"c{i}" for i in range(n)]
    stored = []
    for cmd in cmds:
        kind = cmd[0]
        before = t.store_max()
        try:
            if kind == "damage":
                rec = t.damage(ids[cmd[1]], cmd[2])
            elif kind == "heal":
                rec = t.heal(ids[cmd[1]], cmd[2])
            elif kind == "stabilize":
                rec = t.stabilize(ids[cmd[1]], cmd[2])
            elif kind == "heal_check":
                rec = t.heal_check(ids[cmd[1]], ids[cmd[2]], cmd[3])
            elif kind == "ability":
                rec = t.ability_damage(ids[cmd[1]], cmd[2], cmd[3])
            elif kind == "rest":
                rec = t.record(
                    "AbilityRecoveredByRest", creatures=[ids[cmd[1]]], kind="sleep", hours=4, clean=True
                )
            elif kind == "strenuous":
                rec = t.record("ActionTaken", creature=ids[cmd[1]], action="standard", strenuous=True)
            else:
                _, a, b, face, confirm, dmg = cmd
                rec = t.attack(ids[a], ids[b], face)
                if rec.outcome.get("hit"):
                    pos = rec.position
                    stored.append(pos)
                    crit = rec.outcome["threat"] and t.confirm(pos, confirm).outcome["critical"]
                    if rec.outcome["threat"]:
                        stored.append(t.position)
                    rec = t.record(
                        "DamageRolled",
                        attack=pos,
                        weapon=roll("1d8", dmg),
                        crit_weapon=roll("1d8", 9 - dmg) if crit else None,
                    )
        except DomainError:
            assert t.store_max() == before or kind == "attack"  # a refused command stores nothing
            continue
        stored.append(rec.position)
        if check:
            check(t)
    return stored


def invariants(t: D20Table) -> None:
    state = t.ledger.state
    for cid in state.creatures:
        v = RULESET.creature_view(state, cid)
        s, b, hp = v["S"], v["B"], v["hp"]
        assert s == max(
            0,
            v["abilities"]["stamina"]
            - v["ability_damage"].get("stamina", 0)
            - v["ability_drain"].get("stamina", 0),
        )
        assert b == max(0, (s - 10) // 2)
        if v["dead_by"] is None:
            assert s > 0 and hp >= -s, v  # otherwise it would have died (DH-13)
            expected = "fine" if hp >= 1 else "disabled" if hp >= -b else "dying"
            assert v["band"] == expected
            assert v["life"] == {"fine": "active", "disabled": "disabled"}.get(
                expected, "stabilized" if v["stable"] else "dying"
            )
        else:
            assert v["band"] == v["life"] == "dead" and v["conscious"] is False
        assert v["life"] in LIFE_STATES
        assert hp <= v["max_hp"]
        hp_track = RULESET.tracks(v)[0]
        lines = dict(hp_track.thresholds)
        if s > 0:
            assert lines["dead"] < lines["dying"] <= lines["disabled"] == 0
        else:  # Stamina 0: no dying range is left (the creature is dead)
            assert lines["dead"] == lines["dying"] == -1
        assert hp_track.value == hp


def fresh(t: D20Table) -> D20Table:
    app = ChronicleApplication.__new__(ChronicleApplication)
    app.__dict__.update(t.app.__dict__)
    app._campaigns = {}  # same store, nothing cached: loads and folds every stored fact
    other = D20Table.__new__(D20Table)
    other.app, other.cid = app, t.cid
    return other


def setup(sheet_list: list[dict[str, int]]) -> D20Table:
    t = D20Table(memory_application())
    for i, sheet in enumerate(sheet_list):
        t.creature(f"c{i}", bab=[3], **sheet)
    return t


@SETTINGS
@given(sheets.flatmap(lambda s: st.tuples(st.just(s), commands(len(s)))))
def test_bands_follow_dh_10_at_every_step_and_one_fold_gives_the_same_state(case: Any) -> None:
    sheet_list, cmds = case
    t = setup(sheet_list)
    play(t, len(sheet_list), cmds, check=invariants)
    assert fresh(t).app.summary(t.cid) == t.app.summary(t.cid)


@SETTINGS
@given(sheets.flatmap(lambda s: st.tuples(st.just(s), commands(len(s)), st.integers(0, 1000))))
def test_revoking_a_fact_then_restoring_it_is_the_identity(case: Any) -> None:
    sheet_list, cmds, pick = case
    t = setup(sheet_list)
    stored = play(t, len(sheet_list), cmds)
    if not stored:
        return
    before = t.app.summary(t.cid)
    target = stored[pick % len(stored)]
    revocation = t.app.revoke(t.cid, target, "property").position
    invariants(t)
    t.app.restore(t.cid, revocation, "property")
    after = t.app.summary(t.cid)
    assert after["creatures"] == before["creatures"] and after["orphans"] == before["orphans"]


def test_the_helpers_roll_what_they_say() -> None:
    assert d20(7)["terms"][0]["faces"] == [7] and pct(100)["terms"][0]["faces"] == [100]
