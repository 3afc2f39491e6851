"""Enums shared by the GraphQL input and output types (one module, so neither imports the other)."""

from __future__ import annotations

import enum

import strawberry


@strawberry.enum(description="Which corrections a past state takes into account.")
class TimeAxis(enum.Enum):
    CORRECTED = "corrected"  # every correction made so far
    RECORDED = "recorded"  # only the corrections recorded by then: what the table believed


@strawberry.enum
class CreatureKind(enum.Enum):
    PC = "pc"
    MONSTER = "monster"
    NPC = "npc"


@strawberry.enum(
    description="The life states every game system speaks (domain.rulesets.LIFE_STATES); a system's "
    "finer states are its own fields."
)
class LifeState(enum.Enum):
    ACTIVE = "active"
    DISABLED = "disabled"  # conscious but barely able to act (d20: 0 to -B hit points)
    KNOCKED_OUT = "knocked_out"
    UNCONSCIOUS = "unconscious"
    DYING = "dying"
    STABILIZED = "stabilized"
    DEAD = "dead"


@strawberry.enum(description="How corrections treat a fact.")
class FactStatus(enum.Enum):
    ACTIVE = "active"
    REVOKED = "revoked"
    AMENDED = "amended"
    ORPHANED = "orphaned"
    OVERRIDDEN = "overridden"


@strawberry.enum
class Role(enum.Enum):
    GM = "gm"
    PLAYER = "player"
    VIEWER = "viewer"


@strawberry.enum(description="Where a proposal stands (issue 19).")
class ProposalStatus(enum.Enum):
    PENDING = "pending"
    APPROVED = "approved"
    APPROVED_WITH_CHANGES = "approved_with_changes"
    REJECTED = "rejected"
    WITHDRAWN = "withdrawn"


@strawberry.enum(description="A campaign's trust setting for players, per command.")
class ProposalMode(enum.Enum):
    DIRECT = "direct"  # a player may do it directly (the default: today's behaviour) or propose it
    APPROVAL = "approval"  # a player must propose it; the GM decides
    FORBIDDEN = "forbidden"  # a player may neither do nor propose it


@strawberry.enum(description="What happened to a proposal (a `campaignProposals` event).")
class ProposalEventKind(enum.Enum):
    SUBMITTED = "submitted"
    DECIDED = "decided"
    WITHDRAWN = "withdrawn"
