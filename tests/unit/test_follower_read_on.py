"""How far a follower's step reads (``projections.runner._read_ahead``): to the look-ahead, and
past it (a rebuild's step of one campaign) only while every notification is of that campaign."""

from __future__ import annotations

from dataclasses import dataclass

from projections.runner import _read_ahead


@dataclass(frozen=True)
class Note:
    id: int
    originator_id: str


class Log:
    """A notification log: ``campaigns[k]`` is the campaign of notification ``k + 1``."""

    def __init__(self, campaigns: str) -> None:
        self.notes = [Note(k + 1, c) for k, c in enumerate(campaigns)]

    def select_notifications(self, start: int, limit: int, inclusive_of_start: bool = True) -> list[Note]:
        after = start if not inclusive_of_start else start - 1
        return self.notes[after : after + limit]


def _ids(log: Log, want: int, sole: bool, page: int = 4) -> list[int]:
    first = log.select_notifications(0, page, inclusive_of_start=False)
    return [n.id for p in _read_ahead(log, first, want, sole) for n in p]


def test_a_step_reads_to_its_look_ahead_whatever_the_campaigns() -> None:
    log = Log("aabaaaaaaaaaaaaa")
    assert _ids(log, 8, sole=False) == list(range(1, 9))
    assert _ids(log, 8, sole=True) == list(range(1, 9))  # another campaign read: no further


def test_a_step_of_one_campaign_reads_on_to_the_log_end() -> None:
    assert _ids(Log("a" * 14), 8, sole=True) == list(range(1, 15))


def test_reading_on_stops_before_the_first_notification_of_another_campaign() -> None:
    """Past the look-ahead a page that mixes in another campaign gives only the notifications
    before the other campaign's first: the step stays one campaign's (else it would hold all it
    read on as one batch)."""
    assert _ids(Log("a" * 10 + "ab" + "a" * 8), 8, sole=True) == list(range(1, 12))
    assert _ids(Log("a" * 12 + "baaa"), 8, sole=True) == list(range(1, 13))  # a whole page, then none


def test_a_mixed_page_astride_the_look_ahead_gives_what_is_within_it() -> None:
    assert _ids(Log("aaaa" + "ab" + "aaaaaa"), 6, sole=True) == list(range(1, 7))
