"""A fold whose older checkpoints are spilled (``Ledger.spill_checkpoints``: an import's dry
run) reads, rebuilds and persists its checkpoints exactly as one that keeps them all in memory,
while only its newest checkpoints stay in memory (issue 21: an import's memory stays flat)."""

from __future__ import annotations

import copy
import json
import os
import pickle
import random
from typing import Any
from unittest import mock

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from api.exports.jsonl import SpillFile
from domain import checkpoints
from domain.checkpoints import Delta, Series, Values
from domain.core import state as core_state
from domain.ledger import CORRECTED, RECORDED, Entry, Ledger
from tests.unit.test_state_snapshots import RULES, generated, prefix, readings, same, whole_state

SETTINGS = settings(
    max_examples=max(5, int(os.environ.get("CHRONICLE_PROPERTY_EXAMPLES", "60")) // 4),
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)


class CountingSpill(SpillFile):
    def __init__(self) -> None:
        super().__init__()
        self.puts = self.gets = 0

    def put(self, value: Any) -> tuple[int, int]:
        self.puts += 1
        return super().put(value)

    def get(self, key: tuple[int, int]) -> Any:
        self.gets += 1
        return super().get(key)


def dry_run(
    source: Ledger, every: int, spill: SpillFile | None = None, keep: int = 1, values: Values | None = None
) -> Ledger:
    """The facts of ``source`` folded one by one as an import's validation folds them."""
    out = Ledger(RULES, {}, first_seq=source.first_seq, checkpoint_every=every, full_every=4)
    if spill is not None:
        out.spill_checkpoints(spill, keep)
    out.share_values(values)
    for e in source.entries:
        out.append_checked(Entry(e.seq, e.type, e.version, copy.deepcopy(e.payload), dict(e.meta)))
    return out


def rows(ledger: Ledger) -> dict[str, list[Any]]:
    capture = ledger.capture()
    return {kind: list(capture.point_rows(kind, set(), full_every=8)) for kind in (CORRECTED, RECORDED)}


def deltas_in_memory(series: Series) -> int:
    return sum(1 for p in series if type(p.delta) is Delta)


@SETTINGS
@given(st.integers(200, 600), st.integers(0, 10**6), st.sampled_from([4, 8]), st.integers(1, 3))
# (holders that came back in another order: a delta kept in memory took the one before's equal
# dictionary, in its order -- equal dictionaries in another order are another value)
@example(533, 398055, 4, 1)
def test_a_spilled_dry_run_persists_and_reads_like_one_that_kept_every_checkpoint(
    size: int, seed: int, every: int, keep: int
) -> None:
    """The law: spilling changes where a checkpoint lies, never what it is. The persisted rows
    of both series (deltas and full states), every checkpoint rebuilt, the present, as-of
    answers in both axes and walks are the same as without a spill."""
    source = generated(size, seed)
    kept = dry_run(source, every)
    spill = CountingSpill()
    try:
        spilled = dry_run(source, every, spill, keep)
        assert spill.puts > 0, "older checkpoints were spilled"
        for kind, series in ((CORRECTED, spilled._checkpoints), (RECORDED, spilled._recorded)):
            assert deltas_in_memory(series) <= keep, f"{kind}: only the newest deltas stay in memory"
        # every checkpoint rebuilt from the spill is the one kept in memory, by value
        for mine, theirs in ((spilled._checkpoints, kept._checkpoints), (spilled._recorded, kept._recorded)):
            assert [(p.seq, p.n, p.through) for p in mine] == [(p.seq, p.n, p.through) for p in theirs]
            for j, p in enumerate(theirs.points):
                if p is None or not theirs._restorable(j):
                    continue
                _, state, orphans = mine.restore(j)
                _, want, want_orphans = theirs.restore(j)
                same(want, state, f"checkpoint {p.seq}")
                assert RULES.dump_state(state) == RULES.dump_state(want)
                assert dict(orphans) == dict(want_orphans)
        assert rows(spilled) == rows(kept)
        rng = random.Random(seed)
        positions = sorted(rng.sample(range(source.first_seq, source.last_seq + 1), 4))
        assert readings(spilled, positions) == readings(kept, positions)
        assert spill.gets > 0, "the spill was read back"
    finally:
        spill.close()


def test_a_correction_reaching_behind_the_kept_checkpoints_refolds_from_the_spill() -> None:
    """A revocation far back: the refold starts from a checkpoint read back from the spill, and
    the ledger then reads like one that kept every checkpoint."""
    every = 8
    source = generated(500, 21)
    target = next(e.seq for e in source.entries[:100] if e.type == "AttackMade")
    revoke = {"target": target, "reason": "never", "cascade": "fact"}
    spill = CountingSpill()
    try:
        kept, spilled = dry_run(source, every), dry_run(source, every, spill, 1)
        before = spill.gets
        for lg in (kept, spilled):
            lg.append_checked(Entry(lg.next_seq, "FactRevoked", 1, dict(revoke), {}))
        assert spill.gets > before
        positions = [source.first_seq + 50, target, source.last_seq]
        assert readings(spilled, positions) == readings(kept, positions)
        assert rows(spilled) == rows(kept)
    finally:
        spill.close()


def test_a_guarded_creature_round_trips_through_a_spill_still_guarded() -> None:
    """Tests guard shared creatures with a class made at run time (``core_state.GUARD``): a
    spilled state holding them reads back with the same guard, equal slot by slot."""
    assert core_state.GUARD  # tests/conftest.py
    state = generated(200, 4).state.clone()
    creature = next(iter(state.creatures.values()))
    assert type(creature).__name__.startswith("Guarded")
    back = pickle.loads(pickle.dumps(state, pickle.HIGHEST_PROTOCOL))
    same(state, back)
    copy_ = back.creatures[creature.id]
    assert type(copy_) is type(creature) and copy_.shared == creature.shared
    try:
        object.__setattr__(copy_, "shared", True)
        setattr(copy_, "id", "changed")  # noqa: B010 -- the guard's __setattr__
    except AssertionError:
        pass
    else:
        raise AssertionError("the guard did not survive the round trip")


def copies_of_the_present(ledger: Ledger, series: Series, before: list[Any] = ()) -> int:  # type: ignore[assignment]
    """Creatures and ended encounters the series' kept whole states and in-memory deltas hold
    that read alike the present's object of that id but are another object (a copy), leaving
    out the states and deltas ``before`` holds (kept from before a refold)."""
    present = ledger._state
    old = {id(x) for x in before}
    n = 0
    for p in series:
        held = []
        if p.full is not None and id(p.full) not in old:
            held.append((p.full.creatures, p.full.encounters))
        if type(p.delta) is Delta and id(p.delta) not in old:
            held.append((p.delta.creatures, p.delta.encounters))
        for creatures, encounters in held:
            for table, objs in ((present.creatures, creatures), (present.encounters, encounters)):
                for k, o in objs.items():
                    mine = table.get(k)
                    if mine is not None and mine is not o and checkpoints._alike(mine, o):
                        if getattr(o, "state", "ended") == "ended":
                            n += 1
    return n


def held(series: Series) -> list[Any]:
    """The whole states and deltas the series' checkpoints hold."""
    return [x for p in series for x in (p.full, p.delta) if x is not None]


def no_resharing(self: Series, present: Any, old: Series | None = None, memo: Any = None) -> int:
    return 0


def sharing(ledger: Ledger) -> list[tuple[int, str, str, bool]]:
    """Where the present's objects lie in the checkpoints kept in memory: for each object a
    whole state or a delta holds, whether it is the present's very object."""
    present = ledger._state
    out = []
    for p in ledger._checkpoints:
        for part, x in (("full", p.full), ("delta", p.delta)):
            if x is None or type(x) is checkpoints.Spilled:
                continue
            for name in ("creatures", "encounters"):
                mine = getattr(present, name)
                for k, o in getattr(x, name).items():
                    out.append((p.seq, part + "." + name, k, mine.get(k) is o))
    return out


@pytest.mark.parametrize("seed", [3, 21])
def test_a_refold_shares_the_same_objects_with_and_without_its_memo_of_compared_pairs(seed: int) -> None:
    """``reshare`` and ``Series.reshare_kept`` remember the pairs they compared
    (``checkpoints._alike_known``): after an early revocation's refold the present and its
    checkpoints hold the present's objects exactly where comparing every pair again puts them."""
    got, compared = [], []
    real = checkpoints._alike
    for memo in (True, False):
        ledger = prefix(generated(500, seed), 500, 8)
        calls = [0]

        def counting(a: Any, b: Any, calls: list[int] = calls) -> bool:
            calls[0] += 1
            return real(a, b)

        target = [e.seq for e in ledger.entries[:60] if e.type in ("AttackMade", "DamageTaken")][0]
        before = dict(ledger.orphans)
        fresh = (lambda m, a, b: checkpoints._alike(a, b)) if not memo else checkpoints._alike_known
        compared.append(calls)
        with (
            mock.patch.object(checkpoints, "_alike_known", fresh),
            mock.patch.object(checkpoints, "_alike", counting),
        ):
            payload = {"target": target, "reason": "never", "cascade": "fact"}
            ledger.prepare("FactRevoked", payload, {})
            ledger.append(Entry(ledger.next_seq, "FactRevoked", 1, payload, {}))
            ledger.state  # noqa: B018
        pattern = sharing(ledger)
        assert any(shared for *_, shared in pattern) and not all(shared for *_, shared in pattern)
        got.append((pattern, whole_state(RULES, ledger.state), dict(ledger.orphans) != before))
    assert got[0] == got[1]
    assert compared[0][0] < compared[1][0]  # (the memo spared comparisons)


@SETTINGS
@given(st.integers(200, 600), st.integers(0, 10**6), st.sampled_from([4, 8]), st.integers(1, 3))
def test_a_refolds_checkpoints_sharing_the_presents_objects_read_and_persist_alike(
    size: int, seed: int, every: int, keep: int
) -> None:
    """The law of ``Series.reshare_kept`` (and ``reshare`` of ended encounters): after each
    correction's refold, the checkpoints it made hold the present's objects where they read
    alike -- which changes where a value lies, never what it is. A spilled dry run persists and
    reads exactly like the same dry run without that sharing, and holds fewer copies."""
    source = generated(size, seed)
    spills = [CountingSpill(), CountingSpill()]
    try:
        shared = dry_run(source, every, spills[0], keep)
        with mock.patch.object(Series, "reshare_kept", no_resharing):
            unshared = dry_run(source, every, spills[1], keep)
        assert rows(shared) == rows(unshared)
        rng = random.Random(seed)
        positions = sorted(rng.sample(range(source.first_seq, source.last_seq + 1), 4))
        assert readings(shared, positions) == readings(unshared, positions)
        for lg in (shared, unshared):
            same(lg._state, shared._state, "present")
        mine = copies_of_the_present(shared, shared._checkpoints)
        theirs = copies_of_the_present(unshared, unshared._checkpoints)
        assert mine <= theirs
    finally:
        for spill in spills:
            spill.close()


def test_a_refold_from_the_spill_leaves_no_copy_of_the_present_in_its_checkpoints() -> None:
    """A revocation far back refolds from checkpoints rebuilt from the spill (copies of every
    object their deltas held): afterwards the checkpoints the refold made hold the present's
    objects wherever they read alike, and the present keeps its ended encounters' objects."""
    every = 8
    source = generated(500, 21)
    # (the first attack's revocation rejoins the fold early; this one refolds to the present)
    target = [e.seq for e in source.entries[:100] if e.type == "AttackMade"][1]
    revoke = {"target": target, "reason": "never", "cascade": "fact"}
    spills = [CountingSpill(), CountingSpill()]
    try:
        shared = dry_run(source, every, spills[0], 1)
        ended = {k: e for k, e in shared._state.encounters.items() if e.state == "ended"}
        kept = {id(shared): held(shared._checkpoints)}
        shared.append_checked(Entry(shared.next_seq, "FactRevoked", 1, dict(revoke), {}))
        with mock.patch.object(Series, "reshare_kept", no_resharing):
            unshared = dry_run(source, every, spills[1], 1)
            kept[id(unshared)] = held(unshared._checkpoints)
            unshared.append_checked(Entry(unshared.next_seq, "FactRevoked", 1, dict(revoke), {}))
        # (the checkpoints kept from before the revocation may hold objects that came to read
        # alike the present's since, by the campaign's own course: only the refold's are looked at)
        assert copies_of_the_present(unshared, unshared._checkpoints, kept[id(unshared)]) > 0, "copies made"
        assert copies_of_the_present(shared, shared._checkpoints, kept[id(shared)]) == 0
        # an ended encounter the revocation did not change is the very object it was
        for k, e in ended.items():
            now = shared._state.encounters[k]
            assert now is e or not checkpoints._alike(now, e), k
        assert any(shared._state.encounters[k] is e for k, e in ended.items())
        assert rows(shared) == rows(unshared)
    finally:
        for spill in spills:
            spill.close()


def test_a_table_of_values_shares_only_what_is_equal_with_its_types_and_order() -> None:
    """``Values.share`` gives one object per value: equal dictionaries, lists and strings become
    one object, but ``True`` is not ``1``, ``-0.0`` is not ``0.0`` and key order counts (each
    would read differently once dumped)."""
    table = Values()
    first = {"kind": "save_ends", "components": [{"ongoing": {"amount": 5}}], "tags": ("a", 1)}
    again = json.loads(json.dumps(first))
    again["tags"] = ("a", 1)
    assert table.share(first) is first
    assert table.share(again) is first
    flag = {"kind": "save_ends", "components": [{"ongoing": {"amount": True}}], "tags": ("a", 1)}
    assert table.share(flag) is flag
    assert table.share([0.0]) is not table.share([-0.0])
    assert table.share({"b": 1, "a": 2}) is not table.share({"a": 2, "b": 1})
    word = "".join(["sa", "ve"])
    assert table.share(word) is table.share("".join(["s", "ave"]))
    # a value holding one it cannot key (an object) is left as it is
    odd = {"x": object()}
    assert table.share(odd) is odd
    # a copy holding the table's objects is made when only the inner values were shared before
    inner = {"amount": 7}
    outer = {"ongoing": json.loads(json.dumps(inner))}
    table.share(inner)
    got = table.share(outer)
    assert got == outer and got["ongoing"] is inner
    assert table.shared > 0


def test_a_table_of_values_keeps_hashes_not_keys_as_big_as_its_values() -> None:
    """The table is keyed by a hash of each value's type and parts (strings by themselves), not
    by a copy of the value's structure (at 100k facts those keys were most of the table)."""
    table = Values()
    table.share({"ongoing": {"amount": 5, "kinds": ["fire", "cold"]}, "save": -0.0, "on": True})
    assert len(table) > 3
    assert all(type(k) in (int, str) for k in table._table)


def test_a_table_of_values_whose_hashes_collide_still_shares_only_what_is_equal(
    monkeypatch: Any,
) -> None:
    """Every hash the same (a collision for every pair): values are compared part by part, so an
    unequal value is never given another's object, and an equal one still is."""
    monkeypatch.setattr(checkpoints, "hash", lambda parts: 7, raising=False)
    table = Values()
    first = ["fire", 1, 2.5]  # the first value keyed takes the one hash there is
    assert table.share(first) is first
    assert table.share(json.loads(json.dumps(first))) is first
    for other in (
        ["fire", 1, 2.6],
        ["fire", True, 2.5],
        ["fire", 1.0, 2.5],
        ("fire", 1, 2.5),
        [1, "fire", 2.5],
        {"fire": 1},
    ):
        got = table.share(other)
        assert got == other and got is not first and type(got) is type(other)
    assert table.share([0.0]) is not table.share([-0.0])


@SETTINGS
@given(st.integers(200, 600), st.integers(0, 10**6), st.sampled_from([4, 8]), st.integers(1, 3))
def test_a_dry_run_sharing_its_values_persists_and_reads_like_one_that_does_not(
    size: int, seed: int, every: int, keep: int
) -> None:
    """The law of ``Ledger.share_values``: the checkpoints' creatures and ended encounters
    holding the table's objects for equal values changes where a value lies, never what it is.
    The persisted rows, the present, as-of answers and walks are those of the same dry run
    without the table, and the campaign's creatures hold fewer distinct objects."""
    source = generated(size, seed)
    spills = [CountingSpill(), CountingSpill()]
    try:
        table = Values()
        shared = dry_run(source, every, spills[0], keep, table)
        plain = dry_run(source, every, spills[1], keep)
        assert rows(shared) == rows(plain)
        same(plain._state, shared._state, "present")
        rng = random.Random(seed)
        positions = sorted(rng.sample(range(source.first_seq, source.last_seq + 1), 4))
        assert readings(shared, positions) == readings(plain, positions)
        assert table.shared > 0

        def distinct(lg: Ledger) -> int:
            return len({id(c.abilities) for c in lg._state.creatures.values()})

        assert distinct(shared) < distinct(plain)
    finally:
        for spill in spills:
            spill.close()
