"""An import's dry run spills its older checkpoint deltas to a temporary file (issue 21: the
import's memory stays flat); the campaign it stores is the same as when it keeps them all."""

from __future__ import annotations

import io
from typing import Any
from uuid import UUID

import pytest

from api.exports import jsonl
from api.exports.source import CampaignSource
from api.service.application import ChronicleApplication
from api.service.snapshots import CORRECTED, FOLD, RECORDED
from bench.generator import CampaignGenerator


def _rows(app: ChronicleApplication, cid: UUID) -> list[Any]:
    out = []
    for kind in (FOLD, CORRECTED, RECORDED):
        for r in sorted(app.snapshots.latest(cid, kind), key=lambda r: r.position):
            data = r.decode()
            if kind == FOLD:
                for pinned in data["pinned"]:
                    pinned[5] = None  # the time each fact was stored differs between two imports
            out.append((kind, r.position, r.through, r.base, r.fingerprint, data))
    return out


def test_spilled_checkpoints_are_stored_as_kept_ones_would_be(app: ChronicleApplication) -> None:
    gen = CampaignGenerator(1500, seed=5, corrections=0.05)
    for _ in gen.facts():
        pass
    text = "".join(jsonl.export_lines(CampaignSource("Spilled", "stellar-winds", {}, {}, gen.ledger)))
    stored = {}
    for kept in (None, 1):  # every checkpoint in memory; only the newest one
        checked = jsonl.read_export(io.BytesIO(text.encode()), checkpoints=kept)
        try:
            assert (checked.spill.size > 0) == (kept is not None)
            cid = app.import_campaign(checked.header, checked.facts, folded=checked.ledger)
        finally:
            checked.close()
        stored[kept] = _rows(app, cid)
    assert [r[:4] for r in stored[1]] == [r[:4] for r in stored[None]]
    assert stored[1] == stored[None]
    assert {r[0] for r in stored[1]} == {FOLD, CORRECTED, RECORDED}
    assert any(not r[3] for r in stored[1]), "deltas were stored"


def test_a_refused_file_deletes_the_spilled_checkpoints_too(monkeypatch: pytest.MonkeyPatch) -> None:
    gen = CampaignGenerator(700, seed=6, corrections=0.05)
    for _ in gen.facts():
        pass
    lines = list(jsonl.export_lines(CampaignSource("Refused", "stellar-winds", {}, {}, gen.ledger)))
    spills: list[jsonl.SpillFile] = []
    real = jsonl.SpillFile.__init__

    def made(self: jsonl.SpillFile) -> None:
        real(self)
        spills.append(self)

    monkeypatch.setattr(jsonl.SpillFile, "__init__", made)
    with pytest.raises(jsonl.ImportRefused, match="truncated"):
        jsonl.read_export(lines[:-1], checkpoints=1)  # no trailer
    assert len(spills) == 1 and spills[0].size > 0 and spills[0]._file.closed


def test_the_dry_run_shares_values_while_it_folds_and_lets_the_table_go_once_validated(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The dry run's checkpoints share equal values through a table (``Ledger.share_values``)
    while it folds; once the file is validated the table is let go (what it shared stays
    shared), before the import stores anything."""
    gen = CampaignGenerator(700, seed=6, corrections=0.05)
    for _ in gen.facts():
        pass
    lines = list(jsonl.export_lines(CampaignSource("Shared", "stellar-winds", {}, {}, gen.ledger)))
    tables: list[jsonl.Values] = []
    real = jsonl.Values.__init__

    def made(self: jsonl.Values, *args: Any) -> None:
        real(self, *args)
        tables.append(self)

    monkeypatch.setattr(jsonl.Values, "__init__", made)
    checked = jsonl.read_export(lines)
    try:
        assert len(tables) == 1 and tables[0].shared > 0
        assert checked.ledger is not None and checked.ledger._values is None
        assert checked.ledger._checkpoints.values is None
    finally:
        checked.close()
