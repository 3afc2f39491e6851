"""P5's floor: eventsourcing's own ``ProjectionRunner`` writing Chronicle's view rows.

The documented library route (``eventsourcing.projection``): a ``Projection`` whose view
subclasses ``PostgresTrackingRecorder`` and writes its rows and ``_insert_tracking`` in one
transaction, run by ``ProjectionRunner`` (catch-up, then LISTEN/NOTIFY). Its runner hands
over one event at a time, so it commits one transaction per event.

To make the rows *equivalent*, the projection computes them with Chronicle's own
:class:`~projections.projector.Projector` (one event per batch) and writes them with the
same SQL as :class:`~projections.storage.PostgresViews` (its ``_replace`` / ``_upsert``), into
the same ``view_*`` tables, through the library's cursor. Only the library's tracking table
(``benchlibrary_tracking``) differs from ours. So the comparison isolates the runner: one
event per transaction vs the follower's batches.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from eventsourcing.persistence import Tracking
from eventsourcing.postgres import PostgresTrackingRecorder
from eventsourcing.projection import Projection, ProjectionRunner
from psycopg import Cursor, sql
from psycopg.types.json import Jsonb

from api.service.application import ChronicleApplication
from api.service.settings import Settings
from api.service.store import persistence_env
from projections.projector import PROJECTIONS, Projector
from projections.storage import ViewStore

TRACKING_TABLE = "benchlibrary_tracking"  # the library names it after the projection


class _CursorViews(ViewStore):
    """Chronicle's view-writing SQL, run on a cursor someone else's transaction owns."""

    def __init__(self, schema: str, curs: Cursor[Any]) -> None:
        super().__init__()
        self.prefix = sql.Identifier(schema).as_string(None) + "."
        self.curs = curs

    def _execute(self, query: str, params: Sequence[Any] = ()) -> int:
        self.curs.execute(query.encode(), tuple(params))
        return self.curs.rowcount

    def _executemany(self, query: str, rows: Iterable[Sequence[Any]]) -> None:
        self.curs.executemany(query.encode(), [tuple(r) for r in rows])

    def _dump(self, value: Any) -> Any:
        return Jsonb(value)


class LibraryView(PostgresTrackingRecorder):
    """The materialised view: Chronicle's rows + the library's tracking, one transaction."""

    def write(self, batch: Any, tracking: Tracking) -> None:
        with self.datastore.transaction(commit=True) as curs:
            views = _CursorViews(self.datastore.schema or "public", curs)
            views._replace("view_creatures", batch.creatures)
            views._replace("view_encounters", batch.encounters)
            views._upsert("view_facts", batch.facts.values())
            views._upsert("view_log", batch.log.values())
            self._insert_tracking(curs, tracking)


@dataclass
class _Decoded:
    """A notification already decoded by the library (Projector's ``_apply`` decodes through
    its source's mapper; this mapper hands the event back)."""

    id: int
    event: Any

    @property
    def originator_id(self) -> Any:
        return self.event.originator_id

    @property
    def originator_version(self) -> int:
        return int(self.event.originator_version)


class _PassThrough:
    @staticmethod
    def to_domain_event(n: _Decoded) -> Any:
        return n.event


class _Source:
    def __init__(self, app: ChronicleApplication) -> None:
        self.mapper = _PassThrough()
        self.repository = app.repository
        self.recorder = app.recorder


class ChronicleViews(Projection[LibraryView]):
    name = "benchlibrary"
    topics: tuple[str, ...] = ()
    source_app: ClassVar[ChronicleApplication | None] = None

    def __init__(self, view: LibraryView) -> None:
        super().__init__(view)
        assert self.source_app is not None
        self.projector = Projector(_Source(self.source_app))
        self.position = 0

    def process_event(self, domain_event: Any, tracking: Tracking) -> None:  # type: ignore[override]
        positions = dict.fromkeys(PROJECTIONS, self.position)
        batch = self.projector.project([_Decoded(tracking.notification_id, domain_event)], positions)  # type: ignore[list-item]
        self.view.write(batch, tracking)
        self.position = tracking.notification_id


def run(settings: Settings, app: ChronicleApplication, timeout: float = 3600) -> float:
    """Project the whole log with the library's runner from scratch; return events/s."""
    env = persistence_env(settings)
    env = {**env, **{f"{ChronicleApplication.name.upper()}_{k}": v for k, v in env.items()}}
    env.update({f"{ChronicleViews.name.upper()}_{k}": v for k, v in persistence_env(settings).items()})
    total = app.recorder.max_notification_id() or 0
    ChronicleViews.source_app = app
    began = time.perf_counter()
    with ProjectionRunner(
        application_class=ChronicleApplication,
        projection_class=ChronicleViews,
        view_class=LibraryView,
        env=env,
    ) as runner:
        deadline = time.monotonic() + timeout
        while (runner.view.max_tracking_id(runner.app_name) or 0) < total:
            runner.run_forever(timeout=0.02)  # re-raises a projection error
            if time.monotonic() > deadline:
                raise TimeoutError("the library runner did not catch up")
        took = time.perf_counter() - began
    return total / took


def reset(settings: Settings) -> None:
    """Forget the library runner's tracking (the view tables are reset by the caller)."""
    import psycopg

    db = settings.database
    with psycopg.connect(
        host=db.host, port=db.port, user=db.user, password=db.password, dbname=db.dbname, autocommit=True
    ) as conn:
        conn.execute(
            sql.SQL("DROP TABLE IF EXISTS {}.{}").format(
                sql.Identifier(db.schema or "public"), sql.Identifier(TRACKING_TABLE)
            )
        )
