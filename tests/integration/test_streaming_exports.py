"""Exports and imports stream (issue 21, P6): an export reads the stored facts a page at a time up
to the position read when it started, and an import validates with a paged scratch ledger that
reads older facts back from the file, then stores the facts read back from the file. Neither
holds the campaign; what they write and store is exactly what holding it wrote and stored.
(Memory itself is measured by the bench, P6, not here.)"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from functools import cache
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from api.exports import jsonl, service, source
from api.exports.jsonl import ImportRefused
from api.service.application import ChronicleApplication
from api.service.settings import Settings
from api.service.store import open_application
from bench.generator import CampaignGenerator
from domain.ledger import CORRECTED, RECORDED, Entry, Ledger

SIZE = 800


@cache
def generated(size: int = SIZE, seed: int = 7) -> tuple[bytes, CampaignGenerator]:
    """A generated campaign (corrections that orphan later facts included) and its export,
    written from the generator's own ledger: every fact in memory."""
    gen = CampaignGenerator(size, seed=seed)
    for _ in gen.facts():
        pass
    held = source.CampaignSource("Streamed", "stellar-winds", {}, {"table": "x"}, gen.ledger)
    return "".join(jsonl.export_lines(held)).encode(), gen


def lines(data: bytes) -> list[bytes]:
    return data.splitlines(keepends=True)


def resign(body: list[bytes]) -> list[bytes]:
    """A trailer that fits ``body`` (header and facts), so only an edit in it is wrong."""
    trailer = {"trailer": True, "facts": len(body) - 1, "sha256": hashlib.sha256(b"".join(body)).hexdigest()}
    return [*body, json.dumps(trailer, sort_keys=True, separators=(",", ":")).encode() + b"\n"]


@pytest.fixture
def tiny(store: Settings) -> ChronicleApplication:
    """The application with a ledger window of 5 facts: everything older is read back."""
    app = open_application(dataclasses.replace(store, ledger_window=5))
    yield app
    app.close()


def test_an_import_and_an_export_in_pages_are_the_whole_campaign_held_in_memory(
    tiny: ChronicleApplication,
) -> None:
    data, gen = generated()
    assert gen.stats.corrections and gen.ledger.orphans  # corrections that orphan later facts
    checked = jsonl.read_export(lines(data), window=5)
    assert checked.ledger is not None and checked.ledger.entries.resident <= 5 + 512 + 4 * 512
    assert checked.ledger.entries.loads > 0  # the fold read older facts back from the file
    cid = tiny.import_campaign(checked.header, checked.facts, folded=checked.ledger)
    streamed = source.load(tiny, cid, page=7)
    assert "".join(jsonl.export_lines(streamed)).encode() == data
    # the story formats fold in a paged ledger: the same story as the campaign held in memory
    held = source.CampaignSource("Streamed", "stellar-winds", {}, {"table": "x"}, gen.ledger)
    for fmt in ("md", "html"):
        paged = source.load(tiny, cid, page=7)
        sel = source.select(paged, first=40, last=SIZE - 20)
        assert "".join(service.chunks(paged, sel, fmt)) == "".join(  # type: ignore[arg-type]
            service.chunks(held, source.select(held, first=40, last=SIZE - 20), fmt)  # type: ignore[arg-type]
        )
        assert paged.ledger.entries.resident <= 5 + 4 * 512 and paged.ledger.entries.loads > 0


def test_an_export_is_the_campaign_at_the_position_read_when_it_started(tiny: ChronicleApplication) -> None:
    data, _ = generated()
    cid = service.import_lines(tiny, lines(data))
    src, sel = service.prepare(tiny, cid)
    out = service.chunks(src, sel, "jsonl")
    head = [next(out) for _ in range(10)]
    tiny.record(cid, "NoteAdded", {"text": "said while the export was running"})
    exported = "".join(head) + "".join(out)
    assert exported.encode() == data  # the note is not in it; the trailer counts what was read
    assert "said while the export" in "".join(service.export(tiny, cid, "jsonl"))


@pytest.mark.parametrize("where", [0.3, 0.9])
def test_a_refusal_anywhere_in_the_file_stores_nothing(tiny: ChronicleApplication, where: float) -> None:
    data, _ = generated()
    body = lines(data)[:-1]
    number = int(len(body) * where)
    obj = json.loads(body[number - 1])
    obj["position"] += 1  # a gap: refused at that line, after the fold went through the facts before
    body[number - 1] = json.dumps(obj, sort_keys=True, separators=(",", ":")).encode() + b"\n"
    before = tiny.recorder.max_notification_id()
    with pytest.raises(ImportRefused) as err:
        service.import_lines(tiny, resign(body))
    assert err.value.line == number and "was expected" in err.value.reason
    assert tiny.recorder.max_notification_id() == before


def test_what_is_stored_is_what_was_validated_even_if_the_file_changes_after(
    tiny: ChronicleApplication, tmp_path: Path
) -> None:
    data, _ = generated()
    path = tmp_path / "campaign.jsonl"
    path.write_bytes(data)
    with path.open("rb") as handle:
        checked = jsonl.read_export(handle, window=5)
    assert checked.facts[-1] == checked.facts[len(checked.facts) - 1]
    path.write_bytes(data.replace(b'"reason":"', b'"reason":"#'))  # edited after the validation
    cid = tiny.import_campaign(checked.header, checked.facts, folded=checked.ledger)
    checked.facts.close()
    assert "".join(service.export(tiny, cid, "jsonl")).encode() == data


def test_a_file_and_its_lines_validate_alike(tmp_path: Path) -> None:
    data, _ = generated()
    path = tmp_path / "campaign.jsonl"
    path.write_bytes(data)
    as_lines = jsonl.read_export(lines(data), window=3)
    with path.open("rb") as handle:
        from_file = jsonl.read_export(handle, window=3)
    as_text = jsonl.read_export(data.decode().splitlines(keepends=True), window=3)
    assert list(from_file.facts) == list(as_lines.facts) == list(as_text.facts)
    assert len(from_file.facts) == len(lines(data)) - 2
    assert from_file.facts[:3] == [from_file.facts[0], from_file.facts[1], from_file.facts[2]]


def _fold(ledger: Ledger) -> tuple[object, ...]:
    capture = ledger.capture()
    return (
        json.dumps(capture.to_json(), sort_keys=True),
        [
            (s, t, f, json.dumps(d, sort_keys=True, default=str))
            for s, t, f, d in capture.point_rows(CORRECTED, set())
        ],
        [
            (s, t, f, json.dumps(d, sort_keys=True, default=str))
            for s, t, f, d in capture.point_rows(RECORDED, set())
        ],
    )


@settings(max_examples=8, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.sampled_from([1, 3, 7]), window=st.integers(0, 40))
def test_validating_in_pages_folds_as_validating_with_every_fact_in_memory(seed: int, window: int) -> None:
    """The law: the scratch ledger paged over the file (any window) folds what a ledger holding
    every fact folds -- state, orphans, indexes, both checkpoint series: the import's snapshot."""
    data, _ = generated(SIZE, seed)
    paged = jsonl.read_export(lines(data), window=window)
    whole = jsonl.read_export(lines(data), window=10**9)
    assert list(paged.facts) == list(whole.facts)
    assert paged.ledger is not None and whole.ledger is not None
    assert _fold(paged.ledger) == _fold(whole.ledger)


def _without_pinned(folded: tuple[object, ...]) -> tuple[object, ...]:
    """``_fold`` less the pinned facts (which facts a paged ledger keeps pinned depends on its
    window: the facts themselves are the same)."""
    capture = json.loads(folded[0])  # type: ignore[arg-type]
    capture.pop("pinned")
    return (capture, *folded[1:])


@pytest.mark.parametrize("window", [5, 10**9])
def test_validation_folds_what_the_table_that_played_it_folded(window: int) -> None:
    """The import's dry run folds each fact into its present in place (no copy of it per fact)
    and stops a correction's refold where it rejoins the fold it had; the table (the
    generator's ledger: ``prepare`` then ``append``, every refold to the end) folded the same
    state, orphans, indexes and both checkpoint series -- the recorded checkpoints the import
    stores are the table's."""
    data, gen = generated(SIZE, 3)
    checked = jsonl.read_export(lines(data), window=window)
    assert checked.ledger is not None
    assert checked.ledger.converged > 0  # some refold did stop early (a ruling decided late)
    assert _without_pinned(_fold(checked.ledger)) == _without_pinned(_fold(gen.ledger))


def test_a_refold_that_never_rejoins_the_fold_runs_to_the_end_as_the_table_did() -> None:
    """Revoking the first experience award changes every state after it: the dry run's refold
    must not take the old fold back anywhere (the table's present has the award revoked)."""
    gen = CampaignGenerator(SIZE, seed=3)
    for _ in gen.facts():
        pass
    table = gen.ledger
    award = next(e.seq for e in table.entries.range(0, len(table.entries)) if e.type == "ExperienceAwarded")
    payload = table.catalogue.validate("FactRevoked", {"target": award, "reason": "no", "cascade": "fact"})
    table.prepare("FactRevoked", payload, {})
    table.append(Entry(table.next_seq, "FactRevoked", table.catalogue.version("FactRevoked"), payload, {}))
    held = source.CampaignSource("Revoked", "stellar-winds", {}, {"table": "x"}, table)
    data = "".join(jsonl.export_lines(held)).encode()
    checked = jsonl.read_export(lines(data), window=5)
    assert checked.ledger is not None
    assert _without_pinned(_fold(checked.ledger)) == _without_pinned(_fold(table))


def test_validating_copies_the_present_only_at_checkpoints_and_corrections(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Copying the present costs a step per creature ever registered: the dry run copies it
    for a checkpoint (every 256 facts) or a correction, never once per fact."""
    from domain.core.state import TableState

    data, _ = generated(SIZE, 3)
    copies = 0
    clone = TableState.clone

    def counted(self: TableState) -> TableState:
        nonlocal copies
        copies += 1
        return clone(self)

    monkeypatch.setattr(TableState, "clone", counted)
    checked = jsonl.read_export(lines(data), window=5)
    assert checked.ledger is not None
    corrections = len(checked.ledger._corrections)
    assert 0 < copies <= 2 * (len(checked.facts) // 256 + 1) + 2 * corrections < len(checked.facts)


@settings(max_examples=40, deadline=None, database=None)
@given(
    sizes=st.lists(st.integers(0, 300), min_size=1, max_size=60),
    block=st.integers(1, 2000),
    data=st.data(),
)
def test_validated_facts_read_back_in_blocks_are_the_facts_written(
    sizes: list[int], block: int, data: st.DataObject
) -> None:
    """The law of the validated facts' file: any range read back, a block at a time (whatever
    the block's size against the facts'), is the facts written, in order."""
    facts = [("T", 1, {"x": "y" * n}, {"n": k}) for k, n in enumerate(sizes)]
    checked = jsonl.CheckedFacts()
    checked.BLOCK = block
    for fact in facts:
        checked.add(fact)
    i = data.draw(st.integers(0, len(facts)))
    j = data.draw(st.integers(i, len(facts)))
    assert [f for _, f in checked._read(i, j)] == facts[i:j]
    assert list(checked) == facts
    checked.close()


def test_a_validated_dry_run_keeps_no_window_of_facts(store: Settings) -> None:
    """Once the file is validated, the import reads no fact of the dry run's ledger but the
    last (the snapshot's capture): its window of recent facts is let go before the facts are
    stored, and the import still serves the campaign from that snapshot."""
    data, _ = generated(1200, 7)
    checked = jsonl.read_export(lines(data))
    assert checked.ledger is not None
    assert checked.ledger.entries.resident == 0
    app, fresh = open_application(store), open_application(store)
    try:
        cid = app.import_campaign(checked.header, checked.facts, folded=checked.ledger)
        checked.close()
        assert app.snapshots.latest(cid)
        assert fresh.summary(cid) == app.summary(cid)
        assert fresh.cache_stats["from_snapshot"] == 1
    finally:
        app.close()
        fresh.close()


def test_validated_facts_past_4_gib_of_offsets_read_back_alike(monkeypatch: pytest.MonkeyPatch) -> None:
    """The offsets take 4 bytes a fact until the file passes what 4 bytes hold (then 8): the
    facts read back are the facts written on either side of the switch (the limit lowered)."""
    monkeypatch.setattr(jsonl, "_MAX_SMALL_OFFSET", 300)
    facts = [("T", 1, {"x": "y" * (k % 7)}, {"n": k}) for k in range(40)]
    checked = jsonl.CheckedFacts()
    try:
        for fact in facts[:3]:
            checked.add(fact)
        assert checked._starts.typecode == "I"
        for fact in facts[3:]:
            checked.add(fact)
        assert checked._starts.typecode == "q"
        assert list(checked) == facts
        assert [checked[k] for k in (0, 5, 39)] == [facts[0], facts[5], facts[39]]
        assert [f for _, f in checked._read(2, 30)] == facts[2:30]
    finally:
        checked.close()
