"""The toy ruleset (tests/plugins/toy_ruleset: its own package, found only through the
``chronicle.rulesets`` entry point, with no GraphQL plug-in) through every surface of the product,
on SQLite and on PostgreSQL: the core must serve a game system it has never heard of.

A real ``chronicle serve`` process (and, on PostgreSQL, a real ``chronicle worker`` for the read
models; SQLite's server follows in process) is given the toy on ``PYTHONPATH``, the way a third-party
ruleset is installed beside Chronicle. Everything is spoken over HTTP and WebSocket with the
published GraphQL API (``createCampaign(ruleset: "toy")``, ``recordFact``, the core encounter
mutations and corrections, ``history``, ``log``, ``asOf``, ``whatIf``, ``campaignFacts``), the
export downloads, and the ``chronicle`` command (``rulesets``, ``demo``, ``import``, ``export``,
``rebuild``). The last test moves a toy campaign from SQLite to PostgreSQL in process.

The table (the toy's rules: tests/plugins/toy_ruleset/README.md; nothing from a real game):

* Ana (pc, 10 HP, 1 grit), Bram (pc, 12 HP, 2 grit), an ogre (monster, 20 HP);
* ruling r-1 "How deep is the pit?": shallow, 2; Ana falls in (a ``Hit`` whose amount is the
  ruling's value): 10 -> 8; a stone hits her for 1: 7; she rallies (her one grit, +3): 10;
* Bram braces, then is hit for 1d6 (4), halved by the brace: 12 -> 10;
* an ambush (Bram 15, the ogre 8 on the d20): Bram braces again in his turn; the brace is still on
  when that turn ends and gone when his next one does (round 2); the ogre flees;
* the ogre is hit for 5;
* the GM revokes the ogre's hit (it was asleep), amends Bram's hit to 6 (3 after the brace: 9),
  and overturns r-1 (the pit was deep: 10). Refolded, Ana falls to 0 and is dying, the stone
  costs her last grit: dead; her rally is orphaned (no grit left).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from gql import Client, GraphQLRequest
from gql.transport.websockets import WebsocketsTransport
from psycopg import sql

from api.cli.process import Proc, clean_env, start, start_api
from api.service.settings import Database, Settings
from api.service.store import open_application
from api.service.views import open_views
from projections.runner import wait_for
from tests.conftest import connect, with_schema
from tests.graphql_helpers import GQL, gid
from tests.integration.test_import_roundtrip import round_trip

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

FACT = "position type payload outcome"
CHARACTER = (
    "__typename creatureId name kind level lifeState hitPoints { current max temporary } conditions "
    "ruleset raw tracks { key label value ceiling floor thresholds { label value } }"
)


@dataclass
class Served:
    """The running processes on one store, with the toy installed beside them."""

    kind: str
    settings: Settings
    env: dict[str, str]
    workdir: Path
    url: str
    procs: list[Proc] = field(default_factory=list)

    def chronicle(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        """The ``chronicle`` command on this store (the toy installed), as an operator runs it."""
        return subprocess.run(
            [sys.executable, "-m", "api.cli.main", *args],
            env=self.env,
            cwd=self.workdir,
            capture_output=True,
            text=True,
            timeout=timeout,
        )


@dataclass
class Table:
    """The toy campaign of the module docstring, played over GraphQL."""

    served: Served
    g: GQL
    cid: str
    gm: str
    at: dict[str, int]

    @property
    def campaign(self) -> str:
        return gid("Campaign", self.cid, self.cid)

    def ask(self, selection: str, variables: dict[str, Any] | None = None) -> dict[str, Any]:
        """``campaign(id) { selection }`` as the GM."""
        q = "query($campaign: ID!" + "".join(f", ${k}: {t}" for k, (t, _) in (variables or {}).items()) + ")"
        q += f" {{ campaign(id: $campaign) {{ {selection} }} }}"
        values = {"campaign": self.campaign, **{k: v for k, (_, v) in (variables or {}).items()}}
        found: dict[str, Any] = self.g.ok(q, values, self.gm)["campaign"]
        return found

    def record(self, fact_type: str, payload: dict[str, Any]) -> int:
        out = self.mutate("recordFact", {"type": fact_type, "payload": payload})
        return int(out["position"])

    def mutate(self, name: str, input: dict[str, Any], select: str = "") -> dict[str, Any]:  # noqa: A002
        out: dict[str, Any] = self.g.mutate(name, {"campaignId": self.campaign, **input}, self.gm, select)
        assert out["userErrors"] == [], out
        return out


# ----------------------------------------------------------------------------- the processes
@pytest.fixture(
    scope="module",
    params=[
        pytest.param("sqlite", marks=pytest.mark.sqlite),
        pytest.param("postgres", marks=pytest.mark.postgres),
    ],
)
def served(
    request: pytest.FixtureRequest, toy_ruleset_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Served]:
    workdir = tmp_path_factory.mktemp(f"toy-{request.param}")
    schema: tuple[Database, str] | None = None
    if request.param == "sqlite":
        url = f"sqlite:///{workdir / 'var' / 'chronicle.sqlite'}"
    else:
        base, db = request.getfixturevalue("postgres_database")
        name = f"t_{uuid.uuid4().hex[:12]}"
        with connect(db) as conn:
            conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(name)))
        schema, url = (db, name), with_schema(base, name)
    path = os.pathsep.join(p for p in (str(toy_ruleset_path), os.environ.get("PYTHONPATH", "")) if p)
    env = clean_env(CHRONICLE_DATABASE_URL=url, CHRONICLE_SUBSCRIPTION_POLL_SECONDS="0.5", PYTHONPATH=path)
    procs: list[Proc] = []
    try:
        api_url, api = start_api(env, workdir)
        procs.append(api)
        if request.param == "postgres":  # the read models' follower runs in its own process there
            procs.append(start("worker", ["worker", "--batch-size", "50"], env, workdir))
        yield Served(request.param, Settings(database_url=url), env, workdir, api_url, procs)
    finally:
        for proc in reversed(procs):
            proc.terminate(timeout=30)
        if schema is not None:
            with connect(schema[0]) as conn:
                conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema[1])))


@pytest.fixture(scope="module")
def table(served: Served) -> Iterator[Table]:
    with httpx.Client(base_url=served.url, timeout=60) as client:
        g = GQL(client)
        out = g.ok(
            "mutation($i: CreateCampaignInput!) { createCampaign(input: $i) { "
            "campaign { campaignId ruleset flags } gmToken userErrors { code message } } }",
            {"i": {"name": "The Pit", "ruleset": "toy", "flags": {"toy.rally_heals": 3}}},
        )["createCampaign"]
        assert out["userErrors"] == [], out
        assert out["campaign"]["ruleset"] == "toy"
        t = Table(served, g, out["campaign"]["campaignId"], out["gmToken"], {})
        for who, name, kind, hp, grit in (
            ("ana", "Ana", "pc", 10, 1),
            ("bram", "Bram", "pc", 12, 2),
            ("ogre", "Ogre", "monster", 20, 0),
        ):
            t.at[who] = t.record(
                "ToyCreatureJoined",
                {"creature_id": who, "name": name, "kind": kind, "max_hp": hp, "grit": grit},
            )
        ruling = {"rulingId": "r-1", "question": "How deep is the pit?", "decision": "shallow", "value": 2}
        t.at["ruling"] = int(t.mutate("recordRuling", ruling)["position"])
        t.at["pit"] = t.record("Hit", {"target": "ana", "amount": 0, "rulings": {"amount": "r-1"}})
        t.at["stone"] = t.record("Hit", {"target": "ana", "amount": 1, "source": "a stone"})
        t.at["rally"] = t.record("Rally", {"creature": "ana"})
        t.at["brace"] = t.record("Brace", {"creature": "bram"})
        roll = {"expression": "1d6", "terms": [{"sides": 6, "faces": [4], "sign": 1}], "manual": True}
        t.at["club"] = t.record("Hit", {"target": "bram", "roll": roll})
        # an encounter on the core engine: Bram braces in his turn; it ends with his next one
        enc, who = (
            gid("Encounter", t.cid, "ambush"),
            {c: gid("Character", t.cid, c) for c in ("bram", "ogre")},
        )
        t.mutate(
            "startEncounter",
            {"participantIds": list(who.values()), "encounterId": "ambush", "name": "Ambush"},
        )
        for c, face in (("bram", 15), ("ogre", 8)):
            dice = {"expression": "1d20", "faces": [face]}
            t.mutate("rollInitiative", {"encounterId": enc, "characterId": who[c], "roll": dice})
        t.mutate("startTurn", {"encounterId": enc, "characterId": who["bram"]})
        t.at["brace_again"] = t.record("Brace", {"creature": "bram"})
        t.at["bram_turn_1_ends"] = int(t.mutate("endTurn", {"encounterId": enc})["position"])
        t.mutate("startTurn", {"encounterId": enc, "characterId": who["ogre"]})
        t.mutate("endTurn", {"encounterId": enc})
        t.mutate("startTurn", {"encounterId": enc, "characterId": who["bram"]})
        t.at["bram_turn_2_ends"] = int(t.mutate("endTurn", {"encounterId": enc})["position"])
        t.at["ambush_ends"] = int(
            t.mutate("endEncounter", {"encounterId": enc, "outcome": "the ogre flees"})["position"]
        )
        t.at["ogre_hit"] = t.record("Hit", {"target": "ogre", "amount": 5})
        revoke = {"position": t.at["ogre_hit"], "reason": "the ogre was asleep"}
        t.at["revoke"] = int(t.mutate("revokeFact", revoke)["position"])
        amend = {"position": t.at["club"], "patch": {"roll": None, "amount": 6}, "reason": "it was a 6"}
        t.at["amend"] = int(t.mutate("amendFact", amend)["position"])
        overturn = {"rulingId": "r-1", "outcome": "OVERTURNED", "decision": "the pit was deep", "value": 10}
        t.at["overturn"] = int(t.mutate("resolveRuling", overturn)["position"])
        yield t


def characters(t: Table, selection: str = CHARACTER) -> dict[str, dict[str, Any]]:
    found = t.ask(f"characters {{ {selection} }}")["characters"]
    return {c["creatureId"]: c for c in found}


# ----------------------------------------------------------------------------- GraphQL
def test_the_installed_toy_is_listed_with_its_flags(served: Served) -> None:
    done = served.chronicle("rulesets", "--ruleset", "toy")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "toy  Toy (rules version 2; no API plug-in (generic GraphQL))",
        "    toy.rally_heals = 3  [toy README] Hit points a rally restores.",
    ]
    # it ships no demo: choosing it for one is a usage error naming the systems that have one
    demo = served.chronicle("demo", "--ruleset", "toy")
    assert demo.returncode == 2 and "the toy ruleset has no demo campaign" in demo.stderr


def test_a_toy_campaign_is_played_over_graphql_with_the_toys_own_facts_and_codes(table: Table) -> None:
    cast = characters(table)
    assert list(cast) == ["ana", "bram", "ogre"]
    ana, bram, ogre = cast["ana"], cast["bram"], cast["ogre"]
    assert {c["__typename"] for c in cast.values()} == {"GenericCharacter"}  # no API plug-in
    assert {c["ruleset"] for c in cast.values()} == {"toy"}
    assert (ana["lifeState"], ana["hitPoints"], ana["raw"]["grit"]) == (
        "DEAD",
        {"current": 0, "max": 10, "temporary": 0},
        0,
    )
    assert (bram["lifeState"], bram["hitPoints"]["current"], bram["raw"]["grit"]) == ("ACTIVE", 9, 2)
    assert (ogre["kind"], ogre["hitPoints"]["current"]) == ("MONSTER", 20)  # its hit was revoked
    assert [(k["key"], k["value"], k["ceiling"]) for k in bram["tracks"]] == [
        ("hp", 9, 12),
        ("grit", 2, None),
    ]
    assert table.ask("orphans { position reason }")["orphans"] == [
        {"position": table.at["rally"], "reason": "Ana has no grit left"}
    ]
    # the toy's rules refuse with the toy's own codes (the error-code enum is extensible)
    refused = table.g.mutate(
        "recordFact",
        {"campaignId": table.campaign, "type": "Patch", "payload": {"target": "ana", "amount": 2}},
        table.gm,
    )
    assert [(e["code"], e["field"]) for e in refused["userErrors"]] == [("TOY_OUT", "target")]
    # another system's fact is no fact here
    other = table.g.mutate(
        "recordFact",
        {"campaignId": table.campaign, "type": "DamageTaken", "payload": {"target": "ana", "amount": 1}},
        table.gm,
    )
    assert (
        other["position"] is None and "unknown fact type 'DamageTaken'" in other["userErrors"][0]["message"]
    )


def test_history_tells_every_fact_with_its_corrections(table: Table) -> None:
    at = table.at
    found = table.ask(
        "history(first: 100) { totalCount nodes { position type status orphanReason line payload } }"
    )["history"]
    nodes = {n["position"]: n for n in found["nodes"]}
    assert nodes[at["ogre_hit"]]["status"] == ["REVOKED"]
    assert nodes[at["club"]]["status"] == ["AMENDED"] and nodes[at["club"]]["payload"]["amount"] == 6
    assert (nodes[at["rally"]]["status"], nodes[at["rally"]]["orphanReason"]) == (
        ["ORPHANED"],
        "Ana has no grit left",
    )
    assert nodes[at["pit"]]["status"] == ["ACTIVE"] and nodes[at["pit"]]["type"] == "Hit"
    # the toy's own narrator, read from the corrected fold (the core adds the annotations)
    assert nodes[at["pit"]]["line"] == "Ana is hit for 10. Ana is dying."
    assert nodes[at["stone"]]["line"] == "Ana is hit by a stone while down and loses a grit. Ana is dead."
    assert nodes[at["rally"]]["line"] == "Ana rallies. (orphaned: Ana has no grit left)"
    assert (
        nodes[at["club"]]["line"]
        == f"Bram is hit for 3, halved by the brace. (amended at {at['amend']}: it was a 6)"
    )
    assert nodes[at["ogre_hit"]]["line"].startswith("~~Ogre is hit for 5.~~ (revoked at ")
    ana = table.ask(
        "history(first: 100, filter: {characterId: $who}) { nodes { position } }",
        {"who": ("ID", gid("Character", table.cid, "ana"))},
    )["history"]["nodes"]
    assert [n["position"] for n in ana] == [at["ana"], at["pit"], at["stone"], at["rally"]]
    log = {
        n["position"]: n
        for n in table.ask("log(first: 100) { nodes { position text status } }")["log"]["nodes"]
    }
    assert set(log) >= set(at.values())
    assert log[at["ogre_hit"]]["text"] == nodes[at["ogre_hit"]]["line"]
    assert "orphaned: Ana has no grit left" in log[at["rally"]]["text"]


def test_as_of_reads_the_corrected_past_and_what_the_table_believed(table: Table) -> None:
    at = table.at["rally"]
    both = table.ask(
        "recorded: asOf(position: $at, view: RECORDED) { position characters(ids: [$ana]) { "
        "lifeState hitPoints { current } raw } } "
        "corrected: asOf(position: $at, view: CORRECTED) { characters(ids: [$ana]) { "
        "lifeState hitPoints { current } raw } }",
        {"at": ("Int!", at), "ana": ("ID!", gid("Character", table.cid, "ana"))},
    )
    [believed], [corrected] = both["recorded"]["characters"], both["corrected"]["characters"]
    # at her rally the table believed the pit shallow: 10 - 2 - 1 + 3 = 10, one grit spent
    assert (believed["lifeState"], believed["hitPoints"]["current"], believed["raw"]["grit"]) == (
        "ACTIVE",
        10,
        0,
    )
    # with the ruling overturned, the pit took her to 0, the stone cost her last grit
    assert (corrected["lifeState"], corrected["hitPoints"]["current"], corrected["raw"]["grit"]) == (
        "DEAD",
        0,
        0,
    )
    one = table.g.ok(
        "query($id: ID!, $at: Int!) { character(id: $id) { asOf(position: $at, view: RECORDED) { "
        "lifeState hitPoints { current } } } }",
        {"id": gid("Character", table.cid, "ana"), "at": table.at["stone"]},
        table.gm,
    )["character"]["asOf"]
    assert one == {"lifeState": "ACTIVE", "hitPoints": {"current": 7}}


def test_what_if_previews_undoing_the_overturn_and_stores_nothing(table: Table) -> None:
    before = table.ask("position orphans { position }")
    preview = table.ask(
        "whatIf(corrections: $c) { orphans { position } newlyOrphaned noLongerOrphaned "
        "changes { creatureId fields { field before after } } characters { creatureId lifeState } }",
        {"c": ("[CorrectionInput!]!", [{"revoke": {"position": table.at["overturn"], "reason": "?"}}])},
    )["whatIf"]
    assert preview["orphans"] == [] and preview["noLongerOrphaned"] == [table.at["rally"]]
    ana = {c["creatureId"]: c for c in preview["changes"]}["ana"]
    fields = {f["field"]: (f["before"], f["after"]) for f in ana["fields"]}
    assert fields["life"] == ("dead", "active") and "grit" not in fields  # spent either way
    assert fields["hit_points"][1]["current"] == 10
    assert table.ask("position orphans { position }") == before  # nothing stored


def test_a_subscription_catches_up_then_goes_live(table: Table) -> None:
    after = table.at["overturn"] - 2

    async def run() -> list[dict[str, Any]]:
        transport = WebsocketsTransport(
            url=table.served.url.replace("http", "ws") + "/graphql",
            init_payload={"authorization": f"Bearer {table.gm}"},
        )
        async with Client(transport=transport, fetch_schema_from_transport=False) as session:
            got: list[dict[str, Any]] = []
            caught_up = asyncio.Event()

            async def listen() -> None:
                sub = GraphQLRequest(
                    "subscription($c: ID!, $a: Int) { campaignFacts(campaignId: $c, afterPosition: $a) { "
                    "position type orphanReason changes { creatureId fields { field before after } } } }",
                    variable_values={"c": table.campaign, "a": after},
                )
                async for event in session.subscribe(sub):
                    got.append(event["campaignFacts"])
                    if len(got) == 2:
                        caught_up.set()
                    if len(got) == 3:
                        return

            task = asyncio.create_task(listen())
            await asyncio.wait_for(caught_up.wait(), 30)
            live = await session.execute(
                GraphQLRequest(
                    "mutation($i: AdvanceTimeInput!) { "
                    "advanceTime(input: $i) { position userErrors { code } } }",
                    variable_values={"i": {"campaignId": table.campaign, "minutes": 10}},
                )
            )
            assert live["advanceTime"]["userErrors"] == []
            await asyncio.wait_for(task, 30)
            return got

    events = asyncio.run(run())
    at = table.at
    assert [(e["position"], e["type"]) for e in events] == [
        (at["amend"], "FactAmended"),
        (at["overturn"], "RulingResolved"),
        (events[2]["position"], "TimeAdvanced"),
    ]
    assert events[2]["position"] > at["overturn"]
    overturned = {c["creatureId"]: c["fields"] for c in events[1]["changes"]}
    assert {"field": "life", "before": "active", "after": "dead"} in overturned["ana"]


def test_an_encounter_runs_on_the_core_engine_and_bracing_lasts_to_the_end_of_the_next_turn(
    table: Table,
) -> None:
    found = table.ask(
        "encounters { encounterId name state round order } "
        "first: asOf(position: $first) { characters(ids: [$bram]) { effects { name duration { kind } } } } "
        "second: asOf(position: $second) { characters(ids: [$bram]) { effects { name } } }",
        {
            "first": ("Int!", table.at["bram_turn_1_ends"]),
            "second": ("Int!", table.at["bram_turn_2_ends"]),
            "bram": ("ID!", gid("Character", table.cid, "bram")),
        },
    )
    assert found["encounters"] == [
        {"encounterId": "ambush", "name": "Ambush", "state": "ended", "round": 2, "order": ["bram", "ogre"]}
    ]
    # braced in his first turn: still braced when it ends, gone when his next one does (a derived
    # step of the toy's turn-end hook, never stored)
    assert found["first"]["characters"][0]["effects"] == [
        {"name": "brace", "duration": {"kind": "end_of_next_turn"}}
    ]
    assert found["second"]["characters"][0]["effects"] == []


# ----------------------------------------------------------------------------- exports, import
def download(t: Table, fmt: str, cid: str | None = None, token: str | None = None) -> str:
    response = httpx.get(
        f"{t.served.url}/campaigns/{cid or t.cid}/export.{fmt}",
        headers={"Authorization": f"Bearer {token or t.gm}"},
        timeout=60,
    )
    assert response.status_code == 200, response.text
    return response.text


def test_markdown_and_html_tell_the_toy_campaign_and_chart_its_tracks(table: Table) -> None:
    md = download(table, "md")
    assert md.startswith("# The Pit")
    assert f"~~**#{table.at['ogre_hit']}**" in md  # revoked: struck through
    assert f"**ORPHANED** **#{table.at['rally']}**" in md and "Ana has no grit left" in md
    assert "| Character | HP | Grit | State |" in md  # the toy's tracks, asked of the ruleset
    assert "| Bram | 9/12 | 2 | active |" in md
    assert "Bram rolls initiative: 1d20 (15) = 15." in md
    assert "  - *Bram's brace ends.*" in md  # the toy's turn-end step, derived in the refold
    assert "| Creature | Damage taken | Healed |\n|---|---:|---:|\n| Bram | 0 | 0 |\n| Ogre | 0 | 0 |" in md
    html = download(table, "html")
    assert html.startswith("<!DOCTYPE html>") and html.rstrip().endswith("</html>")
    chart = re.search(r'<svg[^>]*data-character="bram".*?</svg>', html, re.S)
    assert chart is not None
    assert 'class="track hp"' in chart.group(0) and 'class="track grit"' in chart.group(0)
    assert "<title>dying at " in chart.group(0)
    assert 'data-character="ogre"' not in html  # monsters are not charted


def test_the_jsonl_export_imports_as_the_same_campaign(table: Table, tmp_path: Path) -> None:
    exported = download(table, "jsonl")
    header = json.loads(exported.splitlines()[0])
    assert header["ruleset"] == "toy"
    path = tmp_path / "pit.jsonl"
    path.write_text(exported, encoding="utf-8")
    done = table.served.chronicle("import", str(path))
    assert done.returncode == 0, done.stderr
    new = re.search(r"as campaign ([0-9a-f-]{36})", done.stdout)
    token = re.search(r"GM token \(shown once; keep it\): (\S+)", done.stdout)
    assert new is not None and token is not None, done.stdout
    assert new.group(1) != table.cid
    assert download(table, "jsonl", new.group(1), token.group(1)) == exported
    # the operator's export of the imported campaign says the same
    again = table.served.chronicle(
        "export", new.group(1), "--format", "jsonl", "-o", str(tmp_path / "again.jsonl")
    )
    assert again.returncode == 0, again.stderr
    assert (tmp_path / "again.jsonl").read_text(encoding="utf-8") == exported
    assert download(table, "md", new.group(1), token.group(1)) == download(table, "md")


# ----------------------------------------------------------------------------- read models
def caught_up(served: Served) -> int:
    app = open_application(served.settings)
    try:
        head = int(app.recorder.max_notification_id() or 0)
    finally:
        app.close()
    views = open_views(served.settings)
    try:
        assert wait_for(views, head, timeout=60), "the read models did not catch up"
    finally:
        views.close()
    return head


def test_read_models_hold_the_toy_campaign_and_chronicle_rebuild_rebuilds_them(table: Table) -> None:
    caught_up(table.served)
    now = characters(table, "creatureId raw")
    views = open_views(table.served.settings)
    try:
        rows = {r["creature_id"]: r for r in views.list_creatures(table.cid)}
        assert {cid: r["state"] for cid, r in rows.items()} == {cid: c["raw"] for cid, c in now.items()}
        ana = rows["ana"]
        assert (ana["ruleset"], ana["kind"], ana["level"], ana["life"], ana["hp"], ana["max_hp"]) == (
            "toy",
            "pc",
            1,
            "dead",
            0,
            10,
        )
        facts = {r["position"]: r for r in views.history(table.cid, first=500)}
        assert facts[table.at["rally"]]["status"] == ["orphaned"]
        assert facts[table.at["ogre_hit"]]["status"] == ["revoked"]
        assert facts[table.at["club"]]["status"] == ["amended"]
        [ambush] = views.list_encounters(table.cid)
        assert (ambush["encounter_id"], ambush["round"], ambush["turn_of"], ambush["state"]["state"]) == (
            "ambush",
            2,
            None,
            "ended",
        )
        lines = {r["position"]: r for r in views.log_lines(table.cid, first=500)}
        assert lines[table.at["ogre_hit"]]["struck"] and lines[table.at["ogre_hit"]]["line"].startswith("~~")
        assert lines[table.at["rally"]]["line"] == "Ana rallies. (orphaned: Ana has no grit left)"
        assert lines[table.at["stone"]]["line"].endswith("loses a grit. Ana is dead.")
        before = views.dump(written_at=False)  # a row's position depends on the batching
    finally:
        views.close()
    done = table.served.chronicle("rebuild", timeout=300)
    assert done.returncode == 0, done.stderr
    assert "Rebuilt creatures, encounters, facts, log" in done.stdout
    caught_up(table.served)
    views = open_views(table.served.settings)
    try:
        assert views.dump(written_at=False) == before
        assert views.quarantined() == []
    finally:
        views.close()


def test_a_toy_campaign_moves_from_sqlite_to_postgresql(
    sqlite_store: Settings, postgres_store: Settings, toy_ruleset: object
) -> None:
    """The operator's move between stores (docs/exports.md) for a system the core never heard of:
    the JSONL export of an SQLite campaign imports into PostgreSQL as the same campaign (facts,
    exports byte for byte, both time axes), its encounter and its orphan included."""
    lite, pg = open_application(sqlite_store), open_application(postgres_store)
    try:
        cid = lite.create_campaign("The Pit", ruleset="toy")
        joined = {
            who: lite.record(
                cid,
                "ToyCreatureJoined",
                {"creature_id": who, "name": who.title(), "kind": "pc", "max_hp": 10, "grit": 1},
            ).position
            for who in ("ana", "bram")
        }
        lite.record(
            cid, "EncounterStarted", {"encounter_id": "a", "name": "Pit", "participants": ["ana", "bram"]}
        )
        for who, face in (("ana", 12), ("bram", 3)):
            lite.record(
                cid,
                "InitiativeRolled",
                {"encounter_id": "a", "creature": who, "roll": lite.roll("1d20", faces=[face])},
            )
        lite.record(cid, "TurnStarted", {"encounter_id": "a"})
        lite.record(cid, "Brace", {"creature": "ana"})
        lite.record(cid, "TurnEnded", {"encounter_id": "a"})
        fall = lite.record(cid, "Hit", {"target": "bram", "amount": 10}).position  # bram is down
        lite.record(cid, "Hit", {"target": "bram", "amount": 1})  # his only grit: dead
        lite.revoke(cid, fall, "he caught the ledge")
        rally = lite.record(cid, "Rally", {"creature": "bram"}).position
        lite.amend(cid, joined["bram"], {"grit": 0}, "bram had no grit")  # his join: the rally is orphaned
        assert rally in lite.ledger(cid).orphans
        new, exported = round_trip(lite, cid, pg)
        assert json.loads(exported.splitlines()[0])["ruleset"] == "toy"
        assert pg.ledger(new).ruleset.id == "toy" and list(pg.ledger(new).orphans) == [rally]
    finally:
        lite.close()
        pg.close()
