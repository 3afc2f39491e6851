"""Input limits: what can be stored at all, whatever the fact (docs/errors.md, "Input limits").

Every payload is checked against these before its schema (``domain.core.catalogue``), and the
API checks its inputs with the same functions, so the limits are one set of rules: text that is
valid Unicode without control characters and not too long, JSON not too deep, too big or with
numbers beyond what every JSON reader keeps exactly. Pure.
"""

from __future__ import annotations

import math
import re
from typing import Any

from domain.errors import InvalidInput

# --- input limits: every payload is checked against these before anything else (docs/errors.md) ---
MAX_TEXT = 2000  # characters in any one string of a payload (free text, ids, strings inside JSON)
MAX_NAME = 200  # a campaign's name, an access token's label, an idempotency key, a JSON object key
MAX_JSON_DEPTH = 20  # nesting of objects and lists (the payload object itself is level 1)
MAX_JSON_VALUES = 5000  # values (objects, lists, strings, numbers, ...) in one JSON input
MAX_JSON_TEXT = 100_000  # characters of all strings and keys of one JSON input together
MAX_SAFE_INTEGER = 2**53 - 1  # the largest integer every JSON reader keeps exactly
MAX_POSITION = 2**31 - 1  # a fact's position
# C0 and C1 control characters and DEL, except tab, line feed and carriage return.
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def text_problem(value: str, limit: int = MAX_TEXT) -> str | None:
    """Why ``value`` cannot be stored as text (too long, a control character, not valid Unicode),
    or None. Tab, line feed and carriage return are allowed."""
    if len(value) > limit:
        return f"is longer than {limit} characters"
    found = _CONTROL.search(value)
    if found:
        return f"contains the control character U+{ord(found.group()):04X}"
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        return f"contains U+{ord(value[exc.start]):04X}, a lone surrogate (not valid Unicode text)"
    return None


def check_text(value: Any, field: str, limit: int = MAX_TEXT, what: str | None = None) -> str:
    """``value`` if it is a string that can be stored (see :func:`text_problem`); else INVALID_INPUT."""
    if not isinstance(value, str):
        raise InvalidInput(f"{what or field} must be a string", field=field)
    problem = text_problem(value, limit)
    if problem:
        raise InvalidInput(f"{what or field} {problem}", field=field)
    return value


def number_problem(value: int | float) -> str | None:
    """Why a number cannot be stored (NaN, infinite, beyond the exact integers of JSON), or None."""
    if isinstance(value, float) and not math.isfinite(value):
        return "is not a finite number"
    if abs(value) > MAX_SAFE_INTEGER:
        return f"is out of range (at most {MAX_SAFE_INTEGER} either way)"
    return None


def json_problem(value: Any, path: str = "", max_depth: int = MAX_JSON_DEPTH) -> tuple[str, str] | None:
    """The first thing in a JSON value that cannot be stored, as (dotted path, problem), or None.

    Checks every string and object key (:func:`text_problem`; keys at most ``MAX_NAME``), every
    number (:func:`number_problem`), the nesting (``max_depth``: ``MAX_JSON_DEPTH`` unless an
    outer layer wraps the JSON in more levels of its own), the number of values
    (``MAX_JSON_VALUES``) and the characters of all strings together (``MAX_JSON_TEXT``). Walks
    without recursion, so no input is too deep to be refused.
    """
    if _fine(value, max_depth):  # the common case, checked without naming every path
        return None
    return _problem(value, path, max_depth)


def _fine(value: Any, max_depth: int) -> bool:
    """True only if :func:`_problem` finds nothing: the same limits, walked without building
    the dotted path of every value (only a refusal needs it). Anything unusual -- a subclass of
    a JSON type, any limit reached -- answers False, and the full walk says what is wrong."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    values = chars = 0
    control = _CONTROL.search
    while stack:
        item, level = stack.pop()
        values += 1
        if values > MAX_JSON_VALUES:
            return False
        kind = type(item)
        if kind is str:
            chars += len(item)
            if len(item) > MAX_TEXT or control(item) or not _encodes(item):
                return False
        elif kind is int or kind is float:
            if number_problem(item):
                return False
        elif kind is dict:
            if level > max_depth:
                return False
            for key, v in item.items():
                if type(key) is not str or len(key) > MAX_NAME or control(key) or not _encodes(key):
                    return False
                chars += len(key)
                stack.append((v, level + 1))
        elif kind is list:
            if level > max_depth:
                return False
            stack.extend((v, level + 1) for v in item)
        elif not (item is None or kind is bool):
            return False
        if chars > MAX_JSON_TEXT:
            return False
    return True


def _encodes(text: str) -> bool:
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _problem(value: Any, path: str, max_depth: int) -> tuple[str, str] | None:
    """:func:`json_problem`'s full walk, naming where the problem is."""
    stack: list[tuple[Any, str, int]] = [(value, path, 1)]
    values = chars = 0
    while stack:
        item, where, level = stack.pop()
        values += 1
        if values > MAX_JSON_VALUES:
            return path, f"has more than {MAX_JSON_VALUES} values"
        if isinstance(item, str):
            chars += len(item)
            problem = text_problem(item)
        elif isinstance(item, bool) or item is None:
            problem = None
        elif isinstance(item, (int, float)):
            problem = number_problem(item)
        elif isinstance(item, (dict, list)):
            if level > max_depth:  # named by its outermost field: the inner path is just noise
                outer = ".".join(where.split(".")[: len(path.split(".")) + 1 if path else 1])
                return outer, f"is nested more than {max_depth} levels deep"
            problem = None
            if isinstance(item, list):
                stack.extend((v, f"{where}.{i}" if where else str(i), level + 1) for i, v in enumerate(item))
            else:
                for key, v in item.items():
                    inner = f"{where}.{key}" if where else str(key)
                    if not isinstance(key, str):
                        return where, "has a key that is not a string"
                    chars += len(key)
                    key_problem = text_problem(key, MAX_NAME)
                    if key_problem:
                        return where or path, f"has a key that {key_problem}"
                    stack.append((v, inner, level + 1))
        else:
            problem = f"is not a JSON value ({type(item).__name__})"
        if problem:
            return where, problem
        if chars > MAX_JSON_TEXT:
            return path, f"has more than {MAX_JSON_TEXT} characters of text"
    return None


def check_json(value: Any, field: str) -> Any:
    """``value`` if it is JSON that can be stored (see :func:`json_problem`); else INVALID_INPUT
    naming the innermost field at fault (``field.key.0.key``)."""
    found = json_problem(value, field)
    if found:
        where, problem = found
        raise InvalidInput(f"{where} {problem}", field=where)
    return value
