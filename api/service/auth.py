"""Access to campaigns: bearer tokens for the GM, players and viewers.

Tokens never enter a campaign's fact log (exports must not carry them). Each campaign has
its own small aggregate, :class:`CampaignAccess` (id ``uuid5(campaign_id, "access")``), in the
same store, holding only the sha256 of each token with its role and characters. A token reads
``chr_<campaign hex>_<token id>_<secret>``: the campaign part lets the server find the right
aggregate without any global index; the hash decides.

Roles: ``gm`` (everything in the campaign, issues and revokes tokens), ``player`` (reads the
campaign, acts for the characters the token is bound to), ``viewer`` (reads only).

Idempotency: ``createCampaign`` and ``issueAccessToken`` take an idempotency key like every
mutation. A retry must get the same token back (a phone that lost the answer retries and must
not lose the campaign), but the server keeps only hashes, so a token issued under a key is
*derived* from that key (HMAC-SHA256 of the key over the campaign, the token id and a stored
salt): whoever knows the key gets the token. So on these two mutations the key is a secret and
must carry at least 128 bits (:func:`check_secret_key`: 32 or more hex digits, e.g. a UUID, or
22 or more base64url characters): a guessable key (``"create-1"``) is refused before anything
happens, so no replay can hand a token to someone who guessed it. Keys of ``createCampaign``
live in a tiny :class:`CampaignCreation` aggregate per key (id ``uuid5(KEYS, sha256(key))``).

Like the campaigns, the cached access aggregates change only with the store: on any failure
of a save the cached copy is dropped and the next call reloads it.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from uuid import UUID, uuid5

from eventsourcing.application import AggregateNotFoundError
from eventsourcing.domain import Aggregate, event
from eventsourcing.persistence import IntegrityError

from api.service.application import ChronicleApplication
from domain.core import limits
from domain.errors import Conflict, DomainError, InvalidInput, NotFound

__all__ = [
    "GM",
    "PLAYER",
    "VIEWER",
    "AccessControl",
    "CampaignAccess",
    "CampaignCreation",
    "Principal",
    "access_id",
    "hash_token",
]

GM, PLAYER, VIEWER = "gm", "player", "viewer"
ROLES = (GM, PLAYER, VIEWER)
KEYS_NAMESPACE = UUID("6f1d7a2e-3b7c-4e55-9a8e-7c1b8f0c2d41")
MAX_ATTEMPTS = 8


def access_id(campaign_id: UUID) -> UUID:
    return uuid5(campaign_id, "access")


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _now() -> str:
    return datetime.now(UTC).isoformat()


def _fingerprint(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


class CampaignAccess(Aggregate):
    """The tokens of one campaign (hashes only)."""

    TOPIC = "chronicle:CampaignAccess"

    class Created(Aggregate.Created):
        TOPIC = "chronicle:CampaignAccess.Created"

    class Opened(Aggregate.Created):
        TOPIC = "chronicle:CampaignAccess.Opened"
        campaign_id: str

    class TokenIssued(Aggregate.Event):
        TOPIC = "chronicle:CampaignAccess.TokenIssued"
        token_id: str
        token_hash: str
        role: str
        characters: list[str]
        label: str
        salt: str
        key_hash: str
        request_hash: str
        issued_at: str

        def apply(self, aggregate: CampaignAccess) -> None:
            aggregate.tokens[self.token_id] = {
                "token_id": self.token_id,
                "token_hash": self.token_hash,
                "role": self.role,
                "characters": list(self.characters),
                "label": self.label,
                "salt": self.salt,
                "issued_at": self.issued_at,
                "revoked_at": None,
                "request_hash": self.request_hash,
            }
            if self.key_hash:
                aggregate.keys[self.key_hash] = self.token_id

    class TokenRevoked(Aggregate.Event):
        TOPIC = "chronicle:CampaignAccess.TokenRevoked"
        token_id: str
        revoked_at: str

        def apply(self, aggregate: CampaignAccess) -> None:
            aggregate.tokens[self.token_id]["revoked_at"] = self.revoked_at

    @staticmethod
    def create_id(campaign_id: str) -> UUID:
        return access_id(UUID(campaign_id))

    @event(Opened)
    def __init__(self, campaign_id: str) -> None:
        self.campaign_id = campaign_id
        self.tokens: dict[str, dict[str, Any]] = {}
        self.keys: dict[str, str] = {}

    def issue(self, **fields: Any) -> None:
        self.trigger_event(self.TokenIssued, **fields)

    def revoke(self, token_id: str) -> None:
        self.trigger_event(self.TokenRevoked, token_id=token_id, revoked_at=_now())


class CampaignCreation(Aggregate):
    """Which campaign a ``createCampaign`` idempotency key created."""

    TOPIC = "chronicle:CampaignCreation"

    class Created(Aggregate.Created):
        TOPIC = "chronicle:CampaignCreation.Created"

    class Recorded(Aggregate.Created):
        TOPIC = "chronicle:CampaignCreation.Recorded"
        key_hash: str
        campaign_id: str
        request_hash: str

    @staticmethod
    def create_id(key_hash: str, campaign_id: str, request_hash: str) -> UUID:
        return uuid5(KEYS_NAMESPACE, key_hash)

    @event(Recorded)
    def __init__(self, key_hash: str, campaign_id: str, request_hash: str) -> None:
        self.key_hash = key_hash
        self.campaign_id = campaign_id
        self.request_hash = request_hash


@dataclass(frozen=True)
class Principal:
    """Who is calling: a valid token of one campaign."""

    campaign_id: UUID
    token_id: str
    role: str
    characters: frozenset[str]

    @property
    def is_gm(self) -> bool:
        return self.role == GM

    def may_act_for(self, creatures: set[str]) -> bool:
        if self.role == GM:
            return True
        return self.role == PLAYER and bool(creatures) and creatures <= self.characters


@dataclass(frozen=True)
class Issued:
    token_id: str
    token: str
    replayed: bool


def _secret(key: str | None, campaign_id: UUID, token_id: str, salt: str) -> str:
    if key is None:
        raw = secrets.token_bytes(32)
    else:
        raw = hmac.new(key.encode(), f"{campaign_id}:{token_id}:{salt}".encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _token(campaign_id: UUID, token_id: str, secret: str) -> str:
    return f"chr_{campaign_id.hex}_{token_id}_{secret}"


def parse_token(token: str) -> tuple[UUID, str] | None:
    parts = token.split("_", 3)
    if len(parts) != 4 or parts[0] != "chr" or len(token) > 200:
        return None
    try:
        return UUID(hex=parts[1]), parts[2]
    except ValueError:
        return None


class AccessControl:
    """Issues, revokes and checks tokens. Synchronous: call it from a worker thread."""

    def __init__(self, application: ChronicleApplication) -> None:
        self.app = application
        self._cache: dict[UUID, CampaignAccess] = {}
        self._lock = threading.RLock()

    # ------------------------------------------------------------- loading
    def _load(self, campaign_id: UUID) -> CampaignAccess | None:
        """The campaign's access record, brought up to date from the store. The store is read
        outside the lock (every request checks its token here: under one lock, 50 concurrent
        requests queued on each other's reads); only applying what was read takes it."""
        aid = access_id(campaign_id)
        with self._lock:
            access = self._cache.get(aid)
        if access is None:
            try:
                loaded = self.app.repository.get(aid)
            except AggregateNotFoundError:
                return None
            if not isinstance(loaded, CampaignAccess):
                return None
            with self._lock:
                access = self._cache.setdefault(aid, loaded)
            if access is loaded:
                return access
        # one store statement with the campaign's own catch-up, when the operation still needs it
        events = self.app.read_beside(campaign_id, aid, access.version)
        with self._lock:
            for ev in events:
                if ev.originator_version == access.version + 1:  # (not applied meanwhile)
                    ev.mutate(access)
        return access

    def _forget(self, campaign_id: UUID) -> None:
        with self._lock:
            self._cache.pop(access_id(campaign_id), None)

    # ------------------------------------------------------------- campaigns
    def create_campaign(
        self, name: str, ruleset: str, flags: dict[str, Any] | None, idempotency_key: str | None
    ) -> tuple[UUID, str, bool]:
        """A new campaign and its GM token: (campaign id, GM token, replayed)."""
        request_hash = _fingerprint({"name": name, "ruleset": ruleset, "flags": flags or {}})
        key_hash = ""
        if idempotency_key is not None:
            check_secret_key(idempotency_key)
            key_hash = hash_token(idempotency_key)
            earlier = self._creation(key_hash)
            if earlier is not None:
                return self._replay_creation(earlier, request_hash, idempotency_key)
        campaign = self.app.new_campaign(name, ruleset, flags, meta={"created_via": "graphql"})
        campaign_id = campaign.id
        access = CampaignAccess(campaign_id=str(campaign_id))
        salt = secrets.token_hex(8)
        secret = _secret(idempotency_key, campaign_id, "gm", salt)
        token = _token(campaign_id, "gm", secret)
        access.issue(
            token_id="gm",
            token_hash=hash_token(token),
            role=GM,
            characters=[],
            label="GM",
            salt=salt,
            key_hash=key_hash,
            request_hash=request_hash,
            issued_at=_now(),
        )
        aggregates: list[Aggregate] = [access]
        if key_hash:
            aggregates.append(
                CampaignCreation(key_hash=key_hash, campaign_id=str(campaign_id), request_hash=request_hash)
            )
        try:
            # One transaction: the campaign, its GM token and the key's record are stored together
            # or not at all (a failure leaves no campaign without a token behind).
            self.app.save(campaign, *aggregates)
        except IntegrityError:
            earlier = self._creation(key_hash) if key_hash else None
            if earlier is not None and earlier.campaign_id == str(campaign_id):
                self.app.adopt(campaign)  # our own save, retried by the library after a lost answer
                return campaign_id, token, False
            if earlier is None or idempotency_key is None:
                raise Conflict("the campaign could not be created; try again", field="campaign") from None
            # A concurrent request with the same key won: answer with its campaign.
            return self._replay_creation(earlier, request_hash, idempotency_key)
        self.app.adopt(campaign)
        return campaign_id, token, False

    def _creation(self, key_hash: str) -> CampaignCreation | None:
        try:
            found = self.app.repository.get(uuid5(KEYS_NAMESPACE, key_hash))
        except AggregateNotFoundError:
            return None
        return found if isinstance(found, CampaignCreation) else None

    def _replay_creation(
        self, earlier: CampaignCreation, request_hash: str, key: str
    ) -> tuple[UUID, str, bool]:
        if earlier.request_hash != request_hash:
            raise InvalidInput(
                "this idempotency key was used for a different request",
                field="idempotencyKey",
                code="IDEMPOTENCY_KEY_REUSED",
            )
        campaign_id = UUID(earlier.campaign_id)
        access = self._load(campaign_id)
        if access is None:  # pragma: no cover - saved together with the creation record
            raise NotFound("no such campaign", field="campaign")
        gm = access.tokens["gm"]
        return campaign_id, _token(campaign_id, "gm", _secret(key, campaign_id, "gm", gm["salt"])), True

    # ---------------------------------------------------------------- tokens
    def issue(
        self,
        campaign_id: UUID,
        role: str,
        characters: list[str],
        label: str,
        idempotency_key: str | None,
    ) -> Issued:
        if role not in ROLES:
            raise InvalidInput(f"role must be one of {', '.join(ROLES)}", field="role")
        if role == PLAYER and not characters:
            raise InvalidInput("a player token is bound to at least one character", field="characterIds")
        if role != PLAYER and characters:
            raise InvalidInput("only player tokens are bound to characters", field="characterIds")
        limits.check_text(label, "label", limits.MAX_NAME, "a label")
        request_hash = _fingerprint({"role": role, "characters": sorted(characters), "label": label})
        key_hash = ""
        if idempotency_key is not None:
            check_secret_key(idempotency_key)
            key_hash = hash_token(idempotency_key)
        for _attempt in range(MAX_ATTEMPTS):
            access = self._require(campaign_id)
            if key_hash and key_hash in access.keys:
                earlier = access.tokens[access.keys[key_hash]]
                if earlier["request_hash"] != request_hash:
                    raise InvalidInput(
                        "this idempotency key was used for a different request",
                        field="idempotencyKey",
                        code="IDEMPOTENCY_KEY_REUSED",
                    )
                assert idempotency_key is not None
                tid = earlier["token_id"]
                secret = _secret(idempotency_key, campaign_id, tid, earlier["salt"])
                return Issued(tid, _token(campaign_id, tid, secret), True)
            tid = secrets.token_hex(6)
            salt = secrets.token_hex(8)
            token = _token(campaign_id, tid, _secret(idempotency_key, campaign_id, tid, salt))
            access.issue(
                token_id=tid,
                token_hash=hash_token(token),
                role=role,
                characters=list(characters),
                label=label,
                salt=salt,
                key_hash=key_hash,
                request_hash=request_hash,
                issued_at=_now(),
            )
            try:
                self.app.save(access)
            except IntegrityError:
                self._forget(campaign_id)
                continue
            except BaseException:
                self._forget(campaign_id)  # the cached copy holds an event the store may not
                raise
            return Issued(tid, token, False)
        raise Conflict("the campaign's tokens kept changing; try again", field="accessToken")

    def grant_gm(self, campaign_id: UUID, label: str = "GM (command line)") -> str:
        """A new GM token for a campaign made outside GraphQL (``chronicle demo``, ``chronicle
        import``) or whose GM lost every token: the operator's way in. Only its hash is kept."""
        # NOT_FOUND for a campaign that does not exist (or whose import never completed); read
        # from its first and newest stored events, not loaded (a whole fold, for a token)
        self.app.stored(campaign_id)
        for _attempt in range(MAX_ATTEMPTS):
            access = self._load(campaign_id)
            if access is None:
                access = CampaignAccess(campaign_id=str(campaign_id))
            tid = "gm" if not access.tokens else f"gm-{secrets.token_hex(4)}"
            salt = secrets.token_hex(8)
            token = _token(campaign_id, tid, _secret(None, campaign_id, tid, salt))
            access.issue(
                token_id=tid,
                token_hash=hash_token(token),
                role=GM,
                characters=[],
                label=label,
                salt=salt,
                key_hash="",
                request_hash="",
                issued_at=_now(),
            )
            try:
                self.app.save(access)
            except IntegrityError:
                self._forget(campaign_id)
                continue
            except BaseException:
                self._forget(campaign_id)  # the cached copy holds an event the store may not
                raise
            return token
        raise Conflict("the campaign's tokens kept changing; try again", field="accessToken")

    def revoke(self, campaign_id: UUID, token_id: str) -> tuple[dict[str, Any], bool]:
        """Revoke a token; revoking a revoked token is a harmless repeat (replayed=True)."""
        for _attempt in range(MAX_ATTEMPTS):
            access = self._require(campaign_id)
            token = access.tokens.get(token_id)
            if token is None:
                raise NotFound("no such access token", field="accessTokenId")
            if token["revoked_at"] is not None:
                return dict(token), True
            if token["role"] == GM and not any(
                t["role"] == GM and t["revoked_at"] is None and t["token_id"] != token_id
                for t in access.tokens.values()
            ):
                raise InvalidInput(
                    "the campaign's last GM token cannot be revoked",
                    field="accessTokenId",
                    code="LAST_GM_TOKEN",
                )
            access.revoke(token_id)
            try:
                self.app.save(access)
            except IntegrityError:
                self._forget(campaign_id)
                continue
            except BaseException:
                self._forget(campaign_id)  # the cached copy holds an event the store may not
                raise
            return dict(access.tokens[token_id]), False
        raise Conflict("the campaign's tokens kept changing; try again", field="accessToken")

    def tokens(self, campaign_id: UUID) -> list[dict[str, Any]]:
        access = self._require(campaign_id)
        return [dict(t) for t in access.tokens.values()]

    def _require(self, campaign_id: UUID) -> CampaignAccess:
        access = self._load(campaign_id)
        if access is None:
            raise NotFound("no such campaign", field="campaign")
        return access

    # -------------------------------------------------------------- checking
    def authenticate(self, token: str) -> Principal | None:
        """The principal a bearer token stands for, or None (unknown, malformed or revoked)."""
        parsed = parse_token(token)
        if parsed is None:
            return None
        campaign_id, token_id = parsed
        try:
            access = self._load(campaign_id)
        except DomainError:  # pragma: no cover
            return None
        if access is None:
            return None
        entry = access.tokens.get(token_id)
        if entry is None or entry["revoked_at"] is not None:
            return None
        if not hmac.compare_digest(entry["token_hash"], hash_token(token)):
            return None
        return Principal(campaign_id, token_id, entry["role"], frozenset(entry["characters"]))


_HEX = frozenset("0123456789abcdefABCDEF")
_BASE64URL = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
SECRET_KEY_RULE = (
    "the idempotency key of a mutation that issues a token is a secret of at least 128 bits: "
    "32 or more hex digits (a UUID will do) or 22 or more base64url characters, "
    "random for each request (e.g. crypto.randomUUID())"
)


def check_secret_key(key: Any) -> str:
    """An idempotency key that can guard a token: at least 128 bits as written, not an obvious pattern.

    The key is what a retry proves itself with (the token is derived from it), so it must not
    be guessable. Written in hex (hyphens ignored, so a UUID passes) it needs 32 digits; else
    22 characters of the base64url alphabet (``A-Z a-z 0-9 - _``). Fewer than 6 distinct
    characters (``aaaa...``, ``0101...``) is refused as a pattern; a random key of that length
    has that few with a probability below 10^-12.
    """
    if not isinstance(key, str) or len(key) > limits.MAX_NAME:
        raise InvalidInput(SECRET_KEY_RULE, field="idempotencyKey")
    digits = key.replace("-", "")
    strong = (set(digits) <= _HEX and len(digits) >= 32) or (set(key) <= _BASE64URL and len(key) >= 22)
    if not strong or len(set(digits)) < 6:
        raise InvalidInput(SECRET_KEY_RULE, field="idempotencyKey")
    return key
