"""A campaign is named by its UUID or its GraphQL ID, and by nothing else (the export URL and the
command line both read it with ``api.service.campaign_ref``; the GraphQL ID is ``api.graphql.ids``')."""

from __future__ import annotations

from uuid import UUID

import pytest
from hypothesis import given
from hypothesis import strategies as st

from api.graphql.ids import campaign_gid, encode
from api.service.campaign_ref import BadCampaignRef, campaign_ref


@given(st.uuids())
def test_the_uuid_and_the_graphql_id_name_the_same_campaign(cid: UUID) -> None:
    assert campaign_ref(str(cid)) == campaign_ref(campaign_gid(cid)) == cid
    assert campaign_ref(f"  {str(cid).upper()} ") == cid


@given(st.uuids(), st.sampled_from(["Character", "Encounter", "Fact", "AccessToken"]))
def test_the_graphql_id_of_anything_else_is_refused_by_its_kind(cid: UUID, kind: str) -> None:
    gid = encode(kind, cid, "x")
    with pytest.raises(BadCampaignRef, match=f"is the GraphQL ID of a {kind}, not of a campaign"):
        campaign_ref(gid)


@pytest.mark.parametrize("text", ["", "kestrel", "Q2FtcGFpZ24=", "not base64 at all!", "1234"])
def test_anything_else_is_neither(text: str) -> None:
    with pytest.raises(BadCampaignRef, match="is neither a campaign's id"):
        campaign_ref(text)
