"""Proposals in the ledger (issue 19): a proposal is decided or withdrawn once, a decision of
something that is not a pending proposal is refused, proposal facts are neither revoked nor
amended, the book survives a snapshot, and previews of table actions store nothing."""

from __future__ import annotations

import copy
import json
import os
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from domain.core import proposals
from domain.errors import DomainError
from domain.ledger import Entry, Ledger
from domain.rulesets import get_ruleset
from domain.rulesets import summary as whole_state
from tests.unit.conftest import ABILITIES, PC_DEFENSES

RULES = get_ruleset("stellar-winds")
SETTINGS = settings(
    max_examples=int(os.environ.get("CHRONICLE_PROPERTY_EXAMPLES", "60")),
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)


def record(
    ledger: Ledger, fact_type: str, payload: dict[str, Any], meta: dict[str, Any] | None = None
) -> int:
    """As the command service does: check against the present, then store."""
    payload = ledger.catalogue.validate(fact_type, payload)
    ledger.prepare(fact_type, payload, meta or {})
    seq = ledger.next_seq
    ledger.append(Entry(seq, fact_type, ledger.catalogue.version(fact_type), payload, dict(meta or {})))
    return seq


def table() -> Ledger:
    ledger = Ledger(RULES, {}, first_seq=2)
    record(
        ledger,
        "CreatureRegistered",
        {
            "creature_id": "brom",
            "name": "Brom",
            "kind": "pc",
            "level": 1,
            "abilities": ABILITIES,
            "max_hp": 30,
            "surges_per_day": 1,
            "defenses": PC_DEFENSES,
        },
    )
    return ledger


def submit(ledger: Ledger, who: str = "player:t1") -> int:
    return record(
        ledger,
        "ProposalSubmitted",
        {
            "mutation": "spendHealingSurge",
            "input": {"characterId": "x"},
            "character": "brom",
            "proposed_by": who,
            "proposer": "Bo",
        },
    )


def test_a_proposal_is_decided_once() -> None:
    ledger = table()
    p = submit(ledger)
    assert [q.position for q in ledger.proposals.pending()] == [p]
    record(ledger, "ProposalDecided", {"proposal": p, "decision": "rejected", "reason": "no"})
    assert ledger.proposals.proposals[p].status == "rejected"
    for fact_type, payload in (
        ("ProposalDecided", {"proposal": p, "decision": "approved"}),
        ("ProposalWithdrawn", {"proposal": p}),
    ):
        with pytest.raises(DomainError) as refused:
            record(ledger, fact_type, payload)
        assert refused.value.code == "PROPOSAL_NOT_PENDING"
    assert ledger.proposals.pending() == []


def test_only_a_proposal_can_be_decided_and_changes_come_with_their_input() -> None:
    ledger = table()
    with pytest.raises(DomainError) as missing:
        record(ledger, "ProposalDecided", {"proposal": 2, "decision": "approved"})
    assert missing.value.code == "NOT_FOUND"
    p = submit(ledger)
    with pytest.raises(DomainError) as bare:
        record(ledger, "ProposalDecided", {"proposal": p, "decision": "approved_with_changes"})
    assert bare.value.field == "input"
    with pytest.raises(DomainError) as stray:
        record(ledger, "ProposalDecided", {"proposal": p, "decision": "rejected", "input": {"a": 1}})
    assert (stray.value.code, stray.value.field) == ("INVALID_INPUT", "input")
    assert ledger.proposals.proposals[p].pending


def test_the_changes_a_decision_lists_are_the_difference_of_its_two_inputs() -> None:
    """``changed`` restates the proposed and the amended input for the log: a list that says
    anything else is refused, and one that says exactly that is taken."""
    ledger = table()
    p = submit(ledger)
    amended = {"characterId": "y"}
    with pytest.raises(DomainError) as wrong:
        record(
            ledger,
            "ProposalDecided",
            {
                "proposal": p,
                "decision": "approved_with_changes",
                "input": amended,
                "changed": [{"field": "characterId", "before": "x", "after": "z"}],
            },
        )
    assert wrong.value.field == "changed" and ledger.proposals.proposals[p].pending
    exact = [{"field": "characterId", "before": "x", "after": "y"}]
    payload = {"proposal": p, "decision": "approved_with_changes", "input": amended, "changed": exact}
    record(ledger, "ProposalDecided", payload)
    assert ledger.proposals.proposals[p].status == "approved_with_changes"


def test_an_approval_stores_the_command_in_the_same_append_citing_the_proposal() -> None:
    ledger = table()
    p = submit(ledger)
    record(ledger, "DamageTaken", {"target": "brom", "amount": 12})
    meta = {"proposal": p, "proposed_by": "player:t1", "proposer": "Bo", "decision": "approved"}
    d = record(ledger, "ProposalDecided", {"proposal": p, "decision": "approved", "facts": 1}, meta)
    s = record(ledger, "HealingSurgeSpent", {"creature": "brom"}, meta)
    assert ledger.proposals.proposals[p].applied == [s] == [d + 1]
    assert proposals.provenance(ledger.entry(s).meta) == (
        f"proposed by Bo (player), approved by the GM (proposal #{p})"
    )
    assert proposals.provenance(ledger.entry(p).meta) is None


def test_proposal_facts_are_not_revoked_or_amended() -> None:
    ledger = table()
    p = submit(ledger)
    for fact_type, payload in (
        ("FactRevoked", {"target": p, "reason": "x"}),
        ("FactAmended", {"target": p, "patch": {"note": "y"}, "reason": "x"}),
    ):
        with pytest.raises(DomainError) as refused:
            record(ledger, fact_type, payload)
        assert refused.value.code == "INVALID_INPUT"


def test_a_trust_setting_back_to_direct_is_the_default_again() -> None:
    ledger = table()
    record(ledger, "ProposalPolicySet", {"mutation": "attack", "mode": "approval"})
    assert ledger.proposals.mode("attack") == "approval"
    record(ledger, "ProposalPolicySet", {"mutation": "attack", "mode": "direct"})
    assert ledger.proposals.policies == {} and ledger.proposals.mode("attack") == "direct"


def test_a_preview_refuses_what_the_rules_refuse_and_stores_nothing() -> None:
    ledger = table()
    record(ledger, "DamageTaken", {"target": "brom", "amount": 12})
    before = whole_state(RULES, ledger.state)
    last = ledger.last_seq
    surge = [("HealingSurgeSpent", {"creature": "brom"})]
    state, refusals = ledger.simulate([surge, surge])
    assert refusals[0] is None and refusals[1] is not None and refusals[1].code == "NO_HEALING_SURGE"
    assert whole_state(RULES, state)["creatures"]["brom"]["hp"] == 25
    assert whole_state(RULES, ledger.state) == before and ledger.last_seq == last
    _, corrections = ledger.simulate([[("FactRevoked", {"target": 2, "reason": "x"})]])
    assert corrections[0] is not None and corrections[0].code == "INVALID_INPUT"


# --------------------------------------------------------------------------- the law
OPS = st.lists(
    st.tuples(
        st.sampled_from(["submit", "approve", "change", "reject", "withdraw", "policy"]),
        st.integers(min_value=0, max_value=6),
    ),
    max_size=25,
)


@SETTINGS
@given(ops=OPS, cut=st.integers(min_value=0, max_value=30))
def test_every_proposal_is_decided_at_most_once_and_the_book_survives_a_snapshot(
    ops: list[tuple[str, int]], cut: int
) -> None:
    """Random proposals, decisions and withdrawals (many aimed at decided ones or at nothing):
    a proposal is pending exactly until its first decision or withdrawal, which is kept; a
    ledger restored from a snapshot at any point and fed the rest holds the same book."""
    ledger = table()
    decided: dict[int, str] = {}
    submitted: list[int] = []
    for op, k in ops:
        target = submitted[k % len(submitted)] if submitted and k < 5 else 999
        payload: dict[str, Any]
        if op == "submit":
            submitted.append(submit(ledger))
            continue
        if op == "policy":
            record(ledger, "ProposalPolicySet", {"mutation": "attack", "mode": proposals.MODES[k % 3]})
            continue
        if op == "withdraw":
            fact_type, payload, status = "ProposalWithdrawn", {"proposal": target}, "withdrawn"
        else:
            decision = {"approve": "approved", "change": "approved_with_changes", "reject": "rejected"}[op]
            fact_type, status = "ProposalDecided", decision
            payload = {"proposal": target, "decision": decision}
            if op == "change":
                payload["input"] = {"characterId": "y"}
                payload["changed"] = [{"field": "characterId", "before": "x", "after": "y"}]
        try:
            record(ledger, fact_type, payload)
        except DomainError as err:
            assert target in decided or target not in submitted, err
            continue
        assert target in submitted and target not in decided
        decided[target] = status
    book = ledger.proposals
    assert {p: q.status for p, q in book.proposals.items() if not q.pending} == decided
    assert [q.position for q in book.pending()] == [p for p in submitted if p not in decided]

    n = min(cut, len(ledger.entries))
    rows = {e.seq: json.dumps([e.type, e.version, e.payload, e.meta, e.timestamp]) for e in ledger.entries}
    prefix = Ledger(RULES, {}, first_seq=2)
    for e in ledger.entries[:n]:
        prefix.append(Entry(e.seq, e.type, e.version, copy.deepcopy(e.payload), dict(e.meta), e.timestamp))
    snap = json.loads(json.dumps(prefix.capture().to_json()))
    again = Ledger.restore(
        RULES, {}, snap, lambda a, b: [Entry(s, *json.loads(rows[s])) for s in range(a, b + 1)], first_seq=2
    )
    for e in ledger.entries[n:]:
        again.append(Entry(e.seq, e.type, e.version, copy.deepcopy(e.payload), dict(e.meta), e.timestamp))
    assert again.proposals == book
