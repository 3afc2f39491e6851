"""``chronicle rulesets``: the game systems this installation plays, and their rules flags."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from api.cli.exits import Exit, fail


def rulesets_command(
    flags: Annotated[bool, typer.Option("--flags", help="Also list each ruleset's rules flags.")] = False,
    ruleset: Annotated[
        str | None, typer.Option("--ruleset", metavar="ID", help="Only this ruleset (its flags included).")
    ] = None,
) -> None:
    """List the installed game systems (rulesets).

    Each one's id, title, rules version, whether it is the default, and whether it has an API
    plug-in (typed GraphQL) and a demo. Rulesets are Python packages found through the
    ``chronicle.rulesets`` entry point; a broken one is listed with the reason it did not load.
    """
    from api.rulesets import plugin_for
    from domain import rulesets

    ids = rulesets.available()
    if ruleset is not None:
        if ruleset not in ids:
            fail(f"no ruleset {ruleset!r} is installed (installed: {', '.join(ids) or 'none'})", Exit.USAGE)
        ids, flags = [ruleset], True
    default = _default()
    for rid in ids:
        r = rulesets.get_ruleset(rid)
        plugin = plugin_for(rid)
        marks = [
            "default" if rid == default else "",
            "GraphQL plug-in" if plugin is not None else "no API plug-in (generic GraphQL)",
            "demo" if plugin is not None and plugin.demo is not None else "",
        ]
        typer.echo(f"{rid}  {r.title} (rules version {r.version}; {', '.join(m for m in marks if m)})")
        if flags:
            for f in r.flags_doc():
                typer.echo(f"    {f['name']} = {json.dumps(f['default'])}  [{f['ref']}] {f['doc']}")
    for name, problem in sorted(rulesets.problems().items()):
        typer.echo(f"{name}  NOT LOADED: {problem}")


def _default() -> str | None:
    from domain import rulesets
    from domain.errors import DomainError

    try:
        return rulesets.default_ruleset()
    except DomainError:
        return None
