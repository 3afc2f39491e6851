"""Query entry points."""

from __future__ import annotations

from importlib import metadata

import strawberry
from strawberry.types import Info

from api.graphql import context as ctx
from api.graphql import data, ids
from api.graphql.errors import ChronicleError
from api.graphql.types import (
    AccessToken,
    Campaign,
    Character,
    Encounter,
    Fact,
    Node,
    Proposal,
    build_character,
    load_campaign,
)


def server_version() -> str:
    """The installed ``chronicle`` distribution's version (``0+unknown`` when not installed)."""
    try:
        return metadata.version("chronicle")
    except metadata.PackageNotFoundError:
        return "0+unknown"


async def _character(info: Info, gid: strawberry.ID) -> Character | None:
    _, cid, local = ids.decode(gid, "Character")
    await ctx.reader(info, cid)
    now = await ctx.view(info, cid)
    found = now.creature(local)
    return None if found is None else build_character(now, found)


async def _encounter(info: Info, gid: strawberry.ID) -> Encounter | None:
    _, cid, local = ids.decode(gid, "Encounter")
    await ctx.reader(info, cid)
    now = await ctx.view(info, cid)
    found = now.encounter(local)
    return None if found is None else Encounter.build(now, found)


@strawberry.type(description="Read-only entry points. Everything but `version` needs a bearer token.")
class Query:
    version: str = strawberry.field(resolver=server_version, description="The server's version.")

    @strawberry.field(description="The campaigns the caller's token can see.")
    async def campaigns(self, info: Info) -> list[Campaign]:
        who = await ctx.principal(info)
        if who is None:
            raise ChronicleError("UNAUTHENTICATED", ctx.NO_TOKEN)
        return [await load_campaign(info, who.campaign_id)]

    @strawberry.field
    async def campaign(self, info: Info, id: strawberry.ID) -> Campaign:  # noqa: A002
        _, cid, _ = ids.decode(id, "Campaign")
        return await load_campaign(info, cid)

    @strawberry.field(description="A creature by its global ID (null if it does not exist).")
    async def character(self, info: Info, id: strawberry.ID) -> Character | None:  # noqa: A002
        return await _character(info, id)

    @strawberry.field
    async def encounter(self, info: Info, id: strawberry.ID) -> Encounter | None:  # noqa: A002
        return await _encounter(info, id)

    @strawberry.field(description="Any object by its global ID.")
    async def node(self, info: Info, id: strawberry.ID) -> Node | None:  # noqa: A002
        type_name, cid, local = ids.decode(id)
        if type_name == "Campaign":
            return await load_campaign(info, cid)
        if type_name == "Character":
            return await _character(info, id)
        if type_name == "Encounter":
            return await _encounter(info, id)
        who = await ctx.reader(info, cid)
        if type_name == "Fact":
            if not local.isdigit():
                return None
            seq = int(local)
            found = await ctx.call(data.history_records, ctx.app_of(info), cid, range(seq, seq + 1))
            return Fact.build(found[0]) if found else None
        if type_name == "AccessToken":
            if not who.is_gm:
                raise ChronicleError("FORBIDDEN", "only the GM sees the campaign's tokens")
            tokens = await ctx.call(ctx.access_of(info).tokens, cid)
            match = [t for t in tokens if t["token_id"] == local]
            return AccessToken.build(cid, match[0]) if match else None
        if type_name == "Proposal":
            found = await ctx.call(ctx.app_of(info).proposal, cid, int(local)) if local.isdigit() else None
            return None if found is None else Proposal.build(cid, found)
        return None  # pragma: no cover
