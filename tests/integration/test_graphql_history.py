"""History and log pages carry each fact's outcome and narrated line, as corrected now.

Only the facts on the page are folded (from the nearest checkpoint); the answer must be the
same a mutation gave when the fact was recorded, until a correction changes it.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any
from uuid import UUID

from fastapi.testclient import TestClient

from api.http.app import create_app
from api.service.application import ChronicleApplication
from api.service.settings import Settings
from tests.graphql_helpers import GQL, create_campaign, gid, pc

HISTORY = """query($id: ID!, $after: String) { node(id: $id) { ... on Campaign {
  history(first: 2, after: $after) { edges { cursor node { position type outcome status } } }
  log(last: 3) { edges { node { position text status } } } } } }"""


@dataclass
class Struck:
    """A campaign served in memory where Vex took one blow per amount (``positions``: theirs)."""

    app: ChronicleApplication
    g: GQL
    cid: str
    gm: str
    vex: str
    campaign: str
    facts: list[dict[str, Any]]  # each blow's fact, as its mutation answered

    @property
    def positions(self) -> list[int]:
        return [f["position"] for f in self.facts]


@contextmanager
def vex_struck(amounts: Iterable[int]) -> Iterator[Struck]:
    app = ChronicleApplication(env={"PERSISTENCE_MODULE": "eventsourcing.popo"})
    with TestClient(create_app(Settings(database_url="memory:"), app)) as client:
        g = GQL(client)
        cid, gm = create_campaign(g)
        vex = pc(g, cid, gm, "Vex")
        campaign = gid("Campaign", cid, cid)
        facts = [
            g.mutate("dealDamage", {"campaignId": campaign, "characterId": vex, "amount": n}, gm)["facts"][0]
            for n in amounts
        ]
        yield Struck(app, g, cid, gm, vex, campaign, facts)


def test_history_pages_show_outcomes_and_lines_as_corrected() -> None:
    with vex_struck((5, 7)) as t:
        g, gm, campaign = t.g, t.gm, t.campaign
        first = g.ok(HISTORY, {"id": campaign}, gm)["node"]
        cursor = first["history"]["edges"][-1]["cursor"]
        page = g.ok(HISTORY, {"id": campaign, "after": cursor}, gm)["node"]["history"]["edges"]
        by_position = {e["node"]["position"]: e["node"] for e in page}
        for fact in t.facts:
            assert by_position[fact["position"]]["outcome"] == fact["outcome"]
            assert by_position[fact["position"]]["status"] == ["ACTIVE"]

        revoked_at, later = t.positions
        out = g.mutate(
            "revokeFact", {"campaignId": campaign, "position": revoked_at, "reason": "misread"}, gm
        )
        assert out["userErrors"] == []
        page = g.ok(HISTORY, {"id": campaign, "after": cursor}, gm)["node"]["history"]["edges"]
        now = {e["node"]["position"]: e["node"] for e in page}
        assert now[revoked_at]["status"] == ["REVOKED"] and now[revoked_at]["outcome"] is None
        assert now[later]["outcome"]["hp_lost"] == 7
        lines = g.ok(HISTORY, {"id": campaign}, gm)["node"]["log"]["edges"]
        assert [line["node"]["position"] for line in lines] == [revoked_at, later, out["position"]]
        assert all(line["node"]["text"] for line in lines)
        assert "Vex" in lines[1]["node"]["text"]


def test_a_page_by_position_reads_only_its_own_facts(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A page of the history or the log by position (cursors, fromPosition/toPosition, asOf) and
    a Fact by its id cost their own facts: the campaign's facts are never listed for them
    (issue 21); a filter on content (a character, types) still scans, with the same answers."""
    from api.graphql import data

    with vex_struck(range(1, 8)) as t:
        g, cid, gm, campaign = t.g, t.cid, t.gm, t.campaign
        pages = """query($id: ID!, $after: String, $at: Int!) { node(id: $id) { ... on Campaign {
          history(first: 3, after: $after) { totalCount edges { cursor node { position type } }
            pageInfo { hasNextPage hasPreviousPage } }
          window: history(last: 2, filter: {fromPosition: 3, toPosition: 6}) { totalCount
            edges { node { position } } pageInfo { hasNextPage hasPreviousPage } }
          log(first: 2, after: $after) { totalCount edges { node { position text } } }
          asOf(position: $at) { history(last: 1) { totalCount edges { node { position } } } } } } }"""
        scanned = data.history
        everything = g.ok(pages, {"id": campaign, "at": 4}, gm)["node"]

        def listing(*args, **kwargs):  # type: ignore[no-untyped-def]
            raise AssertionError("a page by position listed the whole history")

        monkeypatch.setattr(data, "history", listing)
        answer = g.ok(pages, {"id": campaign, "at": 4}, gm)["node"]
        assert answer == everything
        assert [e["node"]["position"] for e in answer["history"]["edges"]] == [1, 2, 3]
        assert answer["history"]["totalCount"] == 9  # the creation, Vex, seven blows
        assert answer["history"]["pageInfo"] == {"hasNextPage": True, "hasPreviousPage": False}
        assert [e["node"]["position"] for e in answer["window"]["edges"]] == [5, 6]
        assert answer["window"]["totalCount"] == 4
        assert answer["window"]["pageInfo"] == {"hasNextPage": False, "hasPreviousPage": True}
        assert answer["asOf"]["history"] == {"totalCount": 4, "edges": [{"node": {"position": 4}}]}
        after = answer["history"]["edges"][-1]["cursor"]
        more = g.ok(pages, {"id": campaign, "after": after, "at": 9}, gm)["node"]
        assert [e["node"]["position"] for e in more["history"]["edges"]] == [4, 5, 6]
        assert [e["node"]["position"] for e in more["log"]["edges"]] == [4, 5]
        assert all(e["node"]["text"] for e in more["log"]["edges"])
        fact = g.ok(
            "query($id: ID!) { node(id: $id) { ... on Fact { position type } } }",
            {"id": gid("Fact", cid, "5")},
            gm,
        )["node"]
        assert fact == {"position": 5, "type": "DamageTaken"}

        monkeypatch.setattr(data, "history", scanned)  # a filter on content scans
        blows = g.ok(
            """query($id: ID!) { node(id: $id) { ... on Campaign {
              history(first: 50, filter: {types: ["DamageTaken"]}) { totalCount } } } }""",
            {"id": campaign},
            gm,
        )["node"]["history"]
        assert blows["totalCount"] == 7


def test_a_page_folds_only_when_it_shows_outcomes_or_lines(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Outcomes and narrated lines fold the stretch a page spans (from the checkpoint before it);
    a page that shows neither (positions, types, statuses, payloads) folds nothing. A page that
    shows them folds once for all its facts, and its answers are those of the eager page."""
    from api.graphql import data

    with vex_struck(range(1, 6)) as t:
        g, cid, gm, campaign = t.g, t.cid, t.gm, t.campaign
        fills: list[list[int]] = []
        filling = data.fill

        def counted(app_, campaign_id, records):  # type: ignore[no-untyped-def]
            fills.append([r.position for r in records])
            return filling(app_, campaign_id, records)

        monkeypatch.setattr(data, "fill", counted)
        bare = """query($id: ID!) { node(id: $id) { ... on Campaign {
          history(first: 5) { edges { node { position type status payload } } } } } }"""
        plain = g.ok(bare, {"id": campaign}, gm)["node"]["history"]["edges"]
        assert [e["node"]["position"] for e in plain] == [1, 2, 3, 4, 5]
        fact = g.ok(
            "query($id: ID!) { node(id: $id) { ... on Fact { position type status } } }",
            {"id": gid("Fact", cid, "4")},
            gm,
        )["node"]
        assert fact == {"position": 4, "type": "DamageTaken", "status": ["ACTIVE"]}
        assert fills == []  # nothing asked for an outcome or a line

        shown = """query($id: ID!) { node(id: $id) { ... on Campaign {
          history(first: 5) { edges { node { position outcome line } } } } } }"""
        page = g.ok(shown, {"id": campaign}, gm)["node"]["history"]["edges"]
        assert fills == [[1, 2, 3, 4, 5]]  # one fold for the page, not one per fact
        blows = [e["node"] for e in page if e["node"]["position"] >= 3]
        assert [b["outcome"]["amount"] for b in blows] == [1, 2, 3]
        assert all("Vex" in b["line"] for b in blows)
        one = g.ok(
            "query($id: ID!) { node(id: $id) { ... on Fact { outcome line } } }",
            {"id": gid("Fact", cid, "4")},
            gm,
        )["node"]
        assert one == {"outcome": blows[1]["outcome"], "line": blows[1]["line"]}
        assert fills[1:] == [[4]]


# Outcomes and lines are filled once per page per operation, keyed by ``id()`` of the page's
# list. A Fact asked by its id has no page: its one-record list was made per call and freed after
# its fill, so the next Fact's list could take the same id, find that fill done in the
# operation's cache and never be filled (aliased Facts asking ``line`` answered '' for most of
# them). Each group now lives as long as the operation's cache.


def test_facts_by_id_aliased_in_one_operation_each_get_their_outcome_and_line() -> None:
    with vex_struck(range(1, 9)) as t:
        g, cid, gm, positions = t.g, t.cid, t.gm, t.positions
        for shown in ("line", "outcome line"):
            fields = " ".join(
                f'f{p}: node(id: "{gid("Fact", cid, str(p))}") {{ ... on Fact {{ {shown} }} }}'
                for p in positions
            )
            for _ in range(3):
                got = g.ok("query { " + fields + " }", {}, gm)
                for n, p in enumerate(positions, start=1):
                    node = got[f"f{p}"]
                    assert "Vex" in node["line"], (p, shown, node)  # was '' for most of them
                    if "outcome" in shown:
                        assert node["outcome"]["amount"] == n, (p, node)


def test_two_history_pages_in_one_operation_each_get_their_outcomes() -> None:
    with vex_struck(range(1, 9)) as t:
        g, gm, campaign = t.g, t.gm, t.campaign
        query = """query($id: ID!) { node(id: $id) { ... on Campaign {
          a: history(first: 4) { edges { node { position outcome line } } }
          b: history(last: 4) { edges { node { position outcome line } } }
          c: history(first: 4) { edges { node { position outcome line } } } } } }"""
        for _ in range(3):
            got = g.ok(query, {"id": campaign}, gm)["node"]
            for alias in "abc":
                for e in got[alias]["edges"]:
                    node = e["node"]
                    if node["position"] > 2:
                        assert node["outcome"] is not None, (alias, node)
                        assert node["line"], (alias, node)


def test_facts_filled_one_after_the_other_in_one_operation_each_get_their_own_fill() -> None:
    """The same, without the timing of a GraphQL execution: two Facts filled one after the other
    in one operation (as the resolvers of two aliased ``node`` fields may run)."""
    from api.graphql import data
    from api.graphql.types import _filled

    with vex_struck((1, 2, 3)) as t:
        positions = t.positions
        records = data.history_records(t.app, UUID(t.cid), range(positions[0], positions[-1] + 1))
        info = SimpleNamespace(context={"application": t.app})

        async def one_after_the_other() -> None:
            for r in records:
                await _filled(info, r)  # type: ignore[arg-type]

        asyncio.run(one_after_the_other())
        assert [r.filled for r in records] == [True, True, True]
        assert [r.outcome["amount"] for r in records] == [1, 2, 3]  # type: ignore[index]


def test_a_page_out_of_memory_reads_its_facts_from_the_store_at_once(store: Settings) -> None:
    """A page of a long campaign's history far behind the facts kept in memory: its facts come
    back in one read of the store, not one per fact (a page at 100k facts made 40 queries), its
    outcomes and lines in one more (the facts from the checkpoint before it), and each record,
    filled, is the one the whole history gives."""
    from api.exports import jsonl, source
    from api.graphql import data
    from api.service.store import open_application
    from bench.generator import CampaignGenerator

    gen = CampaignGenerator(300, seed=5)
    for _ in gen.facts():
        pass
    held = source.CampaignSource("Paged", "stellar-winds", {}, {"table": "x"}, gen.ledger)
    export = "".join(jsonl.export_lines(held)).encode().splitlines(keepends=True)
    checked = jsonl.read_export(export, window=5)
    paged = dataclasses.replace(store, ledger_window=5)
    first = open_application(paged)
    try:
        cid = first.import_campaign(checked.header, checked.facts, folded=checked.ledger)
    finally:
        first.close()
    app = open_application(paged)
    try:
        with app.reading(cid) as campaign:
            entries = campaign.ledger.entries
        reads = entries.loads
        page = data.history_records(app, cid, range(101, 121))
        assert entries.loads - reads == 1
        data.fill(app, cid, page)
        # the fold from the checkpoint before the page reads only the facts before it: the
        # page's own are held from the read above (they were read twice)
        assert entries.loads - reads == 2
        whole = data.history(app, cid)
        data.fill(app, cid, whole)

        def shown(r: data.FactRecord) -> tuple[object, ...]:
            return (r.position, r.type, r.payload, r.original_payload, r.meta, r.status, r.orphan_reason)

        assert [(shown(r), r.outcome, r.line) for r in page] == [
            (shown(r), r.outcome, r.line) for r in whole[100:120]
        ]
    finally:
        app.close()
