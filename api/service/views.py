"""Wiring the read models (``projections``) to the configured store.

- ``open_views(settings)``: the view store beside the events (PostgreSQL: ``view_*``
  tables in the events' schema; SQLite: ``<name>-views.sqlite`` next to the events file);
- ``follower(settings, application=None)``: a :class:`~projections.runner.Follower`
  reading the log through ``application`` (the API's, in process) or its own
  application, reopened after errors (the ``chronicle worker`` process);
- ``rebuild(settings, projections, ...)``: drop and rebuild views from the log;
- ``rebuild_campaign(settings, campaign_id, ...)``: re-derive one campaign's rows and lift
  its quarantine (``chronicle rebuild --campaign``);
- ``quarantined(settings)``: the campaigns whose read models are stopped at a bad fact.

Where the follower runs: in process for the embedded SQLite store (``create_app`` starts
it), as a separate ``chronicle worker`` for PostgreSQL. The in-memory store has no views.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any
from uuid import UUID

from api.service import observability
from api.service.application import ChronicleApplication
from api.service.settings import Settings
from api.service.store import open_application
from projections.projector import PROJECTIONS, Failure
from projections.runner import (
    DEFAULT_BATCH,
    DEFAULT_LOOKAHEAD,
    CampaignRebuildResult,
    Follower,
    RebuildResult,
)
from projections.runner import rebuild as rebuild_views
from projections.runner import rebuild_campaign as rebuild_one
from projections.storage import PostgresViews, SQLiteViews, ViewStore, views_path

__all__ = ["follower", "in_process", "open_views", "quarantined", "rebuild", "rebuild_campaign"]


def in_process(settings: Settings) -> bool:
    """Whether the API runs the follower itself (the embedded SQLite store)."""
    return settings.database.kind == "sqlite"


def open_views(settings: Settings) -> ViewStore:
    """The view store for ``settings``' event store (its tables are created if missing)."""
    db = settings.database
    if db.kind == "postgresql":
        return PostgresViews(db)
    if db.kind == "sqlite":
        return SQLiteViews(views_path(db.path))
    raise ValueError("read models need a persistent store (sqlite or postgresql), not memory:")


def follower(
    settings: Settings, application: ChronicleApplication | None = None, **options: float
) -> Follower:
    """A follower for ``settings``; it opens (and reopens) its own application unless given one.
    Given one (in the server's process), it gives way to that application's commands
    (:meth:`ChronicleApplication.give_way`; see :class:`~projections.runner.Follower`)."""
    source = application if application is not None else (lambda: open_application(settings))
    listen = settings.database if settings.database.kind == "postgresql" else None
    return Follower(
        source,  # type: ignore[arg-type]
        lambda: open_views(settings),
        listen=listen,
        on_quarantine=_count_quarantine,
        give_way=application.give_way if application is not None else None,
        **options,  # type: ignore[arg-type]
    )


def _count_quarantine(_: Failure) -> None:
    observability.PROJECTION_QUARANTINES.inc()


def rebuild(
    settings: Settings,
    projections: Iterable[str] = PROJECTIONS,
    *,
    batch_size: int = DEFAULT_BATCH,
    lookahead: int = DEFAULT_LOOKAHEAD,
    application: ChronicleApplication | None = None,
    progress: Callable[[int, int], None] | None = None,
    pause_gc: bool = False,
    overlap: bool = True,
) -> RebuildResult:
    """Drop ``projections`` and rebuild them from the log, ``batch_size`` events per transaction
    (folded ``lookahead`` at a time; ``pause_gc`` and ``overlap``: see
    :class:`~projections.runner.Follower`)."""
    source = application if application is not None else (lambda: open_application(settings))
    return rebuild_views(
        source,
        lambda: open_views(settings),
        projections,
        batch_size=batch_size,
        lookahead=lookahead,
        progress=progress,
        pause_gc=pause_gc,
        overlap=overlap,
    )


def rebuild_campaign(
    settings: Settings,
    campaign_id: UUID | str,
    *,
    batch_size: int = DEFAULT_BATCH,
    application: ChronicleApplication | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> CampaignRebuildResult:
    """Re-derive one campaign's rows from its log and lift its quarantine
    (:func:`projections.runner.rebuild_campaign`)."""
    source = application if application is not None else (lambda: open_application(settings))
    return rebuild_one(
        source,  # type: ignore[arg-type]
        lambda: open_views(settings),
        campaign_id,
        batch_size=batch_size,
        progress=progress,
    )


def quarantined(settings: Settings) -> list[dict[str, Any]]:
    """The quarantined campaigns (see :meth:`projections.storage.ViewStore.quarantined`)."""
    store = open_views(settings)
    try:
        return store.quarantined()
    finally:
        store.close()
