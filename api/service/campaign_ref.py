"""A campaign named by a person: its id (a UUID) or its GraphQL ID (what the API shows as
``campaign { id }``), so the export URL and the command line take whichever one has at hand.

The GraphQL ID is base64 of ``Campaign:<uuid>:<uuid>`` (``api.graphql.ids``, which this module
does not import: it would bring Strawberry into every command-line call).
"""

from __future__ import annotations

import base64
import binascii
from uuid import UUID

__all__ = ["BadCampaignRef", "campaign_ref"]


class BadCampaignRef(ValueError):
    """Neither a campaign's UUID nor a campaign's GraphQL ID."""


def campaign_ref(text: str) -> UUID:
    """The campaign's UUID, from its UUID or its GraphQL ID; raises :class:`BadCampaignRef`."""
    value = text.strip()
    try:
        return UUID(value)
    except ValueError:
        pass
    try:
        raw = base64.b64decode(value.encode(), validate=True).decode()
        kind, campaign, local = raw.split(":", 2)
        campaign_id = UUID(campaign)
    except (ValueError, binascii.Error, UnicodeDecodeError):
        raise BadCampaignRef(f"{text!r} is neither a campaign's id (a UUID) nor its GraphQL ID") from None
    if kind != "Campaign" or local != campaign:
        raise BadCampaignRef(f"{text!r} is the GraphQL ID of a {kind}, not of a campaign")
    return campaign_id
