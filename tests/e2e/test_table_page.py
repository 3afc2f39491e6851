"""The live table page in headless Chromium, against a real ``chronicle serve`` (SQLite store),
with the network cut off (the page must need nothing but this server).

A fact recorded through the API appears on the open page within a second (the DOM is polled
with that timeout; nothing else is timed); a correction shows as one; a dropped connection
(the server stopped and started again) resumes after the last position received, with the
facts recorded meanwhile and none twice. Screenshots are kept as artefacts (the test's tmp dir
and ``$CHRONICLE_ARTIFACTS``)."""

from __future__ import annotations

import json
import signal
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from uuid import UUID

import httpx
import pytest

from api.cli.process import Proc, clean_env, free_port, start_api
from api.graphql.ids import campaign_gid, encode
from api.rulesets.stellar_winds.demo import FLAME_LASH, SHEETS
from api.service.auth import AccessControl
from api.service.settings import Settings
from api.service.store import open_application
from domain import dice
from tests.e2e.browser import Page, keep_artifact, offline_page, require_chromium

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

LIVE = 1.0  # seconds: a recorded fact is on the open page within this
FIGHT = "relay"
PARTY = ["traze", "kaelen", "mira", "goblin", "warcaster"]


@dataclass
class Table:
    url: str
    campaign: UUID
    gm: str
    viewer: str
    viewer_id: str
    database_url: str

    @property
    def page(self) -> str:
        return f"{self.url}/campaigns/{self.campaign}/table"

    def gid(self, creature: str) -> str:
        return encode("Character", self.campaign, creature)

    def graphql(self, query: str, variables: dict[str, Any]) -> dict[str, Any]:
        answer = httpx.post(
            f"{self.url}/graphql",
            json={"query": query, "variables": variables},
            headers={"Authorization": f"Bearer {self.gm}"},
            timeout=30,
        ).json()
        assert "errors" not in answer, answer
        data: dict[str, Any] = answer["data"]
        return data

    def damage(self, creature: str, amount: int) -> int:
        """Damage through the API (the dealDamage mutation); the fact's position."""
        out = self.graphql(
            "mutation($i: DealDamageInput!) "
            "{ dealDamage(input: $i) { position userErrors { code message } } }",
            {
                "i": {
                    "campaignId": campaign_gid(self.campaign),
                    "characterId": self.gid(creature),
                    "amount": amount,
                }
            },
        )["dealDamage"]
        assert out["userErrors"] == [], out
        return int(out["position"])

    def revoke(self, position: int, reason: str) -> int:
        out = self.graphql(
            "mutation($i: RevokeFactInput!) "
            "{ revokeFact(input: $i) { position userErrors { code message } } }",
            {"i": {"campaignId": campaign_gid(self.campaign), "position": position, "reason": reason}},
        )["revokeFact"]
        assert out["userErrors"] == [], out
        return int(out["position"])


def _record_the_fight(database_url: str) -> tuple[UUID, str, str, str]:
    """Five creatures in a running encounter (the warcaster's turn, round 1), Traze burning
    (ongoing fire, save ends); a GM token and a viewer token. Recorded before the server starts."""
    app = open_application(Settings(database_url=database_url))
    try:
        cid = app.create_campaign("Kestrel Relay")
        for sheet in SHEETS:
            if sheet["creature_id"] in PARTY:
                app.record(cid, "CreatureRegistered", sheet)
        app.record(
            cid,
            "EncounterStarted",
            {"encounter_id": FIGHT, "name": "Ambush at the relay", "participants": PARTY},
        )
        for who, face in (("warcaster", 18), ("kaelen", 16), ("goblin", 11), ("traze", 10), ("mira", 7)):
            app.record(
                cid,
                "InitiativeRolled",
                {"encounter_id": FIGHT, "creature": who, "roll": dice.roll("1d20", faces=[face])},
            )
        app.record(cid, "TurnStarted", {"encounter_id": FIGHT})  # the warcaster's turn (ruling 18)
        target = {
            "target": "traze",
            "roll": dice.roll("1d20", faces=[12]),
            "damage": dice.roll("1d8+3", faces=[5]),
        }
        app.record(
            cid,
            "AttackMade",
            {"attacker": "warcaster", "power": FLAME_LASH, "targets": [target], "action": "standard"},
        )
        access = AccessControl(app)
        gm = access.grant_gm(cid)
        viewer = access.issue(cid, "viewer", [], "the TV", None)
        return cid, gm, viewer.token, viewer.token_id
    finally:
        app.close()


@pytest.fixture
def table(tmp_path: Path) -> Iterator[tuple[Table, Proc, dict[str, str], int]]:
    require_chromium()
    database_url = f"sqlite:///{tmp_path / 'chronicle.sqlite'}"
    cid, gm, viewer, viewer_id = _record_the_fight(database_url)
    env = clean_env(CHRONICLE_DATABASE_URL=database_url)
    port = free_port()
    url, proc = start_api(env, tmp_path / "server", port)
    try:
        yield Table(url, cid, gm, viewer, viewer_id, database_url), proc, env, port
    finally:
        proc.terminate(timeout=15)  # (already stopped by a test that restarts the server)


def js(value: Any) -> str:
    return json.dumps(value)


def track(creature: str, key: str) -> str:
    """The value a character's bar shows, as the DOM has it (null while not drawn)."""
    return (
        f"(() => {{ const t = document.querySelector('#characters [data-creature={js(creature)}] "
        f".track[data-key={js(key)}]'); return t ? Number(t.dataset.value) : null; }})()"
    )


def log_line(position: int) -> str:
    return (
        f"(() => {{ const li = document.querySelector('#log-lines li[data-position=\"{position}\"]');"
        " return li ? {classes: li.className, text: li.textContent} : null; })()"
    )


def open_table(page: Page, table: Table, token: str) -> None:
    page.goto(f"{table.page}#token={token}")
    page.wait_for("window.chronicleTable && window.chronicleTable.status === 'live'", "the page to go live")


def assert_only_this_server(page: Page, url: str) -> None:
    ws = url.replace("http://", "ws://", 1)
    foreign = [u for u in page.requests if not u.startswith((url + "/", ws + "/", "data:"))]
    assert foreign == [], f"the page asked for something elsewhere: {foreign}"


def test_the_table_shows_the_encounter_and_a_recorded_fact_within_a_second(
    table: tuple[Table, Proc, dict[str, str], int], tmp_path: Path
) -> None:
    t, _proc, _env, _port = table
    with offline_page(tmp_path, width=1600, height=900) as (page, _proxy):
        open_table(page, t, t.viewer)
        # the token left the address bar and stays on this device for this campaign
        assert "token" not in page.evaluate("window.location.href")
        stored = page.evaluate(f"localStorage.getItem('chronicle.table.' + {js(campaign_gid(t.campaign))})")
        assert stored == t.viewer

        # initiative: the order, whose turn, the round
        order = page.evaluate(
            "[...document.querySelectorAll('#initiative li')].map(li => "
            "[li.dataset.creature, li.classList.contains('turn')])"
        )
        assert order == [
            ["warcaster", True],
            ["kaelen", False],
            ["goblin", False],
            ["traze", False],
            ["mira", False],
        ]
        assert page.evaluate("document.getElementById('round').textContent") == "Round 1"
        assert (
            page.evaluate("document.getElementById('encounter-title').textContent") == "Ambush at the relay"
        )

        # every participant's tracks as bars, from the ruleset (Stellar Winds: HP, wounds, surges)
        keys = page.evaluate(
            "[...document.querySelectorAll('#characters [data-creature=\"traze\"] .track')]"
            ".map(t => t.dataset.key)"
        )
        assert keys == ["hp", "wounds", "surges"]
        assert page.evaluate(track("traze", "hp")) == 24 - 8  # Flame Lash: 1d8+3 with a 5
        assert page.evaluate(track("warcaster", "hp")) == 36
        # the effect and how long it lasts
        burning = page.evaluate(
            "(() => { const e = document.querySelector('#characters [data-creature=\"traze\"] .effect');"
            " return e && e.textContent; })()"
        )
        assert burning == "burningsave ends"

        # a fact recorded through the API is on the page within a second
        hit = t.damage("kaelen", 7)
        page.wait_for(f"{track('kaelen', 'hp')} === 33", "Kaelen's HP bar at 33", timeout=LIVE)
        line = page.wait_for(log_line(hit), "the new log line", timeout=LIVE)
        assert "Kaelen" in line["text"] and "revoked" not in line["classes"]

        # a correction shows as one: the line struck through, the bar back
        revocation = t.revoke(hit, "the GM misread the die")
        page.wait_for(f"{track('kaelen', 'hp')} === 40", "Kaelen's HP back to 40", timeout=LIVE)
        struck = page.wait_for(log_line(hit), "the revoked line", timeout=LIVE)
        assert "revoked" in struck["classes"].split() and "the GM misread the die" in struck["text"]
        assert page.evaluate(log_line(revocation)) is not None

        state = page.evaluate("window.chronicleTable")
        assert state["received"] == [hit, revocation] and state["gaps"] == []
        assert_only_this_server(page, t.url)
        shot = tmp_path / "table-page.png"
        page.screenshot(shot)
        keep_artifact(shot)
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_table_resumes_after_a_dropped_connection_without_a_gap(
    table: tuple[Table, Proc, dict[str, str], int], tmp_path: Path
) -> None:
    t, proc, env, port = table
    with offline_page(tmp_path) as (page, _proxy):
        open_table(page, t, t.viewer)
        first = t.damage("mira", 3)
        page.wait_for(f"{track('mira', 'hp')} === 27", "Mira's first hit", timeout=LIVE)

        proc.terminate(timeout=15)  # the connection drops
        page.wait_for("window.chronicleTable.status === 'reconnecting'", "the page to notice")
        # facts recorded while the page is away (by another process on the same store)
        app = open_application(Settings(database_url=t.database_url))
        try:
            away = [
                app.record(t.campaign, "TimeAdvanced", {"minutes": 10}).position,
                app.record(t.campaign, "TimeAdvanced", {"minutes": 5}).position,
            ]
        finally:
            app.close()

        _url, proc = start_api(env, tmp_path / "server-again", port)
        try:
            page.wait_for("window.chronicleTable.status === 'live'", "the page to reconnect")
            page.wait_for(
                f"document.body.dataset.position === '{away[-1]}'", "the facts recorded while it was away"
            )
            after = t.damage("mira", 4)
            page.wait_for(f"{track('mira', 'hp')} === 23", "a hit after the reconnection", timeout=LIVE)
            state = page.evaluate("window.chronicleTable")
            assert state["received"] == [first, *away, after] == list(range(first, after + 1))
            assert state["gaps"] == [] and state["reconnects"] >= 1
            assert page.evaluate(log_line(away[0])) is not None
            shot = tmp_path / "table-page-resumed.png"
            page.screenshot(shot)
            keep_artifact(shot)
        finally:
            proc.terminate(timeout=15)


def test_a_bad_token_asks_for_one_a_good_one_shows_the_table_and_a_revoked_one_asks_again(
    table: tuple[Table, Proc, dict[str, str], int], tmp_path: Path
) -> None:
    t, _proc, _env, _port = table
    with offline_page(tmp_path, width=420, height=900) as (page, _proxy):  # a phone
        page.goto(f"{t.page}#token=chr_not-a-token")
        reason = page.wait_for(
            "!document.getElementById('login').hidden && document.getElementById('login-reason').textContent",
            "the token form",
        )
        assert "not accepted" in reason
        assert page.evaluate("document.getElementById('table').hidden") is True
        page.evaluate(
            f"document.getElementById('token').value = {js(t.viewer)};"
            "document.getElementById('login').requestSubmit()"
        )
        page.wait_for("window.chronicleTable.status === 'live'", "the table after the token was entered")
        assert page.evaluate(track("traze", "hp")) == 16
        shot = tmp_path / "table-page-phone.png"
        page.screenshot(shot)
        keep_artifact(shot)

        # the GM takes the screen away: revoking its token ends the stream and the page asks again
        revoked = t.graphql(
            "mutation($i: RevokeAccessTokenInput!) { revokeAccessToken(input: $i) { userErrors { code } } }",
            {"i": {"accessTokenId": encode("AccessToken", t.campaign, t.viewer_id)}},
        )["revokeAccessToken"]
        assert revoked["userErrors"] == []
        reason = page.wait_for(
            "!document.getElementById('login').hidden && document.getElementById('login-reason').textContent",
            "the token form after the revocation",
        )
        assert "revoked" in reason
        stored = page.evaluate(f"localStorage.getItem('chronicle.table.' + {js(campaign_gid(t.campaign))})")
        assert stored is None  # a token that no longer works is not kept


def test_a_connection_that_dies_without_closing_is_noticed_and_replaced(
    table: tuple[Table, Proc, dict[str, str], int], tmp_path: Path
) -> None:
    """A frozen server (SIGSTOP) keeps the TCP connection open but never answers, like a Wi-Fi
    that went away: the page's pings go unanswered, it gives the connection up and reconnects
    once the server answers again (SIGCONT), missing nothing. The heartbeat is shortened here
    (15 s of quiet, then 5 s to answer, on a real table)."""
    t, proc, _env, _port = table
    with offline_page(tmp_path) as (page, _proxy):
        open_table(page, t, t.viewer)
        page.evaluate("window.chronicleTable.heartbeat = {every: 300, within: 700}")
        first = t.damage("mira", 2)
        page.wait_for(f"{track('mira', 'hp')} === 28", "Mira's first hit", timeout=LIVE)
        # a healthy server answers every ping: the connection stays (wait several heartbeats)
        page.evaluate("new Promise(done => setTimeout(done, 2500))")
        assert page.evaluate("[window.chronicleTable.abandoned, window.chronicleTable.status]") == [0, "live"]

        proc.process.send_signal(signal.SIGSTOP)
        try:
            page.wait_for("window.chronicleTable.abandoned >= 1", "the page to give the silent connection up")
            assert page.evaluate("window.chronicleTable.status") == "reconnecting"
        finally:
            proc.process.send_signal(signal.SIGCONT)
        page.wait_for("window.chronicleTable.status === 'live'", "the page to reconnect")
        after = t.damage("mira", 5)
        page.wait_for(f"{track('mira', 'hp')} === 23", "a hit after the reconnection", timeout=LIVE)
        state = page.evaluate("window.chronicleTable")
        assert state["received"] == [first, after] and state["gaps"] == []
