"""An import's dry-run checkpoints, spilled to a temporary file as the validation folds.

The validation (``api.exports.jsonl.read_export``) folds every fact in a scratch ledger that
records a checkpoint every 256 facts in two series (corrected, and what the table believed);
those checkpoints become the imported campaign's persisted checkpoints. Kept in memory until
the end they grew with the campaign. :class:`SpilledPoints` persists them every so often as
the snapshot table would (the same rows: zlib-compressed JSON, full states and deltas), the
ledger keeps only the newest few in memory and rebuilds the others from here
(``api.service.snapshots.point_loader``), and the import copies the rows into the snapshot
table (``ChronicleApplication.import_campaign(spilled=)``).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterator

from api.service.snapshots import encode, point_loader
from domain.ledger import CORRECTED, INF, RECORDED, Ledger

KINDS = (CORRECTED, RECORDED)
KEEP_RECENT = 2  # checkpoints of each series kept in memory after they are spilled
REBUILT_KEPT = 1  # spilled checkpoints kept rebuilt per series (each a whole state of its own)


class SpilledPoints:
    """Checkpoint rows in a private temporary file (deleted when closed or collected), their
    place in it in memory: kind -> position -> (offset, size, through, full)."""

    def __init__(self, ledger: Ledger, keep_recent: int | None = None) -> None:
        self._file = tempfile.TemporaryFile(buffering=0)
        self._end = 0
        self.keep_recent = KEEP_RECENT if keep_recent is None else keep_recent
        self.rows: dict[str, dict[int, tuple[int, int, int, bool]]] = {kind: {} for kind in KINDS}
        self.every = ledger.checkpoint_every
        # (the ledger keeps the loaders, which read this: it is not kept here, so no cycle)
        for kind in KINDS:  # the ledger rebuilds a spilled checkpoint from here
            load = point_loader(ledger.ruleset, self.every, self._chain_of(kind), kept_n=REBUILT_KEPT)
            ledger.adopt_stored(kind, [], load)
        ledger.keep_rebuilt(REBUILT_KEPT)

    def close(self) -> None:
        self._file.close()

    def spill(self, ledger: Ledger) -> None:
        """Write the checkpoints ``ledger`` made since the last spill (the rows of the ones a
        correction refolded since then replaced), then let it drop them from memory."""
        points = ledger.capture_points()
        if points.refolded_from < INF:
            rows = self.rows[CORRECTED]
            keep = points.stored_since(CORRECTED, points.refolded_from)
            for seq in [s for s in rows if s >= points.refolded_from]:
                if seq in keep:  # taken as it was by a refold that rejoined the present fold
                    offset, size, _, full = rows[seq]
                    rows[seq] = (offset, size, keep[seq], full)
                else:
                    del rows[seq]
        for kind in KINDS:
            rows = self.rows[kind]
            have = set(rows)
            for seq, through, full, data in points.point_rows(kind, have):
                blob = encode(data)
                offset, done = self._end, 0
                while done < len(blob):
                    done += os.pwrite(self._file.fileno(), blob[done:], offset + done)
                self._end = offset + len(blob)
                rows[seq] = (offset, len(blob), through, full)
            ledger.mark_stored(kind, frozenset(rows), keep_recent=self.keep_recent)

    def _read(self, offset: int, size: int) -> bytes:
        parts, fd = [], self._file.fileno()
        while size > 0:
            got = os.pread(fd, size, offset)
            if not got:
                raise LookupError("the spilled checkpoints' file is short")
            parts.append(got)
            size -= len(got)
            offset += len(got)
        return b"".join(parts)

    def chain(self, kind: str, position: int) -> list[tuple[int, bool, bytes]]:
        """The rows rebuilding the checkpoint at ``position``: from the newest full state at or
        before it up to it (as ``SnapshotStore.chain``)."""
        rows = self.rows[kind]
        seq, out = position, []
        while seq in rows:
            offset, size, _, full = rows[seq]
            out.append((seq, full, self._read(offset, size)))
            if full:
                break
            seq -= self.every
        out.reverse()
        return out if out and out[0][1] else []

    def _chain_of(self, kind: str) -> Callable[[int], list[tuple[int, bool, bytes]]]:
        return lambda position: self.chain(kind, position)

    def __iter__(self) -> Iterator[tuple[str, int, int, bool, bytes]]:
        """Every row, as (kind, position, through, full, data), in position order per kind."""
        for kind in KINDS:
            for seq in sorted(self.rows[kind]):
                offset, size, through, full = self.rows[kind][seq]
                yield kind, seq, through, full, self._read(offset, size)

    def __len__(self) -> int:
        return sum(len(r) for r in self.rows.values())
