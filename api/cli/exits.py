"""The ``chronicle`` command's exit statuses: one per kind of failure, the same in every command.

The codes come from BSD's sysexits.h where one fits (65-78), so scripts and supervisors can tell
a bad file from a missing campaign from a bad configuration. ``chronicle --help`` shows this
table, and ``docs/operations.md`` documents it (a test keeps all three in step).
"""

from __future__ import annotations

from enum import IntEnum
from typing import NoReturn

import typer

__all__ = ["MEANINGS", "Exit", "fail", "help_table"]


class Exit(IntEnum):
    OK = 0
    ERROR = 1  # click/typer's status for an unexpected error (it prints the traceback)
    USAGE = 2  # click's status for a usage error
    DATA = 65  # EX_DATAERR
    NOT_FOUND = 66  # EX_NOINPUT
    UNAVAILABLE = 69  # EX_UNAVAILABLE
    CANT_WRITE = 73  # EX_CANTCREAT
    CONFIG = 78  # EX_CONFIG
    INTERRUPTED = 130  # 128 + SIGINT, as shells report it


MEANINGS: dict[Exit, str] = {
    Exit.OK: "done (for serve and worker: stopped by SIGTERM or Ctrl-C, after a graceful shutdown)",
    Exit.ERROR: "an unexpected error (a bug: the traceback says where)",
    Exit.USAGE: "a bad option or argument (unknown option, format, projection; out-of-range selection)",
    Exit.DATA: "the input data is wrong (an import file refused; nothing was stored)",
    Exit.NOT_FOUND: "not found: no such campaign or encounter",
    Exit.UNAVAILABLE: "cannot listen on the host and port (in use, or not permitted)",
    Exit.CANT_WRITE: "cannot write the output file",
    Exit.CONFIG: "a configuration error: a CHRONICLE_* setting, or the store cannot be opened",
    Exit.INTERRUPTED: "interrupted (Ctrl-C) before it finished",
}


def fail(message: str, code: Exit) -> NoReturn:
    """One line on stderr, ``chronicle: MESSAGE``, and exit with ``code``."""
    typer.echo(f"chronicle: {message}", err=True)
    raise typer.Exit(int(code))


def help_table() -> str:
    """The table for ``chronicle --help`` (``\\b`` keeps click from rewrapping it)."""
    rows = "\n".join(f"  {int(code):>3}  {meaning}" for code, meaning in MEANINGS.items())
    return f"\b\nExit statuses:\n{rows}"
