"""``python -m bench.foldcheck URL CAMPAIGN_ID``: hashes of what a cold load folds, to check that
an optimisation of the load or the fold changes nothing (run it on both branches, compare).

The campaign is loaded as a fresh process loads it (``ChronicleApplication.campaign``, no
snapshot read or written), then hashed: every fact's outcome and orphan reason (a replay from
the start), the present state (the ruleset's ``dump_state``), the orphans, the snapshot a
capture would persist (state, orphans, pinned facts, indexes), and every checkpoint of both
series (corrected and recorded: position and state). Prints one JSON object; equal objects on
two branches mean the same fold.
"""

from __future__ import annotations

import hashlib
import json
import sys
from typing import Any
from uuid import UUID


def _h() -> Any:
    return hashlib.sha256()


def _put(h: Any, value: Any) -> None:
    h.update(json.dumps(value, sort_keys=True, separators=(",", ":"), default=repr).encode())
    h.update(b"\n")


def check(url: str, campaign_id: str) -> dict[str, Any]:
    from api.service.settings import Settings
    from api.service.store import open_application

    app = open_application(Settings(database_url=url, snapshot_every=0))
    try:
        campaign = app.campaign(UUID(campaign_id))
        ledger = campaign.ledger
        rules = ledger.ruleset
        state = ledger.state
        out: dict[str, Any] = {"facts": ledger.last_seq, "orphans_n": len(ledger.orphans)}
        h = _h()
        _put(h, rules.dump_state(state))
        out["state"] = h.hexdigest()
        h = _h()
        _put(h, sorted(ledger.orphans.pairs()))
        out["orphans"] = h.hexdigest()
        h = _h()
        _put(h, ledger.capture().to_json())
        out["capture"] = h.hexdigest()
        for name, series in (("checkpoints", ledger._checkpoints), ("recorded", ledger._recorded)):
            h = _h()
            count = 0
            for j, point in enumerate(series.points):
                if point is None:
                    continue
                p, cp, orphans = series.restore(j)
                _put(h, [p.seq, p.n, rules.dump_state(cp), sorted(orphans.pairs())])
                count += 1
            out[name] = h.hexdigest()
            out[f"{name}_n"] = count
        h = _h()

        def sink(e: Any, outcome: Any, orphan: Any) -> None:
            _put(h, [e.seq, outcome, orphan])

        final = ledger.replay(sink)
        out["outcomes"] = h.hexdigest()
        h = _h()
        _put(h, rules.dump_state(final))
        out["replayed_state_same"] = h.hexdigest() == out["state"]
        return out
    finally:
        app.close()


def main(argv: list[str]) -> int:
    print(json.dumps(check(argv[0], argv[1]), indent=1, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
