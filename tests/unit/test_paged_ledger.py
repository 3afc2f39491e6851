"""A ledger that holds only a window of its facts reads exactly like one that holds them all (issue 21).

Two ledgers are fed the same random campaign in lockstep, command by command, the way the
command service feeds them (``prepare`` then ``append``), sometimes appending without
``prepare`` (another process wrote; this one fast-forwards):

* the *reference* keeps every fact in memory, checkpoints every 256 facts (so none here);
* the *paged* one keeps a tiny window of facts, reads older ones through a loader from a
  store (JSON round trip, as the event store does), keeps one cached page, checkpoints every
  few facts with deltas and rare full states.

The campaigns have rulings cited by later facts, multi-fact actions (correlation ids),
consequences (causation ids), idempotency keys, and random corrections: revocations with
every cascade, restorations, amendments, ruling decisions, retroactive rules flags -- so
refolds reach far back, orphan facts and un-orphan them. After every command both ledgers
must agree on the state, the orphans and the command's outcome (or refusal), and at the end
on history walks, as-of states in both time axes, what-ifs, idempotency lookups, statuses
and outcomes as recorded. The paged ledger must really have paged (facts read back) and
held no more facts than its window and one page.
"""

from __future__ import annotations

import copy
import json
import os
from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from domain import checkpoints
from domain.core import state as core_state
from domain.errors import DomainError
from domain.ledger import CORRECTED, RECORDED, Entry, Ledger
from domain.rulesets import get_ruleset
from domain.rulesets import summary as whole_state
from tests.unit.conftest import ABILITIES, MONSTER_DEFENSES, PC_DEFENSES

SETTINGS = settings(
    max_examples=int(os.environ.get("CHRONICLE_PROPERTY_EXAMPLES", "60")),
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
RULES = get_ruleset("stellar-winds")


class Store:
    """Stored facts, read back as fresh objects (the event store decodes a new copy each time)."""

    def __init__(self) -> None:
        self.rows: dict[int, str] = {}
        self.reads = 0

    def put(self, e: Entry) -> None:
        self.rows[e.seq] = json.dumps([e.type, e.version, e.payload, e.meta, e.timestamp])

    def load(self, first: int, last: int) -> list[Entry]:
        self.reads += 1
        out = []
        for seq in range(first, last + 1):
            t, v, p, m, ts = json.loads(self.rows[seq])
            out.append(Entry(seq, t, v, p, m, ts))
        return out


class Pair:
    def __init__(self, window: int, page: int, every: int, full_every: int) -> None:
        self.ref = Ledger(RULES, {}, first_seq=2)
        self.paged = Ledger(RULES, {}, first_seq=2, checkpoint_every=every, full_every=full_every)
        self.store = Store()
        self.paged.attach(self.store.load, window, page=page, pages_kept=1)
        self.window, self.page = window, page
        self.facts: list[int] = []  # positions of table facts
        self.rulings: list[str] = []

    def view(self, ledger: Ledger, state: Any = None) -> dict[str, Any]:
        return whole_state(RULES, ledger.state if state is None else state)

    def record(self, fact_type: str, payload: dict[str, Any], meta: dict[str, Any], prepared: bool) -> bool:
        """Record on both (prepare + append, or a bare append); assert they agree. True if stored."""
        try:
            payload = RULES.catalogue.validate(fact_type, payload)
        except DomainError:
            return False
        outcomes = []
        correction = prepared and fact_type in CORRECTIONS
        before = [ledger.state for ledger in (self.ref, self.paged)] if correction else []
        for ledger in (self.ref, self.paged):
            if not prepared:
                outcomes.append(None)
                continue
            try:
                outcomes.append(("ok", ledger.prepare(fact_type, copy.deepcopy(payload), dict(meta))))
            except DomainError as err:
                outcomes.append(("refused", err.code, err.message))
        assert outcomes[0] == outcomes[1]
        if outcomes[0] is not None and outcomes[0][0] == "refused":
            return False
        seq = self.ref.next_seq
        e = Entry(seq, fact_type, RULES.catalogue.version(fact_type), payload, meta, f"t{seq}")
        self.store.put(e)
        for ledger in (self.ref, self.paged):
            ledger.append(Entry(seq, e.type, e.version, copy.deepcopy(payload), dict(meta), e.timestamp))
        for ledger, old in zip((self.ref, self.paged), before, strict=False):
            identity_tells_what_changed(old, ledger.state)
        if fact_type not in (
            "FactRevoked",
            "FactRestored",
            "FactAmended",
            "RulingRecorded",
            "RulingResolved",
        ):
            self.facts.append(seq)
        return True

    def agree(self) -> None:
        assert self.view(self.paged) == self.view(self.ref)
        assert dict(self.paged.orphans) == dict(self.ref.orphans)
        # the window and its slack, the page kept, the short stretch held (at most a page)
        assert self.paged.entries.resident <= self.window + 3 * self.page


CORRECTIONS = frozenset({"FactRevoked", "FactRestored", "FactAmended", "RulingResolved", "RulesFlagSet"})


def identity_tells_what_changed(before: Any, after: Any) -> None:
    """Across a correction (a refold), a creature is the same object before and after exactly
    when it reads the same: unchanged ones keep their identity (``reshare``), so payloads, read
    models and checkpoint deltas that test identity see only what the correction changed."""
    changed = set(core_state.changed_creatures(before, after))
    for cid in after.creatures:
        same_view = cid in before.creatures and RULES.creature_view(before, cid) == RULES.creature_view(
            after, cid
        )
        if cid not in changed:
            assert same_view, cid  # the same object must read the same
        elif cid in before.creatures:
            a, b = before.creatures[cid], after.creatures[cid]
            assert not checkpoints._alike(a, b), cid  # equal by value: it should have kept its identity


# --------------------------------------------------------------------------- the campaign
def sheet(cid: str, kind: str, max_hp: int) -> dict[str, Any]:
    return {
        "creature_id": cid,
        "name": cid,
        "kind": kind,
        "level": 1,
        "abilities": {**ABILITIES, "con": 6},
        "max_hp": max_hp,
        "surges_per_day": 2,
        "defenses": dict(MONSTER_DEFENSES if kind == "monster" else PC_DEFENSES),
    }


def d20(face: int) -> dict[str, Any]:
    return {"expression": "1d20", "terms": [{"kind": "dice", "sides": 20, "faces": [face], "kept": [True]}]}


ops = st.one_of(
    st.tuples(st.just("damage"), st.integers(0, 2), st.integers(0, 14), st.booleans()),
    st.tuples(st.just("damage"), st.integers(0, 2), st.integers(0, 14), st.booleans()),
    st.tuples(st.just("heal"), st.integers(0, 2), st.integers(0, 10), st.booleans()),
    st.tuples(st.just("death_save"), st.integers(0, 2), st.integers(1, 20), st.booleans()),
    st.tuples(st.just("surge"), st.integers(0, 2)),
    st.tuples(st.just("rest"), st.booleans()),
    st.tuples(st.just("xp"), st.integers(0, 2), st.integers(0, 2000)),
    st.tuples(st.just("ruling"), st.booleans()),
    st.tuples(st.just("action"), st.integers(0, 2), st.integers(1, 6)),
    st.tuples(st.just("revoke"), st.integers(0, 10**6), st.sampled_from(["fact", "action", "consequences"])),
    st.tuples(st.just("restore"), st.integers(0, 10**6)),
    st.tuples(st.just("amend"), st.integers(0, 10**6), st.integers(0, 20)),
    st.tuples(st.just("decide"), st.integers(0, 10**6), st.sampled_from(["upheld", "overturned", "value"])),
    st.tuples(st.just("retro"), st.booleans()),
)


def play(pair: Pair, data: Any, steps: list[tuple[Any, ...]]) -> None:
    ids = ["a", "b", "m"]
    for cid, kind, hp in (("a", "pc", 10), ("b", "pc", 12), ("m", "monster", 9)):
        pair.record("CreatureRegistered", sheet(cid, kind, hp), {}, prepared=True)
    n = 0
    for op in steps:
        n += 1
        kind = op[0]
        prepared = data.draw(st.integers(0, 4), label="prepared") > 0
        meta: dict[str, Any] = {"idempotency_key": f"k{n}"} if n % 3 == 0 else {}
        if pair.facts and n % 4 == 0:
            meta["causation_id"] = pair.facts[n % len(pair.facts)]
        if kind == "damage":
            _, who, amount, wounding = op
            pair.record(
                "DamageTaken", {"target": ids[who], "amount": amount, "wounding": wounding}, meta, prepared
            )
        elif kind == "heal":
            _, who, flat, cite = op
            payload: dict[str, Any] = {"target": ids[who], "flat": flat}
            if cite and pair.rulings:
                payload["rulings"] = {"magical": pair.rulings[n % len(pair.rulings)]}
            pair.record("HealingApplied", payload, meta, prepared)
        elif kind == "death_save":
            _, who, face, cite = op
            mods = (
                [{"source": "blessing", "value": 3, "ruling": pair.rulings[n % len(pair.rulings)]}]
                if cite and pair.rulings
                else []
            )
            pair.record(
                "DeathSavingThrowRolled",
                {"creature": ids[who], "roll": d20(face), "modifiers": mods},
                meta,
                prepared,
            )
        elif kind == "surge":
            pair.record("HealingSurgeSpent", {"creature": ids[op[1]]}, meta, prepared)
        elif kind == "rest":
            pair.record("ExtendedRestTaken" if op[1] else "ShortRestTaken", {}, meta, prepared)
        elif kind == "xp":
            pair.record("ExperienceAwarded", {"creatures": [ids[op[1]]], "amount": op[2]}, meta, prepared)
        elif kind == "ruling":
            rid = f"r{n}"
            if pair.record(
                "RulingRecorded",
                {"ruling_id": rid, "question": "q", "decision": "d", "value": op[1]},
                meta,
                prepared,
            ):
                pair.rulings.append(rid)
        elif kind == "action":  # one table action of several facts: one correlation id
            corr = {**meta, "correlation_id": f"c{n}"}
            for k in range(2):
                pair.record("DamageTaken", {"target": ids[(op[1] + k) % 3], "amount": op[2]}, corr, prepared)
        elif kind == "revoke" and pair.facts:
            target = pair.facts[op[1] % len(pair.facts)]
            pair.record("FactRevoked", {"target": target, "reason": "p", "cascade": op[2]}, meta, prepared)
        elif kind == "restore":
            revs = [e.seq for e in pair.ref.entries if e.type == "FactRevoked"]
            if revs:
                pair.record(
                    "FactRestored", {"revocation": revs[op[1] % len(revs)], "reason": "p"}, meta, prepared
                )
        elif kind == "amend":
            hits = [e.seq for e in pair.ref.entries if e.type == "DamageTaken"]
            if hits:
                target = hits[op[1] % len(hits)]
                pair.record(
                    "FactAmended",
                    {"target": target, "patch": {"amount": op[2]}, "reason": "p"},
                    meta,
                    prepared,
                )
        elif kind == "decide" and pair.rulings:
            rid = pair.rulings[op[1] % len(pair.rulings)]
            outcome = "upheld" if op[2] == "upheld" else "overturned"
            payload = {"ruling_id": rid, "outcome": outcome, "decision": "d"}
            if op[2] == "value":
                payload["value"] = bool(op[1] % 2)
            pair.record("RulingResolved", payload, meta, prepared)
        elif kind == "retro":
            pair.record(
                "RulesFlagSet",
                {"flag": "sw.magic_heals_wounds_first", "value": op[1], "retroactive": True},
                meta,
                prepared,
            )
        if data.draw(st.booleans(), label="compare now"):
            pair.agree()
    pair.agree()


def configs() -> st.SearchStrategy[tuple[int, int, int, int]]:
    return st.tuples(st.integers(0, 6), st.integers(1, 5), st.integers(2, 7), st.integers(1, 4))


# ------------------------------------------------------------------------------ the laws
@SETTINGS
@given(configs(), st.lists(ops, min_size=8, max_size=45), st.data())
def test_a_paged_ledger_reads_exactly_like_a_fully_loaded_one(
    config: tuple[int, int, int, int], steps: list[tuple[Any, ...]], data: Any
) -> None:
    assert core_state.GUARD  # tests/conftest.py: a shared creature changed in place fails loudly
    pair = Pair(*config)
    play(pair, data, steps)
    ref, paged = pair.ref, pair.paged
    last = ref.last_seq
    assert paged.last_seq == last

    # history, both time axes, over a random range
    start = data.draw(st.integers(ref.first_seq, last), label="walk start")
    stop = data.draw(st.integers(start, last), label="walk stop")
    for view in (CORRECTED, RECORDED):
        a = [(e.seq, o, r, pair.view(ref, s)) for e, o, r, s in ref.walk(start, stop, view)]
        b = [(e.seq, o, r, pair.view(paged, s)) for e, o, r, s in paged.walk(start, stop, view)]
        assert a == b, view

    # as-of, both axes, at random positions (orphans included)
    for _ in range(3):
        p = data.draw(st.integers(ref.first_seq - 1, last), label="as of")
        for view in (CORRECTED, RECORDED):
            sa, oa = ref.state_at(p, view)
            sb, ob = paged.state_at(p, view)
            assert pair.view(ref, sa) == pair.view(paged, sb), (p, view)
            assert dict(oa) == dict(ob), (p, view)

    # full replays, statuses, effective payloads
    full_a: dict[int, Any] = {}
    full_b: dict[int, Any] = {}
    ref.replay(lambda e, o, r: full_a.__setitem__(e.seq, (o, r)))
    paged.replay(lambda e, o, r: full_b.__setitem__(e.seq, (o, r)))
    assert full_a == full_b
    for seq in range(ref.first_seq, last + 1):
        assert paged.status(seq) == ref.status(seq), seq
        assert paged.effective_payload(seq) == ref.effective_payload(seq), seq
    res_a, res_b = ref.resolution, paged.resolution
    assert (res_a.revoked, res_a.amended, res_a.ruling_values, res_a.ruling_status) == (
        res_b.revoked,
        res_b.amended,
        res_b.ruling_values,
        res_b.ruling_status,
    )

    # idempotency lookups and outcomes as recorded
    for key in {e.meta.get("idempotency_key") for e in ref.entries} - {None}:
        ea, eb = ref.by_idempotency_key(key), paged.by_idempotency_key(key)
        assert [(e.seq, e.type, e.payload) for e in ea] == [(e.seq, e.type, e.payload) for e in eb]
        seqs = [e.seq for e in ea]
        assert ref.outcomes_as_recorded(seqs) == paged.outcomes_as_recorded(seqs)

    # a what-if of a random revocation (with its cascade)
    if pair.facts:
        target = data.draw(st.sampled_from(pair.facts), label="what-if target")
        cascade = data.draw(st.sampled_from(["fact", "action", "consequences"]), label="cascade")
        proposal = [("FactRevoked", {"target": target, "reason": "w", "cascade": cascade})]
        try:
            wa: Any = ref.what_if(copy.deepcopy(proposal))
        except DomainError as err:
            wa = err.code
        try:
            wb: Any = paged.what_if(copy.deepcopy(proposal))
        except DomainError as err:
            wb = err.code
        if isinstance(wa, str):
            assert wa == wb
        else:
            assert pair.view(ref, wa[0]) == pair.view(paged, wb[0])
            assert dict(wa[1]) == dict(wb[1])
    pair.agree()
    event(f"facts read back: {'yes' if pair.store.reads else 'no'}")
    event(f"orphans at the end: {'some' if ref.orphans else 'none'}")
    event(f"revoked at the end: {'some' if ref.resolution.revoked else 'none'}")
    event(f"recorded checkpoints: {'some' if paged._recorded else 'none'}")
    if last - ref.first_seq + 1 > pair.window + pair.page:
        assert pair.store.reads > 0, "the paged ledger never read a fact back"


@SETTINGS
@given(
    st.integers(0, 60),
    st.integers(0, 30),
    st.integers(1, 8),
    st.integers(1, 3),
    st.integers(0, 20),
    st.lists(st.tuples(st.integers(0, 90), st.integers(0, 90)), min_size=1, max_size=8),
)
def test_entries_read_back_in_any_order_are_the_stored_facts(
    count: int, window: int, page: int, kept: int, restored: int, ranges: list[tuple[int, int]]
) -> None:
    """Facts read back -- page by page, in big streamed stretches, short held stretches, single
    points -- are the stored ones in order; a stretch that reaches the resident facts leaves the
    window resident (a restored ledger then refolds its window without reading), memory stays
    bounded."""
    from domain.entries import Entries

    store = Store()
    facts = [Entry(s, "NoteAdded", 1, {"text": str(s)}, {}, f"t{s}") for s in range(2, 2 + count)]
    for e in facts:
        store.put(e)
    entries = Entries(2)
    entries.attach(store.load, window, page=page, pages_kept=kept)
    restored = min(restored, count)
    entries.skip_to(restored)  # as a ledger restored from a snapshot: nothing resident
    for e in facts[restored:]:
        entries.append(Entry(e.seq, e.type, e.version, dict(e.payload), {}, e.timestamp))
    for a, b in ranges:
        lo, hi = min(a, b), max(a, b)
        assert [e.seq for e in entries.range(lo, hi)] == [e.seq for e in facts[lo:hi]]
        # (the pages kept, and the short stretch held: at most a page)
        assert entries.resident <= max(window + page, count - restored) + (kept + 1) * page
        if lo < count:
            assert entries.point(lo).seq == facts[lo].seq
    if count:
        list(entries.range(0, count))
        reads = store.reads
        list(entries.range(max(0, count - window), count))
        assert store.reads == reads or window == 0 or count - restored > window + page


def test_a_short_stretch_read_back_is_held_and_stretched_down_to_the_stretch_before_it() -> None:
    """A history page with outcomes: its facts are read back (one read), then the fold from the
    checkpoint before it reads that stretch and the page again. The page's facts are held, so
    the second read is of the facts before them only, and reading the whole stretch again reads
    nothing; another stretch elsewhere is held instead (one at a time, at most a page)."""
    from domain.entries import Entries

    store = Store()
    facts = [Entry(s, "NoteAdded", 1, {"text": str(s)}, {}, f"t{s}") for s in range(2, 1002)]
    for e in facts:
        store.put(e)
    entries = Entries(2)
    entries.attach(store.load, 10, page=512, pages_kept=4)
    for e in facts:
        entries.append(e)
    assert [e.seq for e in entries.range(300, 320)] == [e.seq for e in facts[300:320]]
    assert store.reads == 1
    assert [e.seq for e in entries.range(256, 320)] == [e.seq for e in facts[256:320]]
    assert store.reads == 2
    assert [e.seq for e in entries.range(256, 320)] == [e.seq for e in facts[256:320]]
    assert [e.seq for e in entries.range(300, 325)] == [e.seq for e in facts[300:325]]  # and stretched up
    assert entries.point(257).seq == facts[257].seq
    assert store.reads == 3
    assert [e.seq for e in entries.range(256, 325)] == [e.seq for e in facts[256:325]]
    assert store.reads == 3
    assert [e.seq for e in entries.range(100, 120)] == [e.seq for e in facts[100:120]]
    assert [e.seq for e in entries.range(300, 320)] == [e.seq for e in facts[300:320]]
    assert store.reads == 5  # one stretch is held at a time
