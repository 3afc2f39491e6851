"""One operation catches a campaign up from the store once (``api.service.application.operation``).

Two applications on one store stand for two replicas. Within an operation, reads after the
first come from the cache (no store read), so a replica's later fact is not seen by them; a
command stores after the replica's fact (it catches up before it checks once it has seen the
replica write, else after losing the race for the position), and outside an operation every
read catches up, as before.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest

from api.service.application import ChronicleApplication, operation
from api.service.settings import Settings
from api.service.store import open_application


def counted(app: ChronicleApplication) -> Counter[str]:
    """Count the store reads of one campaign's facts the application makes from now on."""
    seen: Counter[str] = Counter()
    original = app.recorder.select_events

    def select_events(*args: Any, **kwargs: Any) -> Any:
        seen["select_events"] += 1
        return original(*args, **kwargs)

    app.recorder.select_events = select_events  # type: ignore[method-assign]
    return seen


@pytest.fixture
def replicas(store: Settings) -> Iterator[tuple[ChronicleApplication, ChronicleApplication]]:
    a, b = open_application(store), open_application(store)
    try:
        yield a, b
    finally:
        a.close()
        b.close()


def test_an_operation_reads_the_store_once_and_a_command_catches_up(
    replicas: tuple[ChronicleApplication, ChronicleApplication],
) -> None:
    a, b = replicas
    cid = a.create_campaign("Two replicas")
    a.advance_time(cid, 1)
    b.view(cid)  # b has it cached
    reads = counted(a)
    with operation():
        first = a.view(cid).position
        assert reads["select_events"] == 1
        for _ in range(5):
            assert a.view(cid).position == first
            a.summary(cid)
            a.pending_rolls(cid)
        assert reads["select_events"] == 1  # every later read came from the cache
        theirs = b.advance_time(cid, 10).position
        assert theirs == first + 1
        assert a.view(cid).position == first  # the operation reads the campaign as it began
        ours = a.advance_time(cid, 5)
        # the command caught up before it checked: stored after the replica's fact, not refused
        assert ours.positions == [theirs + 1]
        assert a.view(cid).position == theirs + 1
        assert a.view(cid).campaign()["clock_minutes"] == 16
        assert b.view(cid).campaign()["clock_minutes"] == 11  # b too reads as of its first read
    # outside an operation every read catches up
    assert b.view(cid).campaign()["clock_minutes"] == 16
    theirs = b.advance_time(cid, 1).position
    assert a.view(cid).position == theirs
    with operation():
        assert a.view(cid).position == theirs


def test_a_new_operation_sees_what_a_replica_stored(
    replicas: tuple[ChronicleApplication, ChronicleApplication],
) -> None:
    a, b = replicas
    cid = a.create_campaign("Two replicas")
    with operation():
        before = a.view(cid).position
    theirs = b.advance_time(cid, 10).position
    assert theirs == before + 1
    with operation():
        assert a.view(cid).position == theirs
        with operation():  # nested: a fresh operation of its own
            b.advance_time(cid, 1)
            assert a.view(cid).position == theirs + 1
        assert a.view(cid).position == theirs + 1  # (already cached: the outer one sees it too)


def test_an_idempotent_repeat_is_found_after_a_replica_stored_it(
    replicas: tuple[ChronicleApplication, ChronicleApplication],
) -> None:
    a, b = replicas
    cid = a.create_campaign("Two replicas")
    with operation():
        a.view(cid)
        first = b.record(cid, "TimeAdvanced", {"minutes": 3}, idempotency_key="k-1")
        again = a.record(cid, "TimeAdvanced", {"minutes": 3}, idempotency_key="k-1")
    assert again.replayed and again.positions == first.positions
    assert a.view(cid).position == first.position


def test_a_command_trusts_its_operation_s_read_until_another_process_writes_the_campaign(
    replicas: tuple[ChronicleApplication, ChronicleApplication],
) -> None:
    """A command in an operation that has read the campaign checks against that read: no store
    read before its save (the cache holds every fact this process stored). Once another process
    wrote the campaign, commands read the store right before they check again."""
    a, b = replicas
    cid = a.create_campaign("Two replicas")
    a.advance_time(cid, 1)
    reads = counted(a)
    with operation():
        a.view(cid)
        assert reads["select_events"] == 1
        assert a.advance_time(cid, 2).positions == [a.view(cid).position]
        assert reads["select_events"] == 1  # the command read nothing
    theirs = b.advance_time(cid, 10).position
    with operation():
        a.view(cid)  # reads b's fact: another process writes this campaign
        seen = reads["select_events"]
        assert a.advance_time(cid, 3).positions == [theirs + 1]
        assert reads["select_events"] > seen  # read the store before it checked (PostgreSQL: twice,
        # the second inside the replicas' lock, see _across_replicas)
        assert a.view(cid).campaign()["clock_minutes"] == 16
