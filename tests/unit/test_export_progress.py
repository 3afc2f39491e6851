"""Progress that moves: an export reports each pass over the facts as it makes it, and an import
reports each batch it stores (what the command line's bars show)."""

from __future__ import annotations

import pytest

from api.exports import jsonl, service
from api.service import application as application_module
from api.service.demo import create_demo
from tests.unit.conftest import memory_application

Call = tuple[str, int, int]


@pytest.mark.parametrize("fmt", ["md", "html"])
def test_the_summary_pass_is_reported_fact_by_fact_before_the_first_chunk(fmt: service.Format) -> None:
    app = memory_application()
    cid = create_demo(app)
    source, sel = service.prepare(app, cid)
    calls: list[Call] = []
    stream = service.chunks(source, sel, fmt, lambda *call: calls.append(call))
    next(stream)  # the page's first chunk needs the summary of every fact first
    facts = sel.last - sel.first + 1
    assert facts > 50
    assert calls == [("summarising", n, facts) for n in range(1, facts + 1)]
    calls.clear()
    "".join(stream)
    writing = [done for phase, done, total in calls if phase == "writing" and total == facts]
    assert len(writing) == len(calls) and writing == sorted(writing) and writing[-1] == facts


def test_jsonl_has_one_pass_reported_as_writing() -> None:
    app = memory_application()
    cid = create_demo(app)
    source, sel = service.prepare(app, cid)
    calls: list[Call] = []
    "".join(service.chunks(source, sel, "jsonl", lambda *call: calls.append(call)))
    facts = sel.last - sel.first + 1
    assert calls == [("writing", n, facts) for n in range(1, facts + 1)]


def test_a_selection_reports_the_summary_up_to_its_end_and_writes_only_its_part() -> None:
    app = memory_application()
    cid = create_demo(app)
    source, sel = service.prepare(app, cid, first=10, last=20)
    calls: list[Call] = []
    "".join(service.chunks(source, sel, "md", lambda *call: calls.append(call)))
    summarising = [c for c in calls if c[0] == "summarising"]
    assert summarising[-1] == ("summarising", 20 - source.first + 1, 20 - source.first + 1)
    assert [c for c in calls if c[0] == "writing"][-1] == ("writing", 11, 11)


def test_an_import_reports_each_batch_it_stores(monkeypatch: pytest.MonkeyPatch) -> None:
    app = memory_application()
    cid = create_demo(app)
    checked = jsonl.read_export(list(service.export(app, cid, "jsonl")))
    monkeypatch.setattr(application_module, "IMPORT_BATCH", 10)
    stored: list[int] = []
    new = app.import_campaign(checked.header, checked.facts, progress=stored.append)
    facts = len(checked.facts)
    assert stored == [*range(10, facts + 1, 10), facts]  # after each batch saved, then the rest
    assert app.campaign(new).ledger.last_seq == facts + 1
