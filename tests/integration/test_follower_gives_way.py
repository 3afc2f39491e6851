"""The read models' follower in a server's process gives way to the server's commands (issue 21,
bench P3 on SQLite), on SQLite and PostgreSQL.

The in-process follower (``views.follower(settings, application)``) refolds its own copy of a
campaign after a far-reaching correction; every ``PAUSE_EVERY`` facts it asks the application
to ``give_way``: while a command is in progress there (a mutation, a correction) it waits, then
resumes and writes exactly what it would have written. Its patience per step is bounded: a
command that never ends delays the read models, never stops them.

A command is held in progress the way a busy table holds one: its campaign's lock is taken by
the test, so the command waits for it inside ``record_many``. Nothing here asserts on time.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any
from uuid import UUID

from api.service import views as wiring
from api.service.application import ChronicleApplication
from api.service.settings import Settings
from domain.ledger import PAUSE_EVERY
from projections.runner import Follower
from tests.integration.test_snapshots import HEADER, facts
from tests.waiting import eventually

WAIT = 60.0  # the most any step here may take on a busy machine (no timing is asserted)


def _until(pred: Callable[[], bool]) -> bool:
    return eventually(pred, WAIT)


def _campaign(app: ChronicleApplication) -> tuple[UUID, list[int]]:
    """A generated campaign of 400 facts and the early facts a revoke refolds it from (each
    refold reaches across more than ``PAUSE_EVERY`` facts)."""
    cid = app.import_campaign(HEADER, facts(400, 3))
    ledger = app.ledger(cid)
    early = [e.seq for e in ledger.entries if e.type in ("SecondWindUsed", "AttackMade")]
    assert ledger.last_seq - early[1] > PAUSE_EVERY
    return cid, early


def _held_command(app: ChronicleApplication, cid: UUID, target: int) -> tuple[threading.Thread, list[int]]:
    """A revoke started while the caller holds the campaign's lock: in progress, waiting for it."""
    done: list[int] = []
    command = threading.Thread(target=lambda: done.append(app.revoke(cid, target, "held").position))
    command.start()
    assert _until(lambda: app.commands.running == 1)
    return command, done


def _stepping(follower: Follower) -> tuple[threading.Thread, list[Any]]:
    out: list[Any] = []

    def step() -> None:
        try:
            out.append(follower.step())
        except BaseException as exc:  # reported by the test
            out.append(exc)

    thread = threading.Thread(target=step)
    thread.start()
    return thread, out


def _same_as_a_rebuild(app: ChronicleApplication, store: Settings, follower: Follower) -> None:
    follower.catch_up()
    assert follower.views.tracking_position() == app.recorder.max_notification_id()
    incremental = follower.views.dump(written_at=False)
    wiring.rebuild(store, application=app)
    assert follower.views.dump(written_at=False) == incremental


def test_the_follower_pauses_a_refold_while_a_command_runs_then_resumes(
    app: ChronicleApplication, store: Settings
) -> None:
    cid, early = _campaign(app)
    follower = wiring.follower(store, app, batch_size=500)
    try:
        follower.catch_up()
        assert follower.pauses == 0  # no command ran meanwhile: nothing to give way to
        app.revoke(cid, early[0], "no second wind")  # the follower refolds from there
        before = follower.views.tracking_position()
        with app._lock(cid):
            command, done = _held_command(app, cid, early[1])
            stepping, stepped = _stepping(follower)
            assert _until(lambda: app.commands.waiting == 1)  # the follower, giving way mid-step
            assert stepping.is_alive() and stepped == []
            assert follower.views.tracking_position() == before  # nothing committed meanwhile
            assert not done
        command.join(WAIT)
        stepping.join(WAIT)
        assert done and stepped == [1]  # resumed once the command was done: the first revoke
        assert follower.pauses >= 1 and follower.paused_s > 0
        assert app.commands.waiting == 0
        _same_as_a_rebuild(app, store, follower)  # what it wrote after the pause is right
    finally:
        follower.close()


def test_a_command_that_never_ends_delays_the_follower_by_its_patience_only(
    app: ChronicleApplication, store: Settings
) -> None:
    cid, early = _campaign(app)
    # tiny budgets: each pause waits 0.05 s at most, the step 0.2 s in all
    follower = wiring.follower(store, app, batch_size=500, give_way_s=0.05, patience_s=0.2)
    try:
        follower.catch_up()
        app.revoke(cid, early[0], "no second wind")
        with app._lock(cid):
            command, done = _held_command(app, cid, early[1])
            stepping, stepped = _stepping(follower)
            stepping.join(WAIT)
            # the step is done although the command is still in progress
            assert stepped == [1] and app.commands.running == 1 and not done
            assert follower.pauses >= 1 and 0 < follower.paused_s
            assert follower.views.tracking_position() == app.recorder.max_notification_id()
        command.join(WAIT)
        assert done
        _same_as_a_rebuild(app, store, follower)
    finally:
        follower.close()


def test_a_follower_of_its_own_process_does_not_give_way(app: ChronicleApplication, store: Settings) -> None:
    """``chronicle worker`` opens its own application: nobody runs commands there, and the
    follower is given nothing to give way to (a server's commands are in another process)."""
    follower = wiring.follower(store)
    try:
        assert follower.give_way is None and follower.projector.pause is None
    finally:
        follower.close()
