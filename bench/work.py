"""``python -m bench.work TASK JSON``: one measurement in a fresh process.

The benchmark runs every heavy measurement in its own process, so each starts cold, its memory
is watched from outside (``bench.procs.work`` kills it past its budget) and nothing it
allocates stays in the harness. Each task prints JSON lines on stdout; the last one is its
answer (earlier ones are partial answers, kept if the process is killed).

Tasks:

- ``load``: import a cached campaign into a store as ``chronicle import`` does (validate it with
  ``read_export``, a fold fact by fact, then ``import_campaign`` with that fold: the campaign's
  first snapshot and its recorded checkpoints come from it), grant a GM token, set the read
  models' tracking to the store's head.
- ``fold``: P2 and the floor of P3/P4/cold load: the decode-only read of the campaign's
  events (recorder + mapper, no rules) against the product's load + fold, interleaved.
- ``rows``: the raw row-writes floor of the read models: the same row shapes the projector
  writes, written with plain ``executemany`` (psycopg / sqlite3), 500 facts per transaction.
- ``write``: a writer for the live-follow figures: a fight on each of its campaigns (existing
  ones, or new ones it creates), then damage, turn ends and turn starts round-robin over them
  through the product's ``ChronicleApplication.record`` for a given time.
"""

from __future__ import annotations

import gc
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from uuid import UUID

Emit = Callable[[dict[str, Any]], None]


def emit_json(obj: dict[str, Any]) -> None:
    print(json.dumps(obj), flush=True)


# ---------------------------------------------------------------------------- load
def load(emit: Emit, url: str, path: str, validate: bool = True) -> None:
    from api.exports import jsonl
    from api.service.auth import AccessControl
    from api.service.settings import Settings
    from api.service.store import open_application
    from bench import campaigns
    from bench.readmodels import set_tracking

    settings = Settings(database_url=url)
    began = time.perf_counter()
    folded = None
    if validate:  # as ``chronicle import`` does: a fold fact by fact
        with Path(path).open("rb") as fh:
            checked = jsonl.read_export(fh)
        header, facts, folded = checked.header, checked.facts, checked.ledger
    else:
        header, facts = campaigns.read(Path(path))
    validated = time.perf_counter() - began
    app = open_application(settings)
    try:
        began = time.perf_counter()
        # with the validation's ledger, as ``chronicle import`` stores it: its snapshot holds what
        # the table believed at each checkpoint (recorded checkpoints), as a deployment that
        # lived through the campaign has them
        cid = app.import_campaign(header, facts, folded=folded)
        took = time.perf_counter() - began
        token = AccessControl(app).grant_gm(cid)
        head = app.recorder.max_notification_id() or 0
    finally:
        app.close()
    set_tracking(settings, head)
    emit(
        {
            "campaign_id": str(cid),
            "token": token,
            "facts": len(facts),
            "head": head,
            "import_s": took,
            "validate_s": validated,
        }
    )


# ---------------------------------------------------------------------------- fold
def fold(emit: Emit, url: str, campaign_id: str, repeat: int) -> None:
    from api.service.gcpause import gc_paused
    from api.service.settings import Settings
    from api.service.store import open_application
    from domain.rulesets import get_ruleset

    cid = UUID(campaign_id)
    # snapshot_every=0: no snapshot is read or written -- this is the fold from the facts
    app = open_application(Settings(database_url=url, snapshot_every=0))
    samples: list[dict[str, float]] = []
    try:

        def read() -> list[Any]:
            return [app.mapper.to_domain_event(s) for s in app.recorder.select_events(cid)]

        def decode() -> dict[str, float]:
            """The decode-only read, with the collector paused as the product's load pauses it
            (``gc_paused``: so the floor is not charged collections the load does not make,
            which grow with the campaign: at 100k they were half of the read's CPU) and, for
            comparison with earlier rounds, with it running (the floor until 2026-12-07); then,
            untimed, a scratch ledger (no loader: every fact in memory) of the facts decoded,
            and its fold timed: the fold alone, the floor of P3 and P4 (a full fold) and the
            fold's share of the load."""
            from domain.ledger import Ledger

            gc.collect()
            with gc_paused():
                began, cpu = time.perf_counter(), time.process_time()
                events = read()
                took, took_cpu = time.perf_counter() - began, time.process_time() - cpu
            del events
            gc.collect()
            began = time.perf_counter()
            events = read()
            took_gc = time.perf_counter() - began
            start = events[0]
            ledger = Ledger(get_ruleset(start.ruleset), start.flags, first_seq=2)
            for e in events[1:]:
                ledger.append(e.entry())
            del events
            gc.collect()
            began = time.perf_counter()
            ledger.state  # noqa: B018 - the fold, with its checkpoints
            fold_s = time.perf_counter() - began
            del ledger
            return {"decode_s": took, "decode_cpu_s": took_cpu, "decode_gc_s": took_gc, "fold_s": fold_s}

        def full() -> dict[str, float]:
            app._campaigns.pop(cid, None)  # a cold load: the product's cache is per process
            gc.collect()
            # The product's load reads, decodes, appends and folds as it goes (then, from
            # FREEZE_AFTER facts, collects and freezes the heap): all of it is the load.
            began, cpu = time.perf_counter(), time.process_time()
            campaign = app.campaign(cid)
            campaign.ledger.state  # noqa: B018 - folded by the load already (nothing left)
            load_s, load_cpu = time.perf_counter() - began, time.process_time() - cpu
            orphans = len(campaign.ledger.orphans)
            app._campaigns.pop(cid, None)
            del campaign
            gc.unfreeze()
            return {"load_s": load_s, "load_cpu_s": load_cpu, "orphans": orphans}

        for i in range(repeat):
            # alternately first: neither side always reads what the other just read
            if i % 2 == 0:
                d = decode()
                f = full()
            else:
                f = full()
                d = decode()
            samples.append({**d, **f})
            emit({"samples": samples})
    finally:
        app.close()


# ---------------------------------------------------------------------------- rows
def rows(emit: Emit, kind: str, url: str, path: str, batch: int = 500, sample: int = 5_000) -> None:
    """Write the read models' rows for every fact of the campaign with plain executemany."""
    from api.service.settings import Settings
    from bench import campaigns
    from bench.readmodels import row_shapes, write_rows

    header, facts = campaigns.read(Path(path))
    shapes = row_shapes(header, facts, sample)
    settings = Settings(database_url=url)
    took = write_rows(kind, settings, shapes, batch)
    emit({"facts": len(facts), "seconds": took, "rows": shapes.count})


# ---------------------------------------------------------------------------- write
def _table(app: Any, cid: UUID, tag: str) -> tuple[str, list[str]]:
    """Three tough monsters in a running encounter, initiative settled and a turn started (the
    campaign's own running encounter, if any, ended first): what a writer plays on."""
    record = app.record
    running = app.ledger(cid).state.active_encounter
    if running:
        record(cid, "EncounterEnded", {"encounter_id": running, "outcome": "cut"})
    brutes = [f"live-{tag}-{k}" for k in range(3)]
    for k, b in enumerate(brutes):
        record(
            cid,
            "CreatureRegistered",
            {
                "creature_id": b,
                "name": f"Live Brute {tag}.{k}",
                "kind": "monster",
                "level": 5,
                "abilities": {"str": 16, "con": 16, "dex": 12, "int": 8, "wis": 10, "cha": 8},
                "max_hp": 100_000,
                "defenses": {"ac": 18, "fort": 16, "ref": 16, "will": 14},
            },
        )
    eid = f"live-{tag}"
    record(cid, "EncounterStarted", {"encounter_id": eid, "name": f"Live {tag}", "participants": brutes})
    for k, b in enumerate(brutes):
        roll = app.roll("1d20", faces=[20 - 2 * k])
        record(cid, "InitiativeRolled", {"encounter_id": eid, "creature": b, "roll": roll})
    record(cid, "TurnStarted", {"encounter_id": eid})
    return eid, brutes


def write(
    emit: Emit, url: str, campaigns: list[str], seconds: float, tag: str, go: str = "", rate: float = 0.0
) -> None:
    """A writer: sets up a fight on each of ``campaigns`` (``campaigns == ["new:N"]``: N new
    campaigns), says ``ready``, waits for the file ``go`` to exist, then plays round-robin over them for
    ``seconds`` -- a point of damage, every fourth action the end of the turn and the start of
    the next -- as fast as it can (``rate`` > 0: at most that many actions a second)."""
    from api.service.settings import Settings
    from api.service.store import open_application
    from domain.errors import DomainError

    app = open_application(Settings(database_url=url))
    try:
        if campaigns and campaigns[0].startswith("new:"):
            ids = [app.create_campaign(f"Live table {tag}.{k}") for k in range(int(campaigns[0][4:]))]
        else:
            ids = [UUID(c) for c in campaigns]
        tables = [(cid, *_table(app, cid, f"{tag}{k}")) for k, cid in enumerate(ids)]
        emit({"ready": len(tables)})
        while go and not Path(go).exists():
            time.sleep(0.01)
        began = time.perf_counter()
        facts = refused = actions = 0
        while time.perf_counter() - began < seconds:
            cid, eid, brutes = tables[actions % len(tables)]
            turn = actions // len(tables)
            try:
                if turn % 4 == 3:
                    app.record(cid, "TurnEnded", {"encounter_id": eid})
                    app.record(cid, "TurnStarted", {"encounter_id": eid})
                    facts += 2
                else:
                    target = brutes[turn % len(brutes)]
                    app.record(cid, "DamageTaken", {"target": target, "roll": None, "amount": 1, "types": []})
                    facts += 1
            except DomainError:
                refused += 1
            actions += 1
            if rate > 0:
                ahead = actions / rate - (time.perf_counter() - began)
                if ahead > 0:
                    time.sleep(ahead)
        emit(
            {
                "campaigns": [str(c) for c in ids],
                "facts": facts,
                "refused": refused,
                "seconds": time.perf_counter() - began,
            }
        )
    finally:
        app.close()


TASKS = {"load": load, "fold": fold, "rows": rows, "write": write}


def main(argv: list[str]) -> int:
    task, raw = argv[0], argv[1] if len(argv) > 1 else "{}"
    TASKS[task](emit_json, **json.loads(raw))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
