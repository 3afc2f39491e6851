"""A database outage is a typed, retryable error, and readiness answers (issue 13 §6).

A real ``chronicle serve`` reaches PostgreSQL through a proxy the test breaks (nobody else's
connections are touched): the database refuses connections, then hangs (accepts, never answers).
Clients get ``STORE_UNAVAILABLE`` with ``retryable: true`` — before: ``INTERNAL_SERVER_ERROR``
after up to 52 s — ``/readyz`` answers 503 with a reason even while the database hangs (before:
no answer at all), and the client's retry with the same key lands exactly once when the
database is back. The client timeouts here only guard against a hang; speed lives in bench/.
"""

from __future__ import annotations

import dataclasses
import time
import uuid
from typing import Any

import httpx
import pytest
from gql.transport.exceptions import TransportQueryError

from api.service.settings import Settings
from tests.faults.conftest import NOTE, STATE, Api, audit, execute, graphql_errors, new_table, served_hp
from tests.faults.proxy import Proxy

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.postgres]

GUARD = 90  # seconds: a request that takes longer than this is considered hung
QUICK = {"CHRONICLE_STORE_TIMEOUT": "1"}  # with connect_timeout=1: outages are answered in about 2 s


def quick(settings: Settings) -> Settings:
    return dataclasses.replace(settings, database_url=settings.database_url + "&connect_timeout=1")


def typed_error(url: str, query: str, variables: dict[str, Any], token: str) -> dict[str, Any]:
    with pytest.raises(TransportQueryError) as caught:
        execute(url, query, variables, token)
    errors = graphql_errors(caught.value)
    assert errors, caught.value
    extensions: dict[str, Any] = errors[0]["extensions"]
    return extensions


def test_an_outage_is_a_typed_retryable_error_and_a_retry_lands_once(
    postgres_store: Settings, pg_proxy: tuple[Settings, Proxy], api_factory: Any
) -> None:
    settings, proxy = pg_proxy
    api: Api = api_factory(quick(settings), **QUICK)
    table = new_table(api.url, "Outage")
    key = str(uuid.uuid4())
    note = {"input": {"campaignId": table.campaign, "text": "during the outage", "idempotencyKey": key}}

    proxy.down()  # PostgreSQL refuses connections; the server's connections are cut
    mutation = typed_error(api.url, NOTE, note, table.gm)
    assert (mutation["code"], mutation["retryable"]) == ("STORE_UNAVAILABLE", True)
    query = typed_error(api.url, STATE, {"c": table.campaign}, table.gm)
    assert (query["code"], query["retryable"]) == ("STORE_UNAVAILABLE", True)
    download = httpx.get(
        f"{api.url}/campaigns/{table.campaign_id}/export.jsonl",
        headers={"Authorization": f"Bearer {table.gm}"},
        timeout=GUARD,
    )
    assert download.status_code == 503, download.text
    assert download.json()["error"] == {
        "code": "STORE_UNAVAILABLE",
        "message": "the store is unavailable; retry later",
        "retryable": True,
    }
    ready = httpx.get(f"{api.url}/readyz", timeout=GUARD)
    assert ready.status_code == 503 and ready.json()["status"] == "not ready"

    proxy.up()
    landed = None
    for _ in range(10):  # the client's retry: the same request, the same key
        try:
            landed = execute(api.url, NOTE, note, table.gm)["addNote"]
            break
        except TransportQueryError as exc:
            assert graphql_errors(exc)[0]["extensions"]["code"] == "STORE_UNAVAILABLE"
            time.sleep(0.5)
    assert landed is not None and landed["userErrors"] == [] and landed["replayed"] is False
    again = execute(api.url, NOTE, note, table.gm)["addNote"]
    assert (again["position"], again["replayed"]) == (landed["position"], True)
    result = audit(postgres_store, table, [key])
    assert result.keys[key] == 1
    assert httpx.get(f"{api.url}/readyz", timeout=GUARD).status_code == 200


def test_readiness_answers_while_the_database_hangs(
    pg_proxy: tuple[Settings, Proxy], api_factory: Any
) -> None:
    settings, proxy = pg_proxy
    api: Api = api_factory(quick(settings), **QUICK)
    table = new_table(api.url, "Hang")
    assert httpx.get(f"{api.url}/readyz", timeout=GUARD).status_code == 200
    proxy.hang()  # connections stay open, nothing is answered
    try:
        for _ in range(3):  # the same hung check is not started again, and each answer comes
            ready = httpx.get(f"{api.url}/readyz", timeout=GUARD)
            assert ready.status_code == 503, ready.text
            assert ready.json()["reason"] == "the store did not answer within 2 s"
        assert httpx.get(f"{api.url}/healthz", timeout=GUARD).status_code == 200
    finally:
        proxy.up()
    deadline = time.monotonic() + GUARD
    while httpx.get(f"{api.url}/readyz", timeout=GUARD).status_code != 200:
        assert time.monotonic() < deadline, "not ready again after the database came back"
        time.sleep(0.2)
    assert served_hp(api.url, table) == 100_000
