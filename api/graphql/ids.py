"""Global IDs: opaque base64 of ``Type:campaignUUID:localId`` (GitHub/Relay style)."""

from __future__ import annotations

import base64
import binascii
from uuid import UUID

from api.graphql.errors import ChronicleError

TYPES = ("Campaign", "Character", "Encounter", "Fact", "AccessToken", "Proposal")


def encode(type_name: str, campaign_id: UUID, local: str | int) -> str:
    return base64.b64encode(f"{type_name}:{campaign_id}:{local}".encode()).decode()


def decode(gid: str, expected: str | None = None, field: str = "id") -> tuple[str, UUID, str]:
    """(type, campaign id, local id); raises INVALID_ID / NOT_FOUND for anything else."""
    try:
        raw = base64.b64decode(str(gid).encode(), validate=True).decode()
        type_name, campaign, local = raw.split(":", 2)
        campaign_id = UUID(campaign)
    except (ValueError, binascii.Error, UnicodeDecodeError):
        raise ChronicleError("INVALID_ID", f"{gid!r} is not a Chronicle ID", field) from None
    if type_name not in TYPES or not local:
        raise ChronicleError("INVALID_ID", f"{gid!r} is not a Chronicle ID", field)
    if expected is not None and type_name != expected:
        raise ChronicleError("INVALID_ID", f"{gid!r} is the ID of a {type_name}, not a {expected}", field)
    return type_name, campaign_id, local


def campaign_gid(campaign_id: UUID) -> str:
    return encode("Campaign", campaign_id, campaign_id)
