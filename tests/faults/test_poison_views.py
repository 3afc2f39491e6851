"""Issue 13 §3: one bad fact must not stop the read models of every campaign.

On SQLite (the API's in-process follower) and PostgreSQL (a real ``chronicle worker``):

- a fact holding NUL, sent the way an attacker would (``addNote`` through the API) and stored
  directly through the application, is projected (PostgreSQL's text and jsonb refuse NUL: the
  views escape it losslessly) and reads back exactly; the other campaigns keep up;
- a campaign whose rows fail to write (a trigger refuses them) is quarantined alone: the other
  campaigns keep up, ``/readyz`` stays ready, ``/metrics`` counts it, the log names campaign and
  position, its later facts are skipped, and ``chronicle rebuild --campaign`` repairs it;
- a fact whose projection raises (a payload the fold cannot read, stored by an older release)
  quarantines its campaign, also for a fresh follower; a repair that still fails says where.

Where an input check of a later release refuses the NUL text (``INVALID_INPUT``), the fact is
written straight into the store instead, as an earlier release would have stored it: the read
models must cope with what is already stored.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from uuid import UUID

import httpx
import pytest
from psycopg.types.json import set_json_loads

from api.cli.process import Proc, clean_env, start, start_api, wait_until
from api.service import views as wiring
from api.service.application import ChronicleApplication
from api.service.settings import Settings
from api.service.store import open_application
from domain.errors import DomainError
from domain.ledger import Entry
from domain.rulesets.stellar_winds.facts import CATALOGUE as facts
from projections import codec, runner
from projections.storage import PostgresViews, ViewStore, connect_postgres, views_path
from tests.conftest import connect
from tests.graphql_helpers import GQL, create_campaign, gid

REPO = Path(__file__).resolve().parents[2]
NUL_TEXT = "a\x00b"  # what PostgreSQL's text and jsonb refuse
WAIT = 60.0  # generous: these wait for a state, they do not measure time


# ------------------------------------------------------------------------------- helpers
def store_raw(app: ChronicleApplication, campaign_id: UUID, fact_type: str, payload: dict[str, Any]) -> int:
    """Append a fact without any of today's checks, as an earlier release could have stored it."""
    campaign = app.repository.get(campaign_id)
    position = campaign.version + 1
    campaign.record(
        Entry(
            seq=position,
            type=fact_type,
            version=facts.version(fact_type),
            payload=payload,
            meta={"recorded_at": "2024-01-01T00:00:00+00:00"},
        )
    )
    app.save(campaign)
    return position


def record_or_store_raw(
    app: ChronicleApplication, cid: UUID, fact_type: str, payload: dict[str, Any], full: bool = False
) -> int:
    """Record through today's checks; what they refuse is stored as an earlier release could have."""
    try:
        return app.record(cid, fact_type, payload).position
    except DomainError:
        if full:  # the schema's defaults as today's catalogue fills them, the nasty text kept
            clean = {**payload, "name": "placeholder", "creature_id": "placeholder"}
            payload = facts.validate(fact_type, clean) | {k: payload[k] for k in ("name", "creature_id")}
        return store_raw(app, cid, fact_type, payload)


def note(g: GQL, cid: str, token: str, text: str) -> dict[str, Any]:
    """addNote's payload; a text the input sanitiser refuses before the operation runs comes back as
    ``userErrors`` here too (``{"code": "INVALID_INPUT", ...}``), so callers branch in one place."""
    query = (
        "mutation($i: AddNoteInput!) { addNote(input: $i) { userErrors { code message field } position } }"
    )
    body = g.raw(query, {"i": {"campaignId": gid("Campaign", cid, cid), "text": text}}, token)
    if body.get("errors"):
        error = body["errors"][0]
        return {"userErrors": [{"code": error["extensions"]["code"], "message": error["message"]}]}
    out: dict[str, Any] = body["data"]["addNote"]
    return out


def noted(g: GQL, cid: str, token: str, text: str) -> int:
    out = note(g, cid, token, text)
    assert out["userErrors"] == [], out
    return int(out["position"])


def in_views(views: ViewStore, cid: str, position: int) -> bool:
    return any(r["position"] == position for r in views.history(cid, after_position=position - 1, first=1))


def positions(views: ViewStore, cid: str) -> list[int]:
    return [r["position"] for r in views.history(cid, first=500)]


def metric(url: str, name: str) -> float:
    """A gauge from /metrics (-1, "not measurable", is read again: see ``views`` below)."""
    for _ in range(20):
        text = httpx.get(f"{url}/metrics", timeout=30).text
        found = re.search(rf"^{name} (\S+)$", text, re.M)
        assert found, f"{name} is not on /metrics"
        if float(found.group(1)) != -1:
            break
        time.sleep(0.25)
    return float(found.group(1))


def ready(http: httpx.Client) -> int:
    """/readyz's status, asked again after a 503 for a cut connection (see ``views`` below)."""
    for _ in range(20):
        response = http.get("/readyz")
        if response.status_code == 200 or "terminating connection" not in response.text:
            break
        time.sleep(0.25)
    return response.status_code


@contextmanager
def served(store: Settings, workdir: Path) -> Iterator[tuple[str, Proc]]:
    """``chronicle serve`` on the store, and on PostgreSQL a ``chronicle worker``: (API URL, the
    process that projects: the API itself on SQLite, the worker on PostgreSQL)."""
    env = clean_env(CHRONICLE_DATABASE_URL=store.database_url, CHRONICLE_LOG_LEVEL="info")
    url, api = start_api(env, workdir)
    follower = api
    worker = None
    try:
        if store.database.kind == "postgresql":
            worker = follower = start("worker", ["worker", "--batch-size", "50"], env, workdir)
        yield url, follower
    finally:
        if worker is not None:
            worker.terminate()
        api.terminate()


@contextmanager
def refusing_rows_of(store: Settings, campaign_id: str) -> Iterator[None]:
    """A trigger (a real database error, no mock) that refuses every history row of one campaign."""
    if store.database.kind == "postgresql":
        schema = store.database.schema
        with connect(store.database) as conn:
            conn.execute(
                f"CREATE FUNCTION {schema}.refuse_rows() RETURNS trigger LANGUAGE plpgsql AS "
                "$$ BEGIN RAISE EXCEPTION 'rows of this campaign are refused (test trigger)'; END $$"
            )
            conn.execute(
                f"CREATE TRIGGER refuse_rows BEFORE INSERT OR UPDATE ON {schema}.view_facts FOR EACH ROW "
                f"WHEN (NEW.campaign_id = '{campaign_id}') EXECUTE FUNCTION {schema}.refuse_rows()"
            )
        try:
            yield
        finally:
            with connect(store.database) as conn:
                conn.execute(f"DROP TRIGGER IF EXISTS refuse_rows ON {schema}.view_facts")
        return
    import sqlite3

    path = views_path(store.database.path)
    with sqlite3.connect(path, timeout=30) as conn:
        conn.execute(
            "CREATE TRIGGER refuse_rows BEFORE INSERT ON view_facts "
            f"WHEN NEW.campaign_id = '{campaign_id}' "
            "BEGIN SELECT RAISE(ABORT, 'rows of this campaign are refused (test trigger)'); END"
        )
    try:
        yield
    finally:
        with sqlite3.connect(path, timeout=30) as conn:
            conn.execute("DROP TRIGGER IF EXISTS refuse_rows")


def chronicle(store: Settings, *args: str) -> subprocess.CompletedProcess[str]:
    env = clean_env(CHRONICLE_DATABASE_URL=store.database_url)
    return subprocess.run(
        [sys.executable, "-m", "api.cli.main", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


class ReaderViews(PostgresViews):
    """The test's own view connection under its own application name, apart from the
    ``chronicle-views`` connections of the processes under test (which recover from a cut
    connection by design; the test's reads need not)."""

    def _connection(self) -> Any:
        if self._conn is None or self._conn.closed or self._conn.broken:
            self._conn = connect_postgres(self.db, "chronicle-test-reader")
            set_json_loads(codec.loads, self._conn)
        return self._conn


@pytest.fixture
def views(store: Settings) -> Iterator[ViewStore]:
    v = ReaderViews(store.database) if store.database.kind == "postgresql" else wiring.open_views(store)
    try:
        yield v
    finally:
        v.close()


# --------------------------------------------------------------------------------- tests
@pytest.mark.e2e
@pytest.mark.parametrize("via", ["api", "application"])
def test_a_nul_fact_is_projected_exactly_and_the_other_campaigns_keep_up(
    store: Settings, views: ViewStore, tmp_path: Path, via: str
) -> None:
    with served(store, tmp_path) as (url, follower), httpx.Client(base_url=url, timeout=30) as http:
        g = GQL(http)
        poisoned, gm_p = create_campaign(g, "Poisoned")
        bystander, gm_b = create_campaign(g, "Bystander")
        noted(g, bystander, gm_b, "before")
        position = None
        if via == "api":
            out = note(g, poisoned, gm_p, NUL_TEXT)
            if out["userErrors"]:  # refused by a later release's input checks: what was stored before
                assert out["userErrors"][0]["code"] == "INVALID_INPUT", out
            else:
                position = int(out["position"])
        if position is None:
            app = open_application(store)
            try:
                try:
                    position = app.record(UUID(poisoned), "NoteAdded", {"text": NUL_TEXT}).position
                except DomainError:  # refused today: store it as an earlier release did
                    position = store_raw(app, UUID(poisoned), "NoteAdded", {"text": NUL_TEXT})
            finally:
                app.close()
        after = noted(g, bystander, gm_b, "after the poison")

        wait_until(lambda: in_views(views, bystander, after), "the other campaign's views", WAIT, follower)
        wait_until(lambda: in_views(views, poisoned, position), "the NUL fact's row", WAIT, follower)
        row = next(r for r in views.history(poisoned) if r["position"] == position)
        assert row["payload"] == {"text": NUL_TEXT}  # lossless, read back exactly
        line = next(r for r in views.log_lines(poisoned) if r["position"] == position)
        assert NUL_TEXT in line["line"]
        assert views.quarantined() == []
        assert ready(http) == 200
        assert metric(url, "chronicle_projection_quarantined_campaigns") == 0


@pytest.mark.e2e
def test_a_campaign_whose_rows_fail_is_quarantined_alone_and_rebuild_campaign_repairs_it(
    store: Settings, views: ViewStore, tmp_path: Path
) -> None:
    with served(store, tmp_path) as (url, follower), httpx.Client(base_url=url, timeout=30) as http:
        g = GQL(http)
        broken, gm_x = create_campaign(g, "Broken")
        other, gm_o = create_campaign(g, "Other")
        first = noted(g, broken, gm_x, "one")
        noted(g, other, gm_o, "one")
        wait_until(lambda: in_views(views, broken, first), "the views to catch up", WAIT, follower)

        with refusing_rows_of(store, broken):
            bad = noted(g, broken, gm_x, "refused by the database")
            two = noted(g, other, gm_o, "two")
            wait_until(lambda: in_views(views, other, two), "the other campaign's views", WAIT, follower)
            wait_until(lambda: views.quarantined() != [], "the quarantine", WAIT, follower)

            [row] = views.quarantined()
            assert (row["campaign_id"], row["position"]) == (broken, bad)
            assert "refused (test trigger)" in row["error"]
            assert metric(url, "chronicle_projection_quarantined_campaigns") == 1
            assert ready(http) == 200  # one quarantined campaign is no outage
            logged = [
                line
                for line in follower.json_lines()
                if line.get("campaign_id") == broken and line.get("position") == bad
            ]
            assert logged and logged[0]["level"] == "error", follower.logs()

            skipped = noted(g, broken, gm_x, "skipped while quarantined")
            three = noted(g, other, gm_o, "three")
            wait_until(lambda: in_views(views, other, three), "the other campaign's views", WAIT, follower)
            assert positions(views, broken) == [first]  # its rows stay as they were

        repaired = chronicle(store, "rebuild", "--campaign", broken)
        assert repaired.returncode == 0, repaired.stderr
        assert "Rebuilt campaign" in repaired.stdout
        assert positions(views, broken) == [first, bad, skipped]
        assert views.quarantined() == []
        assert metric(url, "chronicle_projection_quarantined_campaigns") == 0
        live = noted(g, broken, gm_x, "live again")
        wait_until(lambda: in_views(views, broken, live), "the repaired campaign followed", WAIT, follower)

    incremental = views.dump(written_at=False)
    wiring.rebuild(store)
    assert views.dump(written_at=False) == incremental  # the repair left exactly what a full rebuild derives


def test_a_fact_the_fold_cannot_read_stops_only_its_campaign(
    store: Settings, app: ChronicleApplication, views: ViewStore
) -> None:
    broken = app.create_campaign("Broken")
    other = app.create_campaign("Other")
    app.record(broken, "NoteAdded", {"text": "fine"})
    bad = store_raw(app, broken, "DamageTaken", {})  # an older release stored a payload without a target
    after = app.record(other, "NoteAdded", {"text": "after"}).position

    follower = wiring.follower(store, app, batch_size=500)
    try:
        follower.catch_up()  # today: raises at the bad fact, for every campaign
        assert follower.quarantined == 1
    finally:
        follower.close()
    assert in_views(views, str(other), after)
    [row] = views.quarantined()
    assert (row["campaign_id"], row["position"]) == (str(broken), bad)
    assert row["error"].startswith("KeyError")
    assert views.tracking_position() == app.recorder.max_notification_id()

    # Persisted: a fresh follower (a restarted worker) skips the campaign's later facts too.
    later = store_raw(app, broken, "NoteAdded", {"text": "later"})
    more = app.record(other, "NoteAdded", {"text": "more"}).position
    fresh = wiring.follower(store, batch_size=500)
    try:
        fresh.catch_up()
        assert fresh.quarantined == 0  # nothing new to quarantine: it was already
    finally:
        fresh.close()
    assert in_views(views, str(other), more)
    assert not in_views(views, str(broken), later)

    # A repair that still fails says where, and leaves the campaign quarantined.
    with pytest.raises(runner.RebuildFailed) as failed:
        runner.rebuild_campaign(app, lambda: wiring.open_views(store), broken)
    assert failed.value.failure.position == bad
    assert [r["campaign_id"] for r in views.quarantined()] == [str(broken)]
    cli = chronicle(store, "rebuild", "--campaign", str(broken))
    assert cli.returncode == 1
    assert f"still fails at position {bad}" in cli.stderr
    listed = chronicle(store, "quarantine")
    assert listed.returncode == 0 and str(broken) in listed.stdout and f"at position {bad}" in listed.stdout


NASTY = [
    "a\x00b",
    "\x00",
    "\ue000",  # the escape character itself
    "\ue0000041",  # text that looks like an escape
    "x\\u0000y",  # a backslash escape, as text
    "NaN Infinity",
    "ünïcødé ✓ 🐉",
]


def test_any_stored_text_reads_back_exactly_from_every_view(
    store: Settings, app: ChronicleApplication, views: ViewStore
) -> None:
    cid = app.create_campaign("Nasty")
    stored = []
    for i, text in enumerate(NASTY):
        creature = f"c{i}{text}"
        sheet = {
            "creature_id": creature,
            "name": text,
            "kind": "pc",
            "level": 1,
            "abilities": {"str": 10, "con": 10, "dex": 10, "int": 10, "wis": 10, "cha": 10},
            "max_hp": 10,
            "surges_per_day": 1,
            "defenses": {"ac": 10, "fort": 10, "ref": 10, "will": 10},
        }
        stored.append((creature, text, record_or_store_raw(app, cid, "CreatureRegistered", sheet, True)))
        stored[-1] = (creature, text, record_or_store_raw(app, cid, "NoteAdded", {"text": text}))
    follower = wiring.follower(store, app, batch_size=500)
    try:
        follower.catch_up()
    finally:
        follower.close()
    assert views.quarantined() == []
    notes = {r["position"]: r["payload"]["text"] for r in views.history(str(cid), fact_types=["NoteAdded"])}
    for creature, text, position in stored:
        assert notes[position] == text
        row = views.get_creature(str(cid), creature)
        assert row is not None and row["name"] == text and row["state"]["name"] == text
        assert row["creature_id"] == creature
        assert [r["position"] for r in views.history(str(cid), creature=creature)]  # filter by the id


def test_a_full_rebuild_lifts_every_quarantine(
    store: Settings, app: ChronicleApplication, views: ViewStore
) -> None:
    broken = app.create_campaign("Broken")
    first = app.record(broken, "NoteAdded", {"text": "one"}).position
    follower = wiring.follower(store, app, batch_size=500)
    try:
        follower.catch_up()
        with refusing_rows_of(store, str(broken)):
            bad = app.record(broken, "NoteAdded", {"text": "two"}).position
            follower.catch_up()
        assert [r["campaign_id"] for r in views.quarantined()] == [str(broken)]
        assert positions(views, str(broken)) == [first]
    finally:
        follower.close()
    wiring.rebuild(store, application=app)  # the cause is gone: everything is derived again
    assert views.quarantined() == []
    assert positions(views, str(broken)) == [first, bad]
