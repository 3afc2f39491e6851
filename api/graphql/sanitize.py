"""The GraphQL input sanitiser: text, numbers and nesting of every input, checked before anything runs.

Two layers, each in one place:

- :func:`decode_json` reads request bodies (HTTP, and WebSocket messages): a body nested more
  than ``MAX_BODY_DEPTH`` levels, with an integer of more than ``MAX_NUMBER_DIGITS`` digits or
  with ``NaN``/``Infinity`` is refused as :class:`BodyRefused` (the router answers 400 with a
  JSON body, code ``INVALID_INPUT``) instead of reaching the parser's recursion limit or
  Python's integer-conversion limit (a plain-text 500 before);
- :class:`InputSanitiser` (a schema extension) walks the operation's variables and the literal
  values written in the document before execution: every string (at most ``MAX_TEXT``
  characters, no control characters but tab/line feed/carriage return, no lone surrogates),
  every object key, every number (finite, within ±(2^53−1)) and the nesting
  (``MAX_INPUT_DEPTH``). The first problem refuses the whole operation with one GraphQL error,
  ``extensions: {code: INVALID_INPUT, field: <path>}``, and nothing runs. ``field`` is the
  dotted path inside the argument or variable (``text``, ``payload.value.0``).

The rules themselves are the domain's (``domain.limits.json_problem``), so the API and the
store agree on what is storable; field-specific limits (a campaign's name, a token's label)
are checked where the field is used, and a fact's payload again by the ruleset's fact catalogue.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from graphql import GraphQLError
from graphql.language import (
    ArgumentNode,
    FloatValueNode,
    IntValueNode,
    ListValueNode,
    Node,
    ObjectFieldNode,
    ObjectValueNode,
    StringValueNode,
)
from strawberry.extensions import SchemaExtension

from domain.core import limits

__all__ = [
    "MAX_BODY_DEPTH",
    "BodyRefused",
    "InputSanitiser",
    "decode_json",
    "problem_in_document",
    "variable_problem",
]

# Input objects wrap JSON values a few levels deep (input -> targets -> 0 -> attackRoll -> faces).
MAX_INPUT_DEPTH = limits.MAX_JSON_DEPTH + 5
# A request body wraps the variables two levels deeper ({"variables": {"input": ...}}); anything
# deeper than this is refused while decoding, before any recursive code sees it.
MAX_BODY_DEPTH = 64
MAX_NUMBER_DIGITS = 30


class BodyRefused(json.JSONDecodeError):
    """A request body that is JSON but outside the input limits (a JSONDecodeError, so the
    WebSocket transport treats it as a bad message too)."""

    def __init__(self, reason: str, document: str) -> None:
        super().__init__(reason, document, 0)
        self.reason = reason


def decode_json(data: str | bytes) -> object:
    """``json.loads`` within the input limits (see the module docstring); raises :class:`BodyRefused`."""
    try:  # (encoded surrogates decode, so the sanitiser can name the field that holds one)
        text = data.decode("utf-8", "surrogatepass") if isinstance(data, bytes) else data
    except UnicodeDecodeError:
        raise BodyRefused("the request body is not UTF-8 text", "") from None
    try:
        value = json.loads(text, parse_int=_integer, parse_constant=_constant)
    except BodyRefused:
        raise
    except json.JSONDecodeError:
        raise
    except RecursionError:
        raise BodyRefused(
            f"the request body is nested more than {MAX_BODY_DEPTH} levels deep", text
        ) from None
    except ValueError as exc:  # e.g. Python's limit on integer digits
        raise BodyRefused(f"the request body holds a value out of range: {exc}", text) from None
    if _deeper_than(value, MAX_BODY_DEPTH):
        raise BodyRefused(f"the request body is nested more than {MAX_BODY_DEPTH} levels deep", text)
    return value


def _integer(raw: str) -> int:
    if len(raw.lstrip("-")) > MAX_NUMBER_DIGITS:
        raise BodyRefused(f"the request body holds an integer of more than {MAX_NUMBER_DIGITS} digits", raw)
    return int(raw)


def _constant(raw: str) -> float:
    raise BodyRefused(f"the request body holds {raw}, which is not a JSON number", raw)


def _deeper_than(value: Any, limit: int) -> bool:
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, (dict, list)):
            if level > limit:
                return True
            stack.extend((v, level + 1) for v in (item.values() if isinstance(item, dict) else item))
    return False


def refusal(field: str, problem: str) -> GraphQLError:
    return GraphQLError(f"{field} {problem}", extensions={"code": "INVALID_INPUT", "field": field})


class InputSanitiser(SchemaExtension):
    """Refuses an operation whose variables or literal values are not storable input (module docstring)."""

    def on_execute(self) -> Iterator[None]:
        ec = self.execution_context
        found = _document_problem(ec.query, ec.graphql_document)
        if found is None:
            for name, value in (ec.variables or {}).items():
                found = variable_problem(name, value)
                if found:
                    break
        if found is not None:
            raise refusal(*found)
        yield


def variable_problem(name: str, value: Any) -> tuple[str, str] | None:
    """The first thing in a variable's value that is not storable input, as (path, problem). The
    path starts with the variable's name, except for the conventional ``$input`` object, whose
    fields are named as the mutation's userErrors name them (``text``, ``payload.value``)."""
    prefix = "" if name == "input" else name
    found = limits.json_problem(value, prefix, max_depth=MAX_INPUT_DEPTH)
    if found is None:
        return None
    where, problem = found
    return (where or name), problem


# Clients send the same few documents over and over: the walk's answer is kept per document text.
_CHECKED: dict[str, tuple[str, str] | None] = {}
_CHECKED_MAX, _CHECKED_LONGEST = 512, 20_000


def _document_problem(query: str | None, document: Any) -> tuple[str, str] | None:
    if query is not None and query in _CHECKED:
        return _CHECKED[query]
    found = problem_in_document(document) if isinstance(document, Node) else None
    if query is not None and len(query) <= _CHECKED_LONGEST:
        if len(_CHECKED) >= _CHECKED_MAX:
            _CHECKED.pop(next(iter(_CHECKED)), None)
        _CHECKED[query] = found
    return found


def problem_in_document(document: Node) -> tuple[str, str] | None:
    """The first literal value in a parsed document that is not storable input, as (path, problem)."""
    stack: list[tuple[Node, str, int]] = [(document, "", 0)]
    while stack:
        node, path, level = stack.pop()
        if isinstance(node, StringValueNode):
            problem = limits.text_problem(node.value)
            if problem:
                return path, problem
        elif isinstance(node, IntValueNode):
            digits = node.value.lstrip("-")
            if len(digits) > MAX_NUMBER_DIGITS or abs(int(node.value)) > limits.MAX_SAFE_INTEGER:
                return path, f"is out of range (at most {limits.MAX_SAFE_INTEGER} either way)"
        elif isinstance(node, FloatValueNode):
            problem = limits.number_problem(float(node.value))
            if problem:
                return path, problem
        elif isinstance(node, (ObjectValueNode, ListValueNode)):
            if level >= MAX_INPUT_DEPTH:
                return path, f"is nested more than {MAX_INPUT_DEPTH} levels deep"
            if isinstance(node, ListValueNode):
                stack.extend((v, f"{path}.{i}", level + 1) for i, v in enumerate(node.values))
            else:
                stack.extend((f, path, level + 1) for f in node.fields)
        elif isinstance(node, ObjectFieldNode):
            problem = limits.text_problem(node.name.value, limits.MAX_NAME)
            where = f"{path}.{node.name.value}" if path else node.name.value
            if problem:
                return path or where, f"has a key that {problem}"
            stack.append((node.value, where, level))
        elif isinstance(node, ArgumentNode):
            name = node.name.value
            stack.append((node.value, "" if name == "input" else name, 0))
        else:
            for key in node.keys:
                child = getattr(node, key, None)
                if isinstance(child, Node):
                    stack.append((child, path, level))
                elif isinstance(child, (list, tuple)):
                    stack.extend((c, path, level) for c in child if isinstance(c, Node))
    return None
