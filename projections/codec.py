"""Storing any text the event store accepted in the view tables, losslessly.

The event store keeps facts as JSON bytes, so it accepts strings the view tables refuse:
PostgreSQL ``text`` and ``jsonb`` reject U+0000 (NUL), ``jsonb`` rejects ``NaN`` and
infinities, and neither store can encode a lone surrogate (U+D800..U+DFFF) as UTF-8. The
views escape exactly those, and read them back:

- in every string (text columns, and JSON strings and object keys), each of U+0000,
  U+D800..U+DFFF and the escape character U+E000 itself is written as U+E000 followed by
  its code point in four upper-case hex digits: ``"a\\x00b"`` is stored as
  ``"a\\ue0000000b"``, ``"\\ue000"`` as ``"\\ue000E000"``;
- a non-finite float in JSON is written as the string U+E000 + ``NaN``, ``+Inf`` or ``-Inf``.

U+E000 is the first private-use code point: no text of the game uses it, so every other
string is stored byte for byte as it was (SQL filters on ids and names keep working), and
since the escape character is itself escaped, decoding is exact. Read functions of
:mod:`projections.storage` decode; anyone reading the tables with SQL sees the escapes.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

import orjson

__all__ = ["ESCAPE", "decode_json", "decode_text", "dumps", "encode_json", "encode_text", "loads"]

ESCAPE = "\ue000"
_ESCAPE_BYTES = ESCAPE.encode()
_UNSAFE = re.compile("[\x00\ud800-\udfff\ue000]")
_ESCAPED = re.compile("\ue000([0-9A-F]{4})")
_FLOATS = {ESCAPE + "NaN": math.nan, ESCAPE + "+Inf": math.inf, ESCAPE + "-Inf": -math.inf}
_dump_fast = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, check_circular=False).encode
_dump_safe = json.JSONEncoder(
    separators=(",", ":"), ensure_ascii=False, check_circular=False, allow_nan=False
).encode
# orjson for plain JSON data only: what the json module would refuse or write otherwise (a
# dataclass, a datetime, a subclass of str or int...) is refused here too, and takes its path
_ORJSON_PLAIN = (
    orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_SUBCLASS
)


def _escape(match: re.Match[str]) -> str:
    return f"{ESCAPE}{ord(match.group()):04X}"


def _unescape(match: re.Match[str]) -> str:
    return chr(int(match.group(1), 16))


def encode_text(value: str) -> str:
    """``value`` with NUL, surrogates and U+E000 escaped (unchanged when it has none)."""
    if value.isascii() and "\x00" not in value:  # (isascii reads a flag: no scan)
        return value
    return _UNSAFE.sub(_escape, value) if _UNSAFE.search(value) else value


def decode_text(value: str) -> str:
    """The inverse of :func:`encode_text`."""
    return _ESCAPED.sub(_unescape, value) if ESCAPE in value else value


def encode_json(value: Any) -> Any:
    """A copy of a JSON value with every string and key encoded and non-finite floats marked."""
    if isinstance(value, str):
        return encode_text(value)
    if isinstance(value, dict):
        return {encode_text(str(k)) if isinstance(k, str) else k: encode_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [encode_json(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return ESCAPE + ("NaN" if math.isnan(value) else "+Inf" if value > 0 else "-Inf")
    return value


def decode_json(value: Any) -> Any:
    """The inverse of :func:`encode_json`."""
    if isinstance(value, str):
        if ESCAPE not in value:
            return value
        return _FLOATS[value] if value in _FLOATS else decode_text(value)
    if isinstance(value, dict):
        return {decode_text(k): decode_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [decode_json(v) for v in value]
    return value


def dumps(value: Any) -> str:
    """JSON text that both stores accept for any JSON-like value (the common case costs one dump).

    Written by orjson (about 5x the json module's speed: a rebuild dumps three values a fact)
    unless it cannot tell or write the value as the json module does: it refuses keys that are
    not strings, integers past 64 bits, lone surrogates and any type it is not given plainly
    (then the json module writes it), and it writes NaN and infinities as ``null``, so a value
    whose text has a ``null`` is searched for them (:func:`_non_finite`) and one that holds any
    takes the exact path (below). Either way the
    value written is the same; the text may differ (orjson writes ``1e-7`` where the json module
    writes ``1e-07``), so compare rows by value, never by text. (Values the json module refuses
    that orjson writes: a ``uuid.UUID``, as its text, and an ``enum.Enum`` member, as its value.
    Rows hold JSON data only.)"""
    try:
        text = orjson.dumps(value, option=_ORJSON_PLAIN).decode()
    except TypeError:  # (orjson.JSONEncodeError is one)
        text = None
    if text is None:
        text = _dump_fast(value)
    elif "null" in text and _non_finite(value):  # (a walk: a third of the json module's dump)
        return _dump_safe(encode_json(value))
    # json escapes NUL as \u0000 and writes non-finite floats as bare NaN/Infinity; a string
    # that merely contains such text only takes the slow path, which is exact as well. ASCII
    # text (known without a scan) holds no surrogate and no U+E000: no search for them.
    if "\\u0000" in text or "NaN" in text or "Infinity" in text:
        return _dump_safe(encode_json(value))
    if not text.isascii() and _UNSAFE.search(text):
        return _dump_safe(encode_json(value))
    return text


def _non_finite(value: Any) -> bool:
    """Whether a NaN or an infinity is anywhere in ``value`` (what orjson wrote: dictionaries,
    lists and tuples of plain JSON data)."""
    t = type(value)
    if t is float:
        return value != value or value in _INFINITE
    if t is dict:
        value = value.values()
    elif t is not list and t is not tuple:
        return False
    for v in value:
        t = type(v)
        if (t is dict or t is list or t is tuple or t is float) and _non_finite(v):
            return True
    return False


_INFINITE = (math.inf, -math.inf)


def loads(data: str | bytes | bytearray | memoryview) -> Any:
    """Parse JSON text written by :func:`dumps` (also as bytes, as psycopg hands it over)."""
    if isinstance(data, memoryview):
        data = bytes(data)
    value = json.loads(data)
    escaped = (ESCAPE in data) if isinstance(data, str) else (_ESCAPE_BYTES in data)
    return decode_json(value) if escaped else value
