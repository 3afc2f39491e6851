"""Export -> import -> export is byte-identical, with the same state and history: on generated
campaigns with corrections (hypothesis), on the demo, and from SQLite into PostgreSQL."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from api.exports import service
from api.service.application import ChronicleApplication
from api.service.demo import create_demo
from api.service.settings import Settings
from api.service.store import open_application
from domain.errors import DomainError
from tests.unit.conftest import Table
from tests.unit.test_fold_properties import as_fact, campaigns

SETTINGS = settings(
    max_examples=12,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

corrections = st.lists(
    st.tuples(
        st.sampled_from(["revoke", "restore", "ruling", "overturn", "amend", "note"]), st.integers(0, 1000)
    ),
    max_size=6,
)


def play(app: ChronicleApplication, spec: dict[str, Any], fixes: list[tuple[str, int]]) -> UUID:
    """A generated campaign (tests.unit.test_fold_properties) plus generated corrections."""
    t = Table(app)
    ids = []
    for i, sheet in enumerate(spec["sheets"]):
        cid = f"c{i}"
        ids.append(cid)
        if i == spec["monster"]:
            t.monster(
                cid, max_hp=sheet["max_hp"], con=sheet["con"], resist=sheet["resist"], vuln=sheet["vuln"]
            )
        else:
            t.pc(
                cid,
                max_hp=sheet["max_hp"],
                surges=sheet["surges"],
                con=sheet["con"],
                resist=sheet["resist"],
                vuln=sheet["vuln"],
            )
    accepted: list[int] = []
    for cmd in spec["commands"]:
        fact_type, payload = as_fact(cmd, ids, t.summary())
        try:
            accepted.append(
                app.record(t.cid, fact_type, payload, meta={"recorded_at": "2025-01-01T00:00:00"}).position
            )
        except DomainError:
            pass
    revocations: list[int] = []
    for kind, n in fixes:
        try:
            if kind == "revoke" and accepted:
                revocations.append(app.revoke(t.cid, accepted[n % len(accepted)], "generated").position)
            elif kind == "restore" and revocations:
                app.restore(t.cid, revocations[n % len(revocations)], "generated")
            elif kind == "ruling":
                app.record_ruling(t.cid, f"r-{n}", "Does it count?", "yes")
            elif kind == "overturn":
                app.resolve_ruling(t.cid, f"r-{n}", "overturned", "no")
            elif kind == "amend" and accepted:
                target = accepted[n % len(accepted)]
                if app.ledger(t.cid).entry(target).type == "DamageTaken":
                    app.amend(t.cid, target, {"amount": n % 7}, "typo")
            else:
                app.record(t.cid, "NoteAdded", {"text": f'note {n} \u2728 with "quotes"\nand a newline'})
        except DomainError:
            pass
    return t.cid


def round_trip(source: ChronicleApplication, cid: UUID, target: ChronicleApplication) -> tuple[UUID, str]:
    exported = "".join(service.export(source, cid, "jsonl"))
    new = service.import_lines(target, exported.encode().splitlines(keepends=True))
    assert new != cid or source is not target
    assert "".join(service.export(target, new, "jsonl")) == exported
    assert target.summary(new) == source.summary(cid)
    a, b = source.ledger(cid), target.ledger(new)
    assert [(e.seq, e.type, e.payload, e.meta) for e in a.entries] == [
        (e.seq, e.type, e.payload, e.meta) for e in b.entries
    ]
    for fmt in ("md", "html"):
        assert "".join(service.export(target, new, fmt)) == "".join(service.export(source, cid, fmt))
    # the imported campaign reads the same from a fresh process, too
    assert target.summary(new, a.last_seq, "recorded") == source.summary(cid, a.last_seq, "recorded")
    return new, exported


@SETTINGS
@given(spec=campaigns(max_commands=20), fixes=corrections)
def test_generated_campaigns_round_trip_in_memory(
    memory_app: ChronicleApplication, spec: dict[str, Any], fixes: list[tuple[str, int]]
) -> None:
    round_trip(memory_app, play(memory_app, spec, fixes), memory_app)


def test_the_demo_moves_from_sqlite_to_postgresql(sqlite_store: Settings, postgres_store: Settings) -> None:
    lite, pg = open_application(sqlite_store), open_application(postgres_store)
    try:
        new, exported = round_trip(lite, create_demo(lite), pg)
        fresh = open_application(postgres_store)  # nothing cached: everything read back from PostgreSQL
        try:
            assert "".join(service.export(fresh, new, "jsonl")) == exported
            assert (
                fresh.ledger(new).orphans
                == lite.ledger(_only(lite)).orphans
                == {36: "no active effect 'e33'"}
            )
        finally:
            fresh.close()
    finally:
        lite.close()
        pg.close()


@settings(
    max_examples=4,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(spec=campaigns(max_commands=15), fixes=corrections)
def test_generated_campaigns_move_from_sqlite_to_postgresql(
    sqlite_store: Settings, postgres_store: Settings, spec: dict[str, Any], fixes: list[tuple[str, int]]
) -> None:
    lite, pg = open_application(sqlite_store), open_application(postgres_store)
    try:
        round_trip(lite, play(lite, spec, fixes), pg)
    finally:
        lite.close()
        pg.close()


def _only(app: ChronicleApplication) -> UUID:
    (cid,) = list(app._campaigns)
    return cid
