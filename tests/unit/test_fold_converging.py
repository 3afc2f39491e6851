"""A correction's refold that stops where it rejoins the present fold (``Ledger._fold_converging``,
the import's dry run) must not stop before the last fact the correction reads differently.

A ruling cited twice, far apart, with a short rest between (which makes the states alike
again): overturning it changes the reading of both citations. The refold may rejoin the old
fold only after the second one -- rejoining after the first would take the old fold's reading
of the second citation as it was.
"""

from __future__ import annotations

from typing import Any

from domain.ledger import Entry, Ledger
from domain.rulesets import get_ruleset
from domain.rulesets import summary as whole_state
from tests.unit.test_paged_ledger import sheet

RULES = get_ruleset("stellar-winds")
BLESSED = [{"source": "blessing", "value": 3, "ruling": "r1"}]  # +3 while ruling r1 holds


def d20(face: int) -> dict[str, Any]:
    return {"expression": "1d20", "terms": [{"sides": 20, "faces": [face], "sign": 1}]}


def xp(times: int) -> list[tuple[str, dict[str, Any]]]:
    return [("ExperienceAwarded", {"creatures": ["a", "b"], "amount": 10})] * times


def dying_and_saving(who: str) -> list[tuple[str, dict[str, Any]]]:
    """Dropped to dying; the death save is an 8, +3 while r1 holds: 11, no change; 8, a failure."""
    return [
        ("DamageTaken", {"target": who, "amount": 17}),
        ("DeathSavingThrowRolled", {"creature": who, "roll": d20(8), "modifiers": BLESSED}),
    ]


CAMPAIGN = [
    ("CreatureRegistered", sheet("a", "pc", 10)),
    ("CreatureRegistered", sheet("b", "pc", 10)),
    ("RulingRecorded", {"ruling_id": "r1", "question": "blessed?", "decision": "yes", "value": True}),
    *dying_and_saving("a"),  # the first citation
    ("HealingApplied", {"target": "a", "flat": 10}),
    ("ShortRestTaken", {}),  # a's failed save is forgotten: alike again under either reading
    *xp(12),
    *dying_and_saving("b"),  # the second citation, checkpoints later
    *xp(6),
]
OVERTURNED = ("RulingResolved", {"ruling_id": "r1", "outcome": "overturned", "decision": "no"})


def ledger(facts: list[tuple[str, dict[str, Any]]], *, checked: bool) -> Ledger:
    """``checked``: the import's dry run (``append_checked``, whose corrections refold converging);
    else appended and folded once from the start (the reference)."""
    out = Ledger(RULES, {}, first_seq=2, checkpoint_every=4)
    for fact_type, payload in facts:
        payload = RULES.catalogue.validate(fact_type, payload)
        entry = Entry(out.next_seq, fact_type, RULES.catalogue.version(fact_type), payload, {}, "t")
        if checked:
            out.append_checked(entry)
        else:
            out.append(entry)
    return out


def test_overturning_a_ruling_cited_twice_far_apart_rereads_both_citations() -> None:
    refolded = ledger([*CAMPAIGN, OVERTURNED], checked=True)
    reference = ledger([*CAMPAIGN, OVERTURNED], checked=False)
    assert RULES.creature_view(reference.state, "b")["death_save_failures"] == 1  # the 8 stands alone
    assert whole_state(RULES, refolded.state) == whole_state(RULES, reference.state)
    assert dict(refolded.orphans) == dict(reference.orphans)
    second_save = max(e.seq for e in reference.entries if e.type == "DeathSavingThrowRolled")
    assert whole_state(RULES, refolded.state_at(second_save)[0]) == whole_state(
        RULES, reference.state_at(second_save)[0]
    )


def test_with_the_ruling_upheld_the_second_save_is_no_failure() -> None:
    """The other reading, so the test above tells the two apart."""
    upheld = ledger(CAMPAIGN, checked=True)
    assert RULES.creature_view(upheld.state, "b")["death_save_failures"] == 0


def full_states(ledger: Ledger) -> list[int]:
    return [j for j, p in enumerate(ledger._checkpoints.points) if p is not None and p.full is not None]


def test_a_refold_that_rejoins_keeps_no_whole_state_where_it_rejoined() -> None:
    """Checkpoints keep whole states only at the full_every rhythm (and the newest); the rest
    are deltas. A refold that rejoins the present fold must settle the checkpoint it rejoined
    at like any other, or each correction of an import's dry run leaves a whole state behind."""
    healed = [("HealingApplied", {"target": "b", "flat": 10}), ("ShortRestTaken", {})]  # alike again
    facts = [*CAMPAIGN, *healed, *xp(40), OVERTURNED, *xp(40)]
    refolded = ledger(facts, checked=True)
    assert refolded.converged == 1
    points = refolded._checkpoints
    newest = max(j for j, p in enumerate(points.points) if p is not None)
    rhythm = [j for j in range(newest) if (j + 1) % points.full_every == 0]
    assert full_states(refolded) == sorted({0, *rhythm, newest})
    reference = ledger(facts, checked=False)
    for p in points:  # every checkpoint still reads as the fold from the start
        assert whole_state(RULES, refolded.state_at(p.seq)[0]) == whole_state(
            RULES, reference.state_at(p.seq)[0]
        )
