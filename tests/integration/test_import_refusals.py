"""A corrupt, truncated or unknown-version file is refused with its line number; nothing is stored."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable

import pytest

from api.exports import service
from api.exports.jsonl import ImportRefused
from api.service.application import ChronicleApplication
from api.service.demo import create_demo


@pytest.fixture
def exported(app: ChronicleApplication) -> list[str]:
    return list(service.export(app, create_demo(app), "jsonl"))


def _resign(lines: list[str]) -> list[str]:
    """Fix the trailer's count and checksum after an edit, so only the edit itself is wrong."""
    body = lines[:-1]
    trailer = {
        "trailer": True,
        "facts": len(body) - 1,
        "sha256": hashlib.sha256("".join(body).encode()).hexdigest(),
    }
    return [*body, json.dumps(trailer, sort_keys=True, separators=(",", ":")) + "\n"]


def _edit(lines: list[str], number: int, change: Callable[[dict[str, object]], None]) -> list[str]:
    obj = json.loads(lines[number - 1])
    change(obj)
    out = list(lines)
    out[number - 1] = json.dumps(obj, sort_keys=True, separators=(",", ":")) + "\n"
    return _resign(out)


CASES: dict[str, tuple[Callable[[list[str]], list[str]], int, str]] = {
    "truncated": (lambda ls: ls[:40], 41, "without the trailer line: it is truncated"),
    "cut mid-line": (lambda ls: [*ls[:40], ls[40][:25]], 41, "not valid JSON"),
    "unknown version": (
        lambda ls: _edit(ls, 1, lambda o: o.update(version=7)),
        1,
        "unknown export version 7",
    ),
    "not an export": (lambda ls: ['{"hello": 1}\n', *ls[1:]], 1, "not a Chronicle campaign export"),
    "bad fact": (lambda ls: _edit(ls, 20, lambda o: o["payload"].update(amount=-3)), 20, "refused"),
    "unknown type": (lambda ls: _edit(ls, 12, lambda o: o.update(type="Fireball")), 12, "unknown fact type"),
    "newer fact version": (
        lambda ls: _edit(ls, 12, lambda o: o.update(version=9)),
        12,
        "version 9 is unknown",
    ),
    "fold refuses": (
        lambda ls: _edit(ls, 54, lambda o: o["payload"].update(creature="mira")),
        54,
        "is refused: Mira is not dying",
    ),
    "gap": (lambda ls: _resign([*ls[:30], *ls[31:]]), 31, "position 32 where 31 was expected"),
    "edited": (
        lambda ls: [*ls[:5], ls[5].replace("Goblin Cutter", "Goblin Cuter"), *ls[6:]],
        77,  # the checksum line after the demo's 76 facts
        "checksum mismatch",
    ),
    "partial": (lambda ls: ls, 1, "only part of a campaign"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_bad_file_is_refused_with_its_line_and_nothing_is_stored(
    app: ChronicleApplication, exported: list[str], case: str
) -> None:
    damage, line, reason = CASES[case]
    if case == "partial":
        cid = next(iter(app._campaigns))
        exported = list(service.export(app, cid, "jsonl", first=3, last=9))
    before = app.recorder.max_notification_id()
    with pytest.raises(ImportRefused) as err:
        service.import_lines(app, damage(exported))
    assert err.value.line == line, str(err.value)
    assert reason in str(err.value)
    assert str(err.value).startswith(f"line {line}: ")
    assert app.recorder.max_notification_id() == before


def test_the_untouched_file_imports(app: ChronicleApplication, exported: list[str]) -> None:
    before = app.recorder.max_notification_id() or 0
    new = service.import_lines(app, exported)
    assert (app.recorder.max_notification_id() or 0) == before + len(exported) - 1  # Started + every fact
    assert list(service.export(app, new, "jsonl")) == exported
