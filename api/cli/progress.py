"""Progress that moves: the bars and reports of the long-running commands.

- :func:`bar`: a rich progress bar on stderr when it is a terminal (stdout stays for the data:
  ``export`` without ``-o`` streams there);
- :func:`catch_up`: ``chronicle worker``'s first phase, projecting what the read models are
  behind before it follows: a bar at a terminal; otherwise (a supervisor, a log collector) a
  ``catching up`` log line after the first batch and then every few seconds; and always one
  ``caught up`` line at the end.
"""

from __future__ import annotations

import logging
import sys
import time
from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:
    from rich.progress import Progress

    from projections.runner import Follower

__all__ = ["REPORT_EVERY", "abandon", "bar", "catch_up"]

REPORT_EVERY = 5.0  # seconds between two `catching up` log lines when stderr is not a terminal


def bar(unit: str = "", *, download: bool = False) -> Progress:
    """A progress bar on stderr: description, bar, done/total (``unit`` after it; ``download``:
    in bytes, kB, MB), elapsed time."""
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        MofNCompleteColumn,
        Progress,
        ProgressColumn,
        TextColumn,
        TimeElapsedColumn,
    )

    columns: list[ProgressColumn] = [TextColumn("{task.description}"), BarColumn()]
    columns.append(DownloadColumn() if download else MofNCompleteColumn())
    if unit:
        columns.append(TextColumn(unit))
    console = Console(stderr=True)
    # At a terminal only: in a pipe or a log file a bar is noise (the summary line says it all).
    return Progress(*columns, TimeElapsedColumn(), console=console, disable=not console.is_terminal)


def abandon(shown: Progress) -> None:
    """Stop a bar and take it off the screen (a failure says why on its own line instead)."""
    shown.live.transient = True
    shown.stop()


def catch_up(runner: Follower, log: logging.Logger) -> int:
    """Project until the read models reach the store head (or a stop is asked); the events read.

    A database error ends this phase early: :meth:`Follower.run`, which comes next, retries.
    """
    began = time.monotonic()
    try:
        head = runner.application.recorder.max_notification_id() or 0
        start = min(runner.positions().values())
    except Exception as exc:  # the follower's own loop reports and retries it
        log.warning("catch-up skipped: %s: %s", type(exc).__name__, " ".join(str(exc).split()))
        return 0
    behind = head - start
    if behind <= 0:
        return 0
    interactive = sys.stderr.isatty()
    shown = bar("events") if interactive else None
    task = shown.add_task("catching up", total=behind) if shown is not None else None
    done, reported = 0, None
    try:
        if shown is not None:
            shown.start()

        def committed(position: int) -> None:  # after each transaction of a step
            nonlocal done, reported
            done = position - start
            total = max(behind, done)  # facts keep arriving while it catches up
            if shown is not None and task is not None:
                shown.update(task, completed=done, total=total)
            elif reported is None or time.monotonic() - reported >= REPORT_EVERY:
                reported = time.monotonic()
                log.info("catching up: %d of %d events", done, total, extra={"done": done, "total": total})

        while not runner.stopping.is_set():
            try:
                if runner.step(committed=committed) == 0:
                    break
                done = min(runner.positions().values()) - start
            except Exception as exc:
                log.warning("catch-up interrupted: %s: %s", type(exc).__name__, " ".join(str(exc).split()))
                break
    finally:
        if shown is not None:
            shown.stop()
    seconds = time.monotonic() - began
    if runner.stopping.is_set():
        log.info("stopped while catching up: %d of %d events", done, behind)
        typer.echo(f"Stopped while catching up: {done:,} of {behind:,} events")
        return done
    log.info(
        "caught up: %d events in %.1fs", done, seconds, extra={"events": done, "seconds": round(seconds, 3)}
    )
    typer.echo(f"Caught up: {done:,} events in {seconds:.1f}s; following")
    return done
