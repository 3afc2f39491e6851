"""Stored JSON read exactly as ``json.loads`` reads it, at orjson's speed where that is exact.

orjson decodes about twice as fast, but it reads an integer past 64 bits as a float without a
word (orjson 3.13: ``-9223372036854775809`` -> ``-9.2e18``; json reads it exactly), and it refuses
what json reads (NaN, Infinity, 1e400, a lone surrogate). A text holding a run of 19 digits
(every such integer has one) or one orjson refuses is read by json.

The run is found by mapping every digit to "0" and looking for 19 of them: 0.5 us a stored fact,
where ``re``'s ``[0-9]{19}`` took 3.4-4.0 us (more than orjson's decode).
"""

from __future__ import annotations

import json
from typing import Any

import orjson

_DIGITS = bytes.maketrans(b"123456789", b"000000000")
_LONG_NUMBER = b"0" * 19
_DECODE = json.JSONDecoder().decode  # one decoder (no per-call setup)


def loads_exact(raw: bytes) -> Any:
    """``json.loads(raw)``, by orjson where orjson reads the same."""
    if _LONG_NUMBER not in raw.translate(_DIGITS):
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError:
            pass
    return _DECODE(raw.decode())
