"""The JSONL campaign format: export as a stream of lines, and the validating reader for import.

One JSON object per line, canonical (sorted keys, no spaces, UTF-8), ``\\n`` after each:

1. a header ``{"format": "chronicle-campaign", "version": 1, "name", "ruleset", "flags", "meta"}``
   (``"part": {"from": N, "to": M}`` too when only part of the campaign was exported; such a
   file documents that part and cannot be imported);
2. every stored fact in position order, ``{"position", "type", "version", "payload", "meta"}``,
   corrections (revocations, amendments, rulings) included: everything needed to rebuild the
   campaign exactly;
3. a trailer ``{"trailer": true, "facts": N, "sha256": ...}``: the SHA-256 of every byte before
   the trailer line, so a truncated or edited file is detected.

The campaign's id and the store's timestamps are not written: a re-export of an import is
byte-identical to the original export.
"""

from __future__ import annotations

import bisect
import hashlib
import json
import os
import pickle
import tempfile
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, overload

from api.exports.source import CampaignSource
from api.exports.story import Selection
from domain.checkpoints import Values
from domain.core import limits
from domain.errors import DomainError
from domain.ledger import Entry, Ledger
from domain.rulesets import get_ruleset

# Facts the validation's scratch ledger keeps in memory (older ones are read back from the
# validated facts' temporary file, a local read: unlike a server's window, which saves reads
# from the store, a large one here only grows the import's memory)
VALIDATION_WINDOW = 1024
# Checkpoints of each series the validation's scratch ledger keeps in memory (older ones go to
# a temporary file until the import has stored them: see ``Validated.spill``)
VALIDATION_CHECKPOINTS = 8

FORMAT = "chronicle-campaign"
VERSION = 1
SUPPORTED = (1,)
MAX_LINE = 4 * 1024 * 1024  # one fact line; anything longer is refused, not parsed
HEADER_KEYS = {"format", "version", "name", "ruleset", "flags", "meta", "part"}
FACT_KEYS = {"position", "type", "version", "payload", "meta"}


def dumps(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def export_lines(
    source: CampaignSource, sel: Selection | None = None, progress: Callable[[int], None] | None = None
) -> Iterator[str]:
    """The export, one line (with its newline) at a time."""
    digest = hashlib.sha256()
    header: dict[str, Any] = {
        "format": FORMAT,
        "version": VERSION,
        "name": source.name,
        "ruleset": source.ruleset,
        "flags": source.flags,
        "meta": source.meta,
    }
    whole = sel is None or (sel.first <= source.first and sel.last >= source.last)
    if not whole and sel is not None:
        header["part"] = {"from": sel.first, "to": sel.last}
    line = dumps(header) + "\n"
    digest.update(line.encode())
    yield line
    count = 0
    versions = source.catalogue.versions
    for e in source.facts(*((sel.first, sel.last) if sel is not None else ())):
        line = (
            dumps(
                {
                    "position": e.seq,
                    "type": e.type,
                    "version": versions.get(e.type, e.version),
                    "payload": e.payload,
                    "meta": e.meta,
                }
            )
            + "\n"
        )
        digest.update(line.encode())
        count += 1
        if progress is not None:
            progress(e.seq)
        yield line
    yield dumps({"trailer": True, "facts": count, "sha256": digest.hexdigest()}) + "\n"


# ------------------------------------------------------------------------ import
class ImportRefused(Exception):
    """The file cannot be imported; ``line`` is 1-based (0: the file as a whole)."""

    def __init__(self, line: int, reason: str) -> None:
        super().__init__(f"line {line}: {reason}" if line else reason)
        self.line = line
        self.reason = reason


Fact = tuple[str, int, dict[str, Any], dict[str, Any]]  # type, version, payload, meta


_MAX_SMALL_OFFSET = 2**32 - 1  # the largest offset an array("I") holds


class CheckedFacts(Sequence[Fact]):
    """An import's validated facts, kept on disk instead of in memory.

    Each fact is written, as the validation decoded it (upcast to the catalogue's current
    version and normalised), to a private temporary file (deleted when this is closed or
    collected); only its byte offset stays in memory (4 bytes a fact; 8 past 4 GiB). What is stored is then
    exactly what was validated, whatever happens to the input after. Iterating reads the file a
    block at a time; ``entries`` is the scratch ledger's loader (paged: it reads older facts
    back from here, not from a store that does not hold them yet).
    """

    BLOCK = 1 << 18  # bytes read (and written) at a time (1 MiB held 0.75 MB more at the peak)

    def __init__(self) -> None:
        self._file = tempfile.TemporaryFile(buffering=0)
        # byte offset of each fact: 4 bytes each while the file is under 4 GiB (at 300k facts,
        # 1.2 MB less than 8), 8 bytes from then on
        self._starts = array("I")
        self._end = 0  # byte offset after the last fact
        self._pending = bytearray()  # written at the end of the file, not there yet

    def add(self, fact: Fact) -> None:
        data = pickle.dumps(fact, pickle.HIGHEST_PROTOCOL)  # (a private file this process wrote)
        if self._end > _MAX_SMALL_OFFSET and self._starts.typecode != "q":
            self._starts = array("q", self._starts)
        self._starts.append(self._end)
        self._end += len(data)
        self._pending += data
        if len(self._pending) >= self.BLOCK:
            self._flush()

    def _flush(self) -> None:
        view = memoryview(self._pending)
        while view:
            view = view[self._file.write(view) :]
        view.release()
        self._pending.clear()

    def close(self) -> None:
        self._file.close()

    def __len__(self) -> int:
        return len(self._starts)

    def _stop(self, k: int) -> int:
        return self._starts[k] if k < len(self._starts) else self._end

    def _read(self, i: int, j: int) -> Iterator[tuple[int, Fact]]:
        """Facts ``i`` .. ``j - 1`` (indexes) as ``(index, fact)``, a block at a time."""
        if self._pending:
            self._flush()
        fd = self._file.fileno()
        k = i
        starts, count = self._starts, len(self._starts)
        while k < j:
            # as many whole facts as fit in a block (at least one): facts k .. last - 1 end at
            # or before lo + BLOCK (found by bisection: not a step per fact)
            lo = starts[k]
            limit = lo + self.BLOCK
            if j == count and self._end <= limit:
                last = count
            else:
                last = max(k + 1, bisect.bisect_right(starts, limit, k + 1, min(j + 1, count)) - 1)
            block = _pread(fd, self._stop(last) - lo, lo)
            for n in range(k, last):
                yield n, pickle.loads(block[self._starts[n] - lo : self._stop(n + 1) - lo])
            k = last

    @overload
    def __getitem__(self, index: int) -> Fact: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[Fact]: ...

    def __getitem__(self, index: int | slice) -> Fact | Sequence[Fact]:
        if isinstance(index, slice):
            return [self[k] for k in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        return next(self._read(index, index + 1))[1]

    def __iter__(self) -> Iterator[Fact]:
        for _, fact in self._read(0, len(self)):
            yield fact

    def entries(self, first: int, last: int) -> list[Entry]:
        """The facts at positions ``first`` .. ``last`` as the validation appended them."""
        return [
            Entry(n + 2, fact_type, version, payload, meta)
            for n, (fact_type, version, payload, meta) in self._read(
                max(first - 2, 0), min(last - 1, len(self))
            )
        ]


class SpillFile:
    """A :class:`~domain.checkpoints.Spill` in a private temporary file (deleted when this is
    closed or collected): each value is pickled on its own and appended; its key is where it
    lies. ``get`` unpickles it again (a fresh copy each time)."""

    def __init__(self) -> None:
        self._file = tempfile.TemporaryFile(buffering=0)
        self._end = 0
        self.size = 0  # bytes put

    def put(self, value: Any) -> tuple[int, int]:
        data = pickle.dumps(value, pickle.HIGHEST_PROTOCOL)  # (a private file this process wrote)
        view = memoryview(data)
        while view:
            view = view[self._file.write(view) :]
        key = (self._end, len(data))
        self._end += len(data)
        self.size += len(data)
        return key

    def get(self, key: tuple[int, int]) -> Any:
        offset, size = key
        return pickle.loads(_pread(self._file.fileno(), size, offset))

    def close(self) -> None:
        self._file.close()


@dataclass
class Validated:
    header: dict[str, Any]
    facts: CheckedFacts = field(default_factory=CheckedFacts)  # on disk, see CheckedFacts
    ledger: Ledger | None = None  # the dry run's fold (the import's first snapshot)
    # the dry run's older checkpoints (on disk: read back while the import stores them)
    spill: SpillFile = field(default_factory=SpillFile)

    def close(self) -> None:
        """Delete the temporary files of the validated facts and of the spilled checkpoints."""
        self.facts.close()
        self.spill.close()


def _pread(fd: int, size: int, offset: int) -> bytes:
    parts = []
    while size > 0:
        got = os.pread(fd, size, offset)
        if not got:
            break
        parts.append(got)
        size -= len(got)
        offset += len(got)
    return b"".join(parts)


def _parse(number: int, raw: bytes | str) -> dict[str, Any]:
    if len(raw) > MAX_LINE:
        raise ImportRefused(number, f"line is longer than {MAX_LINE} bytes")
    try:
        text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
        obj = json.loads(text)
    except UnicodeDecodeError:
        raise ImportRefused(number, "not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise ImportRefused(number, f"not valid JSON ({exc.msg} at column {exc.colno})") from None
    except (RecursionError, ValueError):  # nested too deeply for the parser, or a number too long
        raise ImportRefused(
            number, "not valid JSON within the input limits (nested too deeply or a huge number)"
        ) from None
    if not isinstance(obj, dict):
        raise ImportRefused(number, "expected a JSON object")
    return obj


def _header(obj: dict[str, Any]) -> dict[str, Any]:
    if obj.get("format") != FORMAT:
        raise ImportRefused(
            1, f"not a Chronicle campaign export (the first line's format must be {FORMAT!r})"
        )
    version = obj.get("version")
    if version not in SUPPORTED:
        raise ImportRefused(
            1,
            f"unknown export version {version!r}; this Chronicle reads version "
            f"{', '.join(map(str, SUPPORTED))}",
        )
    unknown = set(obj) - HEADER_KEYS
    if unknown:
        raise ImportRefused(1, f"unknown header field(s) {', '.join(sorted(unknown))}")
    if "part" in obj:
        part = obj["part"]
        raise ImportRefused(
            1,
            f"this file holds only part of a campaign (positions {part.get('from')}.."
            f"{part.get('to')}); export the whole campaign to import it",
        )
    if not isinstance(obj.get("name"), str) or not obj["name"].strip():
        raise ImportRefused(1, "the header needs the campaign's name")
    if not isinstance(obj.get("flags", {}), dict) or not isinstance(obj.get("meta", {}), dict):
        raise ImportRefused(1, "the header's flags and meta must be objects")
    try:
        limits.check_text(obj["name"], "name", limits.MAX_NAME, "the campaign's name")
        limits.check_json(obj.get("flags", {}), "flags")
        limits.check_json(obj.get("meta", {}), "meta")
        rules = get_ruleset(obj.get("ruleset"))  # type: ignore[arg-type]
        for k, v in obj.get("flags", {}).items():
            rules.validate_flag(k, v)
    except DomainError as exc:
        raise ImportRefused(1, exc.message) from None
    return obj


def read_export(
    lines: Iterable[bytes | str],
    progress: Callable[[int], None] | None = None,
    *,
    window: int = VALIDATION_WINDOW,
    checkpoints: int | None = VALIDATION_CHECKPOINTS,
) -> Validated:
    """Validate a whole export before anything is stored; raise ``ImportRefused`` (line, reason).

    Checks: a known header version; every line parses; the facts' positions run 2, 3, ...;
    every payload validates against the ruleset's catalogue (after upcasting an older version); a
    dry-run fold in a scratch ledger accepts every fact in order, exactly as the table did when
    it was recorded (so corrections must point at facts that exist, rulings must exist before
    they are cited, and so on); the trailer is present, counts the facts and its checksum matches.

    Memory stays flat: the validated facts go to a temporary file (``Validated.facts``), and the
    scratch ledger is paged over it (it keeps about ``window`` facts and reads older ones back).
    Its checkpoints (they become the campaign's stored checkpoints) keep only the newest in
    memory, the others in another temporary file (``Validated.spill``), until the import has
    stored them (``checkpoints``: how many of each series stay in memory; None: all of them).
    """
    digest = hashlib.sha256()
    out: Validated | None = None
    ledger: Ledger | None = None
    trailer: dict[str, Any] | None = None
    number = 0
    try:
        for number, raw in enumerate(lines, start=1):
            if progress is not None:
                progress(len(raw))
            if trailer is not None:
                if raw.strip() if isinstance(raw, (bytes, str)) else raw:
                    raise ImportRefused(number, "unexpected data after the trailer line")
                continue
            obj = _parse(number, raw)
            if out is None:
                out = Validated(_header(obj))
                ledger = Ledger(get_ruleset(out.header["ruleset"]), out.header.get("flags", {}), first_seq=2)
                ledger.attach(out.facts.entries, window)
                if checkpoints is not None:
                    ledger.spill_checkpoints(out.spill, checkpoints)
                    # the states it keeps until the end hold each equal value once
                    ledger.share_values(Values())
            elif obj.get("trailer") is True:
                trailer = obj
                _check_trailer(number, obj, len(out.facts), digest.hexdigest())
                continue
            else:
                assert ledger is not None
                _fact(number, obj, ledger, out.facts)
            digest.update(raw if isinstance(raw, bytes) else raw.encode("utf-8"))
    except BaseException:
        if out is not None:
            out.close()
        raise
    if out is None:
        raise ImportRefused(0, "the file is empty")
    out.ledger = ledger
    if trailer is None:
        out.close()
        raise ImportRefused(
            number + 1,
            f"the file ends after {len(out.facts)} facts without the trailer line: "
            "it is truncated (or not a complete export)",
        )
    assert ledger is not None
    # validated: what follows (the snapshot's capture) reads no fact but the last, so the
    # window of recent facts is let go (read back from the file should anything ask), and the
    # table of shared values (the values stay shared; at 100k facts the table took 2.3 MB)
    ledger.attach(out.facts.entries, 0, pages_kept=1)
    ledger.share_values(None)
    return out


def _check_trailer(number: int, obj: dict[str, Any], count: int, sha: str) -> None:
    if obj.get("facts") != count:
        raise ImportRefused(
            number, f"the trailer counts {obj.get('facts')!r} facts but the file holds {count}"
        )
    if obj.get("sha256") != sha:
        raise ImportRefused(
            number, "checksum mismatch: the file was changed or damaged after it was exported"
        )


def _fact(number: int, obj: dict[str, Any], ledger: Ledger, facts: CheckedFacts) -> None:
    """Check one fact line against the catalogue and the fold; keep it (``facts``) and fold it."""
    unknown = set(obj) - FACT_KEYS
    missing = FACT_KEYS - set(obj)
    if unknown or missing:
        detail = (
            f"unknown field(s) {', '.join(sorted(unknown))}"
            if unknown
            else f"missing field(s) {', '.join(sorted(missing))}"
        )
        raise ImportRefused(number, f"not a fact line: {detail}")
    expected = ledger.next_seq
    if obj["position"] != expected:
        raise ImportRefused(
            number,
            f"position {obj['position']!r} where {expected} was expected "
            "(positions must run 2, 3, ... without gaps)",
        )
    fact_type, version, meta = obj["type"], obj["version"], obj["meta"]
    catalogue = ledger.catalogue
    if not isinstance(fact_type, str) or fact_type not in catalogue:
        raise ImportRefused(number, f"unknown fact type {fact_type!r} in {ledger.ruleset.title}")
    current = catalogue.version(fact_type)
    if isinstance(version, bool) or not isinstance(version, int) or not 1 <= version <= current:
        raise ImportRefused(
            number, f"{fact_type} version {version!r} is unknown (this Chronicle reads 1..{current})"
        )
    if not isinstance(meta, dict):
        raise ImportRefused(number, "meta must be an object")
    try:
        limits.check_json(meta, "meta")
        payload = catalogue.validate(fact_type, catalogue.upcast(fact_type, version, obj["payload"]))
        facts.add((fact_type, current, payload, meta))  # first: the ledger may read it back at once
        # folded into the scratch ledger's present in place (no copy of it per fact): a refusal
        # abandons the ledger and the file with it
        ledger.append_checked(Entry(expected, fact_type, current, payload, meta))
    except DomainError as exc:
        raise ImportRefused(
            number, f"fact at position {expected} ({fact_type}) is refused: {exc.message}"
        ) from None
