"""Group commit (``ChronicleApplication._commit``), on both stores, with threads.

Commands on one campaign that queue on its lock are checked one after the other against the
state their predecessors leave and saved in ONE store transaction. To make a batch for sure,
each test holds the campaign's lock while the threads queue, then lets go. Checked against a
second application that reads the store from scratch: every accepted command stored exactly
once at the positions it was answered, positions gap-free, refused commands stored nothing,
and the serving application's state equals the store's.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any
from uuid import UUID

import pytest
from eventsourcing.persistence import OperationalError

from api.service import observability
from api.service.application import ChronicleApplication, Recorded
from api.service.settings import Settings
from api.service.store import open_application
from domain.errors import Conflict, DomainError
from tests.conftest import connect

DAMAGE_NOBODY = ("DamageTaken", {"target": "nobody", "amount": 5, "types": [], "roll": None})


@pytest.fixture
def apps(store: Settings) -> Iterator[tuple[ChronicleApplication, ChronicleApplication]]:
    a, b = open_application(store), open_application(store)
    try:
        yield a, b
    finally:
        a.close()
        b.close()


def caught_up() -> float:
    """Lost races this process recovered from by catching up (``/metrics``)."""
    value = observability.REGISTRY.get_sample_value("chronicle_lost_races_total", {"recovery": "caught_up"})
    return value or 0.0


def saves(app: ChronicleApplication) -> Counter[str]:
    """Count the application's store transactions that append facts."""
    seen: Counter[str] = Counter()
    original = app.recorder.insert_events

    def insert_events(*args: Any, **kwargs: Any) -> Any:
        seen["insert_events"] += 1
        return original(*args, **kwargs)

    app.recorder.insert_events = insert_events  # type: ignore[method-assign]
    return seen


def queued(app: ChronicleApplication, cid: UUID, calls: list[Callable[[], Recorded]]) -> list[Any]:
    """Run ``calls`` on threads while this thread holds the campaign's lock, until all of them
    are queued; then let go. Each call's Recorded, or the exception it raised, in order."""
    results: list[Any] = [None] * len(calls)

    def run(n: int, call: Callable[[], Recorded]) -> None:
        try:
            results[n] = call()
        except BaseException as exc:  # noqa: BLE001 - compared by the test
            results[n] = exc

    threads = [threading.Thread(target=run, args=(n, c)) for n, c in enumerate(calls)]
    with app._lock(cid):
        for t in threads:
            t.start()
        deadline = time.monotonic() + 30
        while len(app._queues.get(cid, [])) < len(calls):
            assert time.monotonic() < deadline, "the commands did not queue"
            time.sleep(0.005)
    for t in threads:
        t.join(30)
    return results


def stored(store_app: ChronicleApplication, cid: UUID, after: int) -> list[Any]:
    """The facts after ``after`` as a fresh application reads them from the store."""
    return [store_app.ledger(cid).entry(seq) for seq in range(after + 1, store_app.ledger(cid).last_seq + 1)]


def assert_consistent(app: ChronicleApplication, store: Settings, cid: UUID) -> None:
    fresh = open_application(store)
    try:
        assert fresh.summary(cid) == app.summary(cid)
    finally:
        fresh.close()


def test_a_command_its_batch_answered_returns_without_waiting_for_the_campaign_s_lock(
    apps: tuple[ChronicleApplication, ChronicleApplication],
) -> None:
    """Of eight commands committed in one batch, only the thread that committed them took the
    campaign's lock: the other seven were answered by that batch and returned, instead of each
    queueing for the lock (behind the next batch's commit, or a reader) to learn they were done."""
    a, _ = apps
    cid = a.create_campaign("Followers")
    a.view(cid)
    takers: list[str] = []
    original = a._lock

    def lock(campaign_id: UUID) -> Any:
        takers.append(threading.current_thread().name)
        return original(campaign_id)

    a._lock = lock  # type: ignore[method-assign]
    count = saves(a)
    results = queued(a, cid, [lambda m=m: a.record(cid, "TimeAdvanced", {"minutes": m}) for m in range(1, 9)])
    assert all(isinstance(r, Recorded) for r in results), results
    assert count["insert_events"] == 1
    mine = threading.current_thread().name  # (``queued`` holds the lock while they queue)
    assert len([t for t in takers if t != mine]) == 1, takers


def test_queued_commands_are_saved_in_one_transaction_each_checked_after_the_one_before(
    apps: tuple[ChronicleApplication, ChronicleApplication], store: Settings
) -> None:
    a, b = apps
    cid = a.create_campaign("Group commit")
    head = a.view(cid).position
    count = saves(a)
    calls = [
        lambda m=m: a.record(cid, "TimeAdvanced", {"minutes": m}, idempotency_key=f"k{m}")
        for m in range(1, 9)
    ]
    calls.append(lambda: a.record(cid, "TimeAdvanced", {"minutes": 3}, idempotency_key="k3"))  # a repeat
    results = queued(a, cid, calls)
    assert count["insert_events"] == 1  # eight commands, one transaction
    assert all(isinstance(r, Recorded) for r in results), results
    accepted = [r for r in results if not r.replayed]
    positions = sorted(p for r in accepted for p in r.positions)
    assert positions == list(range(head + 1, head + 9))  # gap-free, one fact each
    twins = [results[2], results[-1]]  # the same key twice: whichever queued second is replayed
    assert sorted(r.replayed for r in twins) == [False, True] and twins[0].positions == twins[1].positions
    facts = stored(b, cid, head)
    assert len(facts) == 8
    by_key = Counter(f.meta["idempotency_key"] for f in facts)
    assert set(by_key.values()) == {1}  # each accepted command stored exactly once
    for r in accepted:
        (seq,) = r.positions
        fact = b.ledger(cid).entry(seq)
        assert (fact.type, fact.payload) == (r.facts[0]["type"], r.facts[0]["payload"])
    clock = [r.outcome["clock"] for r in sorted(accepted, key=lambda r: r.position)]
    assert clock == sorted(clock) and clock[-1] == sum(range(1, 9))  # each saw its predecessors
    assert_consistent(a, store, cid)


def test_a_refused_command_does_not_break_the_others(
    apps: tuple[ChronicleApplication, ChronicleApplication], store: Settings
) -> None:
    a, b = apps
    cid = a.create_campaign("Group commit")
    head = a.view(cid).position
    calls = [
        lambda: a.record(cid, "TimeAdvanced", {"minutes": 1}),
        lambda: a.record(cid, *DAMAGE_NOBODY),  # its only fact is refused
        lambda: a.record_many(cid, [("TimeAdvanced", {"minutes": 100}), DAMAGE_NOBODY]),  # its 2nd is
        lambda: a.record(cid, "TimeAdvanced", {"minutes": 10}),
    ]
    results = queued(a, cid, calls)
    assert isinstance(results[1], DomainError) and isinstance(results[2], DomainError), results
    assert isinstance(results[0], Recorded) and isinstance(results[3], Recorded), results
    facts = stored(b, cid, head)
    assert sorted(f.payload["minutes"] for f in facts) == [1, 10]  # the refused action left nothing
    assert sorted(results[0].positions + results[3].positions) == [head + 1, head + 2]
    assert a.view(cid).campaign()["clock_minutes"] == 11
    assert_consistent(a, store, cid)


def test_a_failed_save_fails_every_command_of_it_and_leaves_the_cache_as_the_store(
    apps: tuple[ChronicleApplication, ChronicleApplication], store: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = apps
    cid = a.create_campaign("Group commit")
    a.advance_time(cid, 1)
    head = a.view(cid).position
    original = a.save

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise OperationalError("the store went away")

    monkeypatch.setattr(a, "save", broken)
    results = queued(a, cid, [lambda m=m: a.advance_time(cid, m) for m in (2, 3, 4)])
    assert all(isinstance(r, OperationalError) for r in results), results
    monkeypatch.setattr(a, "save", original)
    assert a.view(cid).position == head  # nothing unsaved is read
    assert stored(b, cid, head) == []
    assert a.advance_time(cid, 5).positions == [head + 1]
    assert a.view(cid).campaign()["clock_minutes"] == 6
    assert_consistent(a, store, cid)


def test_a_batch_that_lost_a_race_with_a_replica_is_checked_again_and_stored_after_it(
    apps: tuple[ChronicleApplication, ChronicleApplication], store: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = apps
    cid = a.create_campaign("Group commit")
    head = a.view(cid).position
    original = a.save
    raced = []

    def racing(*args: Any, **kwargs: Any) -> Any:
        if not raced:  # the replica stores its fact between our check and our save
            raced.append(b.advance_time(cid, 1000).position)
        return original(*args, **kwargs)

    monkeypatch.setattr(a, "save", racing)
    results = queued(a, cid, [lambda m=m: a.advance_time(cid, m) for m in (1, 2, 3)])
    assert all(isinstance(r, Recorded) for r in results), results
    assert raced == [head + 1]
    assert sorted(p for r in results for p in r.positions) == [head + 2, head + 3, head + 4]
    facts = stored(b, cid, head)
    assert sorted(f.payload["minutes"] for f in facts) == [1, 2, 3, 1000]
    assert max(r.outcome["clock"] for r in results) == 1006
    assert_consistent(a, store, cid)


def test_many_writers_every_accepted_command_stored_once(
    apps: tuple[ChronicleApplication, ChronicleApplication], store: Settings
) -> None:
    """Free-running threads on two applications (replicas), with retried idempotency keys."""
    a, b = apps
    cid = a.create_campaign("Group commit")
    head = a.view(cid).position
    answers: dict[str, list[int]] = {}
    refused: list[BaseException] = []
    lock = threading.Lock()

    def writer(app: ChronicleApplication, w: int) -> None:
        for k in range(6):
            key = f"w{w}-{k}"
            items = [("TimeAdvanced", {"minutes": 1})] * (1 + k % 2)
            sends = 0
            while sends < 2:  # the second send is a retry: replayed, never stored again
                try:
                    r = app.record_many(cid, items, idempotency_key=key)
                except Conflict:
                    continue  # the two applications kept racing: send it again, as a client does
                except DomainError as exc:
                    with lock:
                        refused.append(exc)
                    break
                sends += 1
                with lock:
                    assert answers.setdefault(key, r.positions) == r.positions
            if k == 3:
                try:
                    app.record(cid, *DAMAGE_NOBODY)
                except DomainError:
                    pass
                else:
                    raise AssertionError("damage to nobody was accepted")

    threads = [threading.Thread(target=writer, args=(a if w % 2 else b, w)) for w in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not refused, refused
    facts = stored(b, cid, head)
    positions = sorted(p for ps in answers.values() for p in ps)
    assert positions == list(range(head + 1, head + 1 + len(facts)))  # every stored fact answered, once
    by_key = Counter(f.meta["idempotency_key"] for f in facts)
    assert {k: len(v) for k, v in answers.items()} == dict(by_key)
    assert a.view(cid).campaign()["clock_minutes"] == len(facts) == 8 * 9
    assert_consistent(a, store, cid)
    assert_consistent(b, store, cid)


def waits_for_the_replicas_lock(
    store: Settings, cid: UUID, command: Callable[[], Any], meanwhile: Callable[[], int]
) -> tuple[list[Any], int]:
    """Hold the campaign's advisory lock on a connection of our own, run ``command`` on a thread
    until it waits for the lock, run ``meanwhile`` (another replica's write), let go."""
    key = int.from_bytes(cid.bytes[:8], "big", signed=True)
    with connect(store.database) as holder:
        holder.autocommit = True
        holder.execute("SELECT pg_advisory_lock(%s)", (key,))
        done: list[Any] = []
        writer = threading.Thread(target=lambda: done.append(command()))
        writer.start()
        deadline = time.monotonic() + 30
        waiting = (
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
            " AND classid::bigint = %s AND objid::bigint = %s"
        )
        ids = ((key >> 32) & 0xFFFFFFFF, key & 0xFFFFFFFF)
        while not holder.execute(waiting, ids).fetchone()[0]:  # type: ignore[index]
            assert time.monotonic() < deadline, "the commit did not wait for the replicas' lock"
            time.sleep(0.01)
        theirs = meanwhile()
        holder.execute("SELECT pg_advisory_unlock(%s)", (key,))
        writer.join(30)
    return done, theirs


@pytest.mark.postgres
def test_a_replica_that_reads_another_s_fact_takes_turns_with_it(postgres_store: Settings) -> None:
    """Reading a fact another process stored is enough: the next commit takes the replicas' lock
    (before any race is lost) and catches up inside it."""
    a, b = open_application(postgres_store), open_application(postgres_store)
    try:
        cid = a.create_campaign("Replicas' lock")
        a.advance_time(cid, 1)  # not contended: no lock (nothing holds it here anyway)
        b.advance_time(cid, 2)
        a.view(cid)  # a reads b's fact
        loads = a.cache_stats["cold_loads"]
        done, theirs = waits_for_the_replicas_lock(
            postgres_store, cid, lambda: a.advance_time(cid, 5), lambda: b.advance_time(cid, 100).position
        )
        assert [r.positions for r in done] == [[theirs + 1]]
        assert a.cache_stats["cold_loads"] == loads
        assert a.view(cid).campaign()["clock_minutes"] == 108
    finally:
        a.close()
        b.close()


@pytest.mark.postgres
def test_after_a_lost_race_commits_take_the_replicas_lock_and_catch_up_inside_it(
    postgres_store: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After losing a race, a replica's commits wait for the campaign's advisory lock and read
    the store inside it: a fact another replica stores meanwhile is seen before the check, so
    the save does not lose a race again (no reload of the campaign)."""
    a, b = open_application(postgres_store), open_application(postgres_store)
    try:
        cid = a.create_campaign("Replicas' lock")
        head = a.view(cid).position
        original = a.save
        raced: list[int] = []

        def racing(*args: Any, **kwargs: Any) -> Any:
            if not raced:
                raced.append(b.advance_time(cid, 1000).position)
            return original(*args, **kwargs)

        monkeypatch.setattr(a, "save", racing)
        assert a.advance_time(cid, 1).positions == [head + 2]  # lost a race, checked again
        monkeypatch.setattr(a, "save", original)
        loads = a.cache_stats["cold_loads"]
        key = int.from_bytes(cid.bytes[:8], "big", signed=True)
        with connect(postgres_store.database) as holder:
            holder.autocommit = True
            holder.execute("SELECT pg_advisory_lock(%s)", (key,))
            done: list[Any] = []
            writer = threading.Thread(target=lambda: done.append(a.advance_time(cid, 5)))
            writer.start()
            deadline = time.monotonic() + 30
            waiting = (
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
                " AND classid::bigint = %s AND objid::bigint = %s"
            )
            ids = ((key >> 32) & 0xFFFFFFFF, key & 0xFFFFFFFF)
            while not holder.execute(waiting, ids).fetchone()[0]:  # type: ignore[index]
                assert time.monotonic() < deadline, "the commit did not wait for the replicas' lock"
                time.sleep(0.01)
            theirs = b.advance_time(cid, 100).position  # while a waits
            holder.execute("SELECT pg_advisory_unlock(%s)", (key,))
            writer.join(30)
        assert [r.positions for r in done] == [[theirs + 1]]
        assert a.cache_stats["cold_loads"] == loads  # it read b's fact inside the lock: no lost race
        assert a.view(cid).campaign()["clock_minutes"] == 1106
    finally:
        a.close()
        b.close()


@pytest.mark.postgres
def test_two_replicas_racing_for_a_position_both_succeed_the_loser_catching_up_without_a_reload(
    postgres_store: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Replica ``b`` stores a fact between ``a``'s check and ``a``'s save: both commands are
    accepted, ``b``'s at the position both wanted and ``a``'s after it, checked against the new
    present. ``a`` takes its unsaved facts back out of its cached campaign and reads only
    ``b``'s fact from the store (no cold load of the campaign); nothing lost, nothing doubled."""
    a, b = open_application(postgres_store), open_application(postgres_store)
    try:
        cid = a.create_campaign("Race")
        for m in (1, 2, 3):
            a.advance_time(cid, m)
        head = b.view(cid).position  # b has the campaign cached too
        loads = a.cache_stats["cold_loads"]
        lost = caught_up()
        original = a.save
        theirs: list[Recorded] = []

        def racing(*args: Any, **kwargs: Any) -> Any:
            if not theirs:  # the replica stores its fact between our check and our save
                theirs.append(b.record(cid, "TimeAdvanced", {"minutes": 1000}, idempotency_key="theirs"))
            return original(*args, **kwargs)

        monkeypatch.setattr(a, "save", racing)
        ours = a.record_many(
            cid, [("TimeAdvanced", {"minutes": 7}), ("TimeAdvanced", {"minutes": 8})], idempotency_key="ours"
        )
        monkeypatch.setattr(a, "save", original)
        assert theirs[0].positions == [head + 1]
        assert ours.positions == [head + 2, head + 3] and not ours.replayed
        assert [o["clock"] for o in ours.outcomes] == [1013, 1021]  # checked after b's fact
        assert a.cache_stats["cold_loads"] == loads  # caught up, not reloaded
        assert a.cache_stats["unstaged"] == 1
        assert caught_up() == lost + 1  # /metrics: chronicle_lost_races_total{recovery="caught_up"}
        # a retry of either command through either replica is a replay: stored once
        again = b.record_many(
            cid, [("TimeAdvanced", {"minutes": 7}), ("TimeAdvanced", {"minutes": 8})], idempotency_key="ours"
        )
        assert again.replayed and again.positions == ours.positions
        assert a.record(cid, "TimeAdvanced", {"minutes": 1000}, idempotency_key="theirs").replayed
        fresh = open_application(postgres_store)
        try:
            facts = stored(fresh, cid, head)
        finally:
            fresh.close()
        assert [(f.seq, f.meta["idempotency_key"], f.payload["minutes"]) for f in facts] == [
            (head + 1, "theirs", 1000),
            (head + 2, "ours", 7),
            (head + 3, "ours", 8),
        ]
        assert_consistent(a, postgres_store, cid)
        assert_consistent(b, postgres_store, cid)
        assert a.advance_time(cid, 1).positions == [head + 4]  # and a goes on from there
    finally:
        a.close()
        b.close()
