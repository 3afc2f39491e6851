"""A campaign's stored facts in position order, with only a window of them in memory.

A long campaign does not fit in memory forever (a fact with its payload and envelope costs a
few kilobytes decoded). :class:`Entries` keeps the most recent facts resident and reads older
ones on demand, a page at a time, through an injected :class:`EntryLoader` -- a plain callable
the application implements with its event store. Everything else in the ledger reads facts
through it, so every ledger operation works the same whether the facts are resident or not;
only the cost differs.

Without a loader (a scratch ledger: an import's dry run, an export's private copy, a test)
every fact stays resident, as before.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Protocol, overload

__all__ = ["Entries", "Entry", "EntryLoader", "MissingFacts"]

STREAM_PAGES = 2  # a long stretch is read STREAM_PAGES times the page cache's size at a time
READ_AHEAD = True  # a long stretch: the next read runs on a helper thread (Entries._reading_ahead)
# Entries.prefetch: reads begun ahead of a fold, shared by every list (at most one each in flight)
_PREFETCH = ThreadPoolExecutor(2, thread_name_prefix="chronicle-prefetch")


@dataclass(slots=True)
class Entry:
    """One stored fact at its position (``seq``) in the campaign."""

    seq: int
    type: str
    version: int
    payload: dict[str, Any]
    meta: dict[str, Any]
    timestamp: str = ""
    # The ruling ids the stored payload cites, when whoever read it knows them already (``()``:
    # none -- the stored JSON has no ``"ruling`` in it anywhere); None: the ledger looks. Only
    # trusted for a payload at its type's current version (an upcast payload is looked at).
    cites: tuple[str, ...] | None = field(default=None, compare=False, repr=False)


class EntryLoader(Protocol):
    """Reads stored facts back: the entries at positions ``first`` .. ``last`` (inclusive), in
    order, exactly as they were appended (payloads at their stored version; the ledger upcasts).
    """

    def __call__(self, first: int, last: int) -> Iterable[Entry]: ...


class MissingFacts(LookupError):
    """The loader did not return the facts asked for (the store lost them, or the wrong campaign)."""


class Entries(Sequence[Entry]):
    """Facts by index (index 0 is position ``first_seq``).

    The resident part is ``_recent`` (indexes ``_base`` ..); older facts come from the loader
    in pages of ``page`` facts, the last ``pages_kept`` of which are cached. Single facts asked
    for by position (a correction's target, say) are read one by one (:meth:`point`).

    A short stretch read back outside the pages (shorter than a page: a page of the history, the
    fold from the checkpoint before it) is *held* until another one is read: one request's reads
    of one stretch share it. A history page with outcomes reads its 20 facts, then folds from
    the checkpoint before them through them; the fold reads only the facts before the page and
    *stretches* the held range down to them (up to a page of facts), so the page's facts are
    read from the store once, not twice (:meth:`_read_held`).
    """

    def __init__(self, first_seq: int, prepare: Callable[[Entry], Entry] | None = None) -> None:
        self.first_seq = first_seq
        self._prepare = prepare
        self._loader: EntryLoader | None = None
        self._window: int | None = None
        self._page = 512
        self._pages_kept = 4
        self._count = 0
        self._base = 0
        self._recent: list[Entry] = []
        self._pages: OrderedDict[int, list[Entry]] = OrderedDict()
        # the short stretch read back last: its first index and its entries (all below _base)
        self._held: tuple[int, list[Entry]] = (0, [])
        # a read begun by ``prefetch``: its first and last index, and the loader's answer
        self._ahead: tuple[int, int, Future[list[Entry]]] | None = None
        self.loads = 0  # loader calls so far (diagnostics and tests)

    # ------------------------------------------------------------------ configuration
    def attach(self, loader: EntryLoader, window: int, *, page: int = 512, pages_kept: int = 4) -> None:
        """Read older facts through ``loader`` and keep about ``window`` recent ones resident."""
        if window < 0 or page < 1 or pages_kept < 1:
            raise ValueError("window >= 0, page >= 1 and pages_kept >= 1")
        self._loader, self._window, self._page, self._pages_kept = loader, window, page, pages_kept
        self._pages.clear()
        self._held = (0, [])
        self._trim()

    @property
    def paged(self) -> bool:
        return self._loader is not None

    @property
    def window(self) -> int | None:
        """How many recent facts stay in memory at least (None: every fact, no loader)."""
        return self._window if self._loader is not None else None

    @property
    def resident(self) -> int:
        """How many facts are held in memory (recent ones and cached pages)."""
        return len(self._recent) + sum(len(p) for p in self._pages.values()) + len(self._held[1])

    # ------------------------------------------------------------------ growing
    def append(self, entry: Entry) -> None:
        self._recent.append(entry)
        self._count += 1
        if self._window is not None and len(self._recent) > self._window + self._page:
            self._trim()

    def tail(self, count: int) -> list[Entry] | None:
        """The entries after the first ``count`` when all of them are resident (else None)."""
        if not self._base <= count <= self._count:
            return None
        return self._recent[count - self._base :]

    def truncate(self, count: int) -> None:
        """Forget the entries after the first ``count`` (appended but never stored: a commit
        that lost a race). They must be resident (:meth:`tail`)."""
        if not self._base <= count <= self._count:
            raise AssertionError(f"cannot truncate to {count}: {self._base} .. {self._count} resident")
        del self._recent[count - self._base :]
        self._count = count
        for pn in [pn for pn in self._pages if (pn + 1) * self._page > count]:
            del self._pages[pn]
        if self._held[0] + len(self._held[1]) > count:
            self._held = (0, [])

    def skip_to(self, count: int) -> None:
        """Declare ``count`` facts stored without holding any (a ledger restored from a snapshot)."""
        if self._count or self._loader is None:
            raise AssertionError("skip_to needs an empty, paged list")
        self._count = self._base = count

    def _trim(self) -> None:
        if self._window is None or self._loader is None:
            return
        drop = len(self._recent) - self._window
        if drop <= 0:
            return
        del self._recent[:drop]
        self._base += drop
        # a cached page cut short by the old base is incomplete now
        for pn in [pn for pn, p in self._pages.items() if len(p) < self._page]:
            del self._pages[pn]

    # ------------------------------------------------------------------ reading
    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, index: int) -> Entry: ...

    @overload
    def __getitem__(self, index: slice) -> list[Entry]: ...

    def __getitem__(self, index: int | slice) -> Entry | list[Entry]:
        if isinstance(index, slice):
            start, stop, step = index.indices(self._count)
            if step != 1:
                return list(self.range(0, self._count))[index]
            return list(self.range(start, stop))
        if index < 0:
            index += self._count
        if not 0 <= index < self._count:
            raise IndexError(index)
        if index >= self._base:
            return self._recent[index - self._base]
        lo, held = self._held
        if lo <= index < lo + len(held):
            return held[index - lo]
        pn = index // self._page
        return self._load_page(pn)[index - pn * self._page]

    def __iter__(self) -> Iterator[Entry]:
        return self.range(0, self._count)

    def range(self, start: int, stop: int) -> Iterator[Entry]:
        """Entries ``start`` .. ``stop - 1`` (indexes), streamed a page at a time -- or, over a
        long stretch of facts not in memory (a refold after an early correction), in big
        sequential reads, and over a stretch shorter than a page not cached, exactly that
        stretch (:meth:`_stream`)."""
        i, stop = max(start, 0), min(stop, self._count)
        while i < stop:
            if i >= self._base:
                recent, base = self._recent, self._base
                for j in range(i - base, stop - base):
                    yield recent[j]
                return
            pn = i // self._page
            span = min(stop, self._base) - i
            lo, held = self._held
            if lo <= i < lo + len(held):  # read back for this request already
                end = min(lo + len(held), i + span)
                yield from held[i - lo : end - lo]
                i = end
                continue
            if self._loader is not None and span > self._pages_kept * self._page:
                # a long stretch (a refold after an early correction): read in big reads
                end = i + span
                yield from self._stream(i, end)
                i = end
                continue
            if self._loader is not None and span < self._page and pn not in self._pages:
                # a short one whose page is not cached (an as-of folds at most one checkpoint
                # interval): read exactly it, up to what is held already, and hold it
                end = i + span
                if i < lo < end and held:
                    end = lo
                yield from self._read_held(i, end)
                i = end
                continue
            page = self._load_page(pn)
            lo = pn * self._page
            end = min(lo + len(page), stop)
            for j in range(i - lo, end - lo):
                yield page[j]
            i = end

    def _read_held(self, lo: int, hi: int) -> list[Entry]:
        """Entries ``lo`` .. ``hi - 1`` (fewer than a page, none resident), read at once and held
        -- together with the stretch held before when the two meet and fit in a page (the fold
        from a checkpoint up to a page of the history already read), else instead of it."""
        got = self._read(lo, hi - 1)
        h_lo, held = self._held
        if held and hi == h_lo and len(got) + len(held) <= self._page:
            self._held = (lo, got + held)
        elif held and lo == h_lo + len(held) and len(got) + len(held) <= self._page:
            self._held = (h_lo, held + got)
        else:
            self._held = (lo, got)
        return got

    def prefetch(self, start: int, stop: int) -> None:
        """Begin reading entries ``start`` .. ``stop - 1`` on a helper thread when :meth:`range`
        would read them from the store as one short stretch (fewer than a page, none in memory),
        so that the store's round trip overlaps what the caller does before it folds them (an
        as-of rebuilds the stored checkpoint it folds from: another query, and decoding). The
        next read of exactly that stretch takes the answer; a read of anything else leaves it
        (stored facts never change: it stays right), and the next ``prefetch`` replaces it."""
        if self._loader is None or not READ_AHEAD:
            return
        i, end = max(start, 0), min(stop, self._count, self._base)
        lo, held = self._held
        if end - i <= 0 or end - i >= self._page or (i // self._page) in self._pages:
            return
        if lo <= i < lo + len(held):
            return  # (range reads only what is not held, if anything)
        if i < lo < end and held:
            end = lo
        if self._ahead is not None and self._ahead[:2] == (i, end - 1):
            return
        loader, first = self._loader, self.first_seq
        self._ahead = (i, end - 1, _PREFETCH.submit(lambda: list(loader(i + first, end - 1 + first))))

    def _stream(self, lo: int, hi: int) -> Iterator[Entry]:
        """Entries ``lo`` .. ``hi - 1``, none of them resident, read ``page * pages_kept * 2`` at a
        time (a few big queries instead of one per page; the page cache is left alone, it would
        only churn). What falls within the window and reaches the resident facts becomes
        resident: a ledger restored from a snapshot holds no facts, and the window is what it
        may hold, so the next refold over them reads nothing."""
        step = self._page * self._pages_kept * STREAM_PAGES
        window = self._window if self._window is not None else 0
        keep_from = max(self._count - window, lo) if hi == self._base else hi
        base = self._base
        kept: list[Entry] = []
        spans = [(i, min(i + step, hi)) for i in range(lo, hi, step)]
        for (i, j), got in zip(spans, self._reading_ahead(spans), strict=True):
            if j > keep_from:
                kept.extend(got[max(keep_from - i, 0) :])
            yield from got
        if kept and self._base == base and base - len(kept) == keep_from:
            self._recent[:0] = kept
            self._base = keep_from

    def _reading_ahead(self, spans: list[tuple[int, int]]) -> Iterator[list[Entry]]:
        """The entries of each span (``lo`` .. ``hi - 1``) in turn, the next span read on a
        helper thread while the caller folds this one: the store's round trip then overlaps
        the fold (a refold after an early correction reads most of the campaign back). One
        span: read here. Stopping early waits for the read in flight and drops it."""
        if len(spans) < 2 or not READ_AHEAD:
            for i, j in spans:
                yield self._read(i, j - 1)
            return
        with ThreadPoolExecutor(1, thread_name_prefix="chronicle-read-ahead") as pool:
            nxt = pool.submit(self._read, spans[0][0], spans[0][1] - 1)
            for k in range(len(spans)):
                got = nxt.result()
                if k + 1 < len(spans):
                    nxt = pool.submit(self._read, spans[k + 1][0], spans[k + 1][1] - 1)
                yield got

    def holds(self, index: int) -> bool:
        """Whether the entry at ``index`` is in memory (resident, in a cached page or held)."""
        lo, held = self._held
        return 0 <= index < self._count and (
            index >= self._base or (index // self._page) in self._pages or lo <= index < lo + len(held)
        )

    def point(self, index: int) -> Entry:
        """One entry, without loading (or caching) its whole page when it is not resident."""
        if self.holds(index):
            return self[index]
        if not 0 <= index < self._count:
            raise IndexError(index)
        got = self._read(index, index)
        return got[0]

    def _load_page(self, pn: int) -> list[Entry]:
        page = self._pages.get(pn)
        if page is not None:
            self._pages.move_to_end(pn)
            return page
        lo = pn * self._page
        hi = min(lo + self._page, self._base) - 1
        page = self._read(lo, hi)
        self._pages[pn] = page
        while len(self._pages) > self._pages_kept:
            self._pages.popitem(last=False)
        return page

    def _read(self, lo: int, hi: int) -> list[Entry]:
        if self._loader is None:
            raise MissingFacts(f"facts {lo + self.first_seq}..{hi + self.first_seq} are not in memory")
        first, last = lo + self.first_seq, hi + self.first_seq
        self.loads += 1
        ahead = self._ahead
        if ahead is not None and ahead[0] == lo and ahead[1] == hi:
            self._ahead = None
            got = ahead[2].result()  # (the loader's errors are raised here, as they would be)
        else:
            got = list(self._loader(first, last))
        if len(got) != last - first + 1 or any(e.seq != first + k for k, e in enumerate(got)):
            raise MissingFacts(f"the store did not return facts {first}..{last} of this campaign")
        if self._prepare is not None:
            got = [self._prepare(e) for e in got]
        return got
