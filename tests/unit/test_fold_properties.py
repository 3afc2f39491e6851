"""Properties of the one fold, on generated legal campaigns (hypothesis).

A campaign is 2-4 creatures (PCs, sometimes a monster, with small HP so that
dying, death saves and death happen) and a random sequence of ledger commands
(damage, healing, temporary HP, surges, second wind, death saves,
stabilisation, rests, time, XP, action points). Each command is sent to the
application; the ones it refuses are dropped (and must store nothing). The
summary returned right after each accepted command is kept.
"""

from __future__ import annotations

import copy
import os
from dataclasses import dataclass, field
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from api.rulesets.stellar_winds.commands import StellarWindsCommands
from api.service.application import ChronicleApplication
from domain.errors import DomainError
from domain.ledger import Entry, Ledger
from domain.rulesets import get_ruleset
from domain.rulesets import summary as whole_state
from tests.unit.conftest import (
    ABILITIES,
    MONSTER_DEFENSES,
    PC_DEFENSES,
    Table,
    memory_application,
    summary_of,
)

# CHRONICLE_PROPERTY_EXAMPLES=500 for a longer search; no example database is written.
SETTINGS = settings(
    max_examples=int(os.environ.get("CHRONICLE_PROPERTY_EXAMPLES", "60")),
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TYPES = ["fire", "cold"]

# ----------------------------------------------------------------- strategies
creature_sheets = st.lists(
    st.fixed_dictionaries(
        {
            "max_hp": st.integers(4, 24),
            "con": st.integers(3, 12),
            "surges": st.integers(0, 3),
            "resist": st.sampled_from([{}, {"fire": 3}, {"fire": 2, "cold": 4}]),
            "vuln": st.sampled_from([{}, {"cold": 2}]),
        }
    ),
    min_size=2,
    max_size=4,
)


def commands(n: int) -> st.SearchStrategy[tuple[Any, ...]]:
    who = st.integers(0, n - 1)
    damage = st.tuples(
        st.just("damage"),
        who,
        st.integers(0, 25),
        st.booleans(),
        st.sampled_from([[], ["fire"], ["cold"], ["fire", "cold"]]),
        st.booleans(),
    )
    death_save = st.tuples(st.just("death_save"), who, st.integers(1, 20))
    return st.one_of(
        damage,
        damage,
        death_save,
        death_save,
        st.tuples(st.just("heal"), who, st.integers(0, 12), st.booleans(), st.booleans(), st.integers(0, 1)),
        st.tuples(st.just("temp"), who, st.integers(0, 10)),
        st.tuples(st.just("surge"), who),
        st.tuples(st.just("second_wind"), who),
        st.tuples(st.just("death_save"), who, st.integers(1, 20)),
        st.tuples(st.just("stabilize"), who, st.integers(1, 20)),
        st.tuples(st.just("short_rest")),
        st.tuples(st.just("extended_rest")),
        st.tuples(st.just("advance"), st.sampled_from([60, 600, 1440])),
        st.tuples(st.just("xp"), who, st.integers(0, 3000)),
        st.tuples(st.just("ap"), who),
        st.tuples(st.just("milestone"), who),
        st.tuples(st.just("care"), who),
    )


@st.composite
def campaigns(draw: Any, min_commands: int = 5, max_commands: int = 30) -> dict[str, Any]:
    sheets = draw(creature_sheets)
    monster = draw(st.integers(-1, len(sheets) - 1))  # which one (if any) is a monster
    cmds = draw(st.lists(commands(len(sheets)), min_size=min_commands, max_size=max_commands))
    return {"sheets": sheets, "monster": monster, "commands": cmds}


# -------------------------------------------------------------------- running
@dataclass
class Played:
    t: Table
    after: dict[int, dict[str, Any]] = field(default_factory=dict)  # position -> summary right after it
    table_facts: list[int] = field(default_factory=list)  # positions of accepted table facts
    outcomes: dict[int, dict[str, Any]] = field(default_factory=dict)  # position -> what the command said
    refusals: int = 0


def as_fact(cmd: tuple[Any, ...], ids: list[str], now: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    kind = cmd[0]
    c = ids[cmd[1]] if kind not in ("advance", "short_rest", "extended_rest") else None
    dying = sorted(cid for cid, v in now["creatures"].items() if v["life"] == "dying")
    if kind in ("death_save", "stabilize") and dying:  # aim at a dying creature when there is one
        c = dying[cmd[1] % len(dying)]
    roll = ChronicleApplication.roll
    if kind == "damage":
        _, _, amount, wounding, types, nonlethal = cmd
        return "DamageTaken", {
            "target": c,
            "amount": amount,
            "wounding": wounding,
            "types": types,
            "nonlethal": nonlethal,
        }
    if kind == "heal":
        _, _, flat, magical, requires, mult = cmd
        return "HealingApplied", {
            "target": c,
            "flat": flat,
            "magical": magical,
            "requires_surge": requires,
            "surge_multiplier": mult,
        }
    if kind == "temp":
        return "TemporaryHitPointsGranted", {"target": c, "amount": cmd[2]}
    if kind == "surge":
        return "HealingSurgeSpent", {"creature": c}
    if kind == "second_wind":
        return "SecondWindUsed", {"creature": c}
    if kind == "death_save":
        return "DeathSavingThrowRolled", {"creature": c, "roll": roll("1d20", faces=[cmd[2]])}
    if kind == "stabilize":
        return "StabilizationAttempted", {"target": c, "roll": roll("1d20", faces=[cmd[2]])}
    if kind == "short_rest":
        return "ShortRestTaken", {}
    if kind == "extended_rest":
        return "ExtendedRestTaken", {}
    if kind == "advance":
        return "TimeAdvanced", {"minutes": cmd[1]}
    if kind == "xp":
        return "ExperienceAwarded", {"creatures": [c], "amount": cmd[2]}
    if kind == "ap":
        return "ActionPointSpent", {"creature": c}
    if kind == "milestone":
        return "MilestoneReached", {"creatures": [c]}
    if kind == "care":
        return "WoundsRestored", {"target": c, "amount": 1, "method": "long_term_care"}
    raise AssertionError(kind)


def play(campaign: dict[str, Any]) -> Played:
    t = Table(memory_application())
    ids = []
    for i, sheet in enumerate(campaign["sheets"]):
        cid = f"c{i}"
        kind = "monster" if i == campaign["monster"] else "pc"
        StellarWindsCommands(t.app).register_creature(
            t.cid,
            creature_id=cid,
            name=cid,
            kind=kind,
            level=1,
            abilities={**ABILITIES, "con": sheet["con"]},
            max_hp=sheet["max_hp"],
            surges_per_day=sheet["surges"],
            defenses=dict(MONSTER_DEFENSES if kind == "monster" else PC_DEFENSES),
            resist=sheet["resist"],
            vuln=sheet["vuln"],
        )
        ids.append(cid)
    played = Played(t)
    for cmd in campaign["commands"]:
        fact_type, payload = as_fact(cmd, ids, t.summary())
        position, stored = t.position, t.store_max()
        try:
            r = t.app.record(t.cid, fact_type, payload)
        except DomainError:
            played.refusals += 1
            assert (t.position, t.store_max()) == (position, stored), "a refused command stored something"
            continue
        played.after[r.position] = t.summary()
        played.outcomes[r.position] = r.outcome
        played.table_facts.append(r.position)
    return played


def fresh_fold(entries: list[Entry]) -> Any:
    """A new ledger fed the given entries (renumbered from 2), folded all at once."""
    ledger = Ledger(get_ruleset("stellar-winds"), {}, first_seq=2)
    for seq, e in enumerate(entries, start=2):
        ledger.append(Entry(seq, e.type, e.version, copy.deepcopy(e.payload), copy.deepcopy(e.meta)))
    return ledger


def creatures(summary: dict[str, Any]) -> dict[str, Any]:
    return summary["creatures"]


def view(ledger: Ledger, state: Any = None) -> dict[str, Any]:
    return whole_state(ledger.ruleset, ledger.state if state is None else state)


# ------------------------------------------------------------------ properties
@SETTINGS
@given(campaigns())
def test_folding_all_facts_at_once_equals_applying_them_one_by_one(campaign: dict[str, Any]) -> None:
    p = play(campaign)
    live = p.t.ledger
    fresh = fresh_fold(live.entries)
    assert view(fresh) == view(live)
    assert fresh.orphans == live.orphans == {}


@SETTINGS
@given(campaigns())
def test_invariants_hold_after_every_accepted_command(campaign: dict[str, Any]) -> None:
    p = play(campaign)
    for summary in p.after.values():
        for c in creatures(summary).values():
            assert 0 <= c["hp"] <= c["max_hp"], c
            assert c["temp_hp"] >= 0, c
            assert c["wounds"] <= c["max_wounds"], c
            assert c["wounds"] > -10 or c["life"] == "dead", c  # ruling 8: dead at <= -10
            if c["life"] == "active":
                assert c["wounds"] > 0, c
            if c["life"] in ("dying", "stabilized", "knocked_out"):
                assert c["wounds"] <= 0, c
            assert 0 <= c["surges"] <= c["surges_per_day"], c
            assert c["action_points"] >= 0, c
            assert 0 <= c["death_save_failures"] <= 3, c
            if c["kind"] != "pc":
                assert c["life"] in ("active", "dead", "knocked_out"), c  # B-SW-13: no dying monsters
                assert c["xp"] is None


@SETTINGS
@given(campaigns(), st.data())
def test_after_revocations_the_state_equals_a_fold_of_the_surviving_facts(
    campaign: dict[str, Any], data: Any
) -> None:
    p = play(campaign)
    if not p.table_facts:
        return
    chosen = data.draw(st.lists(st.sampled_from(p.table_facts), unique=True, max_size=len(p.table_facts)))
    for position in chosen:
        p.t.app.revoke(p.t.cid, position, "property")
    live = p.t.ledger
    # The surviving facts, each at its own position: a revoked fact and each revocation leave a
    # note in their place, so positions (and the effect ids derived from them) line up.
    surviving = [
        Entry(e.seq, "NoteAdded", 1, {"text": "placeholder"}, {})
        if e.seq in set(chosen) or e.type == "FactRevoked"
        else e
        for e in live.entries
    ]
    fresh = fresh_fold(surviving)
    assert view(fresh) == view(live)
    assert len(fresh.orphans) == len(live.orphans)


@SETTINGS
@given(campaigns(), st.data())
def test_revoke_then_restore_is_the_identity(campaign: dict[str, Any], data: Any) -> None:
    p = play(campaign)
    if not p.table_facts:
        return
    before, orphans = p.t.summary()["creatures"], p.t.orphans()
    target = data.draw(st.sampled_from(p.table_facts))
    cascade = data.draw(st.sampled_from(["fact", "action", "consequences"]))
    rev = p.t.app.revoke(p.t.cid, target, "property", cascade=cascade)
    p.t.app.restore(p.t.cid, rev.position, "property")
    assert p.t.summary()["creatures"] == before
    assert p.t.orphans() == orphans


@SETTINGS
@given(campaigns(), st.data())
def test_amend_then_amend_back_is_the_identity(campaign: dict[str, Any], data: Any) -> None:
    p = play(campaign)
    t = p.t
    amendable = [
        s
        for s in p.table_facts
        if t.ledger.entry(s).type in ("DamageTaken", "HealingApplied", "TemporaryHitPointsGranted")
    ]
    if not amendable:
        return
    target = data.draw(st.sampled_from(amendable))
    original = copy.deepcopy(t.ledger.entry(target).payload)
    key = "flat" if original.get("flat") is not None and "flat" in original else "amount"
    before, orphans = t.summary()["creatures"], t.orphans()
    t.app.amend(t.cid, target, {key: data.draw(st.integers(0, 40))}, "property: wrong number")
    if data.draw(st.booleans()) and "target" in original:
        others = sorted(creatures(t.summary()))
        t.app.amend(t.cid, target, {"target": data.draw(st.sampled_from(others))}, "property: wrong target")
    t.app.amend(t.cid, target, {key: original[key], "target": original["target"]}, "property: back")
    assert t.ledger.effective_payload(target) == original
    assert t.summary()["creatures"] == before
    assert t.orphans() == orphans


@SETTINGS
@given(campaigns(), st.data())
def test_a_what_if_then_committing_the_same_corrections_gives_the_previewed_state(
    campaign: dict[str, Any], data: Any
) -> None:
    p = play(campaign)
    t = p.t
    if not p.table_facts:
        return
    chosen = data.draw(st.lists(st.sampled_from(p.table_facts), unique=True, min_size=1, max_size=4))
    corrections: list[tuple[str, dict[str, Any]]] = []
    for position in chosen:
        e = t.ledger.entry(position)
        if e.type == "DamageTaken" and data.draw(st.booleans()):
            corrections.append(
                (
                    "FactAmended",
                    {
                        "target": position,
                        "patch": {"amount": data.draw(st.integers(0, 30))},
                        "reason": "property",
                    },
                )
            )
        else:
            corrections.append(("FactRevoked", {"target": position, "reason": "property", "cascade": "fact"}))
    stored = t.store_max()
    preview = t.app.what_if(t.cid, corrections)
    assert t.store_max() == stored  # a what-if stores nothing
    for fact_type, payload in corrections:
        t.app.record(t.cid, fact_type, payload)
    assert summary_of(preview["view"])["creatures"] == t.summary()["creatures"]
    assert preview["orphans"] == t.orphans()


@SETTINGS
@given(campaigns(), st.data())
def test_the_as_recorded_state_at_a_position_is_what_the_command_returned(
    campaign: dict[str, Any], data: Any
) -> None:
    p = play(campaign)
    t = p.t
    if p.table_facts:  # later corrections must not change what the table saw at the time
        for position in data.draw(st.lists(st.sampled_from(p.table_facts), unique=True, max_size=3)):
            t.app.revoke(t.cid, position, "property")
    for position, summary in p.after.items():
        assert t.summary(position, "recorded")["creatures"] == summary["creatures"], position


@SETTINGS
@given(campaigns(min_commands=10), st.data())
def test_an_orphaned_fact_leaves_the_state_as_it_was_before_it(campaign: dict[str, Any], data: Any) -> None:
    p = play(campaign)
    t = p.t
    damage = [s for s in p.table_facts if t.ledger.entry(s).type in ("DamageTaken", "ExtendedRestTaken")]
    for position in data.draw(st.lists(st.sampled_from(damage), unique=True, max_size=4)) if damage else []:
        t.app.revoke(t.cid, position, "property")
    for orphan in map(int, t.orphans()):
        assert t.summary(orphan)["creatures"] == t.summary(orphan - 1)["creatures"], orphan


def test_the_generator_reaches_dying_death_saves_and_orphans() -> None:
    """The generator is worth its salt: a hand-picked campaign shows the states it must reach."""
    campaign = {
        "sheets": [
            {"max_hp": 8, "con": 4, "surges": 1, "resist": {}, "vuln": {}},
            {"max_hp": 8, "con": 4, "surges": 0, "resist": {}, "vuln": {}},
        ],
        "monster": 1,
        "commands": [
            ("damage", 0, 12, False, [], False),
            ("death_save", 0, 3),
            ("damage", 1, 20, False, [], False),
            ("death_save", 1, 3),
        ],
    }
    p = play(campaign)
    assert p.refusals == 0  # both death saves are aimed at the dying PC (the monster died outright)
    now = creatures(p.t.summary())
    assert (now["c0"]["life"], now["c0"]["death_save_failures"], now["c1"]["life"]) == ("dying", 2, "dead")
    p.t.app.revoke(p.t.cid, p.table_facts[0], "never hit")
    assert list(p.t.orphans()) == [str(p.table_facts[1]), str(p.table_facts[3])]


@SETTINGS
@given(campaigns(), st.data())
def test_walking_a_range_tells_each_fact_what_a_full_fold_and_the_table_saw(
    campaign: dict[str, Any], data: Any
) -> None:
    """A page of history read from the nearest checkpoint says what a fold from the start says
    (corrected view), and what the command answered when it was recorded (recorded view) --
    also after corrections made later."""
    p = play(campaign)
    t = p.t
    if not p.table_facts:
        return
    for position in data.draw(st.lists(st.sampled_from(p.table_facts), unique=True, max_size=3)):
        t.app.revoke(t.cid, position, "property")
    ledger = t.ledger
    full: dict[int, Any] = {}
    ledger.replay(lambda e, outcome, orphan: full.__setitem__(e.seq, (outcome, orphan)))
    start = data.draw(st.integers(ledger.first_seq, ledger.last_seq))
    stop = data.draw(st.integers(start, ledger.last_seq))
    walked = {e.seq: (outcome, orphan) for e, outcome, orphan, _ in ledger.walk(start, stop)}
    assert walked == {s: full[s] for s in range(start, stop + 1)}
    recorded = {e.seq: outcome for e, outcome, _, _ in ledger.walk(start, stop, "recorded")}
    for position in range(start, stop + 1):
        if position in p.outcomes:
            assert recorded[position] == p.outcomes[position], position
