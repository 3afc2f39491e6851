"""A seeded generator of realistic Stellar Winds campaigns, of any size.

It plays the game through the real rules: every candidate fact is checked by
the ledger (``Ledger.prepare``) exactly as a command would be, and only the
accepted ones are kept, so a generated campaign is always legal. A campaign
is a party of four PCs meeting fresh monsters encounter after encounter:
initiative, attacks (melee per-target damage, close blasts with one roll),
conditions with save-ends durations, ongoing damage, saving throws, death
saves, second winds, stabilisation, rests, XP, milestones, raised PCs — plus a
few percent of corrections (revocations, amended dice, rulings that are cited
by attacks and later overturned).

Corrections may orphan later facts, as at a real table: revoking an attack whose effect
was saved against later orphans those saving throws (and the turns that owed them), a
revoked blow that dropped a PC orphans the death saves it rolled. Each correction may
orphan at most ``orphan_limit`` facts and the campaign as a whole at most
``orphan_share`` of its facts (a GM who revokes the first blow of a long fight replays
the fight; a generator cannot, and unbounded cascades made a third of a campaign orphaned
and unrealistically cheap to fold). The benchmarks add the far-reaching corrections
(revoking an early XP award) themselves, through the API.

Used by the benchmarks and by tests that want long, varied campaigns. Change
``GENERATOR_VERSION`` whenever what is generated changes: it keys the benchmarks' cache.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from domain import dice
from domain.errors import DomainError
from domain.ledger import Entry, Ledger
from domain.rulesets import get_ruleset
from domain.rulesets.stellar_winds.facts import CATALOGUE as facts

Fact = tuple[str, dict[str, Any], dict[str, Any]]  # type, payload, meta

PCS = [
    ("traze", "Traze", {"str": 10, "con": 14, "dex": 14, "int": 18, "wis": 12, "cha": 10}, 52, 7),
    ("vex", "Vex", {"str": 18, "con": 16, "dex": 12, "int": 10, "wis": 12, "cha": 10}, 70, 10),
    ("mira", "Mira", {"str": 12, "con": 12, "dex": 18, "int": 12, "wis": 14, "cha": 10}, 55, 7),
    ("doc", "Doc", {"str": 10, "con": 14, "dex": 12, "int": 14, "wis": 18, "cha": 12}, 58, 8),
]
DAMAGE_TYPES = ["fire", "cold", "poison", "necrotic", "psychic"]
REVOCABLE = {"DamageTaken", "HealingApplied", "AttackMade", "ExperienceAwarded", "TemporaryHitPointsGranted"}
GENERATOR_VERSION = 2  # 1: corrections never orphaned; 2: bounded orphaning corrections


@dataclass
class Stats:
    accepted: int = 0
    refused: int = 0
    by_type: dict[str, int] = field(default_factory=dict)
    corrections: int = 0  # corrections recorded (revocations, amendments, ruling decisions)
    orphaning: int = 0  # of those, the ones that orphaned later facts
    orphaned: int = 0  # facts those corrections orphaned (the campaign's orphans, give or take)


class CampaignGenerator:
    """Plays a campaign; ``facts()`` yields accepted facts until ``size`` are made."""

    def __init__(
        self,
        size: int,
        seed: int = 1,
        corrections: float = 0.03,
        orphan_limit: int = 60,
        orphan_share: float = 0.03,
    ) -> None:
        self.size = size
        self.rng = random.Random(seed)
        self.correction_rate = corrections
        self.orphan_limit = orphan_limit
        self.orphan_share = orphan_share
        self.ledger = Ledger(get_ruleset("stellar-winds"), {}, first_seq=2)
        self.stats = Stats()
        self._out: list[Fact] = []
        self._monsters = 0
        self._encounters = 0
        self._rulings = 0
        self._clock = 0

    # ------------------------------------------------------------ plumbing
    def _try(
        self, fact_type: str, payload: dict[str, Any], *, correction: bool = False, **meta: Any
    ) -> dict[str, Any] | None:
        """Record the fact if the rules accept it. A ``correction`` is also refused when it would
        orphan more than ``orphan_limit`` later facts, or push the campaign's orphans past
        ``orphan_share`` of its facts."""
        try:
            checked = facts.validate(fact_type, payload)
            outcome = self.ledger.prepare(fact_type, checked, meta)
        except DomainError:
            self.stats.refused += 1
            return None
        if correction:
            orphaned = len(outcome.get("orphaned", ())) - len(outcome.get("no_longer_orphaned", ()))
            if orphaned > self.orphan_limit or (
                orphaned > 0 and self.stats.orphaned + orphaned > self.orphan_share * self.size
            ):
                self.stats.refused += 1
                return None
            self.stats.corrections += 1
            if orphaned > 0:
                self.stats.orphaning += 1
                self.stats.orphaned += orphaned
        self._clock += 6
        meta = {**meta, "recorded_at": f"2026-01-01T00:00:00+00:00+{self._clock}s"}
        self.ledger.append(Entry(self.ledger.next_seq, fact_type, facts.versions[fact_type], checked, meta))
        self._out.append((fact_type, checked, meta))
        self.stats.accepted += 1
        self.stats.by_type[fact_type] = self.stats.by_type.get(fact_type, 0) + 1
        return outcome

    def _d(self, expression: str) -> dict[str, Any]:
        plan = dice.parse(expression)
        faces = [self.rng.randint(1, t["sides"]) for t in plan if "sides" in t for _ in range(t["count"])]
        return dice.roll(expression, faces=faces)

    @property
    def _state(self) -> Any:
        return self.ledger.state

    def _full(self) -> bool:
        return self.stats.accepted >= self.size

    # ---------------------------------------------------------------- play
    def facts(self) -> Iterator[Fact]:
        for cid, name, abilities, hp, surges in PCS:
            self._try(
                "CreatureRegistered",
                {
                    "creature_id": cid,
                    "name": name,
                    "kind": "pc",
                    "level": 5,
                    "abilities": abilities,
                    "max_hp": hp,
                    "surges_per_day": surges,
                    "defenses": {"ac": 21, "fort": 17, "ref": 17, "will": 16},
                },
            )
        yield from self._drain()
        while not self._full():
            self._encounter()
            yield from self._drain()
            self._aftermath()
            yield from self._drain()

    def _drain(self) -> Iterator[Fact]:
        out, self._out = self._out, []
        yield from out

    def _encounter(self) -> None:
        rng = self.rng
        monsters = []
        for _ in range(rng.randint(2, 4)):
            self._monsters += 1
            mid = f"m{self._monsters}"
            self._try(
                "CreatureRegistered",
                {
                    "creature_id": mid,
                    "name": f"Goblin {self._monsters}",
                    "kind": "monster",
                    "level": 4,
                    "abilities": {"str": 14, "con": 12, "dex": 16, "int": 8, "wis": 10, "cha": 8},
                    "max_hp": rng.randint(20, 45),
                    "defenses": {"ac": 18, "fort": 15, "ref": 17, "will": 13},
                    "resist": {rng.choice(DAMAGE_TYPES): 5} if rng.random() < 0.3 else {},
                },
            )
            monsters.append(mid)
        party = [c for c, *_ in PCS if self._state.creatures[c].life not in ("dead",)]
        self._encounters += 1
        eid = f"enc{self._encounters}"
        participants = party + monsters
        if (
            self._try(
                "EncounterStarted",
                {"encounter_id": eid, "name": f"Skirmish {self._encounters}", "participants": participants},
            )
            is None
        ):
            return
        for cid in participants:
            self._try("InitiativeRolled", {"encounter_id": eid, "creature": cid, "roll": self._d("1d20")})
        enc = self._state.encounters[eid]
        from domain.rulesets.stellar_winds.encounters import unresolved_ties

        for group in unresolved_ties(enc):
            ids = list(group)
            rng.shuffle(ids)
            self._try("InitiativeTieBroken", {"encounter_id": eid, "creatures": ids, "method": "coin"})
        self._try("TurnStarted", {"encounter_id": eid})  # RULES.md ruling 18: a turn starts by its own fact
        turns = 0
        while not self._full() and turns < 60:
            turns += 1
            enc = self._state.encounters[eid]
            if enc.state != "running" or self._side_down(party) or self._side_down(monsters):
                break
            current = enc.current
            if current is None:
                break
            self._turn(eid, current, party, monsters)
            if self.rng.random() < self.correction_rate:
                self._correction()
        self._try("EncounterEnded", {"encounter_id": eid, "outcome": "fought"})

    def _side_down(self, side: list[str]) -> bool:
        return all(self._state.creatures[c].life != "active" for c in side)

    def _turn(self, eid: str, cid: str, party: list[str], monsters: list[str]) -> None:
        rng = self.rng
        c = self._state.creatures[cid]
        if c.life == "active":
            foes = [
                f for f in (monsters if cid in party else party) if self._state.creatures[f].life != "dead"
            ]
            if c.is_pc and c.bloodied and not c.second_wind_used and c.surges and rng.random() < 0.5:
                self._try("SecondWindUsed", {"creature": cid})
            elif foes:
                self._attack(cid, foes)
        # the end of the turn: whatever it owes (saves, a dying creature's death save), in order
        for fact_type, payload in self.ledger.ruleset.pending_rolls(self._state):
            self._try(fact_type, {**payload, "roll": self._d("1d20")})
        self._try("TurnEnded", {"encounter_id": eid})
        self._try("TurnStarted", {"encounter_id": eid})

    def _attack(self, attacker: str, foes: list[str]) -> None:
        rng = self.rng
        meta: dict[str, Any] = {}
        circumstances: list[Any] = []
        if rng.random() < 0.05:
            self._rulings += 1
            rid = f"r{self._rulings}"
            if (
                self._try(
                    "RulingRecorded",
                    {
                        "ruling_id": rid,
                        "question": "Is the target flanked?",
                        "decision": "yes: combat advantage",
                    },
                )
                is not None
            ):
                circumstances.append({"name": "combat_advantage", "ruling": rid})
        if rng.random() < 0.2 and len(foes) > 1:
            targets = rng.sample(foes, min(len(foes), 3))
            power = {
                "name": "flame burst",
                "kind": "close",
                "defense": "ref",
                "attack_bonus": 7,
                "damage": "2d6+4",
                "damage_types": ["fire"],
                "miss": "half",
                "effects": [
                    {
                        "name": "burning",
                        "on": "hit",
                        "components": [{"ongoing": {"type": "fire", "amount": 5}}],
                        "duration": {"kind": "save_ends"},
                    }
                ],
            }
            self._try(
                "AttackMade",
                {
                    "attacker": attacker,
                    "power": power,
                    "action": "standard",
                    "targets": [{"target": t, "roll": self._d("1d20")} for t in targets],
                    "damage": self._d("2d6+4"),
                },
                **meta,
            )
            return
        target = rng.choice(foes)
        dazing = rng.random() < 0.15
        power = {"name": "strike", "kind": "melee", "defense": "ac", "attack_bonus": 9, "damage": "1d10+5"}
        if dazing:
            power["effects"] = [
                {
                    "name": "dazed",
                    "on": "hit",
                    "components": [{"condition": "dazed"}],
                    "duration": {"kind": "save_ends"},
                }
            ]
        crit_dice = self._d("1d6") if rng.random() < 0.1 else None
        self._try(
            "AttackMade",
            {
                "attacker": attacker,
                "power": power,
                "action": "standard",
                "targets": [
                    {
                        "target": target,
                        "roll": self._d("1d20"),
                        "damage": self._d("1d10+5"),
                        "circumstances": circumstances,
                    }
                ],
                "extra_crit": crit_dice,
            },
        )

    def _aftermath(self) -> None:
        rng = self.rng
        state = self._state
        pcs = [c for c, *_ in PCS]
        for cid in pcs:
            c = state.creatures[cid]
            if c.life == "dying":
                self._try("StabilizationAttempted", {"target": cid, "roll": self._d("1d20+6"), "dc": 15})
                self._try(
                    "HealingApplied",
                    {
                        "target": cid,
                        "surge_multiplier": 1,
                        "magical": True,
                        "requires_surge": True,
                        "source": "healing word",
                    },
                )
            if self._state.creatures[cid].life == "dead":
                self._try("CreatureRaised", {"creature": cid, "means": "raise dead ritual"})
        living = [c for c in pcs if self._state.creatures[c].life == "active"]
        if living:
            self._try(
                "ExperienceAwarded",
                {"creatures": living, "amount": rng.randint(100, 600), "reason": "encounter"},
            )
        if self._encounters % 3 == 0:
            self._try("TimeAdvanced", {"minutes": 24 * 60})
            self._try("ExtendedRestTaken", {"participants": None})
        else:
            self._try("ShortRestTaken", {"participants": None})
            for cid in pcs:
                c = self._state.creatures[cid]
                if c.life == "active" and c.hp < c.max_hp // 2 and c.surges > 1:
                    self._try("HealingSurgeSpent", {"creature": cid, "cause": "short_rest"})
        if rng.random() < 0.3:
            self._try("TemporaryHitPointsGranted", {"target": rng.choice(pcs), "amount": rng.randint(3, 10)})

    def _correction(self) -> None:
        rng = self.rng
        entries = self.ledger.entries
        kind = rng.random()
        if kind < 0.2 and self._rulings:
            rid = f"r{rng.randint(1, self._rulings)}"
            self._try(
                "RulingResolved",
                {
                    "ruling_id": rid,
                    "outcome": rng.choice(["upheld", "overturned"]),
                    "decision": "on reflection",
                },
                correction=True,
            )
            return
        for _ in range(10):
            # GMs mostly correct what just happened; now and then something sessions ago.
            back = (
                rng.randrange(min(len(entries), 150)) if rng.random() < 0.97 else rng.randrange(len(entries))
            )
            e = entries[len(entries) - 1 - back]
            if e.type not in REVOCABLE or e.seq in self.ledger.resolution.revoked:
                continue
            if kind < 0.6 or e.type != "AttackMade":
                self._try(
                    "FactRevoked",
                    {"target": e.seq, "reason": "misremembered", "cascade": "fact"},
                    correction=True,
                )
            else:
                targets = [dict(t) for t in e.payload["targets"]]
                targets[0]["roll"] = self._d("1d20")
                self._try(
                    "FactAmended",
                    {"target": e.seq, "patch": {"targets": targets}, "reason": "misread the die"},
                    correction=True,
                )
            return


def generate(size: int, seed: int = 1, corrections: float = 0.03) -> list[Fact]:
    """A legal campaign of ``size`` facts (after the campaign's creation)."""
    gen = CampaignGenerator(size, seed, corrections)
    return list(gen.facts())
