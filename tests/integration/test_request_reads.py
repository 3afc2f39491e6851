"""A request's token check and its campaign's catch-up are ONE store statement on PostgreSQL
(``ChronicleApplication.read_beside``, ``BoundedPostgresRecorder.select_events_beside``).

Two applications on one store stand for two replicas. What the token check read of the campaign
is what the operation's first read of the campaign uses: a replica's facts are still seen (a
stale cache catches up), a token another replica revoked is still refused, and outside an
operation nothing is kept for later.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from api.service.application import ChronicleApplication, operation
from api.service.auth import AccessControl
from api.service.settings import Settings
from api.service.store import open_application


def counted(app: ChronicleApplication) -> Counter[str]:
    """Count the statements that read stored events from now on (each call is one statement)."""
    seen: Counter[str] = Counter()
    for name in ("select_events", "select_events_beside"):
        original = getattr(app.recorder, name, None)
        if original is None:
            continue

        def wrapped(*args: Any, _name: str = name, _original: Any = original, **kwargs: Any) -> Any:
            seen[_name] += 1
            seen["statements"] += 1
            return _original(*args, **kwargs)

        setattr(app.recorder, name, wrapped)
    return seen


@pytest.fixture
def replicas(store: Settings) -> Iterator[tuple[ChronicleApplication, ChronicleApplication]]:
    a, b = open_application(store), open_application(store)
    try:
        yield a, b
    finally:
        a.close()
        b.close()


def _table(a: ChronicleApplication) -> tuple[Any, str, AccessControl]:
    access = AccessControl(a)
    cid = a.create_campaign("Reads")
    token = access.grant_gm(cid)
    a.advance_time(cid, 1)
    return cid, token, access


def test_a_request_reads_the_store_once(
    replicas: tuple[ChronicleApplication, ChronicleApplication], store: Settings
) -> None:
    """The token check and the campaign's catch-up: one statement on PostgreSQL (two elsewhere);
    the operation's reads of the campaign after it read nothing more, and a command trusts them."""
    a, _ = replicas
    cid, token, access = _table(a)
    assert access.authenticate(token) is not None  # the access record is cached
    reads = counted(a)
    with operation():
        who = access.authenticate(token)
        assert who is not None and who.campaign_id == cid
        position = a.view(cid).position
        a.summary(cid)
        recorded = a.advance_time(cid, 2)
        assert recorded.positions == [position + 1]
        assert a.view(cid).position == position + 1
    expected = 1 if store.database.kind == "postgresql" else 2
    assert reads["statements"] == expected, reads


def test_a_stale_cache_still_catches_up(replicas: tuple[ChronicleApplication, ChronicleApplication]) -> None:
    a, b = replicas
    cid, token, access = _table(a)
    access.authenticate(token)
    b.view(cid)
    theirs = [b.advance_time(cid, 10).position for _ in range(3)]
    with operation():
        assert access.authenticate(token) is not None
        view = a.view(cid)
        assert view.position == theirs[-1]  # the replica's three facts, read with the token
        assert view.campaign()["clock_minutes"] == 31
        ours = a.advance_time(cid, 5)
        assert ours.positions == [theirs[-1] + 1]
    assert b.view(cid).campaign()["clock_minutes"] == 36


def test_a_revoked_token_still_refuses(replicas: tuple[ChronicleApplication, ChronicleApplication]) -> None:
    a, b = replicas
    cid, token, access = _table(a)
    other = access.issue(cid, "player", ["vex"], "Vex", None)
    with operation():
        assert access.authenticate(other.token) is not None
    b.view(cid)
    AccessControl(b).revoke(cid, other.token_id)  # another replica revokes it
    b.advance_time(cid, 1)
    with operation():
        assert access.authenticate(other.token) is None
        assert access.authenticate(token) is not None
        assert a.view(cid).campaign()["clock_minutes"] == 2


def test_outside_an_operation_nothing_is_kept(
    replicas: tuple[ChronicleApplication, ChronicleApplication],
) -> None:
    """Without an operation (background threads) a token check reads only the access record,
    and every read of the campaign catches up on its own."""
    a, b = replicas
    cid, token, access = _table(a)
    access.authenticate(token)
    b.advance_time(cid, 10)
    reads = counted(a)
    assert access.authenticate(token) is not None
    assert reads["select_events_beside"] == 0
    assert a.view(cid).campaign()["clock_minutes"] == 11


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(script=st.lists(st.tuples(st.sampled_from("ab"), st.integers(1, 30)), min_size=1, max_size=8))
def test_what_an_operation_sees_is_the_store_at_its_token_check(
    replicas: tuple[ChronicleApplication, ChronicleApplication], script: list[tuple[str, int]]
) -> None:
    """Law: whatever the replicas wrote before a request, the request's view of the campaign after
    its token check is exactly what the store holds (position and clock), and its command is
    stored right after it."""
    a, b = replicas
    cid, token, access = _table(a)
    access.authenticate(token)
    b.view(cid)
    clock = 1
    for who, minutes in script:
        (a if who == "a" else b).advance_time(cid, minutes)
        clock += minutes
    head = len(script) + 2
    with operation():
        assert access.authenticate(token) is not None
        view = a.view(cid)
        assert (view.position, view.campaign()["clock_minutes"]) == (head, clock)
        assert a.advance_time(cid, 1).positions == [head + 1]


def test_a_request_s_first_view_does_not_wait_for_a_commit_in_progress(
    replicas: tuple[ChronicleApplication, ChronicleApplication], store: Settings
) -> None:
    """When the token check read nothing after the cached campaign, the operation's view of it
    now is the newest one committed, had without the campaign's lock (held here by another
    thread, as a group commit holds it); once a replica wrote, the view waits and catches up.
    (PostgreSQL: elsewhere the token check does not read the campaign.)"""
    if store.database.kind != "postgresql":
        pytest.skip("the token check reads the campaign on PostgreSQL only")
    a, b = replicas
    cid, token, access = _table(a)
    access.authenticate(token)  # (the access record is cached, as after a server's first request)
    a.advance_time(cid, 2)  # the newest commit: what the view is
    expected = a.view(cid)
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        with a._lock(cid):
            held.set()
            release.wait(30)

    def request(out: list[Any]) -> None:
        with operation():
            assert access.authenticate(token) is not None
            out.append(a.view(cid))

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert held.wait(10)
        got: list[Any] = []
        reader = threading.Thread(target=request, args=(got,))
        reader.start()
        reader.join(10)  # a liveness bound: without the lock-free view it waits for `release`
        assert not reader.is_alive() and got
        assert (got[0].position, got[0].campaign()) == (expected.position, expected.campaign())
        b.advance_time(cid, 10)  # a replica writes: the next request must catch up
        late: list[Any] = []
        waiting = threading.Thread(target=request, args=(late,))
        waiting.start()
        waiting.join(0.5)
        assert waiting.is_alive()  # (behind the lock, to read the replica's fact)
    finally:
        release.set()
        holder.join()
    waiting.join(10)
    assert late and late[0].position == expected.position + 1
    assert late[0].campaign()["clock_minutes"] == 13
