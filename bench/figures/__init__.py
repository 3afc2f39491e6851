"""The figure families, one module each, and the order a (store, size) cell runs them in.

A cell runs: the fold (P2, and the floors the others share), the read models (P5: live follow,
then rebuild), the exports (P6), then one server session (COLD, MEM, QRY, MUT, W50, P4, P3 --
last, since revokes change the campaign), then two servers at once (R2, PostgreSQL only). The
1k baseline of each store runs first (its queries and mutations are what QRY and MUT compare
against); SUB runs once, on PostgreSQL.
"""

from __future__ import annotations

from bench.figures import exports, fold, readmodels, replicas, requests, subscriptions

IDS: dict[str, str] = {
    "COLD": "cold load: a fresh server's first answer vs a full fold",
    "MEM": "server RSS per 100k facts, and after 3 early revokes",
    "QRY": "queries (one character, the encounter, a history page) vs the same on 1k facts",
    "MUT": "mutation mix at 1 and 20 clients vs bare saves; p50 vs the same on 1k facts",
    "W50": "50 writers on one campaign: p99",
    "R2": "two servers on one PostgreSQL store: slowest mutation, lost and doubled mutations",
    "P2": "full fold vs decode-only read; fold cost per fact across sizes",
    "P3": "revoke in the last 1%, at 50%, early, vs a full fold",
    "P4": "as-of (corrected, recorded) vs a full fold",
    "P5": "read models: chronicle rebuild and the live worker vs decode-only read and raw row writes",
    "P6": "JSONL export and import: process RSS growth and speed",
    "SUB": "subscription fan-out, 200 subscribers vs 1",
}
SERVER_IDS = frozenset(requests.IDS)

__all__ = ["IDS", "SERVER_IDS", "exports", "fold", "readmodels", "replicas", "requests", "subscriptions"]
