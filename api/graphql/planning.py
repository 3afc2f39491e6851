"""Turning a mutation's input into facts: the toolkit every mutation (core or a ruleset's) uses.

A *planner* is a plain function ``(input, look) -> Plan``: it decodes the input's global IDs
within the campaign, rolls the dice the client did not enter, and says which facts to record,
who may record them and which characters and encounter the payload should show. The executor
(``api.graphql.mutations.execute``) authorises, records the plan as one table action and answers.

A ruleset's API plug-in (``api.rulesets``) declares its mutations as :class:`MutationSpec` s
built on this module, so a new game system adds mutations without touching the core.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from api.graphql import ids
from api.graphql.errors import ChronicleError
from api.service.application import CampaignView, ChronicleApplication
from api.service.auth import Principal
from domain import dice as dice_rules
from domain.errors import DiceError

GM_ONLY, ACTORS, MEMBERS = "gm", "actors", "members"


@dataclass
class Plan:
    """What a mutation records (one table action) and how its answer is shaped.

    ``who``: ``gm`` (GM only), ``actors`` (the GM, or a player for the ``actors`` they own),
    ``members`` (any member; a player only for its own characters when ``actors`` names any).
    """

    items: list[tuple[str, dict[str, Any]]]
    who: str = GM_ONLY
    actors: set[str] = field(default_factory=set)
    characters: list[str] = field(default_factory=list)
    encounter: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)  # envelope fields (e.g. the proposal cited)


class Look:
    """What a planner may use: ID decoding within the campaign, dice, the present (lazily)."""

    def __init__(
        self, app: ChronicleApplication, campaign_id: UUID, who: Principal, access: Any = None
    ) -> None:
        self.app, self.campaign_id, self.who = app, campaign_id, who
        self.access = access  # the token store (api.service.auth.AccessControl), when the executor has one
        self._view: CampaignView | None = None
        self._rerolls: tuple[str, str | None, list[tuple[str, dict[str, Any]]]] | None = None

    def creature(self, gid: Any, field_name: str = "characterId") -> str:
        _, cid, local = ids.decode(gid, "Character", field_name)
        if cid != self.campaign_id:
            raise ChronicleError("NOT_FOUND", "no such character in this campaign", field_name)
        return local

    def creatures(self, gids: list[Any] | None, field_name: str) -> list[str]:
        return [self.creature(g, field_name) for g in gids or []]

    def encounter(self, gid: Any, field_name: str = "encounterId") -> str:
        _, cid, local = ids.decode(gid, "Encounter", field_name)
        if cid != self.campaign_id:
            raise ChronicleError("NOT_FOUND", "no such encounter in this campaign", field_name)
        return local

    def roll(self, dice: Any, default: str | None = None, weapon: str | None = None) -> dict[str, Any] | None:
        """A roll record: the client's dice (``DiceInput``: expression and faces), or the server's
        roll of ``default`` when the client gave none (None when there is no default)."""
        if dice is None:
            if default is None:
                return None
            return self.app.roll(default, weapon=weapon)
        rolled: dict[str, Any] = self.app.roll(dice.expression, weapon=weapon, faces=dice.faces)
        for r in getattr(dice, "rerolls", None) or []:
            if self._rerolls is None:
                raise ChronicleError("INVALID_INPUT", "this command records no rerolls", "rerolls")
            fact_type, creature, items = self._rerolls
            payload = {"creature": creature, "roll": rolled, "die_index": r.index, "new_face": r.face}
            items.append((fact_type, {**payload, "reason": r.reason}))
            try:
                rolled = {**dice_rules.with_face(rolled, r.index, r.face), "manual": True}
            except DiceError as err:
                raise ChronicleError("INVALID_DICE", str(err), "rerolls") from err
        return rolled

    def allow_rerolls(self, fact_type: str, creature: str | None) -> None:
        """This command takes in-game rerolls in its dice: each becomes a ``fact_type`` fact
        (the roll as it stood, the die and its new face) recorded before the command's own."""
        self._rerolls = (fact_type, creature, [])

    def rerolls_first(self, plan: Plan) -> Plan:
        """The plan with the rerolls its dice carried recorded first (one table action)."""
        if self._rerolls is not None:
            plan.items[:0] = self._rerolls[2]
        return plan

    def payload_of(self, position: int) -> dict[str, Any]:
        """The payload of the fact at ``position``, as amended so far (NOT_FOUND if none)."""
        return self.app.ledger(self.campaign_id).effective_payload(position)

    def seen(self, view: CampaignView) -> None:
        """The campaign now, as the executor already read it in this operation."""
        self._view = view

    @property
    def view(self) -> CampaignView:
        """The campaign now (read once, on first use)."""
        if self._view is None:
            self._view = self.app.view(self.campaign_id)
        return self._view

    @property
    def state(self) -> Any:
        """The ruleset's state object now (for a plug-in's own lookups; never change it)."""
        return self.view.state


def json_arg(value: Any, field_name: str, kind: type = dict) -> Any:
    """A JSON input that must be an object (or ``kind``); None passes."""
    if value is not None and not isinstance(value, kind):
        raise ChronicleError("INVALID_INPUT", f"{field_name} must be a JSON {kind.__name__}", field_name)
    return value


def one(
    fact_type: str,
    payload: dict[str, Any],
    who: str = GM_ONLY,
    actors: set[str] | None = None,
    characters: list[str] | None = None,
    encounter: str | None = None,
) -> Plan:
    """A plan of a single fact."""
    return Plan([(fact_type, payload)], who, set(actors or ()), list(characters or ()), encounter)


Planner = Callable[[Any, Look], Plan]


@dataclass(frozen=True)
class MutationSpec:
    """One mutation: its field name (snake_case), input type, planner and description.

    ``ruleset`` names the game system it belongs to (None: every system); the executor refuses
    it with ``WRONG_RULESET`` on a campaign of another system, before planning anything."""

    name: str
    input: type[Any]
    planner: Planner
    description: str
    ruleset: str | None = None
    # The payload type's base (None: MutationPayload) and what to add to the answer afterwards
    # (``async (info, input, payload) -> payload``; the proposal mutations show the proposal).
    payload_base: type[Any] | None = None
    answer: Callable[..., Any] | None = None
    proposable: bool = True  # may a player submit it as a proposal (issue 19)?
