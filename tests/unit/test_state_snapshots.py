"""Persisted states: ``dump_state`` / ``load_state`` round-trip exactly, and a ledger restored
from a snapshot reads exactly like one that folded everything (issue 21).

The round trip goes through JSON text, as the snapshot table stores it; "exactly" means every
slot of the state, creatures and encounters included, with the same types and the same
dictionary order -- and the fold continued from the loaded state gives the same outcomes as
from the original.
"""

from __future__ import annotations

import copy
import json
import os
import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.generator import CampaignGenerator
from domain.checkpoints import rebuild
from domain.core.state import slot_names
from domain.ledger import CORRECTED, RECORDED, Entry, Ledger, SnapshotMismatch
from domain.rulesets import get_ruleset
from domain.rulesets import summary as whole_state

SETTINGS = settings(
    max_examples=max(5, int(os.environ.get("CHRONICLE_PROPERTY_EXAMPLES", "60")) // 4),
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
RULES = get_ruleset("stellar-winds")


def same(a: Any, b: Any, where: str = "state") -> None:
    """Assert ``a`` and ``b`` are the same value: types, dictionary order and every slot."""
    assert type(a) is type(b), f"{where}: {type(a).__name__} != {type(b).__name__}"
    if isinstance(a, dict):
        assert list(a) == list(b), f"{where}: keys {list(a)} != {list(b)}"
        for k in a:
            same(a[k], b[k], f"{where}[{k!r}]")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), f"{where}: length {len(a)} != {len(b)}"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            same(x, y, f"{where}[{i}]")
    elif isinstance(a, (str, int, float, bool, set, frozenset)) or a is None:
        assert a == b, f"{where}: {a!r} != {b!r}"
    else:
        derived = getattr(type(a), "DERIVED", ())  # rebuilt on load, never persisted (TableState)
        for name in slot_names(type(a)):
            if name == "shared" or name in derived:
                continue
            assert hasattr(a, name) == hasattr(b, name), f"{where}.{name}: set on one side only"
            if hasattr(a, name):
                same(getattr(a, name), getattr(b, name), f"{where}.{name}")


def through_json(rules: Any, state: Any) -> Any:
    return rules.load_state(json.loads(json.dumps(rules.dump_state(state))))


def generated(size: int, seed: int) -> Ledger:
    gen = CampaignGenerator(size, seed=seed, corrections=0.05)
    for _ in gen.facts():
        pass
    return gen.ledger


def outcomes_from(ledger: Ledger, state: Any, start: int) -> list[Any]:
    """Fold the facts from index ``start`` on into ``state``, collecting each outcome."""
    got: list[Any] = []
    orphans = ledger.state_at(ledger.first_seq + start - 1)[1].fork()
    for e, outcome, orphan in ledger._steps(state, orphans, start, len(ledger.entries), ledger.resolution):
        got.append((e.seq, outcome, orphan))
    return got


@SETTINGS
@given(st.integers(150, 700), st.integers(0, 10**6), st.data())
def test_dump_then_load_gives_the_same_state_and_the_fold_continues_identically(
    size: int, seed: int, data: Any
) -> None:
    """The Stellar Winds state (creatures, effects, encounters mid-turn, the clock) survives a
    JSON round trip exactly, at any position of a played campaign."""
    ledger = generated(size, seed)
    for _ in range(3):
        position = data.draw(st.integers(ledger.first_seq - 1, ledger.last_seq), label="position")
        state, _ = ledger.state_at(position)
        loaded = through_json(RULES, state)
        same(state, loaded)
        assert RULES.dump_state(loaded) == RULES.dump_state(state)
        start = position - ledger.first_seq + 1
        assert outcomes_from(ledger, loaded, start) == outcomes_from(ledger, state.clone(), start)
        assert whole_state(RULES, loaded) == whole_state(RULES, ledger.state)


def test_a_partial_state_dumps_and_loads_just_its_creatures() -> None:
    """Checkpoint deltas are dumped as states holding only the creatures that changed."""
    ledger = generated(300, 4)
    state = ledger.state.clone()
    keep = list(state.creatures)[:2]
    state.creatures = {cid: state.creatures[cid] for cid in keep}
    state.encounters = {}
    loaded = through_json(RULES, state)
    assert list(loaded.creatures) == keep
    same(state, loaded)


def test_a_tuple_in_the_state_stays_a_tuple() -> None:
    """Turn logs hold tuples (actions taken, saves rolled): JSON has no tuples, the dump tags them."""
    state = RULES.initial_state(dict(RULES.flag_defaults))
    state.flags["odd"] = {"t": (1, "a"), "s": {3, 1}, 4: ["x", (2,)], "__tuple__": 1}
    same(state, through_json(RULES, state))


# --------------------------------------------------------------------------- restore
class Store:
    def __init__(self, ledger: Ledger) -> None:
        self.rows = {
            e.seq: json.dumps([e.type, e.version, e.payload, e.meta, e.timestamp]) for e in ledger.entries
        }
        self.reads = 0

    def load(self, first: int, last: int) -> list[Entry]:
        self.reads += 1
        return [Entry(s, *json.loads(self.rows[s])) for s in range(first, last + 1)]


def prefix(ledger: Ledger, n: int, every: int = 256) -> Ledger:
    """A ledger that folded the first ``n`` facts of ``ledger``, one by one, as a table would."""
    out = Ledger(RULES, {}, first_seq=ledger.first_seq, checkpoint_every=every, full_every=4)
    for e in ledger.entries[:n]:
        out.append(Entry(e.seq, e.type, e.version, copy.deepcopy(e.payload), dict(e.meta), e.timestamp))
        if e.type in ("FactRevoked", "FactAmended", "RulingResolved", "FactRestored"):
            out.state  # noqa: B018 -- catch up as the table did
    return out


def restored(ledger: Ledger, n: int, store: Store, window: int = 16) -> Ledger:
    snap = json.loads(json.dumps(prefix(ledger, n).capture().to_json()))
    out = Ledger.restore(RULES, {}, snap, store.load, first_seq=ledger.first_seq, window=window)
    for e in ledger.entries[n:]:
        out.append(Entry(e.seq, e.type, e.version, copy.deepcopy(e.payload), dict(e.meta), e.timestamp))
    return out


def readings(ledger: Ledger, positions: list[int]) -> dict[str, Any]:
    full: dict[int, Any] = {}
    ledger.replay(lambda e, o, r: full.__setitem__(e.seq, (o, r)))
    return {
        "now": whole_state(RULES, ledger.state),
        "orphans": dict(ledger.orphans),
        "replay": full,
        "as_of": [
            (p, v, whole_state(RULES, ledger.state_at(p, v)[0]), dict(ledger.state_at(p, v)[1]))
            for p in positions
            for v in (CORRECTED, RECORDED)
        ],
        "walk": [(e.seq, o, r) for e, o, r, _ in ledger.walk(positions[0], positions[-1], RECORDED)],
    }


@pytest.mark.parametrize("seed", [3, 8])
def test_a_ledger_restored_from_a_snapshot_reads_like_a_full_fold(seed: int) -> None:
    """Restored at a random position, then fed the facts after it -- including corrections
    that reach back before the snapshot (the ledger refolds from the start, reading the old
    facts back through the loader): the same state, orphans, outcomes and as-of answers."""
    ledger = generated(900, seed)
    rng = random.Random(seed)
    store = Store(ledger)
    positions = sorted(rng.sample(range(ledger.first_seq, ledger.last_seq + 1), 4))
    expected = readings(ledger, positions)
    for n in (rng.randint(1, len(ledger.entries) - 1), len(ledger.entries) // 3):
        got = restored(ledger, n, store)
        assert readings(got, positions) == expected, n
    assert store.reads > 0


def test_a_correction_after_the_snapshot_reaching_back_before_it_refolds_from_the_start() -> None:
    ledger = generated(600, 5)
    store = Store(ledger)
    n = len(ledger.entries)
    got = restored(ledger, n, store)
    target = next(e.seq for e in ledger.entries if e.type == "AttackMade")
    for lg in (ledger, got):
        lg.prepare("FactRevoked", {"target": target, "reason": "never", "cascade": "fact"}, {})
        lg.append(
            Entry(lg.next_seq, "FactRevoked", 1, {"target": target, "reason": "never", "cascade": "fact"}, {})
        )
    assert whole_state(RULES, got.state) == whole_state(RULES, ledger.state)
    assert dict(got.orphans) == dict(ledger.orphans)
    assert got.refolded_from <= target


def test_a_snapshot_under_other_rules_flags_or_corrections_is_refused() -> None:
    ledger = generated(300, 6)
    store = Store(ledger)
    good = json.loads(json.dumps(ledger.capture().to_json()))
    Ledger.restore(RULES, {}, good, store.load, first_seq=ledger.first_seq)  # fits
    cases = {
        "ruleset version": {**good, "ruleset_version": "0"},
        "fingerprint": {**good, "fingerprint": "0" * 64},
        "format": {**good, "format": 99},
        "shape": {**good, "state": {"table": {}}},
        "count": {**good, "count": good["count"] + 1},
    }
    for name, data in cases.items():
        with pytest.raises(SnapshotMismatch):
            Ledger.restore(RULES, {}, data, store.load, first_seq=ledger.first_seq)
        assert name
    with pytest.raises(SnapshotMismatch, match="fingerprint"):  # the campaign's starting flags differ
        Ledger.restore(RULES, {"sw.first_aid_stabilize_dc": 12}, good, store.load, first_seq=ledger.first_seq)
    corrupt = copy.deepcopy(good)
    k = next(
        i for i, e in enumerate(corrupt["pinned"]) if e[1] in ("FactRevoked", "FactAmended", "RulingRecorded")
    )
    corrupt["pinned"][k][3] = {**corrupt["pinned"][k][3], "reason": "changed"}  # not what was folded
    with pytest.raises(SnapshotMismatch):
        Ledger.restore(RULES, {}, corrupt, store.load, first_seq=ledger.first_seq)


# ------------------------------------------------------------------ persisted checkpoints
class PointStore:
    """Checkpoint rows as the snapshot table keeps them (JSON text), by series and position."""

    def __init__(self) -> None:
        self.rows: dict[str, dict[int, tuple[int, bool, str]]] = {CORRECTED: {}, RECORDED: {}}
        self.loads = 0

    def write(self, capture: Any, kind: str) -> None:
        have = set(self.rows[kind])
        for seq, through, full, data in capture.point_rows(kind, have):
            self.rows[kind][seq] = (through, full, json.dumps(data))

    def meta(self, kind: str) -> list[tuple[int, int, bool]]:
        return [(seq, through, full) for seq, (through, full, _) in self.rows[kind].items()]

    def loader(self, kind: str, every: int) -> Any:
        def load(position: int) -> Any:
            self.loads += 1
            rows = self.rows[kind]
            base = max(s for s, (_, full, _) in rows.items() if full and s <= position)
            chain = [rows[s] for s in range(base, position + 1, every)]
            return rebuild(RULES, [(full, json.loads(data)) for _, full, data in chain])

        return load


def test_a_ledger_restored_with_its_persisted_checkpoints_reads_like_the_lived_one() -> None:
    """The checkpoints of both series (corrected, and what the table believed) are persisted
    as full states and deltas; a restored ledger that keeps none of them in memory answers
    as-of queries in both axes, walks and an early correction exactly like the ledger that
    lived through the campaign."""
    every = 16
    source = generated(700, 12)
    lived = prefix(source, len(source.entries), every)
    store = PointStore()
    capture = lived.capture()
    for kind in (CORRECTED, RECORDED):
        store.write(capture, kind)
    assert store.rows[RECORDED] and store.rows[CORRECTED]
    assert any(not full for _, full, _ in store.rows[RECORDED].values()), "deltas are persisted"
    snap = json.loads(json.dumps(capture.to_json()))
    entries = Store(source)
    got = Ledger.restore(
        RULES,
        {},
        snap,
        entries.load,
        first_seq=source.first_seq,
        window=8,
        checkpoint_every=every,
        full_every=4,
    )
    for kind in (CORRECTED, RECORDED):
        assert got.adopt_stored(kind, store.meta(kind), store.loader(kind, every)) == []
        got.mark_stored(kind, frozenset(store.rows[kind]))
    rng = random.Random(12)
    positions = sorted(rng.sample(range(source.first_seq, source.last_seq + 1), 6))
    assert readings(got, positions) == readings(lived, positions)
    assert store.loads > 0, "the restored ledger rebuilt persisted checkpoints"
    target = next(e.seq for e in source.entries if e.type == "AttackMade")
    for lg in (lived, got):
        revoke = {"target": target, "reason": "never", "cascade": "fact"}
        lg.prepare("FactRevoked", dict(revoke), {})
        lg.append(Entry(lg.next_seq, "FactRevoked", 1, dict(revoke), {}))
    assert readings(got, positions) == readings(lived, positions)


def test_persisted_checkpoints_a_later_correction_reads_differently_are_refused() -> None:
    every = 16
    source = generated(500, 13)
    lived = prefix(source, len(source.entries), every)
    store = PointStore()
    store.write(lived.capture(), CORRECTED)
    target = next(e.seq for e in source.entries if e.type == "AttackMade")
    revoke = {"target": target, "reason": "never", "cascade": "fact"}
    lived.prepare("FactRevoked", dict(revoke), {})
    lived.append(Entry(lived.next_seq, "FactRevoked", 1, dict(revoke), {"recorded_at": "x"}))
    entries = Store(lived)
    snap = json.loads(json.dumps(lived.capture().to_json()))  # the fold after the revocation
    got = Ledger.restore(
        RULES,
        {},
        snap,
        entries.load,
        first_seq=source.first_seq,
        window=8,
        checkpoint_every=every,
        full_every=4,
    )
    bad = got.adopt_stored(CORRECTED, store.meta(CORRECTED), store.loader(CORRECTED, every))
    assert bad and min(bad) >= target and all(s >= target for s in bad)
    assert all(s in bad for s in store.rows[CORRECTED] if s >= target)
    positions = [target - 1, target, lived.last_seq]
    assert readings(got, positions) == readings(lived, positions)


RESTORED_EVERY = 16


def restored_from_a_third(size: int, seed: int, **marking: int) -> tuple[Ledger, Ledger, PointStore, int]:
    """A generated campaign (the lived ledger), and a ledger restored from the capture of its
    first third, checkpoints every 16 facts persisted in ``PointStore`` and kept in storage only
    (``mark_stored(**marking)``), a window of 8 facts: (lived, restored, store, facts restored)."""
    every = RESTORED_EVERY
    source = generated(size, seed)
    n = len(source.entries) // 3
    store = PointStore()
    capture = prefix(source, n, every).capture()
    for kind in (CORRECTED, RECORDED):
        store.write(capture, kind)
    got = Ledger.restore(
        RULES,
        {},
        json.loads(json.dumps(capture.to_json())),
        Store(source).load,
        first_seq=source.first_seq,
        window=8,
        checkpoint_every=every,
        full_every=4,
    )
    for kind in (CORRECTED, RECORDED):
        assert got.adopt_stored(kind, store.meta(kind), store.loader(kind, every)) == []
        got.mark_stored(kind, frozenset(store.rows[kind]), **marking)
    return source, got, store, n


@pytest.mark.parametrize("seed", [1, 2])
def test_a_dry_run_fold_over_persisted_checkpoints_reads_like_the_lived_campaign(seed: int) -> None:
    """An import's dry run (``append_checked``: a correction's refold is compared with the
    present fold checkpoint by checkpoint, ``_fold_converging``) on a ledger whose checkpoints
    are persisted as it goes -- each capture's rows written, the rows a refold replaced
    deleted, the stored ones kept in storage only: the same state, orphans, outcomes and as-of
    answers as the ledger that lived through the campaign. (The present, read during a
    refold, once cached its stored checkpoints under its reading where the refold's copy would
    find them after it was persisted: seed 1 then read another state, seed 2 refused a fact.)"""
    source, got, store, n = restored_from_a_third(900, seed, keep_recent=0)
    for i, e in enumerate(source.entries[n:]):
        got.append_checked(
            Entry(e.seq, e.type, e.version, copy.deepcopy(e.payload), dict(e.meta), e.timestamp)
        )
        if i % 37 == 0:  # persist, as the owner does now and then
            capture = got.capture()
            for seq in [s for s in store.rows[CORRECTED] if s >= capture.refolded_from]:
                del store.rows[CORRECTED][seq]
            for kind in (CORRECTED, RECORDED):
                store.write(capture, kind)
                got.mark_stored(kind, frozenset(store.rows[kind]), keep_recent=0)
    assert got.converged, "a correction's refold rejoined the present fold"
    assert store.loads, "persisted checkpoints were rebuilt"
    positions = sorted(random.Random(seed).sample(range(source.first_seq, source.last_seq + 1), 12))
    assert readings(got, positions) == readings(source, positions)


@pytest.mark.parametrize("seed", [1, 3])
def test_checkpoints_refolded_while_a_capture_was_written_are_not_marked_stored(seed: int) -> None:
    """The snapshot writer captures under the campaign's lock, writes the capture's rows
    outside it, then marks them stored. A correction that refolds in between replaces the
    checkpoints at those positions with its own: marking them stored would drop their states
    and rebuild them later from the rows of the old reading. Answers stay the lived ledger's."""
    source, got, store, n = restored_from_a_third(700, seed)
    for e in source.entries[n:]:
        got.append(Entry(e.seq, e.type, e.version, copy.deepcopy(e.payload), dict(e.meta), e.timestamp))
    lived = prefix(source, len(source.entries), RESTORED_EVERY)
    capture = got.capture()  # under the lock; then a request's correction, reaching back
    target = next(e.seq for e in source.entries[n:] if e.type == "AttackMade")
    revoke = {"target": target, "reason": "never", "cascade": "fact"}
    for lg in (lived, got):
        lg.prepare("FactRevoked", dict(revoke), {})
        lg.append(Entry(lg.next_seq, "FactRevoked", 1, dict(revoke), {}))
    for kind in (CORRECTED, RECORDED):  # the writer, outside the lock
        store.write(capture, kind)
        got.mark_stored(kind, frozenset(store.rows[kind]))
    positions = sorted(random.Random(seed).sample(range(target, source.last_seq + 1), 8))
    assert readings(got, positions) == readings(lived, positions)


# ------------------------------------------------------------------------ every ruleset
def test_every_installed_ruleset_round_trips_a_played_state(toy_ruleset: Any) -> None:
    """dump_state / load_state is part of the Ruleset protocol: each installed ruleset's state
    (played a little, so it holds creatures and its own slots) survives JSON exactly."""
    from domain.rulesets import available
    from tests.unit.conftest import memory_application
    from tests.unit.d20.helpers import D20Table
    from tests.unit.d20.test_properties import play as play_d20
    from tests.unit.hero_surge.helpers import HSTable
    from tests.unit.orcus.helpers import OrcusTable

    states = {}
    t = D20Table(memory_application())
    for i in range(3):
        t.creature(f"c{i}", bab=[3], max_hp=8, stamina=12)
    play_d20(
        t, 3, [("damage", 0, 9), ("attack", 1, 2, 19, 18, 5), ("ability", 2, "stamina", 3), ("heal", 0, 2)]
    )
    states["d20"] = t.ledger.state
    states["stellar-winds"] = generated(300, 2).state
    app = memory_application()
    cid = app.create_campaign("Toy", ruleset="toy")
    for who in ("a", "b"):
        app.record(cid, "ToyCreatureJoined", {"creature_id": who, "name": who, "kind": "pc", "max_hp": 9})
    app.record(cid, "Brace", {"creature": "a"})
    app.record(cid, "Hit", {"target": "b", "amount": 12})
    states["toy"] = app.ledger(cid).state
    hs = HSTable()
    hs.add("brin")
    hs.add("goblin")
    hs.damage("brin", 7)
    states["hero-surge"] = hs.app.ledger(hs.cid).state
    orcus = OrcusTable(memory_application())
    orcus.hero("mira")
    orcus.ogre()
    orcus.damage("mira", 5)
    states["orcus"] = orcus.ledger.state
    assert set(states) == set(available()), available()
    for rid, state in states.items():
        rules = get_ruleset(rid)
        assert state.creatures, rid
        same(state, through_json(rules, state), rid)
