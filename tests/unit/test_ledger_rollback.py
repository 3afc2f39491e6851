"""A commit that loses a race takes its staged facts back out of the ledger (issue 21, R2).

The command service checks a commit's facts with ``prepare`` and appends them to the cached
ledger, then saves them; when another replica took those positions first, the save fails and
the ledger rolls back to its savepoint instead of being dropped and loaded again. The law: a
ledger that staged facts and rolled them back reads exactly like one that never saw them --
now and after every later fact (no index, cache, checkpoint or correction of the staged facts
survives to be mistaken for the facts that take their positions).

The campaigns of ``test_paged_ledger`` are replayed on two ledgers in lockstep; before a
random share of the commands the paged ledger stages a decoy (the same fact and sometimes a
second one, with an idempotency key and a correlation id of their own: corrections, rulings,
retroactive flags and checkpoint boundaries included) and rolls it back.
"""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import event, given
from hypothesis import strategies as st

from domain.errors import DomainError
from domain.ledger import CORRECTED, RECORDED, Entry
from tests.unit.test_paged_ledger import RULES, SETTINGS, Pair, ops, play, sheet

DECOY = {"idempotency_key": "decoy", "correlation_id": "decoy", "causation_id": 2}


def twist(fact_type: str, payload: dict[str, Any], k: int) -> dict[str, Any]:
    """Another fact of the same type (what the staged one is then mistaken for, if anything
    of it survives the rollback): a correction with another reach or value."""
    p = copy.deepcopy(payload)
    if fact_type == "FactRevoked":
        p["cascade"] = ["fact", "action", "consequences"][k % 3]
    elif fact_type == "FactAmended":
        p["patch"] = {"amount": (p["patch"].get("amount", 0) + 1 + k) % 21}
    elif fact_type in ("RulingRecorded", "RulesFlagSet"):
        p["value"] = not p.get("value", True)
    elif fact_type == "RulingResolved":
        p["outcome"] = "upheld" if p["outcome"] == "overturned" else "overturned"
        p.pop("value", None)
    elif "amount" in p:
        p["amount"] = (p["amount"] + 1 + k) % 15
    return p


class Staging(Pair):
    """A pair whose paged ledger stages and rolls back a decoy before some commands."""

    def __init__(self, data: Any, window: int, page: int, every: int, full_every: int) -> None:
        super().__init__(window, page, every, full_every)
        self.data = data
        self.rolled_back = 0

    def record(self, fact_type: str, payload: dict[str, Any], meta: dict[str, Any], prepared: bool) -> bool:
        if self.data.draw(st.integers(0, 2), label="decoy") == 0:
            self.decoy(fact_type, payload)
        return super().record(fact_type, payload, meta, prepared)

    def decoy(self, fact_type: str, payload: dict[str, Any]) -> None:
        ledger = self.paged
        before = (ledger.last_seq, self.view(ledger), dict(ledger.orphans))
        sp = ledger.savepoint()
        extra = ("DamageTaken", {"target": "a", "amount": self.data.draw(st.integers(0, 12), label="hit")})
        staged = 0
        if self.data.draw(st.booleans(), label="twisted"):
            payload = twist(fact_type, payload, self.data.draw(st.integers(0, 2), label="twist"))
        for t, p in [(fact_type, payload), extra][: self.data.draw(st.integers(1, 2), label="decoys")]:
            try:
                p = RULES.catalogue.validate(t, copy.deepcopy(p))
                ledger.prepare(t, copy.deepcopy(p), dict(DECOY))
            except DomainError:
                break
            seq = ledger.next_seq
            ledger.append(Entry(seq, t, RULES.catalogue.version(t), p, dict(DECOY), f"d{seq}"))
            staged += 1
        if staged:
            ledger.state  # noqa: B018 -- read the staged present (a reader may have, under the lock)
        assert ledger.rollback(sp)
        self.rolled_back += staged
        assert (ledger.last_seq, self.view(ledger), dict(ledger.orphans)) == before
        assert ledger.by_idempotency_key("decoy") == []
        self.agree()


def configs() -> st.SearchStrategy[tuple[int, int, int, int]]:
    # a window of at least the two staged facts: they stay in memory until they are rolled back
    return st.tuples(st.integers(2, 6), st.integers(1, 5), st.integers(2, 7), st.integers(1, 4))


@SETTINGS
@given(configs(), st.lists(ops, min_size=8, max_size=45), st.data())
def test_a_ledger_that_rolled_back_staged_facts_reads_like_one_that_never_saw_them(
    config: tuple[int, int, int, int], steps: list[tuple[Any, ...]], data: Any
) -> None:
    pair = Staging(data, *config)
    play(pair, data, steps)
    ref, paged = pair.ref, pair.paged
    last = ref.last_seq
    assert paged.last_seq == last
    for view in (CORRECTED, RECORDED):
        a = [(e.seq, o, r, pair.view(ref, s)) for e, o, r, s in ref.walk(ref.first_seq, last, view)]
        b = [(e.seq, o, r, pair.view(paged, s)) for e, o, r, s in paged.walk(ref.first_seq, last, view)]
        assert a == b, view
    for p in range(ref.first_seq - 1, last + 1):
        for view in (CORRECTED, RECORDED):
            sa, oa = ref.state_at(p, view)
            sb, ob = paged.state_at(p, view)
            assert pair.view(ref, sa) == pair.view(paged, sb), (p, view)
            assert dict(oa) == dict(ob), (p, view)
    for seq in range(ref.first_seq, last + 1):
        assert paged.status(seq) == ref.status(seq), seq
        assert paged.effective_payload(seq) == ref.effective_payload(seq), seq
    assert paged._children == ref._children
    assert paged._by_correlation == ref._by_correlation
    assert paged._idempotency == ref._idempotency
    assert paged._citations == ref._citations
    assert list(paged._rulings_recorded.items()) == list(ref._rulings_recorded.items())
    assert paged.fingerprint() == ref.fingerprint()
    event(f"staged facts rolled back: {'some' if pair.rolled_back else 'none'}")


def test_a_rollback_refuses_when_the_staged_facts_left_memory() -> None:
    """With no window to hold them, staged facts are paged out: the rollback says it cannot
    (the caller then drops the ledger and loads it again) and changes nothing."""
    pair = Pair(0, 1, 4, 2)
    pair.record("CreatureRegistered", sheet("a", "pc", 10), {}, prepared=True)
    ledger = pair.paged
    sp = ledger.savepoint()
    for amount in (1, 2, 3):
        payload = RULES.catalogue.validate("DamageTaken", {"target": "a", "amount": amount})
        ledger.prepare("DamageTaken", copy.deepcopy(payload), {})
        seq = ledger.next_seq
        ledger.append(Entry(seq, "DamageTaken", 1, payload, {}, f"d{seq}"))
    last = ledger.last_seq
    assert not ledger.rollback(sp)
    assert ledger.last_seq == last
