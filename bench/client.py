"""A GraphQL client for the benchmarks: real HTTP (httpx, one keep-alive connection per client),
the live encounter the mutation mix plays on, the request mixes, and concurrent clients.

The mutation mix is what a table does during a fight, one request per action: an attack (a
melee strike, the server rolls the dice), damage dealt, a heal, the end of a turn. The bench
registers four monsters with huge hit points that fight each other (the generated party may
be dying or dead wherever the campaign was cut), so the fight never ends however many
requests are sent; attacks use no action (`action: "none"`), so any client may send any of them
in any order and every one is accepted (a refusal would be cheaper than an accepted fact, so
each response's ``userErrors`` is checked). The query mix: one character's hit points, the
live encounter, a history page at a random position (without and with outcomes and lines).
"""

from __future__ import annotations

import base64
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

import httpx

from api.graphql import ids
from bench.core import OverBudget

PAYLOAD = "position userErrors { code message field } facts { position type outcome }"


class RequestFailed(RuntimeError):
    pass


def gql(client: httpx.Client, query: str, variables: dict[str, Any], token: str) -> tuple[float, Any]:
    """(seconds, data) for one operation; raises on transport or GraphQL errors."""
    began = time.perf_counter()
    try:
        r = client.post(
            "/graphql",
            json={"query": query, "variables": variables},
            headers={"Authorization": f"Bearer {token}"},
        )
    except httpx.TimeoutException:
        raise OverBudget(f"{client.timeout.read:g} s", bound=time.perf_counter() - began) from None
    took = time.perf_counter() - began
    if r.status_code != 200:
        raise RequestFailed(f"HTTP {r.status_code}: {r.text[:500]}")
    body = r.json()
    if body.get("errors"):
        raise RequestFailed(f"GraphQL errors: {body['errors']}")
    data = body["data"]
    for value in data.values():
        if isinstance(value, dict) and value.get("userErrors"):
            raise RequestFailed(f"refused: {value['userErrors']}")
    return took, data


def cursor(position: int) -> str:
    return base64.b64encode(f"position:{position}".encode()).decode()


# ----------------------------------------------------------------------- the table
PCS = ("traze", "vex", "mira", "doc")  # bench.generator's party


@dataclass
class Table:
    """One campaign as the clients see it: ids, the token, the live encounter."""

    campaign_id: UUID
    token: str
    encounter: str = ""
    monsters: list[str] = field(default_factory=list)
    positions: dict[str, list[int]] = field(default_factory=dict)  # fact type -> positions we stored
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def gid(self) -> str:
        return ids.campaign_gid(self.campaign_id)

    def character(self, local: str) -> str:
        return ids.encode("Character", self.campaign_id, local)

    def encounter_gid(self) -> str:
        return ids.encode("Encounter", self.campaign_id, self.encounter)

    def stored(self, data: Any) -> None:
        with self.lock:
            for payload in data.values():
                if not isinstance(payload, dict):
                    continue
                for f in payload.get("facts") or ():
                    self.positions.setdefault(f["type"], []).append(int(f["position"]))


def end_running_encounter(client: httpx.Client, table: Table) -> None:
    """End whatever encounter the generated campaign left running (a campaign is cut mid-fight)."""
    q = "query($c: ID!) { campaign(id: $c) { activeEncounter { encounterId } } }"
    _, data = gql(client, q, {"c": table.gid}, table.token)
    active = data["campaign"]["activeEncounter"]
    if active:
        m = "mutation($i: EndEncounterInput!) { endEncounter(input: $i) { " + PAYLOAD + " } }"
        eid = ids.encode("Encounter", table.campaign_id, active["encounterId"])
        gql(client, m, {"i": {"campaignId": table.gid, "encounterId": eid}}, table.token)


def start_encounter(client: httpx.Client, table: Table, tag: str) -> None:
    """Register four tough monsters and start an encounter between them, initiative settled
    (distinct rolls: no ties). The generated party stays out of it: wherever the campaign was
    cut, a PC may be dying or hold save-ends effects, and a turn that owes a roll makes two
    clients' concurrent ``endTurn`` race (one is refused ROLLS_PENDING, as it should be)."""
    end_running_encounter(client, table)
    reg = "mutation($i: RegisterCreatureInput!) { registerCreature(input: $i) { " + PAYLOAD + " } }"
    monsters = []
    for k in range(4):
        local = f"bench-{tag}-{k}"
        gql(
            client,
            reg,
            {
                "i": {
                    "campaignId": table.gid,
                    "creatureId": local,
                    "name": f"Bench Brute {tag}.{k}",
                    "kind": "MONSTER",
                    "level": 5,
                    "maxHp": 100_000,
                    "maxWounds": 1000,  # critical hits wound (sw.crit_mode): a long fight takes many
                    "defenses": {"ac": 18, "fort": 16, "ref": 16, "will": 14},
                }
            },
            table.token,
        )
        monsters.append(local)
    table.monsters = monsters
    table.encounter = f"bench-{tag}"
    start = "mutation($i: StartEncounterInput!) { startEncounter(input: $i) { " + PAYLOAD + " } }"
    everyone = monsters
    participants = [table.character(c) for c in everyone]
    gql(
        client,
        start,
        {"i": {"campaignId": table.gid, "encounterId": table.encounter, "participantIds": participants}},
        table.token,
    )
    init = "mutation($i: RollInitiativeInput!) { rollInitiative(input: $i) { " + PAYLOAD + " } }"
    for k, c in enumerate(everyone):
        roll = {"expression": "1d20", "faces": [20 - 2 * k]}  # distinct totals: no ties to break
        gql(
            client,
            init,
            {
                "i": {
                    "campaignId": table.gid,
                    "encounterId": table.encounter_gid(),
                    "characterId": table.character(c),
                    "roll": roll,
                }
            },
            table.token,
        )
    first = "mutation($i: StartTurnInput!) { startTurn(input: $i) { " + PAYLOAD + " } }"
    gql(client, first, {"i": {"campaignId": table.gid, "encounterId": table.encounter_gid()}}, table.token)


# ---------------------------------------------------------------------- the mixes
ATTACK = (
    "mutation($i: AttackInput!) { attack(input: $i) { "
    + PAYLOAD
    + " characters { creatureId hitPoints { current } } } }"
)
DAMAGE = (
    "mutation($i: DealDamageInput!) { dealDamage(input: $i) { "
    + PAYLOAD
    + " character { hitPoints { current } } } }"
)
HEAL = "mutation($i: HealInput!) { heal(input: $i) { " + PAYLOAD + " character { hitPoints { current } } } }"
END_TURN = (
    "mutation($i: EndTurnInput!) { endTurn(input: $i) { "
    + PAYLOAD
    + " encounter { round turnOfCreatureId } } }"
)
REVOKE = "mutation($i: RevokeFactInput!) { revokeFact(input: $i) { " + PAYLOAD + " } }"

CHARACTER_HP = "query($id: ID!) { character(id: $id) { name hitPoints { current max temporary } lifeState } }"
ENCOUNTER = (
    "query($id: ID!) { encounter(id: $id) { name round turnOfCreatureId "
    "initiativeOrder { name hitPoints { current max } conditions } } }"
)
HISTORY = (
    "query($c: ID!, $after: String) { campaign(id: $c) { history(first: 20, after: $after) { "
    "edges { node { position type status } } pageInfo { hasNextPage endCursor } } } }"
)
NARRATED = (
    "query($c: ID!, $after: String) { campaign(id: $c) { history(first: 20, after: $after) { "
    "edges { node { position type status outcome line } } pageInfo { hasNextPage endCursor } } } }"
)
AS_OF = (
    "query($id: ID!, $p: Int!, $v: TimeAxis!) { character(id: $id) { "
    "asOf(position: $p, view: $v) { hitPoints { current } } } }"
)


def mutation(table: Table, k: int, rng: random.Random) -> tuple[str, dict[str, Any]]:
    """The ``k``-th action of the mix: attack, damage, heal, end of turn, in turn."""
    c = table.gid
    attacker, target = rng.sample(table.monsters, 2)
    monster = table.character(target)
    kind = k % 4
    if kind == 0:
        power = {"name": "strike", "kind": "MELEE", "defense": "AC", "attackBonus": 9, "damage": "1d10+5"}
        return ATTACK, {
            "i": {
                "campaignId": c,
                "attackerId": table.character(attacker),
                "power": power,
                "targets": [{"characterId": monster}],
                "action": "none",  # an attack uses a standard action by default: this mix's use none
            }
        }
    if kind == 1:
        return DAMAGE, {
            "i": {"campaignId": c, "characterId": monster, "amount": rng.randint(3, 12), "types": []}
        }
    if kind == 2:
        return HEAL, {"i": {"campaignId": c, "characterId": monster, "flat": rng.randint(5, 15)}}
    # the table ends the turn with the rolls it owes and starts the next (RULES.md ruling 18)
    return END_TURN, {
        "i": {"campaignId": c, "encounterId": table.encounter_gid(), "serverRolls": True, "startNext": True}
    }


def query(table: Table, kind: str, rng: random.Random, positions: int) -> tuple[str, dict[str, Any]]:
    if kind == "character":
        return CHARACTER_HP, {"id": table.character(rng.choice(PCS))}
    if kind == "encounter":
        return ENCOUNTER, {"id": table.encounter_gid()}
    page = {"c": table.gid, "after": cursor(rng.randint(2, max(2, positions - 20)))}
    return (NARRATED if kind == "narrated" else HISTORY), page


# ------------------------------------------------------------------------- clients
@dataclass
class Sample:
    wall: float
    latencies: list[float]
    planned: int
    capped: bool  # the phase's deadline stopped it before ``planned`` requests
    by_kind: dict[str, list[float]] = field(default_factory=dict)  # operation name -> latencies

    def kind_p50_ms(self) -> dict[str, float]:
        return {k: round(sorted(v)[len(v) // 2] * 1e3, 2) for k, v in self.by_kind.items() if v}


def clients(
    url: str,
    n_clients: int,
    total: int,
    request: Callable[[int, random.Random], tuple[str, dict[str, Any]]],
    *,
    token: str,
    timeout: float,
    deadline: float,
    on_data: Callable[[Any], None] | None = None,
    seed: int = 1,
) -> Sample:
    """``total`` requests from ``n_clients`` threads (one connection each), started together;
    each thread stops at ``deadline`` (monotonic). Raises OverBudget when a request times out."""
    latencies: list[float] = []
    errors: list[BaseException] = []
    per = [total // n_clients + (1 if k < total % n_clients else 0) for k in range(n_clients)]
    barrier = threading.Barrier(n_clients + 1)
    lock = threading.Lock()
    done = [0]

    by_kind: dict[str, list[float]] = {}

    def worker(w: int, count: int) -> None:
        mine: list[float] = []
        kinds: list[str] = []
        rng = random.Random(seed * 1000 + w)
        try:
            with httpx.Client(base_url=url, timeout=timeout) as client:
                client.get("/healthz")  # connect before the start line
                barrier.wait()
                for k in range(count):
                    if time.monotonic() > deadline:
                        break
                    query, variables = request(w + k * n_clients, rng)
                    took, data = gql(client, query, variables, token)
                    mine.append(took)
                    kinds.append(operation(query))
                    if on_data is not None:
                        on_data(data)
        except threading.BrokenBarrierError:
            pass
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
            barrier.abort()
        with lock:
            latencies.extend(mine)
            for kind, took in zip(kinds, mine, strict=True):
                by_kind.setdefault(kind, []).append(took)
            done[0] += len(mine)

    wall = run_together(worker, per, barrier)
    for exc in errors:
        if isinstance(exc, OverBudget):
            raise exc
    if errors:
        raise RequestFailed(f"a client failed: {errors[0]!r}")
    return Sample(wall, latencies, total, done[0] < total, by_kind)


def run_together(worker: Callable[[int, Any], None], per: list[Any], barrier: threading.Barrier) -> float:
    """Start one thread per client (``worker(index, its share)``), release them together at
    ``barrier`` (which they wait on too; a broken barrier means one failed before the start),
    join them, and return the seconds from the release to the last one's end."""
    threads = [threading.Thread(target=worker, args=(w, c), daemon=True) for w, c in enumerate(per)]
    for t in threads:
        t.start()
    try:
        barrier.wait()
    except threading.BrokenBarrierError:
        pass
    began = time.perf_counter()
    for t in threads:
        t.join()
    return time.perf_counter() - began


def operation(query: str) -> str:
    """The first field a document selects (``attack``, ``character``...), to group latencies."""
    body = query[query.index("{") + 1 :].strip()
    return body.split("(")[0].split("{")[0].split()[0]
