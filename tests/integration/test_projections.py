"""Read models on the real stores: the incremental path equals a rebuild, exactly once.

Campaigns are generated with the application's own commands (creatures, damage, healing,
surges, death saves, revocations, restores, amendments, rulings, overrides, retroactive
flags). The follower projects them one notification per transaction, as in live play;
then every view is dropped and rebuilt in batches of 500; the rows must be identical, and
the creature rows must equal the application's own present.
"""

from __future__ import annotations

import threading
from typing import Any
from uuid import UUID

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from api.rulesets.stellar_winds.commands import StellarWindsCommands
from api.service import views as wiring
from api.service.application import ChronicleApplication
from api.service.settings import Settings
from api.service.store import open_application
from domain.errors import DomainError
from projections import projector as projector_module
from projections.projector import PROJECTIONS, Batch, Projector
from projections.runner import Follower, wait_for
from projections.storage import LAYOUTS, ViewStore

ABILITIES = {"str": 12, "con": 14, "dex": 14, "int": 10, "wis": 10, "cha": 10}
DEFENSES = {"ac": 18, "fort": 15, "ref": 15, "will": 14}
CREATURES = ("vex", "orc", "traze")

Op = tuple[Any, ...]
ops = st.one_of(
    st.tuples(st.just("damage"), st.sampled_from(CREATURES), st.integers(1, 6), st.integers(1, 6)),
    st.tuples(st.just("hit"), st.sampled_from(CREATURES), st.integers(1, 40)),
    st.tuples(st.just("heal"), st.sampled_from(CREATURES)),
    st.tuples(st.just("surge"), st.sampled_from(CREATURES)),
    st.tuples(st.just("second_wind"), st.sampled_from(CREATURES)),
    st.tuples(st.just("death_save"), st.sampled_from(CREATURES), st.integers(1, 20)),
    st.tuples(st.just("revoke"), st.integers(0, 10_000), st.sampled_from(["fact", "action", "consequences"])),
    st.tuples(st.just("restore")),
    st.tuples(st.just("amend"), st.integers(0, 10_000), st.integers(1, 30)),
    st.tuples(st.just("ruling")),
    st.tuples(st.just("overturn")),
    st.tuples(st.just("override"), st.integers(0, 10_000)),
    st.tuples(st.just("retro_flag"), st.booleans()),
)


def register(app: ChronicleApplication) -> UUID:
    cid = app.create_campaign("Generated")
    for i, name in enumerate(CREATURES):
        StellarWindsCommands(app).register_creature(
            cid,
            creature_id=name,
            name=name.title(),
            kind="pc" if i != 1 else "monster",
            level=3,
            abilities=ABILITIES,
            max_hp=20 + 5 * i,
            surges_per_day=2,
            defenses=DEFENSES,
        )
    return cid


def play(app: ChronicleApplication, cid: UUID, op: Op, state: dict[str, Any]) -> None:
    """Apply one generated table action; refused ones (a typed DomainError) store nothing."""
    kind = op[0]
    last = app.ledger(cid).last_seq
    try:
        if kind == "damage":
            rec = StellarWindsCommands(app).deal_damage(cid, op[1], "2d6", faces=[op[2], op[3]])
            state["damage"].append(rec.position)
        elif kind == "hit":
            rec = StellarWindsCommands(app).deal_damage(cid, op[1], amount=op[2])
            state["damage"].append(rec.position)
        elif kind == "heal":
            StellarWindsCommands(app).heal(cid, op[1], surge_multiplier=1, requires_surge=True)
        elif kind == "surge":
            StellarWindsCommands(app).spend_surge(cid, op[1])
        elif kind == "second_wind":
            StellarWindsCommands(app).second_wind(cid, op[1])
        elif kind == "death_save":
            StellarWindsCommands(app).death_save(cid, op[1], face=op[2])
        elif kind == "revoke":
            state["revocations"].append(
                app.revoke(cid, 2 + op[1] % (last - 1), "misread die", op[2]).position
            )
        elif kind == "restore" and state["revocations"]:
            app.restore(cid, state["revocations"][-1], "it was right")
        elif kind == "amend" and state["damage"]:
            target = state["damage"][op[1] % len(state["damage"])]
            app.amend(cid, target, {"amount": op[2], "roll": None}, "wrong number")
        elif kind == "ruling":
            state["ruling"] += 1
            app.record_ruling(cid, f"r-{state['ruling']}", "Cover?", "yes", value=3)
            StellarWindsCommands(app).deal_damage(
                cid, "orc", amount=5, rulings={"amount": f"r-{state['ruling']}"}
            )
        elif kind == "overturn" and state["ruling"]:
            app.resolve_ruling(cid, f"r-{state['ruling']}", "overturned", "no cover")
        elif kind == "override" and state["damage"]:
            target = state["damage"][op[1] % len(state["damage"])]
            app.override(cid, target, "orphan", "keep", "GM keeps it")
        elif kind == "retro_flag":
            app.set_flag(cid, "sw.death_save_failures_to_die", 4 if op[1] else 3, retroactive=True)
    except DomainError:
        pass


def follower_for(
    store: Settings,
    app: ChronicleApplication,
    batch_size: int = 1,
    lookahead: int | None = None,
    overlap: bool = False,
    read_page: int = 10_000,
    read_on: bool = False,
) -> Follower:
    """A follower committing ``batch_size`` notifications per transaction; ``lookahead``: how many
    it folds at once (default: the product's); ``overlap``: committed by a writer thread while
    the step folds on, the log read ``read_page`` notifications at a time (a page ahead)."""
    if lookahead is None:
        return wiring.follower(
            store, app, batch_size=batch_size, overlap=overlap, read_page=read_page, read_on=read_on
        )
    return wiring.follower(
        store,
        app,
        batch_size=batch_size,
        lookahead=lookahead,
        overlap=overlap,
        read_page=read_page,
        read_on=read_on,
    )


def check_against_application(app: ChronicleApplication, views: ViewStore, cid: UUID) -> None:
    summary = app.summary(cid)
    rows = {r["creature_id"]: r["state"] for r in views.list_creatures(str(cid))}
    assert rows == summary["creatures"]
    encounters = {r["encounter_id"]: r["state"] for r in views.list_encounters(str(cid))}
    assert encounters == summary["encounters"]
    ledger = app.ledger(cid)
    history = views.history(str(cid), first=500)
    assert [h["position"] for h in history] == [e.seq for e in ledger.entries]
    for h in history:
        assert h["status"] == ledger.status(h["position"]), h


@hsettings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(actions=st.lists(ops, min_size=1, max_size=25))
def test_incremental_equals_rebuild(store: Settings, actions: list[Op]) -> None:
    application = open_application(store)
    follower = follower_for(store, application)
    try:
        cid = register(application)
        follower.catch_up()
        state: dict[str, Any] = {"damage": [], "revocations": [], "ruling": 0}
        for op in actions:
            play(application, cid, op, state)
            follower.catch_up()  # one notification per transaction, like live play
        views = follower.views
        check_against_application(application, views, cid)
        incremental = views.dump(written_at=False)
        assert incremental["view_facts"], "nothing was projected"
        assert all(r["notification_id"] is not None for r in incremental["view_facts"])
        result = wiring.rebuild(store, application=application)
        assert result.events == application.recorder.max_notification_id()
        assert views.dump(written_at=False) == incremental
        wiring.rebuild(store, ["log"], application=application, batch_size=7)
        assert views.dump(written_at=False) == incremental
    finally:
        follower.close()
        application.close()


def test_a_revoked_arrival_names_nobody_in_the_log_whether_followed_or_rebuilt(
    app: ChronicleApplication, store: Settings
) -> None:
    """A revoked registration never happened: the later facts that name its creature read alike
    in the log followed fact by fact and in a rebuild (found by the law above: a rebuild's
    narrator learnt "Orc" from the struck registration; a follower's batch never read it)."""
    cid = register(app)
    follower = follower_for(store, app)
    try:
        follower.catch_up()
        hit = StellarWindsCommands(app).deal_damage(cid, "orc", amount=4).position
        follower.catch_up()
        arrival = next(
            e.seq
            for e in app.ledger(cid).entries
            if e.type == "CreatureRegistered" and e.payload["creature_id"] == "orc"
        )
        app.revoke(cid, arrival, "the orc never came", "fact")
        follower.catch_up()
        app.override(cid, hit, "orphan", "keep", "GM keeps it")
        follower.catch_up()
        views = follower.views
        followed = views.dump(written_at=False)
        line = next(
            r["line"] for r in followed["view_log"] if r["position"] == hit and r["campaign_id"] == str(cid)
        )
        assert line.startswith("orc takes 4 damage."), line
        wiring.rebuild(store, application=app)
        assert views.dump(written_at=False) == followed
    finally:
        follower.close()


def test_duplicate_notifications_change_nothing(app: ChronicleApplication, store: Settings) -> None:
    cid = register(app)
    StellarWindsCommands(app).deal_damage(cid, "vex", amount=7)
    rev = app.revoke(cid, 5, "misread die").position
    app.restore(cid, rev, "no, it was right")
    follower = follower_for(store, app, batch_size=2)
    try:
        follower.catch_up()
        views = follower.views
        before, tracking = views.dump(), views.tracking()
        head = app.recorder.max_notification_id()
        assert tracking == dict.fromkeys(tracking, head)
        # The last notifications again, projected against stale positions: refused as a whole.
        again = app.recorder.select_notifications(head - 2, 10)
        batch = Projector(app).project(again, dict.fromkeys(tracking, head - 3))
        assert batch.facts and batch.tracking
        assert views.write(batch) is False
        assert views.dump() == before and views.tracking() == tracking
        # Projected against the current positions: nothing to do at all.
        batch = Projector(app).project(again, tracking)
        assert batch.tracking == {} and batch.events == 0
        assert views.write(batch) is True
        # A follower that believes it is behind re-reads, is refused, resyncs and changes nothing.
        follower._positions = dict.fromkeys(tracking, head - 3)
        follower.catch_up()
        assert views.dump() == before and views.tracking() == tracking
        # Tracking never moves backwards.
        with pytest.raises(ValueError):
            batch.tracking = {"facts": (head, head - 1)}
            views.write(batch)
    finally:
        follower.close()


def test_reads_and_wait_for(app: ChronicleApplication, store: Settings, views: ViewStore) -> None:
    cid = register(app)
    StellarWindsCommands(app).deal_damage(cid, "vex", "2d6", faces=[4, 6])
    hit = StellarWindsCommands(app).deal_damage(cid, "orc", amount=3).position
    app.revoke(cid, hit, "wrong target")
    follower = follower_for(store, app, batch_size=500)
    follower.start()
    try:
        assert wait_for(views, app.recorder.max_notification_id(), timeout=10)
        vex = views.get_creature(str(cid), "vex")
        assert vex is not None and vex["hp"] == 10 and vex["state"]["hp"] == 10
        assert views.get_creature(str(cid), "nobody") is None
        assert [c["creature_id"] for c in views.list_creatures(str(cid))] == ["orc", "traze", "vex"]
        orc = views.history(str(cid), creature="orc")
        assert [h["fact_type"] for h in orc] == ["CreatureRegistered", "DamageTaken", "FactRevoked"]
        assert views.history(str(cid), status="revoked")[0]["position"] == hit
        assert [h["position"] for h in views.history(str(cid), after_position=3, before_position=6)] == [4, 5]
        assert [h["position"] for h in views.history(str(cid), fact_types=["FactRevoked"])] == [hit + 1]
        lines = {r["position"]: r for r in views.log_lines(str(cid))}
        assert "2d6 (4, 6) = 10" in lines[hit - 1]["line"]
        assert lines[hit]["struck"] and lines[hit]["line"].startswith("~~")
        assert f"(revoked at {hit + 1}: wrong target)" in lines[hit]["line"]
        assert views.tracking_position() == app.recorder.max_notification_id()
        # live follow: a new fact shows up without any call on our side
        StellarWindsCommands(app).deal_damage(cid, "traze", amount=1)
        assert wait_for(views, app.recorder.max_notification_id(), timeout=10)
        traze = views.get_creature(str(cid), "traze")
        assert traze is not None and traze["hp"] == 29
        assert not wait_for(views, 10**9, timeout=0.05)
    finally:
        follower.close()


OLD_CREATURES = (  # view_creatures before issue 15: Stellar Winds' columns
    "CREATE TABLE {t} (campaign_id TEXT NOT NULL, creature_id TEXT NOT NULL, name TEXT, kind TEXT, "
    "position INTEGER NOT NULL, hp INTEGER, wounds INTEGER, life TEXT, state {json} NOT NULL, "
    "PRIMARY KEY (campaign_id, creature_id))"
)


def test_a_creature_table_of_the_old_layout_is_rebuilt_in_the_neutral_one(
    app: ChronicleApplication, store: Settings
) -> None:
    """A database whose views predate the neutral creature row (no ``view_layout``, a
    ``wounds`` column): opening the views recreates the table, sets only its projection's
    tracking to 0, and the follower rebuilds it; facts and log keep their rows."""
    cid = register(app)
    StellarWindsCommands(app).deal_damage(cid, "vex", amount=7)
    head = app.recorder.max_notification_id()
    follower = follower_for(store, app, batch_size=500)
    follower.catch_up()
    follower.close()
    old = wiring.open_views(store)
    try:
        facts_before = old.dump()["view_facts"]
        t = old._t("view_creatures")
        with old._lock, old._transaction():
            old._execute(f"DROP TABLE {t}")
            old._execute(OLD_CREATURES.format(t=t, json="JSONB" if old.placeholder == "%s" else "TEXT"))
            old._execute(
                old._q(f"INSERT INTO {t} VALUES (%s, 'vex', 'Vex', 'pc', 3, 13, 14, 'active', '{{}}')"),
                (str(cid),),
            )
            old._execute(f"DROP TABLE {old._t('view_layout')}")
    finally:
        old.close()
    views = wiring.open_views(store)
    try:
        assert views.layouts() == LAYOUTS
        assert views.tracking() == {"creatures": 0, "encounters": head, "facts": head, "log": head}
        assert views.list_creatures(str(cid)) == []
        assert views.dump()["view_facts"] == facts_before
        follower = follower_for(store, app, batch_size=500)
        follower.catch_up()
        follower.close()
        assert views.tracking_position() == head
        check_against_application(app, views, cid)
        vex = views.get_creature(str(cid), "vex")
        assert vex is not None and "wounds" not in vex
        assert (vex["ruleset"], vex["level"], vex["life"], vex["hp"], vex["max_hp"]) == (
            "stellar-winds",
            3,
            "active",
            20 - 7,
            20,
        )
        assert vex["state"]["wounds"] == app.creature_state(cid, "vex")["wounds"]  # the system's own track
        reopened = wiring.open_views(store)  # a second opening changes nothing
        reopened.close()
        assert views.get_creature(str(cid), "vex") == vex and views.tracking_position() == head
    finally:
        views.close()


TOYS = ("ana", "bram")
toy_ops = st.one_of(
    st.tuples(st.just("Hit"), st.sampled_from(TOYS), st.integers(0, 8)),
    st.tuples(st.just("Patch"), st.sampled_from(TOYS), st.integers(1, 6)),
    st.tuples(st.just("Rally"), st.sampled_from(TOYS)),
    st.tuples(st.just("Brace"), st.sampled_from(TOYS)),
    st.tuples(st.just("revoke"), st.integers(0, 10_000)),
    st.tuples(st.just("restore")),
    st.tuples(st.just("amend"), st.integers(0, 10_000), st.integers(0, 10)),
    st.tuples(st.just("ruling"), st.sampled_from(TOYS), st.integers(0, 8)),
    st.tuples(st.just("overturn"), st.integers(0, 12)),
    st.tuples(st.just("retro_flag"), st.integers(1, 5)),
)


def play_toy(app: ChronicleApplication, cid: UUID, op: Op, state: dict[str, Any]) -> None:
    """One generated action of the toy ruleset (tests/plugins/toy_ruleset); refusals store nothing."""
    kind, last = op[0], app.ledger(cid).last_seq
    try:
        if kind == "Hit":
            state["hits"].append(app.record(cid, "Hit", {"target": op[1], "amount": op[2]}).position)
        elif kind == "Patch":
            app.record(cid, "Patch", {"target": op[1], "amount": op[2]})
        elif kind in ("Rally", "Brace"):
            app.record(cid, kind, {"creature": op[1]})
        elif kind == "revoke":
            state["revocations"].append(app.revoke(cid, 2 + op[1] % (last - 1), "misread").position)
        elif kind == "restore" and state["revocations"]:
            app.restore(cid, state["revocations"][-1], "it was right")
        elif kind == "amend" and state["hits"]:
            app.amend(cid, state["hits"][op[1] % len(state["hits"])], {"amount": op[2]}, "wrong number")
        elif kind == "ruling":
            state["ruling"] += 1
            rid = f"r-{state['ruling']}"
            app.record_ruling(cid, rid, "How hard?", "this hard", value=op[2])
            app.record(cid, "Hit", {"target": op[1], "amount": 0, "rulings": {"amount": rid}})
        elif kind == "overturn" and state["ruling"]:
            app.resolve_ruling(cid, f"r-{state['ruling']}", "overturned", "harder", value=op[1])
        elif kind == "retro_flag":
            app.set_flag(cid, "toy.rally_heals", op[1], retroactive=True)
    except DomainError:
        pass


@hsettings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(actions=st.lists(toy_ops, min_size=1, max_size=20))
def test_a_ruleset_the_core_never_heard_of_projects_incrementally_as_a_rebuild_does(
    store: Settings, toy_ruleset: object, actions: list[Op]
) -> None:
    """The toy ruleset (its own package): its creature rows hold the shared columns and its own
    state, and live projection equals a rebuild under random corrections."""
    application = open_application(store)
    follower = follower_for(store, application)
    try:
        cid = application.create_campaign("Toys", ruleset="toy")
        for who in TOYS:
            application.record(
                cid,
                "ToyCreatureJoined",
                {"creature_id": who, "name": who.title(), "kind": "pc", "max_hp": 10},
            )
        follower.catch_up()
        state: dict[str, Any] = {"hits": [], "revocations": [], "ruling": 0}
        for op in actions:
            play_toy(application, cid, op, state)
            follower.catch_up()
        views = follower.views
        check_against_application(application, views, cid)
        for row in views.list_creatures(str(cid)):
            points = row["state"]["hit_points"]
            assert (row["ruleset"], row["hp"], row["max_hp"], row["life"]) == (
                "toy",
                points["current"],
                points["max"],
                row["state"]["life"],
            )
        incremental = views.dump(written_at=False)
        wiring.rebuild(store, application=application)
        assert views.dump(written_at=False) == incremental
    finally:
        follower.close()
        application.close()


def test_a_revoked_arrival_is_narrated_alike_live_and_rebuilt(store: Settings, toy_ruleset: object) -> None:
    """Bram arrives, is hit, and his arrival is revoked: the hit is orphaned and its log line names
    him as a rebuild does (by his id: the corrected campaign never had him), not by the name the
    live follower saw before the correction."""
    application = open_application(store)
    follower = follower_for(store, application)
    try:
        cid = application.create_campaign("Toys", ruleset="toy")
        for who in TOYS:
            joined = {"creature_id": who, "name": who.title(), "kind": "pc", "max_hp": 10}
            arrival = application.record(cid, "ToyCreatureJoined", joined).position
        hit = application.record(cid, "Hit", {"target": "bram", "amount": 2}).position
        follower.catch_up()
        application.revoke(cid, arrival, "Bram never came")
        follower.catch_up()
        lines = {row["position"]: row["line"] for row in follower.views.dump()["view_log"]}
        assert lines[hit].startswith("bram is hit for 2. (orphaned")
        incremental = follower.views.dump(written_at=False)
        wiring.rebuild(store, application=application)
        assert follower.views.dump(written_at=False) == incremental
    finally:
        follower.close()
        application.close()


def test_new_views_record_their_layouts_and_reopening_drops_nothing(store: Settings) -> None:
    first = wiring.open_views(store)
    try:
        assert first.layouts() == LAYOUTS
        assert first.tracking() == dict.fromkeys(("creatures", "encounters", "facts", "log"), 0)
        with first._lock, first._transaction():  # a row in the table: reopening must keep it
            first._execute(
                first._q(
                    f"INSERT INTO {first._t('view_creatures')} (campaign_id, creature_id, position, state) "
                    "VALUES (%s, %s, %s, %s)"
                ),
                ("c", "x", 2, first._dump({"id": "x"})),
            )
    finally:
        first.close()
    again = wiring.open_views(store)
    try:
        assert again.layouts() == LAYOUTS
        assert [r["creature_id"] for r in again.list_creatures("c")] == ["x"]
    finally:
        again.close()


def test_a_fact_writes_only_the_rows_it_changes(app: ChronicleApplication, store: Settings) -> None:
    """Read models are incremental: a fact rewrites the rows of what it changed (a row's
    ``position`` is where it was last written), a correction that removes a creature deletes its
    row, and an ended encounter's row follows its participants' effects."""
    cid = register(app)
    sw = StellarWindsCommands(app)
    follower = follower_for(store, app, lookahead=1)  # one fact folded and written at a time
    try:
        views = follower.views

        def written_at() -> dict[str, int]:
            return {r["creature_id"]: r["position"] for r in views.list_creatures(str(cid))}

        follower.catch_up()
        assert written_at() == {"vex": 2, "orc": 3, "traze": 4}  # each written once, when registered
        hit = sw.deal_damage(cid, "orc", amount=4).position
        follower.catch_up()
        assert written_at() == {"vex": 2, "orc": hit, "traze": 4}
        undo = app.revoke(cid, hit, "wrong target").position
        follower.catch_up()
        assert written_at() == {"vex": 2, "orc": undo, "traze": 4}
        # an encounter, ended; then an effect on one of its participants changes its row only
        app.record(
            cid, "EncounterStarted", {"encounter_id": "e1", "name": "Bridge", "participants": ["vex", "orc"]}
        )
        app.record(cid, "EncounterEnded", {"encounter_id": "e1", "outcome": "they part"})
        follower.catch_up()
        ended = views.get_encounter(str(cid), "e1")
        assert ended is not None and ended["state"]["effects"] == []
        after_fight = written_at()  # the participants' rows changed (encounters since a rest)
        assert after_fight["traze"] == 4
        fire = {
            "name": "fire",
            "components": [{"ongoing": {"type": "fire", "amount": 5}}],
            "duration": {"kind": "save_ends"},
        }
        burn = app.record(cid, "EffectApplied", {"target": "orc", "source": "vex", "effect": fire}).position
        follower.catch_up()
        ended = views.get_encounter(str(cid), "e1")
        assert ended is not None and ended["position"] == burn
        assert [e["target"] for e in ended["state"]["effects"]] == ["orc"]
        assert written_at() == {**after_fight, "orc": burn}
        # revoking traze's registration removes traze: its row goes
        gone = app.revoke(cid, 4, "never there").position
        follower.catch_up()
        assert written_at() == {"vex": after_fight["vex"], "orc": burn}
        # a flag views read changes a creature whose own state did not: its row follows
        awarded = sw.award_xp(cid, ["vex"], 500).position
        follower.catch_up()
        assert views.get_creature(str(cid), "vex")["state"]["xp_level"] == 3  # type: ignore[index]
        table = app.set_flag(cid, "xp_table", [0, 100, 200, 300, 400, 500, 600]).position
        follower.catch_up()
        vex = views.get_creature(str(cid), "vex")
        assert vex is not None and vex["state"]["xp_level"] == 7 and vex["position"] == table
        assert written_at()["orc"] == burn  # no XP, no change
        assert awarded < table
        check_against_application(app, views, cid)
        incremental = views.dump(written_at=False)
        wiring.rebuild(store, application=app)
        assert views.dump(written_at=False) == incremental
        assert gone > burn
    finally:
        follower.close()


def test_a_follower_resumes_from_a_persisted_snapshot(
    app: ChronicleApplication, store: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A follower meeting a campaign it has not folded (a fresh worker, or after an error) loads
    it from the newest persisted snapshot at or before its tracking position, not from every fact;
    its rows stay what a rebuild derives, also after a correction reaching before the snapshot."""
    from domain.ledger import Ledger

    cid = register(app)
    sw = StellarWindsCommands(app)
    first = sw.deal_damage(cid, "orc", amount=1).position
    for _ in range(5):
        sw.deal_damage(cid, "vex", amount=1)
    before = follower_for(store, app)
    try:
        before.catch_up()
    finally:
        before.close()
    snapshot_at = app.write_snapshot(cid)
    sw.deal_damage(cid, "traze", amount=2)
    app.revoke(cid, first, "misread die")  # reaches back before the snapshot

    restored: list[int] = []
    restore = Ledger.restore.__func__  # type: ignore[attr-defined]

    def counting(cls, *args, **kwargs):  # type: ignore[no-untyped-def]
        ledger = restore(cls, *args, **kwargs)
        restored.append(ledger.last_seq)
        return ledger

    monkeypatch.setattr(Ledger, "restore", classmethod(counting))
    fresh = follower_for(store, app)  # a new worker: it has folded nothing
    try:
        fresh.catch_up()
        assert restored == [snapshot_at]
        views = fresh.views
        check_against_application(app, views, cid)
        orc = views.get_creature(str(cid), "orc")
        assert orc is not None and orc["hp"] == orc["state"]["max_hp"]  # the revoked blow is gone
        incremental = views.dump(written_at=False)
        wiring.rebuild(store, application=app)
        assert views.dump(written_at=False) == incremental
    finally:
        fresh.close()


@pytest.mark.parametrize("ruleset", ["stellar-winds", "d20", "orcus"])
def test_every_demo_projected_fact_by_fact_equals_its_rebuild(
    app: ChronicleApplication, store: Settings, ruleset: str
) -> None:
    """Incremental rows in every system with a demo (encounters, turns, effects, corrections):
    projected one fact per batch, the rows are the application's views and what a rebuild
    derives. (A ruleset's views may read more than the creature itself -- Orcus reads the active
    encounter -- which the projector's change detection must see.)"""
    from api.service.demo import create_demo

    cid = create_demo(app, ruleset)
    follower = follower_for(store, app)
    try:
        follower.catch_up()
        views = follower.views
        check_against_application(app, views, cid)
        incremental = views.dump(written_at=False)
        wiring.rebuild(store, application=app)
        assert views.dump(written_at=False) == incremental
    finally:
        follower.close()


@pytest.mark.parametrize("digest_new", [True, False], ids=["live", "rebuild"])
def test_a_correction_rewrites_only_the_fact_rows_that_read_differently(
    app: ChronicleApplication, store: Settings, digest_new: bool
) -> None:
    """After a correction the fold re-reads every fact from the one it reaches; the history and
    log rows written are only those that read differently now (the revoked fact, and the
    revocation itself), not every row since. A rebuild's follower (``digest_new=False``: it
    folds each fact once) writes the rows of positions never written without their digests, so
    a correction it folds later writes every row from its reach again -- the same rows."""
    cid = register(app)
    sw = StellarWindsCommands(app)
    blow = sw.deal_damage(cid, "orc", amount=3).position
    for _ in range(5):
        sw.deal_damage(cid, "vex", amount=1)  # outcomes that do not depend on the orc
    follower = wiring.follower(store, app, batch_size=500, digest_new=digest_new)
    written: list[set[int]] = []
    write = follower.views.write

    def spy(batch: Batch) -> bool:
        written.append({seq for _, seq in [*batch.facts, *batch.log]})
        return write(batch)

    follower.views.write = spy  # type: ignore[method-assign]
    try:
        follower.catch_up()
        assert written[-1] == set(range(2, blow + 6))  # the first time, every fact
        undo = app.revoke(cid, blow, "misread die").position
        follower.catch_up()
        assert written[-1] == ({blow, undo} if digest_new else set(range(blow, undo + 1)))
        check_against_application(app, follower.views, cid)
        incremental = follower.views.dump(written_at=False)
        wiring.rebuild(store, application=app)
        assert follower.views.dump(written_at=False) == incremental
    finally:
        follower.close()


@hsettings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    actions=st.lists(st.tuples(ops, st.booleans()), min_size=1, max_size=20),
    batch_size=st.integers(1, 6),
    lookahead=st.integers(1, 30),
    limits=st.lists(st.integers(1, 12), min_size=1, max_size=8),
    overlap=st.booleans(),
    read_page=st.integers(1, 9),
)
def test_rows_are_the_same_however_the_facts_are_batched(
    store: Settings,
    actions: list[tuple[Op, bool]],
    batch_size: int,
    lookahead: int,
    limits: list[int],
    overlap: bool,
    read_page: int,
) -> None:
    """Folding the log in pages or at once is the same fold: a follower that reads random
    numbers of notifications at a time (``step(limit)``, between random table actions, with
    corrections among them), folds up to ``lookahead`` at once and commits ``batch_size`` per
    transaction (:meth:`Batch.split`; with ``overlap``, streamed by the projector and committed
    by a writer thread while it folds, the log read ``read_page`` at a time) ends with exactly
    the rows of a rebuild that folds the whole log at once and commits it in one transaction, and
    those are the application's views."""
    application = open_application(store)
    follower = follower_for(
        store, application, batch_size=batch_size, lookahead=lookahead, overlap=overlap, read_page=read_page
    )
    try:
        cid = register(application)
        state: dict[str, Any] = {"damage": [], "revocations": [], "ruling": 0}
        steps = iter(limits * (len(actions) + 1))
        for op, follow in actions:
            play(application, cid, op, state)
            if follow:
                follower.step(next(steps))
        follower.catch_up()
        views = follower.views
        check_against_application(application, views, cid)
        paged = views.dump(written_at=False)
        head = application.recorder.max_notification_id()
        once = Follower(application, views, batch_size=head, lookahead=head)
        views.reset()
        assert once.step() == head
        assert views.tracking_position() == head
        assert views.dump(written_at=False) == paged
    finally:
        follower.close()
        application.close()


def test_a_split_batch_commits_each_fact_with_its_own_notification(
    app: ChronicleApplication, store: Settings
) -> None:
    """A look-ahead folded at once is committed ``batch_size`` notifications per transaction:
    each transaction moves the tracking over its own notifications and carries those facts'
    rows; the creature and encounter rows (the state after the look-ahead) go with the first."""
    cid = register(app)
    sw = StellarWindsCommands(app)
    for _ in range(6):
        sw.deal_damage(cid, "vex", amount=1)
    follower = follower_for(store, app, batch_size=3, lookahead=100)
    moves: list[tuple[int, int]] = []
    facts: list[set[int]] = []
    creatures: list[int] = []
    write = follower.views.write

    def spy(batch: Batch) -> bool:
        (move,) = set(batch.tracking.values())
        moves.append(move)
        facts.append({seq for _, seq in batch.facts})
        creatures.append(sum(len(rows) for rows in batch.creatures.values()))
        return write(batch)

    follower.views.write = spy  # type: ignore[method-assign]
    try:
        head = app.recorder.max_notification_id()
        assert follower.step() == head
        assert [m[1] for m in moves] == [3, 6, 9, head][: len(moves)] and moves[-1][1] == head
        assert [m[0] for m in moves] == [0] + [m[1] for m in moves[:-1]]
        assert facts[0] == {2, 3} and facts[1] == {4, 5, 6}  # the creation (1) is no fact
        assert creatures[0] == 3 and not any(creatures[1:])
        assert follower.views.tracking_position() == head
        check_against_application(app, follower.views, cid)
    finally:
        follower.close()


def _six_hits(app: ChronicleApplication) -> UUID:
    cid = register(app)
    sw = StellarWindsCommands(app)
    for _ in range(6):
        sw.deal_damage(cid, "vex", amount=1)
    return cid


def test_a_streamed_batch_commits_its_facts_while_it_folds_and_the_state_last(
    app: ChronicleApplication, store: Settings
) -> None:
    """With ``overlap``, a look-ahead of one campaign is committed ``batch_size`` notifications per
    transaction by the writer thread, each part handed out as soon as the fold has passed it:
    each moves the ``facts`` and ``log`` tracking over its own notifications with those facts'
    rows; the creature and encounter rows (the state after the look-ahead) and those
    projections' tracking (over the whole look-ahead) go with the last."""
    cid = _six_hits(app)
    follower = follower_for(store, app, batch_size=3, lookahead=100, overlap=True, read_page=2)
    reads: list[tuple[int, int]] = []
    select = app.recorder.select_notifications

    def counted(start: int, limit: int, **kwargs: Any) -> Any:
        reads.append((start, limit))
        return select(start, limit, **kwargs)

    app.recorder.select_notifications = counted  # type: ignore[method-assign]
    moves: list[dict[str, tuple[int, int]]] = []
    facts: list[set[int]] = []
    creatures: list[int] = []
    threads: set[str] = set()
    write = follower.views.write

    def spy(batch: Batch) -> bool:
        threads.add(threading.current_thread().name)
        moves.append(dict(batch.tracking))
        facts.append({seq for _, seq in batch.facts})
        creatures.append(sum(len(rows) for rows in batch.creatures.values()))
        return write(batch)

    follower.views.write = spy  # type: ignore[method-assign]
    try:
        head = app.recorder.max_notification_id()
        assert follower.step() == head
        assert threads == {"chronicle-views-writer"}
        streamed = [m for m in moves[:-1]]
        assert [set(m) for m in streamed] == [{"facts", "log"}] * len(streamed)
        assert [m["facts"] for m in streamed] == [(0, 3), (3, 6), (6, 9)]
        assert moves[-1] == {
            "creatures": (0, head),
            "encounters": (0, head),
            "facts": (9, head),
            "log": (9, head),
        }
        assert facts[:3] == [{2, 3}, {4, 5, 6}, {7, 8, 9}]  # the creation (1) is no fact
        assert creatures == [0, 0, 0, 3]
        assert follower.views.tracking() == dict.fromkeys(PROJECTIONS, head)
        assert follower.events == head
        # the log read 4 (batch size + 1) at a time, each page after the one before
        assert reads == [(k, 4) for k in range(0, head, 4)][: len(reads)] and len(reads) == -(-head // 4)
        check_against_application(app, follower.views, cid)
    finally:
        del app.recorder.select_notifications
        follower.close()


def test_the_rows_of_a_campaign_started_in_a_batch_are_written_whole(
    app: ChronicleApplication, store: Settings
) -> None:
    """A campaign started in the batch has all its creature and encounter rows in it
    (``batch.replaced``): the store holds none, so they are inserted as new rows (PostgreSQL:
    ``COPY``, from ``insert_new_from`` rows, as a rebuild writes them); the batches after it
    write only what changed, as upserts."""
    cid = _six_hits(app)
    follower = follower_for(store, app, batch_size=100, lookahead=100)
    views = follower.views
    views.insert_new_from = 1
    replaced: list[dict[str, set[str]]] = []
    inserted: list[str] = []
    write, insert = views.write, views._insert_new

    def spy(batch: Batch) -> bool:
        replaced.append({p: set(ids) for p, ids in batch.replaced.items()})
        return write(batch)

    def spy_insert(table: str, rows: list[dict[str, Any]]) -> None:
        inserted.append(table)
        insert(table, rows)

    views.write = spy  # type: ignore[method-assign]
    views._insert_new = spy_insert  # type: ignore[method-assign]
    try:
        follower.step()
        assert replaced == [{"creatures": {str(cid)}, "encounters": {str(cid)}}]
        assert "view_creatures" in inserted
        check_against_application(app, views, cid)
        del inserted[:]
        StellarWindsCommands(app).deal_damage(cid, "vex", amount=1)
        follower.step()
        assert replaced[1:] == [{}] and "view_creatures" not in inserted
        check_against_application(app, views, cid)
    finally:
        follower.close()


def test_a_step_of_one_campaign_reads_on_past_the_lookahead(
    app: ChronicleApplication, store: Settings
) -> None:
    """With ``overlap`` and ``read_on`` (a rebuild's follower), a step whose notifications are
    all of one campaign reads on past the look-ahead to the log's end (its rows stream to the
    writer: the look-ahead bounds no memory there, and each step after the first would refold
    from the earliest fact the next step's corrections reach); an explicit ``limit`` is kept,
    and a step that meets another campaign's notification past the look-ahead ends before it
    (it stays one campaign's). A live worker's follower (no ``read_on``) keeps the look-ahead."""
    first = _six_hits(app)
    live = follower_for(store, app, batch_size=3, lookahead=4, overlap=True, read_page=2)
    try:
        assert live.step() == 4
        live.views.reset()
    finally:
        live.close()
    follower = follower_for(store, app, batch_size=3, lookahead=4, overlap=True, read_page=2, read_on=True)
    try:
        mine = app.recorder.max_notification_id()
        assert follower.step(4) == 4  # a limit given: kept
        assert follower.step() == mine - 4  # on to the log's end, in one step
        assert follower.views.tracking_position() == mine
        check_against_application(app, follower.views, first)
        follower.views.reset()
    finally:
        follower.close()
    second = _six_hits(app)
    head = app.recorder.max_notification_id()
    follower = follower_for(store, app, batch_size=3, lookahead=4, overlap=True, read_page=2, read_on=True)
    try:
        # pages of 4: the third (notifications 9-12) holds the second campaign's first ones
        assert 8 < mine < 12 < head
        assert follower.step() == mine  # not into that page's other campaign
        assert follower.catch_up() == head - mine
        check_against_application(app, follower.views, first)
        check_against_application(app, follower.views, second)
    finally:
        follower.close()


def test_a_failed_write_of_a_streamed_batch_raises_and_commits_nothing_after_it(
    app: ChronicleApplication, store: Settings
) -> None:
    """A write of the writer thread that fails surfaces as the step's error; the parts committed
    before it stay (each whole, with its tracking), nothing of it or after it is written; the
    next step resumes from the tracking and ends with the rows of a rebuild."""
    cid = _six_hits(app)
    follower = follower_for(store, app, batch_size=3, lookahead=100, overlap=True)
    write = follower.views.write
    calls: list[int] = []

    def failing(batch: Batch) -> bool:
        calls.append(1)
        if len(calls) == 2:
            raise RuntimeError("the disk is on fire")
        return write(batch)

    follower.views.write = failing  # type: ignore[method-assign]
    try:
        head = app.recorder.max_notification_id()
        with pytest.raises(RuntimeError, match="the disk is on fire"):
            follower.step()
        assert len(calls) == 2  # nothing was written after the failure
        views = follower.views
        assert views.tracking() == {"creatures": 0, "encounters": 0, "facts": 3, "log": 3}
        dump = views.dump()
        assert sorted(r["position"] for r in dump["view_facts"]) == [2, 3]
        assert sorted(r["position"] for r in dump["view_log"]) == [2, 3]
        assert dump["view_creatures"] == [] and dump["view_encounters"] == []
        follower.catch_up()  # resumes from the tracking
        assert views.tracking() == dict.fromkeys(PROJECTIONS, head)
        check_against_application(app, views, cid)
        resumed = views.dump(written_at=False)
        wiring.rebuild(store, application=app, overlap=False)
        assert views.dump(written_at=False) == resumed
    finally:
        follower.close()


def test_a_refused_write_of_a_streamed_batch_resyncs(app: ChronicleApplication, store: Settings) -> None:
    """A part refused by the tracking check (another writer moved it) stops the writer thread
    (nothing after it is written) and the follower resyncs from the stored tracking."""
    cid = _six_hits(app)
    follower = follower_for(store, app, batch_size=3, lookahead=100, overlap=True)
    views = follower.views
    write = views.write
    calls: list[int] = []

    def refused(batch: Batch) -> bool:
        calls.append(1)
        return False if len(calls) == 2 else write(batch)

    views.write = refused  # type: ignore[method-assign]
    try:
        head = app.recorder.max_notification_id()
        assert follower.step() == head
        assert len(calls) == 2 and follower._positions is None  # resyncs at the next step
        assert views.tracking() == {"creatures": 0, "encounters": 0, "facts": 3, "log": 3}
        follower.catch_up()
        assert views.tracking() == dict.fromkeys(PROJECTIONS, head)
        check_against_application(app, views, cid)
    finally:
        follower.close()


def test_a_fact_that_fails_mid_stream_quarantines_its_campaign_with_the_rows_before(
    app: ChronicleApplication, store: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fold that fails after parts were committed quarantines the campaign at the fact (with
    the last part, the tracking moved over everything); the committed parts keep its history and
    log rows up to theirs, no row of the fact or after it is written."""
    cid = _six_hits(app)
    read = projector_module._read

    def poisoned(e: Any, *args: Any) -> Any:
        if e.seq == 7:
            raise ValueError("unreadable")
        return read(e, *args)

    monkeypatch.setattr(projector_module, "_read", poisoned)
    follower = follower_for(store, app, batch_size=3, lookahead=100, overlap=True)
    try:
        head = app.recorder.max_notification_id()
        assert follower.step() == head
        views = follower.views
        assert views.tracking() == dict.fromkeys(PROJECTIONS, head)
        (row,) = views.quarantined()
        assert row["campaign_id"] == str(cid) and row["position"] == 7 and "unreadable" in row["error"]
        dump = views.dump()
        assert sorted(r["position"] for r in dump["view_facts"]) == [2, 3, 4, 5, 6]
        assert dump["view_creatures"] == []
    finally:
        follower.close()
