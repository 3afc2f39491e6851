"""ROLLS_PENDING refusals cost little when nobody reads them (issue 21, bench P3).

A refold after a far-reaching correction orphans most turn ends ("X's turn still owes a saving
throw for Y against e57"); nobody reads why then. The message is written from labels and names
alone, the details (``describe``) are made when read. The law: every reason and every detail
reads exactly as the refusal that described everything at once wrote it -- in the orphan log, in
a history replay, in a command's refusal.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.generator import CampaignGenerator
from domain.core import encounters
from domain.core.encounters import _name, describe, require
from domain.ledger import Entry, Ledger
from domain.rulesets import get_ruleset
from tests.unit.test_core_encounters import ENC, TINY, Table

SETTINGS = settings(
    max_examples=max(4, int(os.environ.get("CHRONICLE_PROPERTY_EXAMPLES", "60")) // 6),
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
RULES = get_ruleset("stellar-winds")


def _eager_refusal(state: Any, rules: Any, owed: list[Any], what: str, ctx: Any) -> None:
    """The refusal as it was: message and details made when the rule refuses."""
    if not owed:
        return
    items = describe(rules, owed, state)
    text = ", ".join(
        f"a {x['kind']} for {_name(state, x['creature']) if x['creature'] else 'the table'}"
        + (f" against {x['effect_id']}" if x["effect_id"] else "")
        for x in items
    )
    require(False, f"{what} still owes {text}", "ROLLS_PENDING", ctx, "encounter_id", owed=items)


@contextmanager
def eager() -> Iterator[None]:
    saved = encounters._owed_refusal
    encounters._owed_refusal = _eager_refusal
    try:
        yield
    finally:
        encounters._owed_refusal = saved


def campaign(size: int, seed: int) -> Ledger:
    gen = CampaignGenerator(size, seed=seed, corrections=0.05)
    for _ in gen.facts():
        pass
    ledger = Ledger(RULES, {}, first_seq=gen.ledger.first_seq)
    for e in gen.ledger.entries:
        ledger.append(Entry(e.seq, e.type, e.version, e.payload, e.meta, e.timestamp))
    return ledger


def revoke_first_attack(ledger: Ledger) -> None:
    """Orphans the saves against its effects, and the turn ends that owed them."""
    target = next(
        e.seq for e in ledger.entries if e.type == "AttackMade" and e.seq not in ledger.resolution.revoked
    )
    payload = {"target": target, "reason": "never happened", "cascade": "fact"}
    ledger.prepare("FactRevoked", payload, {})
    ledger.append(Entry(ledger.next_seq, "FactRevoked", 1, payload, {}))


def readings(ledger: Ledger) -> tuple[list[tuple[int, str]], list[tuple[int, str | None]]]:
    """The orphan log, and the orphans of a history replay, as text."""
    ledger.state  # noqa: B018
    replayed = [(e.seq, orphan) for e, _, orphan, _ in ledger.replay_iter() if orphan is not None]
    return list(ledger.orphans.pairs()), replayed


@SETTINGS
@given(st.integers(200, 500), st.integers(0, 10**6))
def test_orphan_reasons_read_as_the_eager_refusal_wrote_them(size: int, seed: int) -> None:
    lazy = campaign(size, seed)
    revoke_first_attack(lazy)
    with eager():
        reference = campaign(size, seed)
        revoke_first_attack(reference)
        want = readings(reference)
    got = readings(lazy)
    assert got == want
    assert all(type(r) is str for _, r in got[0])


def test_the_details_are_made_only_when_read(monkeypatch: Any) -> None:
    made: list[int] = []
    real = encounters.describe

    def counting(*args: Any) -> Any:
        made.append(1)
        return real(*args)

    monkeypatch.setattr(encounters, "describe", counting)
    t = Table(TINY, "ann", "bo")
    t.start({"ann": 15, "bo": 5})
    t.begin()
    t.rec("Shake", creature="ann")
    err = t.refused("ROLLS_PENDING", "TurnEnded", encounter_id=ENC)
    assert made == []  # refused, the message written, no details made
    assert err.details is not None and err.details["owed"][0]["kind"] == "steadying roll"
    assert err.details["owed"][0]["dice"] == "1d6"
    assert made == [1]  # made once, on the first read


def test_a_command_refusal_shows_the_message_and_details() -> None:
    """Through a command: the message and the details a client gets (the API reads both)."""

    def refusal() -> tuple[str, str, dict[str, Any] | None]:
        t = Table(TINY, "ann", "bo")
        t.start({"ann": 15, "bo": 5})
        t.begin()
        t.rec("Shake", creature="ann")
        err = t.refused("ROLLS_PENDING", "TurnEnded", encounter_id=ENC)
        return str(err), err.message, err.details

    got = refusal()
    with eager():
        want = refusal()
    assert got == want
    assert got[1] == "Ann's turn still owes a steadying roll for Ann"
