"""Proposals through the API on both stores (issue 19): the dice the server rolled for a proposal
are the dice its approval applies; a pending proposal survives an export and an import (its IDs
name the new campaign's characters); two GMs approving the same proposal apply it once; an
approved fact is corrected like any other; a proposal of another game system's mutation is
refused; d20 and Orcus mutations go through the same queue; and the law of the preview: it is
what approving the same proposals in the same order does."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from api.exports import service
from api.http.app import create_app
from api.service.application import ChronicleApplication
from api.service.auth import AccessControl
from api.service.settings import Settings
from tests.graphql_helpers import GQL, create_campaign, gid, issue, pc

PROPOSAL = "proposal { id position status dice { expression faces } appliedPositions }"


@pytest.fixture
def g(app: ChronicleApplication, store: Settings) -> Iterator[GQL]:
    with TestClient(create_app(store, app)) as client:
        yield GQL(client)


def swing(aria: str, orc: str) -> dict[str, Any]:
    """An attack whose attack and damage dice the server rolls (none entered)."""
    return {
        "attackerId": aria,
        "power": {"kind": "MELEE", "defense": "AC", "attackBonus": 30, "damage": "2d8+3"},
        "targets": [{"characterId": orc}],
    }


def test_the_approval_applies_the_dice_rolled_at_submission(g: GQL) -> None:
    cid, gm = create_campaign(g, "Dice")
    c = gid("Campaign", cid, cid)
    aria, orc = pc(g, cid, gm, "Aria"), pc(g, cid, gm, "Orc", maxHp=200)
    ana = issue(g, cid, gm, "PLAYER", [aria])
    out = g.mutate(
        "submitProposal", {"campaignId": c, "mutation": "attack", "input": swing(aria, orc)}, ana, PROPOSAL
    )
    assert out["userErrors"] == [], out
    dice = out["proposal"]["dice"]
    assert [d["expression"] for d in dice] == ["1d20", "2d8+3"]
    ok = g.mutate("approveProposal", {"campaignId": c, "proposalId": out["proposal"]["id"]}, gm, PROPOSAL)
    assert ok["userErrors"] == [] and ok["proposal"]["status"] == "APPROVED"
    applied = ok["facts"][1]
    assert applied["type"] == "AttackMade"
    assert [d["faces"] for d in applied["dice"]] == [d["faces"] for d in dice]
    assert ok["proposal"]["appliedPositions"] == [applied["position"]]
    # an approved fact is corrected like any other: revoked, the orc's hit points come back
    g.mutate("revokeFact", {"campaignId": c, "position": applied["position"], "reason": "wrong orc"}, gm)
    hp = g.ok("query($x: ID!) { character(id: $x) { hitPoints { current } } }", {"x": orc}, gm)
    assert hp["character"]["hitPoints"]["current"] == 200
    # proposal facts themselves are not revoked: a proposal is withdrawn or rejected
    no = g.mutate("revokeFact", {"campaignId": c, "position": out["proposal"]["position"], "reason": "x"}, gm)
    assert [e["code"] for e in no["userErrors"]] == ["INVALID_INPUT"]
    # the command's own refusals name the field inside the proposal's input
    bad = g.mutate(
        "submitProposal",
        {"campaignId": c, "mutation": "attack", "input": {**swing(aria, orc), "attackerId": "nope"}},
        ana,
    )
    assert [(e["code"], e["field"]) for e in bad["userErrors"]] == [("INVALID_ID", "input.attackerId")]
    # another game system's mutation cannot be proposed here
    d20 = g.mutate(
        "submitProposal",
        {"campaignId": c, "mutation": "d20Heal", "input": {"characterId": aria, "amount": 1}},
        ana,
    )
    assert [e["code"] for e in d20["userErrors"]] == ["WRONG_RULESET"]


def test_the_gm_s_changes_are_checked_like_any_input(g: GQL) -> None:
    """Changes naming another campaign's character are refused as the command would refuse
    them (not rewritten to a character of this campaign with the same name), changes to the
    request's own fields are refused; either way nothing is stored and the proposal stays
    pending."""
    cid, gm = create_campaign(g, "Changes")
    c = gid("Campaign", cid, cid)
    aria, orc = pc(g, cid, gm, "Aria"), pc(g, cid, gm, "Orc", maxHp=200)
    other_cid, other_gm = create_campaign(g, "Elsewhere")
    other_orc = pc(g, other_cid, other_gm, "Orc", maxHp=200)
    ana = issue(g, cid, gm, "PLAYER", [aria])
    out = g.mutate(
        "submitProposal", {"campaignId": c, "mutation": "attack", "input": swing(aria, orc)}, ana, PROPOSAL
    )
    proposal = out["proposal"]
    position = g.ok("query($c: ID!) { campaign(id: $c) { position } }", {"c": c}, gm)["campaign"]["position"]
    for changes, code in (
        ({"targets": [{"characterId": other_orc}]}, "NOT_FOUND"),
        ({"campaignId": "elsewhere"}, "INVALID_INPUT"),
        ({"idempotencyKey": "k" * 24}, "INVALID_INPUT"),
    ):
        approve = {"campaignId": c, "proposalId": proposal["id"], "changes": changes}
        no = g.mutate("approveProposal", approve, gm, PROPOSAL)
        assert [e["code"] for e in no["userErrors"]] == [code], (changes, no)
    after = g.ok("query($c: ID!) { campaign(id: $c) { position } }", {"c": c}, gm)["campaign"]["position"]
    assert after == position
    pending = g.ok("query($c: ID!) { campaign(id: $c) { pendingProposals { totalCount } } }", {"c": c}, gm)[
        "campaign"
    ]["pendingProposals"]["totalCount"]
    assert pending == 1


def test_a_pending_proposal_survives_an_export_and_an_import(g: GQL, app: ChronicleApplication) -> None:
    cid, gm = create_campaign(g, "Moving")
    c = gid("Campaign", cid, cid)
    aria, orc = pc(g, cid, gm, "Aria"), pc(g, cid, gm, "Orc", maxHp=200)
    ana = issue(g, cid, gm, "PLAYER", [aria])
    out = g.mutate(
        "submitProposal", {"campaignId": c, "mutation": "attack", "input": swing(aria, orc)}, ana, PROPOSAL
    )
    dice = out["proposal"]["dice"]
    exported = "".join(service.export(app, _uuid(cid), "jsonl"))
    new = service.import_lines(app, exported.encode().splitlines(keepends=True))
    gm2 = AccessControl(app).grant_gm(new)
    c2 = gid("Campaign", str(new), str(new))
    queue = g.ok(
        "query($c: ID!) { campaign(id: $c) { pendingProposals { nodes { id position } } } }", {"c": c2}, gm2
    )["campaign"]["pendingProposals"]["nodes"]
    assert [n["position"] for n in queue] == [out["proposal"]["position"]]
    ok = g.mutate("approveProposal", {"campaignId": c2, "proposalId": queue[0]["id"]}, gm2, PROPOSAL)
    assert ok["userErrors"] == [], ok
    assert [d["faces"] for d in ok["facts"][1]["dice"]] == [d["faces"] for d in dice]
    # the original campaign is untouched: its proposal is still pending
    mine = g.ok("query($c: ID!) { campaign(id: $c) { pendingProposals { totalCount } } }", {"c": c}, gm)
    assert mine["campaign"]["pendingProposals"]["totalCount"] == 1


def test_two_gms_approving_at_once_apply_it_once(g: GQL) -> None:
    cid, gm = create_campaign(g, "Race")
    c = gid("Campaign", cid, cid)
    brom = pc(g, cid, gm, "Brom", surgesPerDay=3)
    bo = issue(g, cid, gm, "PLAYER", [brom])
    co_gm = g.ok(
        "mutation($i: IssueAccessTokenInput!) { issueAccessToken(input: $i) { token } }",
        {"i": {"campaignId": c, "role": "GM"}},
        gm,
    )["issueAccessToken"]["token"]
    out = g.mutate(
        "submitProposal",
        {"campaignId": c, "mutation": "spendHealingSurge", "input": {"characterId": brom}},
        bo,
        PROPOSAL,
    )
    results: list[Any] = []

    def approve(token: str) -> None:
        results.append(
            g.mutate("approveProposal", {"campaignId": c, "proposalId": out["proposal"]["id"]}, token)
        )

    threads = [threading.Thread(target=approve, args=(t,)) for t in (gm, co_gm)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    codes = sorted(e["code"] for r in results for e in r["userErrors"])
    assert codes == ["PROPOSAL_NOT_PENDING"]
    left = g.ok(
        "query($x: ID!) { character(id: $x) { "
        "... on StellarWindsCharacter { healingSurges { remaining } } } }",
        {"x": brom},
        gm,
    )
    assert left["character"]["healingSurges"]["remaining"] == 2


def _uuid(cid: str) -> Any:
    from uuid import UUID

    return UUID(cid)


def _register(g: GQL, c: str, gm: str, mutation: str, fields: dict[str, Any]) -> str:
    out = g.mutate(mutation, {"campaignId": c, **fields}, gm, "character { id }")
    assert out["userErrors"] == [], out
    return str(out["character"]["id"])


@pytest.mark.parametrize("ruleset", ["d20", "orcus"])
def test_every_game_system_s_mutations_can_be_proposed(g: GQL, ruleset: str) -> None:
    """The d20 house rules' and Orcus's own mutations go through the same queue unchanged."""
    out = g.ok(
        "mutation($i: CreateCampaignInput!) { createCampaign(input: $i) { "
        "campaign { campaignId } gmToken } }",
        {"i": {"name": f"Proposals {ruleset}", "ruleset": ruleset}},
    )["createCampaign"]
    cid, gm = out["campaign"]["campaignId"], out["gmToken"]
    c = gid("Campaign", cid, cid)
    if ruleset == "d20":
        sheet = {"kind": "PC", "level": 1, "maxHp": 20, "baseAttackBonus": [1]}
        kara, gnoll = (
            _register(g, c, gm, "d20RegisterCreature", {"name": n, **sheet}) for n in ("Kara", "Gnoll")
        )
        mutation = "d20Attack"
        command = {"attackerId": kara, "targetId": gnoll, "roll": {"expression": "1d20", "faces": [12]}}
        applied = "AttackRolled"
    else:
        sheet = {
            "kind": "HERO",
            "level": 1,
            "maxHp": 30,
            "surgesPerDay": 2,
            "defenses": {"ac": 10, "fort": 10, "ref": 10, "will": 10},
        }
        kara, ogre = (
            _register(g, c, gm, "orcusRegisterCreature", {"name": n, **sheet}) for n in ("Kara", "Ogre")
        )
        mutation, applied = "orcusAttack", "AttackMade"
        command = {
            "attackerId": kara,
            "power": {"kind": "MELEE", "defense": "AC", "attackBonus": 2, "damage": "1d6"},
            "targets": [{"targetId": ogre, "roll": {"expression": "1d20", "faces": [15]}}],
        }
    player = issue(g, cid, gm, "PLAYER", [kara])
    out = g.mutate(
        "submitProposal", {"campaignId": c, "mutation": mutation, "input": command}, player, PROPOSAL
    )
    assert out["userErrors"] == [], out
    ok = g.mutate("approveProposal", {"campaignId": c, "proposalId": out["proposal"]["id"]}, gm, PROPOSAL)
    assert ok["userErrors"] == [] and ok["proposal"]["status"] == "APPROVED", ok
    types = [f["type"] for f in ok["facts"]]
    assert types[0] == "ProposalDecided" and len(types) >= 2
    assert types[1] == applied
    history = g.ok(
        "query($c: ID!) { campaign(id: $c) { history(last: 3) { nodes { position provenance } } } }",
        {"c": c},
        gm,
    )["campaign"]["history"]["nodes"]
    assert history[-1]["provenance"] == (
        f"proposed by player, approved by the GM (proposal #{out['proposal']['position']})"
    )


# --------------------------------------------------------------------------- the preview law
COMMANDS = {
    "surge-brom": ("spendHealingSurge", lambda t: {"characterId": t["brom"]}),
    "surge-aria": ("spendHealingSurge", lambda t: {"characterId": t["aria"]}),
    "wind-aria": ("useSecondWind", lambda t: {"characterId": t["aria"]}),
    "swing": ("attack", lambda t: swing(t["aria"], t["brom"])),
    "hurt-brom": ("dealDamage", lambda t: {"characterId": t["brom"], "amount": 9}),
}


@pytest.fixture(scope="module")
def memory_g() -> Iterator[GQL]:
    from api.service.store import open_application

    app = open_application(Settings(database_url="memory:"))
    with TestClient(create_app(Settings(database_url="memory:"), app)) as client:
        yield GQL(client)
    app.close()


@settings(max_examples=40, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    chosen=st.lists(st.sampled_from(sorted(COMMANDS)), min_size=1, max_size=6),
    order=st.randoms(use_true_random=False),
)
def test_the_preview_is_what_approving_in_that_order_does(
    memory_g: GQL, chosen: list[str], order: Any
) -> None:
    """Whatever is pending and in whatever order: approving the proposals one by one gives exactly
    the characters the preview showed, and refuses exactly the ones it said, with the same codes."""
    g = memory_g
    cid, gm = create_campaign(g, "Law")
    c = gid("Campaign", cid, cid)
    t = {"aria": pc(g, cid, gm, "Aria", surgesPerDay=2), "brom": pc(g, cid, gm, "Brom", surgesPerDay=1)}
    g.mutate("dealDamage", {"campaignId": c, "characterId": t["aria"], "amount": 20}, gm)
    player = issue(g, cid, gm, "PLAYER", [t["aria"], t["brom"]])
    ids: list[str] = []
    for name in chosen:
        mutation, build = COMMANDS[name]
        out = g.mutate(
            "submitProposal", {"campaignId": c, "mutation": mutation, "input": build(t)}, player, PROPOSAL
        )
        if not out["userErrors"]:
            ids.append(out["proposal"]["id"])
    if not ids:
        return
    order.shuffle(ids)
    preview = g.ok(
        """query($c: ID!, $p: [ID!]!) { campaign(id: $c) { proposalPreview(proposalIds: $p) {
        applied refusals { position code } characters { creatureId raw } } } }""",
        {"c": c, "p": ids},
        gm,
    )["campaign"]["proposalPreview"]
    refused = []
    for p in ids:
        out = g.mutate("approveProposal", {"campaignId": c, "proposalId": p}, gm, PROPOSAL)
        if out["userErrors"]:
            refused.append({"position": int(_local(p)), "code": out["userErrors"][0]["code"]})
    assert refused == preview["refusals"]
    now = g.ok("query($c: ID!) { campaign(id: $c) { characters { creatureId raw } } }", {"c": c}, gm)
    assert now["campaign"]["characters"] == preview["characters"]


def _local(gid_: str) -> str:
    import base64

    return base64.b64decode(gid_).decode().rsplit(":", 1)[1]


def test_a_fresh_process_reads_the_queue_from_a_snapshot(store: Settings) -> None:
    """The proposals live in the facts the ledger pins: a process that starts from the snapshot
    (the proposal facts themselves paged out) sees the same queue and trust settings."""
    import dataclasses

    from api.service.store import open_application

    app = open_application(store)
    apps = [app]
    try:
        cid = app.create_campaign("Snapshot")
        app.record(cid, "ProposalPolicySet", {"mutation": "attack", "mode": "approval"})
        first = app.record(
            cid,
            "ProposalSubmitted",
            {"mutation": "addNote", "input": {"text": "a"}, "proposed_by": "player:t1", "proposer": "Ana"},
        ).positions[0]
        second = app.record(
            cid,
            "ProposalSubmitted",
            {"mutation": "addNote", "input": {"text": "b"}, "proposed_by": "player:t2", "proposer": "Bo"},
        ).positions[0]
        app.record(cid, "ProposalDecided", {"proposal": first, "decision": "rejected", "reason": "no"})
        for minutes in range(1, 40):
            app.advance_time(cid, minutes)
        app.write_snapshot(cid)
        fresh = open_application(dataclasses.replace(store, ledger_window=5))
        apps.append(fresh)
        assert [p.position for p in fresh.pending_proposals(cid)] == [second]
        assert fresh.cache_stats["from_snapshot"] == 1
        assert fresh.proposals(cid) == app.proposals(cid)
        assert fresh.proposal_mode(cid, "attack") == "approval"
    finally:
        for a in apps:
            a.close()
