"""Poison inputs get a typed refusal and store nothing (issue 13 §2, §5), against a real
``chronicle serve`` with the independent ``gql`` client (raw ``httpx`` where a body is not
something a JSON library would write). After all of them, a fresh process loads the campaign
and exports it.

Each input here was accepted or crashed before: a lone surrogate was an INTERNAL_SERVER_ERROR
that left a gap in the store; NUL and control characters, a 900 KB name or ruling value, NaN
were stored; 600 levels of JSON were an INTERNAL_SERVER_ERROR (RecursionError), 1000 levels and
a 5,000-digit integer a plain-text 500; createCampaign's documented key handed out the GM token.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from gql.transport.exceptions import TransportQueryError

from api.service.settings import Settings
from tests.faults.conftest import CREATE, NOTE, Api, Table, execute, graphql_errors, new_table

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

RULING = """mutation($input: RecordRulingInput!) { recordRuling(input: $input) {
  position userErrors { code field message } } }"""
AMEND = """mutation($input: AmendFactInput!) { amendFact(input: $input) {
  position userErrors { code field message } } }"""
RECORD = """mutation($input: RecordFactInput!) { recordFact(input: $input) {
  position userErrors { code field message } } }"""
TOKEN = """mutation($input: IssueAccessTokenInput!) { issueAccessToken(input: $input) {
  token replayed userErrors { code field message } } }"""
POSITION = """query($c: ID!) { campaign(id: $c) { position } }"""


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    tmp = tmp_path_factory.mktemp("poison")
    server = Api(Settings(database_url=f"sqlite:///{tmp / 'var' / 'chronicle.sqlite'}"), tmp / "api").start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def table(api: Api) -> Table:
    t = new_table(api.url, "Poison")
    note = execute(api.url, NOTE, {"input": {"campaignId": t.campaign, "text": "the first note"}}, t.gm)
    assert note["addNote"]["position"] == 3
    return t


def position(api: Api, table: Table) -> int:
    return int(execute(api.url, POSITION, {"c": table.campaign}, table.gm)["campaign"]["position"])


def refusal(api: Api, query: str, inp: dict[str, Any], token: str | None) -> tuple[str, str | None]:
    """The typed refusal of a request: (code, field), as a GraphQL error before anything ran or as
    the mutation's userErrors."""
    try:
        data = execute(api.url, query, {"input": inp}, token)
    except TransportQueryError as exc:
        errors = graphql_errors(exc)
        assert errors, exc
        return errors[0]["extensions"]["code"], errors[0]["extensions"].get("field")
    payload = next(iter(data.values()))
    assert payload["userErrors"], f"accepted: {payload}"
    return payload["userErrors"][0]["code"], payload["userErrors"][0]["field"]


def nested(levels: int) -> Any:
    value: Any = "deep"
    for _ in range(levels):
        value = [value]
    return value


TEXT_POISON = [
    pytest.param("a\ud800b", id="lone-surrogate"),
    pytest.param("a\x00b", id="nul"),
    pytest.param("\x1b[31mred", id="escape"),
    pytest.param("del\x7f", id="del"),
    pytest.param("c1\x85", id="c1-control"),
]


@pytest.mark.parametrize("text", TEXT_POISON)
def test_bad_text_in_a_note_is_refused_naming_the_field(api: Api, table: Table, text: str) -> None:
    before = position(api, table)
    inp = {"campaignId": table.campaign, "text": text, "idempotencyKey": f"poison-{uuid.uuid4()}"}
    assert refusal(api, NOTE, inp, table.gm) == ("INVALID_INPUT", "text")
    assert position(api, table) == before


def test_bad_text_in_an_idempotency_key_is_refused(api: Api, table: Table) -> None:
    before = position(api, table)
    inp = {"campaignId": table.campaign, "text": "fine", "idempotencyKey": "k\x00"}
    assert refusal(api, NOTE, inp, table.gm) == ("INVALID_INPUT", "idempotencyKey")
    assert position(api, table) == before


@pytest.mark.parametrize(
    ("name", "field"),
    [
        pytest.param("n" * 900_000, "name", id="900-KB"),
        pytest.param("n" * 201, "name", id="201-characters"),
        pytest.param("bell\x07", "name", id="control-character"),
        pytest.param("\udfff", "name", id="lone-surrogate"),
    ],
)
def test_a_campaign_name_beyond_the_limits_is_refused(api: Api, name: str, field: str) -> None:
    assert refusal(api, CREATE, {"name": name}, None) == ("INVALID_INPUT", field)


@pytest.mark.parametrize(
    ("value", "field"),
    [
        pytest.param("v" * 900_000, "value", id="900-KB-string"),
        pytest.param({"note": "a\x00b"}, "value.note", id="nul-inside"),
        pytest.param({"\ud800": 1}, "value", id="lone-surrogate-key"),
        pytest.param(nested(30), "value", id="30-levels"),
        pytest.param(2**60, "value", id="beyond-2^53"),
        pytest.param(-(2**60), "value", id="beyond-minus-2^53"),
    ],
)
def test_a_ruling_value_beyond_the_limits_is_refused(api: Api, table: Table, value: Any, field: str) -> None:
    before = position(api, table)
    inp = {"campaignId": table.campaign, "rulingId": f"r-{uuid.uuid4().hex[:6]}", "question": "q"}
    code, named = refusal(api, RULING, {**inp, "decision": "d", "value": value}, table.gm)
    assert (code, named) == ("INVALID_INPUT", field)
    assert position(api, table) == before


def test_a_merge_patch_and_a_recorded_fact_with_bad_text_are_refused(api: Api, table: Table) -> None:
    before = position(api, table)
    patch = {"campaignId": table.campaign, "position": 3, "patch": {"text": "\ud83d"}, "reason": "typo"}
    assert refusal(api, AMEND, patch, table.gm) == ("INVALID_INPUT", "patch.text")
    fact = {"campaignId": table.campaign, "type": "NoteAdded", "payload": {"text": "a\x00b"}}
    assert refusal(api, RECORD, fact, table.gm) == ("INVALID_INPUT", "payload.text")
    far = {"campaignId": table.campaign, "type": "FactRevoked", "payload": {"target": 2**40, "reason": "r"}}
    assert refusal(api, RECORD, far, table.gm) == ("INVALID_INPUT", "target")
    assert position(api, table) == before


def test_a_token_label_beyond_the_limits_is_refused(api: Api, table: Table) -> None:
    inp = {"campaignId": table.campaign, "role": "VIEWER", "idempotencyKey": str(uuid.uuid4())}
    assert refusal(api, TOKEN, {**inp, "label": "phone\x00"}, table.gm) == ("INVALID_INPUT", "label")
    assert refusal(api, TOKEN, {**inp, "label": "l" * 201}, table.gm) == ("INVALID_INPUT", "label")


def raw(api: Api, body: str, token: str) -> httpx.Response:
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    return httpx.post(f"{api.url}/graphql", content=body.encode(), headers=headers, timeout=60)


@pytest.mark.parametrize(
    "value",
    [
        pytest.param("[" * 600 + "]" * 600, id="600-levels"),
        pytest.param("[" * 1000 + "]" * 1000, id="1000-levels"),
        pytest.param("9" * 5000, id="5000-digit-integer"),
        pytest.param("NaN", id="nan"),
        pytest.param("-Infinity", id="infinity"),
    ],
)
def test_a_body_beyond_the_limits_is_a_typed_json_400(api: Api, table: Table, value: str) -> None:
    before = position(api, table)
    # Written by hand: these are bodies no JSON library writes.
    inp = f'{{"campaignId": {json.dumps(table.campaign)}, "rulingId": "r-raw", "question": "q", '
    inp += f'"decision": "d", "value": {value}}}'
    body = f'{{"query": {json.dumps(RULING)}, "variables": {{"input": {inp}}}}}'
    response = raw(api, body, table.gm)
    assert response.status_code == 400, response.text
    assert response.headers["content-type"].startswith("application/json")
    assert response.json()["errors"][0]["extensions"]["code"] == "INVALID_INPUT"
    assert position(api, table) == before


def test_a_number_that_is_not_finite_is_refused(api: Api, table: Table) -> None:
    before = position(api, table)
    inp = f'{{"campaignId": {json.dumps(table.campaign)}, "rulingId": "r-inf", "question": "q", '
    inp += '"decision": "d", "value": 1e400}'
    body = f'{{"query": {json.dumps(RULING)}, "variables": {{"input": {inp}}}}}'
    response = raw(api, body, table.gm)
    assert response.status_code == 200
    error = response.json()["errors"][0]["extensions"]
    assert (error["code"], error["field"]) == ("INVALID_INPUT", "value")
    assert position(api, table) == before


def test_the_documented_create_key_no_longer_hands_out_a_gm_token(api: Api) -> None:
    """§5: a guessable key on a token-issuing mutation is refused, so a replay by someone who
    guessed it gets nothing; a secret key still lets the caller's own retry get its token."""
    docs = {"name": "Kestrel Relay", "idempotencyKey": "8c1e0a5e-create"}
    assert refusal(api, CREATE, docs, None) == ("INVALID_INPUT", "idempotencyKey")
    for weak in ("create-1", "a" * 40, "0" * 32, "ana-phone-1"):
        assert refusal(api, CREATE, {**docs, "idempotencyKey": weak}, None) == (
            "INVALID_INPUT",
            "idempotencyKey",
        )
    key = str(uuid.uuid4())
    first = execute(api.url, CREATE, {"input": {**docs, "idempotencyKey": key}})["createCampaign"]
    again = execute(api.url, CREATE, {"input": {**docs, "idempotencyKey": key}})["createCampaign"]
    assert (again["gmToken"], again["replayed"]) == (first["gmToken"], True)


def test_the_documented_token_key_is_refused(api: Api, table: Table) -> None:
    inp = {"campaignId": table.campaign, "role": "VIEWER", "label": "Ana's phone"}
    assert refusal(api, TOKEN, {**inp, "idempotencyKey": "ana-phone-1"}, table.gm) == (
        "INVALID_INPUT",
        "idempotencyKey",
    )


def test_after_every_poison_a_fresh_process_loads_and_exports_the_campaign(
    api: Api, table: Table, tmp_path: Path
) -> None:
    """Runs last in this module: the store holds only what was accepted, without gaps — and the
    text that is allowed (tab, line breaks) was accepted."""
    tabbed = {"campaignId": table.campaign, "text": "two\tcolumns\r\nand a line"}
    assert execute(api.url, NOTE, {"input": tabbed}, table.gm)["addNote"]["userErrors"] == []
    note = execute(
        api.url, NOTE, {"input": {"campaignId": table.campaign, "text": "the last note"}}, table.gm
    )
    assert note["addNote"]["userErrors"] == []
    last = note["addNote"]["position"]
    api.stop()
    fresh = Api(api.settings, tmp_path / "fresh").start()
    try:
        assert position(fresh, table) == last
        export = httpx.get(
            f"{fresh.url}/campaigns/{table.campaign_id}/export.jsonl",
            headers={"Authorization": f"Bearer {table.gm}"},
            timeout=60,
        )
        assert export.status_code == 200, export.text
        lines = [json.loads(line) for line in export.text.splitlines()]
        texts = [line["payload"].get("text") for line in lines if line.get("type") == "NoteAdded"]
        assert texts == ["the first note", "two\tcolumns\r\nand a line", "the last note"]
    finally:
        fresh.stop()
    api.start()  # for any test that runs after this one
