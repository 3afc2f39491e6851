"""The core encounter engine is ruleset-neutral: a tiny game system defined here plugs into it.

"Tiny" has heroes and foes, a d20 initiative (or, in the banded variant, a success band ruled
by the table and re-rolled every round, like RULES.md HS-2 / B-HS-18), two turn-bound actions
(main, move), a reaction once per round and an opportunity once per other creature's turn,
creatures that are shaken (they owe a d6 steadying roll before their turn can end, like SW-10),
bleeding (a d100 check owed between rounds, like the d20 stabilisation of ruling 26), stunned
(their turn is skipped), and marks lasting "until the end of X's next turn" (SW-44).
Nothing here is Stellar Winds: the engine's behaviour comes from the hooks alone.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from domain import dice
from domain.core import encounters as core
from domain.core.catalogue import CORE, Catalogue, opt, req
from domain.core.state import CreatureBase, TableState, new_creature
from domain.errors import DomainError, InvalidInput, NotFound, RuleViolation
from domain.ledger import Entry, Ledger

ENC = "e1"


# ------------------------------------------------------------------ the tiny ruleset
class Being(CreatureBase):
    __slots__ = ("name", "hero", "life", "shaken", "bleeding", "stunned")


class TinyState(TableState):
    __slots__ = ("marks",)  # [{"id", "target", "anchor", "applied_turn"}]

    def __init__(self, flags: dict[str, Any]) -> None:
        super().__init__(flags)
        self.marks: list[dict[str, Any]] = []


TINY_ACTIONS = core.ActionTable(
    kinds=("main", "move", "full", "free", "react", "opportunity"),
    turn_bound=("main", "move", "full"),
    budgets=({"main": 1, "move": 1}, {"move": 2}, {"full": 1}),  # like DH-4: or a full-round action
    substitutions={"move": ("main",)},
    once_per_round={"react": "IMMEDIATE_USED"},
    once_per_turn={"opportunity": "OPPORTUNITY_USED"},
    # like B-DH-11: one main or move action in the surprise round, no full-round action
    surprise_round=core.ActionLimit(
        1, code="SURPRISE_ROUND_ONE_ACTION", text="one main or move action", kinds=("main", "move")
    ),
    ready_cost="main",
    readied_kind="react",
)


class TinyRules(core.Rules):
    actions = TINY_ACTIONS
    owed_rolls = {"Steady": ("steadying roll", "1d6"), "BleedCheck": ("bleeding check", "1d100")}

    def initiative_entry(
        self, state: Any, enc: core.Encounter, creatures: list[str], payload: dict[str, Any], ctx: Any
    ) -> dict[str, Any]:
        total = dice.roll_total(payload["roll"])
        return {"rank": [total], "score": total}

    def skip_turn(self, state: Any, enc: core.Encounter, cid: str) -> str | None:
        return "stunned" if state.creatures[cid].stunned else None

    def cannot_delay(self, state: Any, enc: core.Encounter, cid: str) -> str | None:
        return "shaken" if state.creatures[cid].shaken else None

    def rolls_owed_at_turn_end(self, state: Any, enc: core.Encounter, cid: str) -> list[core.Owed]:
        c = state.creatures[cid]
        return [("Steady", {"creature": cid})] if c.shaken and c.life != "dead" else []

    def rolls_owed_between_rounds(self, state: Any, enc: core.Encounter) -> list[core.Owed]:
        checked = enc.round_log.get("checked", [])
        return [
            ("BleedCheck", {"creature": cid})
            for cid in enc.participants
            if state.creatures[cid].bleeding and state.creatures[cid].life != "dead" and cid not in checked
        ]

    def round_started(self, state: Any, enc: core.Encounter, ctx: Any) -> dict[str, Any]:
        woke = [cid for cid in enc.participants if state.creatures[cid].stunned]
        for cid in woke:
            state.own(cid).stunned = False
        return {"woke": woke}

    def turn_ended(self, state: Any, enc: core.Encounter, cid: str, ctx: Any) -> dict[str, Any]:
        gone = [
            m["id"]
            for m in state.marks
            if m["anchor"] == cid and core.next_turn_passed(enc, cid, m["applied_turn"])
        ]
        if gone:
            state.marks = [m for m in state.marks if m["id"] not in gone]
        return {"marks_ended": gone} if gone else {}

    def encounter_ended(self, state: Any, enc: core.Encounter, ctx: Any) -> dict[str, Any]:
        state.marks = []
        return {}


class BandedRules(TinyRules):
    """Initiative re-rolled every round; the table rules a band; heroes first, then the die."""

    reroll_each_round = True

    def initiative_entry(
        self, state: Any, enc: core.Encounter, creatures: list[str], payload: dict[str, Any], ctx: Any
    ) -> dict[str, Any]:
        die = dice.roll_total(payload["roll"])
        hero = 1 if state.creatures[creatures[0]].hero else 0
        return {"rank": [payload["band"], hero, die], "band": payload["band"]}


def knock_back(state: Any, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """Like B-HS-18: one band down for the current round if it has not acted yet."""
    enc = core.encounter_of(state, ENC, running=True)
    cid = p["creature"]
    if enc.order.index(cid) <= enc.turn_index:
        raise RuleViolation("it has acted this round", field="creature", code="ALREADY_ACTED")
    entry = enc.initiative[cid]
    enc.initiative[cid] = {**entry, "rank": [entry["rank"][0] - 1, *entry["rank"][1:]]}
    core.resort_remaining(enc)
    return {"order": list(enc.order)}


def _being(state: Any, cid: str) -> Any:
    if cid not in state.creatures:
        raise NotFound(f"no creature {cid!r}", field="creature")
    return state.own(cid)


def join(state: Any, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    c = new_creature(Being, p["creature_id"])
    c.name, c.hero, c.life = p["name"], p["hero"], "ok"
    c.shaken = c.bleeding = c.stunned = False
    state.creatures[c.id] = c
    return {"creature": c.id}


def setter(attr: str, value: Any) -> core.Handler:
    def handler(state: Any, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
        setattr(_being(state, p["creature"]), attr, value)
        return {"creature": p["creature"]}

    return handler


def steady(state: Any, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    enc = state.encounter
    c = state.creatures.get(p["creature"])
    if c is None or not c.shaken:
        raise RuleViolation("not shaken", field="creature", code="NOT_ALLOWED")
    if enc is None or enc.current != c.id:
        raise RuleViolation(
            "a steadying roll is made on its own turn", field="creature", code="NOT_YOUR_TURN"
        )
    _being(state, c.id).shaken = dice.roll_total(p["roll"]) < 4
    return {"creature": c.id, "steady": not state.creatures[c.id].shaken}


def bleed_check(state: Any, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    enc = state.encounter
    c = state.creatures.get(p["creature"])
    owed = core.pending_rolls(state, TinyRules()) if enc is not None else []
    if c is None or ("BleedCheck", {"creature": p["creature"]}) not in owed:
        raise RuleViolation("no bleeding check is owed now", field="creature", code="NOT_YET")
    enc.round_log["checked"] = [*enc.round_log.get("checked", []), c.id]
    if dice.roll_total(p["roll"]) <= 50:
        _being(state, c.id).bleeding = False
    return {"creature": c.id, "still_bleeding": state.creatures[c.id].bleeding}


def mark(state: Any, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    enc = state.encounter
    for cid in (p["target"], p["anchor"]):
        _being(state, cid)
    applied = enc.turn_no if enc is not None and enc.state == core.RUNNING else None
    state.marks = [*state.marks, {"id": f"m{ctx.seq}", **p, "applied_turn": applied}]
    return {"mark": f"m{ctx.seq}"}


TINY_FACTS = {
    "Join": {"creature_id": req("str"), "name": req("str"), "hero": opt("bool", False)},
    "Kill": {"creature": req("str")},
    "Shake": {"creature": req("str")},
    "Bleed": {"creature": req("str")},
    "Stun": {"creature": req("str")},
    "Steady": {"creature": req("str"), "roll": req("roll")},
    "BleedCheck": {"creature": req("str"), "roll": req("roll")},
    "Mark": {"target": req("str"), "anchor": req("str")},
    "KnockBack": {"creature": req("str")},
}


class Tiny:
    """A ruleset object as the ledger sees one (catalogue, flags, state, apply)."""

    id, title, version = "tiny", "Tiny", "1"
    flag_defaults: dict[str, Any] = {}
    error_codes: dict[str, str] = {}

    def __init__(self, rules: core.Rules, catalogue: Catalogue) -> None:
        self.rules, self.catalogue = rules, catalogue
        self.handlers = {
            **core.handlers(rules),
            "Join": join,
            "Kill": setter("life", "dead"),
            "Shake": setter("shaken", True),
            "Bleed": setter("bleeding", True),
            "Stun": setter("stunned", True),
            "Steady": steady,
            "BleedCheck": bleed_check,
            "Mark": mark,
            "KnockBack": knock_back,
        }

    def validate_flag(self, flag: str, value: Any) -> Any:
        raise InvalidInput("no flags", field="flag")

    def initial_state(self, flags: dict[str, Any]) -> TinyState:
        return TinyState(flags)

    def apply(self, state: Any, fact_type: str, payload: dict[str, Any], ctx: Any) -> dict[str, Any]:
        out: dict[str, Any] = self.handlers[fact_type](state, payload, ctx)
        return out


TINY = Tiny(TinyRules(), CORE.extend(TINY_FACTS))
BANDED_INITIATIVE = {**CORE.schemas["InitiativeRolled"], "band": req("int", minimum=-2, maximum=2)}
BANDED = Tiny(BandedRules(), CORE.extend({**TINY_FACTS, "InitiativeRolled": BANDED_INITIATIVE}))


class Table:
    """The ledger directly: record = check against the present (refused: nothing changes), then append."""

    def __init__(self, ruleset: Tiny = TINY, *heroes: str, foes: tuple[str, ...] = ()) -> None:
        self.ruleset = ruleset
        self.ledger = Ledger(ruleset)
        for cid in heroes:
            self.rec("Join", creature_id=cid, name=cid.title(), hero=True)
        for cid in foes:
            self.rec("Join", creature_id=cid, name=cid.title())

    def rec(self, fact_type: str, **payload: Any) -> dict[str, Any]:
        p = self.ruleset.catalogue.validate(fact_type, payload)
        outcome: dict[str, Any] = self.ledger.prepare(fact_type, p, {})
        self.ledger.append(
            Entry(self.ledger.next_seq, fact_type, self.ruleset.catalogue.version(fact_type), p, {})
        )
        return outcome

    def refused(self, code: str, fact_type: str, **payload: Any) -> DomainError:
        before = self.ledger.last_seq
        with pytest.raises(DomainError) as info:
            self.rec(fact_type, **payload)
        assert info.value.code == code, info.value.message
        assert self.ledger.last_seq == before
        return info.value

    def start(
        self, inits: dict[str, int], *, surprised: list[str] | None = None, **extra: Any
    ) -> dict[str, Any]:
        self.rec("EncounterStarted", encounter_id=ENC, participants=list(inits))
        if surprised:
            self.rec("SurpriseDetermined", encounter_id=ENC, surprised=surprised)
        out: dict[str, Any] = {}
        for cid, face in inits.items():
            out = self.roll(cid, face, **extra)
        return out

    def roll(self, cid: str, face: int, **extra: Any) -> dict[str, Any]:
        return self.rec("InitiativeRolled", encounter_id=ENC, creature=cid, roll=d20(face), **extra)

    def begin(self, **payload: Any) -> dict[str, Any]:
        return self.rec("TurnStarted", encounter_id=ENC, **payload)

    def end(self) -> dict[str, Any]:
        return self.rec("TurnEnded", encounter_id=ENC)

    def act(self, cid: str, action: str) -> dict[str, Any]:
        return self.rec("ActionTaken", encounter_id=ENC, creature=cid, action=action)

    @property
    def enc(self) -> core.Encounter:
        found: core.Encounter = self.ledger.state.encounters[ENC]
        return found

    def view(self) -> dict[str, Any]:
        return core.view(self.ledger.state, self.enc, self.ruleset.rules)

    def turns(self, n: int) -> list[str]:
        """End and start turns n times; whose turn each start gave."""
        out = []
        for _ in range(n):
            self.end()
            out.append(self.begin()["turn_of"])
        return out


def d20(face: int) -> dict[str, Any]:
    return dice.roll("1d20", faces=[face])


# ------------------------------------------------------------------ initiative and order
def test_individual_initiative_orders_by_rank_and_equal_ranks_need_a_recorded_tie_break() -> None:
    t = Table(TINY, "ann", "bo", foes=("orc",))
    out = t.start({"ann": 12, "bo": 12, "orc": 15})
    assert out["unresolved_ties"] == [["ann", "bo"]] and t.enc.state == core.SETUP
    t.refused("ENCOUNTER_NOT_RUNNING", "TurnStarted", encounter_id=ENC)
    t.refused(
        "TIE_ORDER_WRONG", "InitiativeTieBroken", encounter_id=ENC, creatures=["bo", "ann"], method="bonus"
    )
    t.refused("NOT_TIED", "InitiativeTieBroken", encounter_id=ENC, creatures=["orc", "ann"], method="coin")
    t.refused(
        "TIE_ORDER_WRONG",
        "InitiativeTieBroken",
        encounter_id=ENC,
        creatures=["bo", "ann"],
        method="die",
        rolls=[d20(3), d20(9)],
    )
    out = t.rec(
        "InitiativeTieBroken", encounter_id=ENC, creatures=["bo", "ann"], method="die", rolls=[d20(9), d20(3)]
    )
    # ruling 18: the order is settled, but no turn starts by itself
    assert out["order"] == ["orc", "bo", "ann"] and out["turn_of"] is None and out["next_turn_of"] == "orc"
    assert (t.enc.state, t.enc.phase, t.enc.round) == (core.RUNNING, core.BETWEEN, 1)
    t.refused("NO_TURN", "TurnEnded", encounter_id=ENC)
    t.refused("NOT_YOUR_TURN", "TurnStarted", encounter_id=ENC, creature="bo")
    assert t.begin(creature="orc")["turn_of"] == "orc"
    t.refused("TURN_IN_PROGRESS", "TurnStarted", encounter_id=ENC)
    t.refused("ENCOUNTER_RUNNING", "InitiativeRolled", encounter_id=ENC, creature="ann", roll=d20(20))


def test_ruling_18_the_moment_between_turns_and_the_round_advancing_at_the_first_start() -> None:
    t = Table(TINY, "ann", "bo")
    t.start({"ann": 15, "bo": 5})
    t.begin()
    ended = t.end()
    assert (ended["ended"], ended["turn_of"], ended["next_turn_of"]) == ("ann", None, "bo")
    view = t.view()
    assert (view["phase"], view["turn_of"], view["next_turn_of"], view["next_turn_starts_round"]) == (
        "between_turns",
        None,
        "bo",
        None,
    )
    t.begin()
    t.end()  # the last turn of round 1 ended: still round 1, the next start opens round 2
    view = t.view()
    assert (view["round"], view["next_turn_of"], view["next_turn_starts_round"]) == (1, "ann", 2)
    out = t.begin()
    assert (out["round_now"], out["turn_of"], out["rounds"][0]["round"]) == (2, "ann", 2)


def test_b_or_14_a_group_rolls_once_and_its_members_act_consecutively_in_the_recorded_order() -> None:
    t = Table(TINY, "ann", foes=("g1", "g2", "g3"))
    t.rec("EncounterStarted", encounter_id=ENC, participants=["g1", "ann", "g2", "g3"])
    out = t.rec(
        "InitiativeRolled", encounter_id=ENC, group="goblins", creatures=["g2", "g1", "g3"], roll=d20(14)
    )
    assert out["waiting_for"] == ["ann"] and out["score"] == 14
    t.refused("ALREADY_ROLLED", "InitiativeRolled", encounter_id=ENC, creature="g1", roll=d20(3))
    t.refused(
        "ALREADY_ROLLED", "InitiativeRolled", encounter_id=ENC, group="goblins", creatures=["g3"], roll=d20(3)
    )
    out = t.roll("ann", 14)  # the same score as the group: a tie between ann and the goblins
    assert out["unresolved_ties"] == [["ann", "goblins"]]
    t.refused("INVALID_INPUT", "InitiativeOrderChosen", encounter_id=ENC, creatures=["g1", "g2"])  # not all
    t.rec("InitiativeOrderChosen", encounter_id=ENC, creatures=["g1", "g2", "g3"], decided_by="gm")
    out = t.rec("InitiativeOrderChosen", encounter_id=ENC, creatures=["goblins", "ann"], decided_by="gm")
    assert out["order"] == ["g1", "g2", "g3", "ann"]
    t.begin()
    assert t.turns(3) == ["g2", "g3", "ann"]


def test_hs_2_b_hs_18_initiative_re_rolled_each_round_in_bands_heroes_first_then_the_die() -> None:
    t = Table(BANDED, "ann", "bo", foes=("orc", "imp"))
    # band 1 (a success): ann (die 8), orc (die 19); band 2: imp; band 0: bo
    t.rec("EncounterStarted", encounter_id=ENC, participants=["ann", "bo", "orc", "imp"])
    for cid, band, face in (("ann", 1, 8), ("orc", 1, 19), ("imp", 2, 2), ("bo", 0, 20)):
        out = t.rec("InitiativeRolled", encounter_id=ENC, creature=cid, band=band, roll=d20(face))
    assert out["order"] == ["imp", "ann", "orc", "bo"]  # a hero before a foe in the same band
    t.begin()
    out = t.rec(
        "KnockBack", creature="ann"
    )  # band 1 -> 0 for this round: after orc, before bo (hero, die 8 < 20)
    assert out["order"] == ["imp", "orc", "bo", "ann"]
    t.refused("ALREADY_ACTED", "KnockBack", creature="imp")
    # rolls recorded while the encounter runs are for the next round
    for cid, band, face in (("ann", 0, 5), ("bo", 0, 5), ("orc", 2, 1)):
        out = t.rec("InitiativeRolled", encounter_id=ENC, creature=cid, band=band, roll=d20(face))
    assert out["for_round"] == 2 and out["waiting_for"] == ["imp"]
    assert t.enc.order == ["imp", "orc", "bo", "ann"]  # this round's order stands
    assert t.turns(3) == ["orc", "bo", "ann"]
    t.end()
    err = t.refused("INITIATIVE_PENDING", "TurnStarted", encounter_id=ENC)
    assert "imp" in err.message
    out = t.rec("InitiativeRolled", encounter_id=ENC, creature="imp", band=-1, roll=d20(20))
    assert out["unresolved_ties"] == [["ann", "bo"]]  # same band, both heroes, same die: a choice
    t.refused("INITIATIVE_PENDING", "TurnStarted", encounter_id=ENC)
    t.rec("InitiativeOrderChosen", encounter_id=ENC, creatures=["bo", "ann"], decided_by="players")
    out = t.begin()
    assert (out["round_now"], out["turn_of"]) == (2, "orc") and t.enc.order == ["orc", "bo", "ann", "imp"]


# ------------------------------------------------------------------ who takes a turn
def test_ruling_20_dead_and_surprised_creatures_and_the_rulesets_own_skips_take_no_turn() -> None:
    t = Table(TINY, "ann", "bo", foes=("orc", "imp"))
    out = t.start({"orc": 20, "ann": 15, "bo": 10, "imp": 5}, surprised=["ann"])
    assert out["round"] == 0 and out["next_turn_of"] == "orc"
    t.begin()  # round 0 begins with orc's turn
    t.rec("Kill", creature="bo")
    t.rec("Stun", creature="imp")
    t.end()
    out = t.begin()  # round 0: ann is surprised, bo is dead, imp is stunned: round 1 begins
    assert [x.get("skipped") for x in out["turns"][:3]] == [
        "surprised: no turn in the surprise round",
        "dead (adopted ruling 8)",
        "stunned",
    ]
    assert (out["round_now"], out["turn_of"], out["rounds"][0]["woke"]) == (1, "orc", ["imp"])
    assert t.turns(2) == ["ann", "imp"]  # ann acts from round 1; the stun lasted until round 1 began
    t.rec("Kill", creature="orc")
    t.rec("Kill", creature="ann")
    t.rec("Kill", creature="imp")
    t.end()
    t.refused("NO_TURN", "TurnStarted", encounter_id=ENC)


# ------------------------------------------------------------------ owed rolls
def test_sw_10_like_a_turn_cannot_end_while_a_roll_it_owes_is_missing() -> None:
    t = Table(TINY, "ann", "bo")
    t.start({"ann": 15, "bo": 5})
    t.begin()
    t.rec("Shake", creature="ann")
    err = t.refused("ROLLS_PENDING", "TurnEnded", encounter_id=ENC)
    assert err.details == {
        "owed": [
            {
                "type": "Steady",
                "kind": "steadying roll",
                "creature": "ann",
                "effect_id": None,
                "dice": "1d6",
                "payload": {"creature": "ann"},
            }
        ]
    }
    assert core.pending_rolls(t.ledger.state, t.ruleset.rules) == [("Steady", {"creature": "ann"})]
    t.rec("Steady", creature="ann", roll=dice.roll("1d6", faces=[5]))
    assert t.end()["next_turn_of"] == "bo"


def test_ruling_26_like_rolls_owed_between_rounds_come_after_the_last_turn_and_before_the_next_round() -> (
    None
):
    t = Table(TINY, "ann", "bo")
    t.start({"ann": 15, "bo": 5})
    t.begin()
    t.rec("Bleed", creature="ann")
    t.end()
    assert core.pending_rolls(t.ledger.state, t.ruleset.rules) == []  # not between two turns of a round
    t.refused("NOT_YET", "BleedCheck", creature="ann", roll=dice.roll("1d100", faces=[20]))
    t.begin()
    t.end()  # the last turn of round 1
    view = t.view()
    assert [(x["type"], x["creature"], x["dice"]) for x in view["pending_rolls"]] == [
        ("BleedCheck", "ann", "1d100")
    ]
    err = t.refused("ROLLS_PENDING", "TurnStarted", encounter_id=ENC)
    assert err.details is not None and err.details["owed"][0]["kind"] == "bleeding check"
    t.rec("BleedCheck", creature="ann", roll=dice.roll("1d100", faces=[73]))  # still bleeding
    assert t.begin()["round_now"] == 2
    assert t.enc.round_log == {}  # cleared when the round started
    t.end()
    t.begin()
    t.end()
    t.refused("ROLLS_PENDING", "TurnStarted", encounter_id=ENC)  # owed again after round 2


# ------------------------------------------------------------------ delay and ready
def test_sw_11_like_delay_then_reenter_after_the_turn_that_just_ended_or_lose_the_turn() -> None:
    t = Table(TINY, "ann", "bo", "cy")
    t.start({"ann": 20, "bo": 15, "cy": 10})
    t.begin()
    t.rec("Shake", creature="ann")
    t.refused("CANNOT_DELAY", "TurnDelayed", encounter_id=ENC, creature="ann")
    t.rec("Steady", creature="ann", roll=dice.roll("1d6", faces=[6]))
    out = t.rec("TurnDelayed", encounter_id=ENC, creature="ann")
    assert (out["turn_of"], out["next_turn_of"], t.enc.delayed) == (None, "bo", ["ann"])
    t.begin()
    t.refused("TURN_IN_PROGRESS", "DelayedTurnTaken", encounter_id=ENC, creature="ann")
    t.end()
    out = t.rec("DelayedTurnTaken", encounter_id=ENC, creature="ann")
    assert (out["acts_after"], out["turn_of"], out["order"]) == ("bo", "ann", ["bo", "ann", "cy"])
    t.act("ann", "main")
    t.refused("ALREADY_ACTED", "TurnDelayed", encounter_id=ENC, creature="ann")
    assert t.turns(2) == ["cy", "bo"]
    # delayed and never re-entered: when its place comes round again, the delayed turn is lost
    t.end()
    t.begin()  # ann
    t.rec("TurnDelayed", encounter_id=ENC, creature="ann")
    t.begin()  # cy
    t.end()
    out = t.begin()
    assert out["turns"][0] == {"creature": "bo", "round": 3} and out["turn_of"] == "bo"
    t.end()
    out = t.begin()  # ann's old place comes round
    assert out["turns"][0]["lost_delayed_turn"] is True and out["turn_of"] == "ann" and t.enc.delayed == []


def test_sw_12_like_a_readied_action_moves_the_initiative_before_its_trigger() -> None:
    t = Table(TINY, "ann", "bo", "cy")
    t.start({"ann": 20, "bo": 15, "cy": 10})
    t.begin()
    t.rec("ActionReadied", encounter_id=ENC, creature="ann", action="main", trigger="the door opens")
    t.refused("NO_ACTION_LEFT", "ActionTaken", encounter_id=ENC, creature="ann", action="main")
    t.refused("OWN_TURN", "ReadiedActionTriggered", encounter_id=ENC, creature="ann", trigger_creature="cy")
    t.turns(2)  # bo, cy
    out = t.rec("ReadiedActionTriggered", encounter_id=ENC, creature="ann", trigger_creature="cy")
    assert out["order"] == ["bo", "ann", "cy"] and t.enc.current == "cy"
    t.refused("IMMEDIATE_USED", "ActionTaken", encounter_id=ENC, creature="ann", action="react")
    assert t.turns(3) == ["bo", "ann", "cy"]


# ------------------------------------------------------------------ the action economy
def test_the_action_table_budgets_and_triggered_windows() -> None:
    t = Table(TINY, "ann", "bo", "cy")
    t.start({"ann": 20, "bo": 15, "cy": 10})
    t.refused("NO_TURN", "ActionTaken", encounter_id=ENC, creature="ann", action="main")  # between turns
    t.begin()
    t.act("ann", "move")
    t.act("ann", "move")  # budget {move: 2}
    t.refused("NO_ACTION_LEFT", "ActionTaken", encounter_id=ENC, creature="ann", action="main")
    t.refused("NOT_YOUR_TURN", "ActionTaken", encounter_id=ENC, creature="bo", action="move")
    t.refused("INVALID_INPUT", "ActionTaken", encounter_id=ENC, creature="ann", action="minor")
    t.act("bo", "react")
    t.refused("IMMEDIATE_USED", "ActionTaken", encounter_id=ENC, creature="bo", action="react")
    t.act("bo", "opportunity")
    t.refused("OPPORTUNITY_USED", "ActionTaken", encounter_id=ENC, creature="bo", action="opportunity")
    t.refused("OWN_TURN", "ActionTaken", encounter_id=ENC, creature="ann", action="opportunity")
    t.end()
    t.begin()  # bo's turn: its reaction window reopens
    t.act("bo", "react")
    t.act("cy", "opportunity")
    t.act("ann", "react")  # ann's window runs from its own turn start: still open
    t.refused("IMMEDIATE_USED", "ActionTaken", encounter_id=ENC, creature="ann", action="react")


def test_the_surprise_round_limit_comes_from_the_action_table() -> None:
    t = Table(TINY, "ann", "bo")
    t.start({"ann": 20, "bo": 10}, surprised=["bo"])
    t.begin()
    t.refused("SURPRISE_ROUND_ONE_ACTION", "ActionTaken", encounter_id=ENC, creature="ann", action="full")
    t.act("ann", "move")
    t.refused("SURPRISE_ROUND_ONE_ACTION", "ActionTaken", encounter_id=ENC, creature="ann", action="main")


def test_a_creature_joins_a_running_encounter_at_its_place_by_rank() -> None:
    t = Table(TINY, "ann", "bo", "cy")
    t.rec("EncounterStarted", encounter_id=ENC, participants=["ann", "bo"])
    for cid, face in (("ann", 20), ("bo", 5)):
        t.roll(cid, face)
    t.begin()
    t.refused("INVALID_INPUT", "CreatureJoinedEncounter", encounter_id=ENC, creature="cy")
    out = t.rec("CreatureJoinedEncounter", encounter_id=ENC, creature="cy", roll=d20(12))
    assert out["order"] == ["ann", "cy", "bo"] and t.enc.current == "ann"
    t.refused("ALREADY_EXISTS", "CreatureJoinedEncounter", encounter_id=ENC, creature="cy", roll=d20(1))
    assert t.turns(3) == ["cy", "bo", "ann"]


# ------------------------------------------------------------------ time
def test_issue_14_the_clock_is_set_to_a_day_and_hour_and_never_goes_back() -> None:
    t = Table(TINY)
    assert t.rec("TimeAdvanced", minutes=90) == {"clock": 90, "day": 1, "hour": 1, "minute": 30}
    out = t.rec("TimeSet", day=3, hour=8)
    assert out["clock"] == 2 * 1440 + 8 * 60 and (out["day"], out["hour"]) == (3, 8)
    assert out["advanced_minutes"] == 2 * 1440 + 8 * 60 - 90
    t.refused("CLOCK_BACKWARDS", "TimeSet", day=3, hour=7, minute=59)
    t.rec("TimeSet", day=3, hour=8)  # the same time: nothing moves


# ------------------------------------------------------------------ properties
OPS = st.lists(
    st.tuples(
        st.sampled_from(
            [
                "start",
                "start",
                "end",
                "end",
                "delay",
                "reenter",
                "ready",
                "trigger",
                "mark",
                "kill",
                "raise_no",
            ]
        ),
        st.integers(0, 5),
        st.integers(0, 5),
    ),
    min_size=10,
    max_size=50,
)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    faces=st.lists(st.integers(1, 6), min_size=5, max_size=5),
    grouped=st.booleans(),
    ops=OPS,
)
def test_property_order_permutation_marks_end_on_time_and_folding_all_at_once_equals_one_by_one(
    faces: list[int], grouped: bool, ops: list[tuple[str, int, int]]
) -> None:
    """Whatever the table does: the order stays a permutation of the participants, at most one turn
    is in progress, "until the end of X's next turn" ends exactly at the end of the first turn
    of X that started after it (an oracle), and a fresh fold of all the facts equals the
    fact-by-fact one (C0.5)."""
    who = ["a", "b", "c", "d", "e"]
    t = Table(TINY, *who)
    t.rec("EncounterStarted", encounter_id=ENC, participants=who)
    if grouped:  # c, d, e roll as one group
        t.rec(
            "InitiativeRolled", encounter_id=ENC, group="g", creatures=["c", "d", "e"], roll=d20(faces[2] * 3)
        )
        rolls = {"a": faces[0] * 3 + 1, "b": faces[1] * 3 + 2}
    else:
        rolls = {cid: f * 3 + i % 3 for i, (cid, f) in enumerate(zip(who, faces, strict=True))}
    for cid, face in rolls.items():
        t.roll(cid, face)
    for tie in core.unresolved_ties(t.enc.initiative, who):
        t.rec("InitiativeOrderChosen", encounter_id=ENC, creatures=list(tie))
    assert t.enc.state == core.RUNNING
    live: dict[str, dict[str, Any]] = {}  # mark id -> {anchor, armed}
    delayed: set[str] = set()
    for op, i, j in ops:
        enc = t.enc
        current = enc.current
        gone: set[str] = set()
        try:
            if op == "start":
                t.begin()
                started = t.enc.current
                if started in delayed:  # a lost delayed turn ends first
                    delayed.discard(started)
                    gone |= {m for m, x in live.items() if x["anchor"] == started and x["armed"]}
                for x in live.values():
                    if x["anchor"] == started:
                        x["armed"] = True
            elif op == "end":
                t.end()
                gone |= {m for m, x in live.items() if x["anchor"] == current and x["armed"]}
            elif op == "delay":
                t.rec("TurnDelayed", encounter_id=ENC, creature=current or "a")
                delayed.add(current or "a")
            elif op == "reenter":
                target = sorted(delayed or who)[i % len(delayed or who)]
                t.rec("DelayedTurnTaken", encounter_id=ENC, creature=target)
                delayed.discard(target)
            elif op == "ready":
                t.rec("ActionReadied", encounter_id=ENC, creature=current or "a", action="main", trigger="x")
            elif op == "trigger":
                pool = sorted(enc.readied) or who
                t.rec(
                    "ReadiedActionTriggered",
                    encounter_id=ENC,
                    creature=pool[i % len(pool)],
                    trigger_creature=who[j % 5],
                )
            elif op == "mark":
                out = t.rec("Mark", target=who[j % 5], anchor=who[i % 5])
                live[out["mark"]] = {"anchor": who[i % 5], "armed": False}
            elif op == "kill" and i == 0 and j < 2:
                t.rec("Kill", creature=who[j])
                delayed.discard(who[j])
        except DomainError:
            continue
        for m in gone:
            live.pop(m, None)
        enc = t.enc
        assert sorted(enc.order) == sorted(who)
        assert (enc.phase == core.IN_TURN) == (enc.current is not None)
        assert {m["id"] for m in t.ledger.state.marks} == set(live)
    fresh = Ledger(TINY)
    for e in t.ledger.entries:
        fresh.append(Entry(e.seq, e.type, e.version, e.payload, e.meta))
    assert core.view(fresh.state, fresh.state.encounters[ENC], TINY.rules) == t.view()
    assert fresh.state.marks == t.ledger.state.marks and fresh.orphans == t.ledger.orphans == {}
