"""Dice notation, server-side and manual rolls, and the Roll record (RULES C0.3).

A *Roll record* is the JSON-able dict stored inside events wherever dice are
rolled. It holds lists and dicts only (no tuples, no sets), so a record reads
back from the event store exactly as it was written::

    {"expression": "2d8+4",        # normalised notation, weapon dice expanded
     "notation": "2[W]+4",         # only present when it differs from expression
     "terms": [{"sides": 8, "faces": [3, 5], "sign": 1},
               {"const": 4}],
     "manual": False}              # True: faces typed in from physical dice

A dice term may carry ``"keep": "h1"`` / ``"l1"`` / ``"hN"`` / ``"lN"`` (keep the
highest / lowest N faces, from ``2d20kh1``, ``2d20kl1``; ``4d6pl1`` "drop the
lowest" is stored as ``"keep": "h3"``). Its ``faces`` list holds *every* die
rolled, dropped ones included, in rolling order. A constant term carries its
sign in the value (``1d6-2`` gives ``{"const": -2}``).

Why only linear expressions
---------------------------
Replay never re-rolls: the faces are facts. The fold recomputes a total from
the faces on every fact it folds, so :func:`roll_total` must be a cheap pure
function that never parses notation. That is only possible when an
expression is a signed sum of dice groups and whole-number constants. The
accepted grammar is therefore:

* dice groups ``NdS`` (N defaults to 1; ``d%`` is a d100 whose "00" face is
  recorded as 100), optionally with one keep/drop-highest/lowest operation
  (``kh``/``kl``/``ph``/``pl`` followed by a count);
* whole-number constants, with ``+``/``-`` between terms and unary ``+``/``-``;
* parentheses, which only regroup signs (``10-(1d6+2)`` is ``10 - 1d6 - 2``);
* weapon dice ``n[W]`` (SW-26) and ``ndW`` (Orcus): with a weapon die ``XdY``
  they expand to ``(n*X)dY`` *before* parsing, so every recorded face is one
  physical die (heavy flail 2d6: ``2[W]`` -> ``4d6``).

Everything else d20 understands -- ``*``, ``/``, ``%``, comparisons, sets such
as ``(1d6, 3)``, rerolls (``rr``/``ro``/``ra``), exploding dice (``e``),
``mi``/``ma``, keep by value (``k3``, ``k>3``) and annotations (``[fire]``) --
is refused with one :class:`~domain.errors.DiceError`.

Limits
------
The raw text is capped at :data:`MAX_EXPRESSION_LENGTH` characters *before*
anything parses it (d20 itself raises ``RecursionError`` on long input and
``ValueError`` on huge literals). An expression may roll at most
:data:`MAX_DICE` dice in total (dropped dice included), dice have at most
:data:`MAX_SIDES` sides and a constant's absolute value is at most
:data:`MAX_CONSTANT`. Every bad expression raises exactly one ``DiceError``;
no exception of the d20 library or of the parser escapes this module.

Parsing uses the d20 library (1.1.2) through a private ``d20.Roller`` guarded
by a lock: d20's parse cache is an unsynchronised ``cachetools.LFUCache``
keyed on the text *with spaces removed* (so ``"1 2"`` would get the cached
tree of ``"12"``). This module rejects spaces inside tokens itself and hands
d20 whitespace-free text only. Rolling never uses d20 (which draws from the
module-global ``random``): dice are rolled here from the caller's
``random.Random`` (by default ``random.SystemRandom()``).
"""

from __future__ import annotations

import random
import re
import threading
from collections.abc import Sequence
from typing import Any, Final

import d20  # type: ignore[import-untyped, unused-ignore]

from domain.errors import DiceError

__all__ = [
    "MAX_CONSTANT",
    "MAX_DICE",
    "MAX_EXPRESSION_LENGTH",
    "MAX_SIDES",
    "Roll",
    "Term",
    "describe",
    "dice_count",
    "dice_of",
    "maximum",
    "natural",
    "single_face",
    "parse",
    "percentile",
    "roll",
    "roll_total",
    "validate_roll",
    "with_face",
]

MAX_EXPRESSION_LENGTH: Final = 100
"""Longest accepted expression, in characters (checked before parsing)."""
MAX_DICE: Final = 100
"""Most dice one expression may roll, dropped dice included."""
MAX_SIDES: Final = 1000
"""Most sides a die may have."""
MAX_CONSTANT: Final = 10_000
"""Largest absolute value of one constant term."""

Term = dict[str, Any]
"""A term: ``{"sides", "faces", "sign"[, "keep"]}`` or ``{"const"}``."""
Roll = dict[str, Any]
"""A Roll record: ``{"expression"[, "notation"], "terms", "manual"}``."""

_ROLL_KEYS: Final = frozenset({"expression", "notation", "terms", "manual"})
_DICE_KEYS: Final = frozenset({"sides", "faces", "sign", "keep"})
_KEEP_RE: Final = re.compile(r"([hl])([1-9][0-9]*)")
_WEAPON_RE: Final = re.compile(r"([0-9]*)d([0-9]+)")
# n[W] or ndW, not glued to a preceding token (1d6[W]) or a following digit.
_WEAPON_DICE_RE: Final = re.compile(r"(?<![0-9A-Za-z%\]])([0-9]*)(?:\[[Ww]\]|dW)(?![0-9])")
# Whitespace between two characters of one token ("1 2", "2 d6", "1d 6").
_SPACE_IN_TOKEN_RE: Final = re.compile(r"[0-9A-Za-z%\[\]]\s+[0-9A-Za-z%\[\]]")
_SPACE_RE: Final = re.compile(r"\s+")

_ROLLER: Final = d20.Roller()
_PARSE_LOCK: Final = threading.Lock()


# --------------------------------------------------------------------------- #
# Public API
# --------------------------------------------------------------------------- #


def parse(expression: str, *, weapon: str | None = None) -> list[Term]:
    """Return the plan of ``expression``: its terms, with empty ``faces``.

    Dice terms of a plan also carry ``"count"``, the number of dice to roll
    (dropped ones included), which a record's term expresses as
    ``len(faces)``. Validates the notation and every limit.

    >>> parse("2[W]+4", weapon="1d8")
    [{'sides': 8, 'count': 2, 'faces': [], 'sign': 1}, {'const': 4}]
    """
    _, _, terms = _plan(expression, weapon)
    return terms


def dice_count(expression: str, weapon: str | None = None) -> int:
    """Return how many dice ``expression`` rolls, dropped dice included."""
    return sum(int(term.get("count", 0)) for term in parse(expression, weapon=weapon))


def roll(
    expression: str,
    *,
    weapon: str | None = None,
    faces: Sequence[int] | None = None,
    rng: random.Random | None = None,
) -> Roll:
    """Roll ``expression`` and return its Roll record.

    ``faces`` are faces read from physical dice, in term order and counting
    every die (dropped ones too); the count must match exactly and each face
    must lie in ``1..sides`` (a d% "00" is entered as 100). The record is then
    marked ``manual``. Without ``faces`` the dice are rolled here with ``rng``
    (default ``random.SystemRandom()``).
    """
    normalised, notation, plan = _plan(expression, weapon)
    manual = faces is not None
    if faces is not None:
        supplied = _check_manual_faces(faces, plan, normalised)
    else:
        source = rng if rng is not None else random.SystemRandom()
        supplied = [
            source.randint(1, term["sides"]) for term in plan if "sides" in term for _ in range(term["count"])
        ]
    terms: list[Term] = []
    position = 0
    for term in plan:
        if "const" in term:
            terms.append({"const": term["const"]})
            continue
        count = term["count"]
        rolled: Term = {
            "sides": term["sides"],
            "faces": supplied[position : position + count],
            "sign": term["sign"],
        }
        if "keep" in term:
            rolled["keep"] = term["keep"]
        terms.append(rolled)
        position += count
    return _record(normalised, notation, terms, manual)


def roll_total(roll: Roll) -> int:
    """Return the total of a Roll record: kept faces with signs, plus constants.

    Pure and cheap (no parsing): the fold calls it on every fact. Trusts the
    record's structure; run :func:`validate_roll` on untrusted records first.
    """
    total = 0
    for term in roll["terms"]:
        if "const" in term:
            total += term["const"]
            continue
        faces = term["faces"]
        keep = term.get("keep")
        subtotal = sum(faces) if keep is None else sum(sorted(faces, reverse=keep[0] == "h")[: int(keep[1:])])
        total += subtotal if term["sign"] > 0 else -subtotal
    return total


def maximum(roll: Roll | str, *, weapon: str | None = None) -> int:
    """Return the highest total a roll's expression can show (a maximised critical hit).

    Takes a Roll record or an expression (then ``weapon`` expands weapon dice). Every kept
    die that adds shows its top face and every kept die that subtracts shows 1; constants
    count as they are. The faces of a record are ignored: a maximised roll is not rolled.
    """
    terms = parse(roll, weapon=weapon) if isinstance(roll, str) else roll["terms"]
    total = 0
    for term in terms:
        if "const" in term:
            total += term["const"]
            continue
        count = int(term["count"]) if "count" in term else len(term["faces"])
        keep = term.get("keep")
        kept = min(int(keep[1:]), count) if keep else count
        total += term["sides"] * kept if term["sign"] > 0 else -kept
    return total


def dice_of(roll: Roll) -> list[tuple[int, int]]:
    """Return every die of the roll as ``(sides, face)``, in rolling order (dropped dice included).

    The position in this list is the die's index for :func:`with_face`.
    """
    return [(term["sides"], face) for term in roll["terms"] if "faces" in term for face in term["faces"]]


def with_face(roll: Roll, index: int, face: int) -> Roll:
    """Return a copy of the roll with die ``index`` (as :func:`dice_of` counts) showing ``face``.

    For in-game rerolls (a power that rerolls a die): the stored roll is never changed, the
    fold derives the new one. Raises :class:`DiceError` for an index or face that does not fit.
    """
    position = 0
    terms: list[Term] = []
    found = False
    for term in roll["terms"]:
        if "faces" not in term:
            terms.append(dict(term))
            continue
        faces = list(term["faces"])
        if not found and position <= index < position + len(faces):
            _check_face(face, term["sides"], f"die {index}", "new_face")
            faces[index - position] = face
            found = True
        position += len(faces)
        terms.append({**term, "faces": faces})
    if not found:
        raise DiceError(f"the roll has no die {index} (it has {position})", field="die_index")
    return {**roll, "terms": terms}


def natural(roll: Roll) -> int | None:
    """Return the natural d20 face, or None.

    Defined when the roll's dice, all terms together, keep exactly one die and
    that die is an added d20 (``1d20+7``, ``2d20kh1+3``); else None.
    """
    found: int | None = None
    for term in roll["terms"]:
        if "const" in term:
            continue
        faces = term["faces"]
        keep = term.get("keep")
        kept = len(faces) if keep is None else min(int(keep[1:]), len(faces))
        if kept == 0:
            continue
        if found is not None or kept > 1 or term["sides"] != 20 or term["sign"] < 0:
            return None
        found = faces[0] if keep is None else (max(faces) if keep[0] == "h" else min(faces))
    return found


def percentile(roll: Roll) -> int | None:
    """Return the face of a bare percentile roll (``d%`` or ``1d100``: one d100, nothing
    added; the "00" face is 100), or None for any other roll."""
    terms = roll["terms"]
    if len(terms) != 1 or "const" in terms[0]:
        return None
    term = terms[0]
    if term["sides"] != 100 or len(term["faces"]) != 1 or term.get("keep") or term["sign"] < 0:
        return None
    face: int = term["faces"][0]
    return face


def single_face(roll: Roll, sides: int) -> int | None:
    """Return the face of a roll that is exactly one added die of ``sides`` sides and nothing
    else (a recharge d6, ``1d6``); else None."""
    terms = roll["terms"]
    if len(terms) != 1 or "const" in terms[0]:
        return None
    term = terms[0]
    if term["sides"] != sides or len(term["faces"]) != 1 or term["sign"] < 0 or term.get("keep"):
        return None
    face: int = term["faces"][0]
    return face


def validate_roll(roll: Roll) -> Roll:
    """Validate a Roll record from a stored, amended or imported payload.

    Checks the structure, that the expression is valid notation within the
    limits, that the terms are exactly those of the expression (sides, signs,
    keep specs, constants), and that each term has the right number of faces,
    each within ``1..sides``. Unknown keys are refused, in the record and in
    its terms. Returns a fresh, normalised record (canonical
    key order, ``manual`` defaulting to false, ``notation`` dropped when equal
    to ``expression``). Raises :class:`DiceError`.
    """
    if not isinstance(roll, dict):
        raise DiceError("a roll record must be an object", field="roll")
    unknown = sorted(str(key) for key in roll if key not in _ROLL_KEYS)
    if unknown:
        raise DiceError(f"unknown roll record field(s): {', '.join(unknown)}", field="roll")
    expression = roll.get("expression")
    if not isinstance(expression, str):
        raise DiceError("a roll record needs an 'expression' string", field="expression")
    notation = roll.get("notation")
    if notation is not None:
        if not isinstance(notation, str) or not notation.strip():
            raise DiceError("a roll record's 'notation' must be a non-empty string", field="notation")
        if len(notation) > MAX_EXPRESSION_LENGTH:
            raise DiceError(
                f"notation is too long ({len(notation)} characters; at most {MAX_EXPRESSION_LENGTH})",
                field="notation",
            )
    manual = roll.get("manual", False)
    if not isinstance(manual, bool):
        raise DiceError("a roll record's 'manual' must be true or false", field="manual")
    terms = roll.get("terms")
    if not isinstance(terms, list):
        raise DiceError("a roll record needs a 'terms' list", field="terms")

    normalised, _, plan = _plan(expression, None)
    if len(terms) != len(plan):
        raise DiceError(
            f"roll record has {len(terms)} term(s) but {normalised!r} has {len(plan)}", field="terms"
        )
    checked = [
        _check_term(given, planned, index)
        for index, (given, planned) in enumerate(zip(terms, plan, strict=True))
    ]
    return _record(normalised, notation, checked, manual)


def describe(roll: Roll) -> str:
    """Return a human rendering such as ``2d20kh1 (17, ~~4~~) + 3 = 20``.

    Dropped dice are struck through with ``~~x~~``. Used in logs and exports.
    """
    parts: list[str] = []
    for term in roll["terms"]:
        if "const" in term:
            value = int(term["const"])
            parts.append("-" if value < 0 else "+")
            parts.append(str(abs(value)))
            continue
        faces = term["faces"]
        keep = term.get("keep")
        text = f"{term.get('count', len(faces))}d{term['sides']}" + (f"k{keep}" if keep else "")
        if faces:
            flags = _kept_flags(faces, keep)
            shown = (str(face) if kept else f"~~{face}~~" for face, kept in zip(faces, flags, strict=True))
            text += f" ({', '.join(shown)})"
        parts.append("-" if term["sign"] < 0 else "+")
        parts.append(text)
    if not parts:
        return f"0 = {roll_total(roll)}"
    head = parts[1] if parts[0] == "+" else f"-{parts[1]}"
    body = " ".join([head, *parts[2:]])
    return f"{body} = {roll_total(roll)}"


# --------------------------------------------------------------------------- #
# Parsing
# --------------------------------------------------------------------------- #


def _plan(expression: object, weapon: object) -> tuple[str, str | None, list[Term]]:
    """Return (expression, notation or None, plan terms) for raw input."""
    if not isinstance(expression, str):
        raise DiceError("a dice expression must be a string", field="expression")
    if len(expression) > MAX_EXPRESSION_LENGTH:
        raise DiceError(
            f"dice expression is too long ({len(expression)} characters; at most {MAX_EXPRESSION_LENGTH})",
            field="expression",
        )
    if _SPACE_IN_TOKEN_RE.search(expression):
        raise DiceError(
            f"invalid dice expression {expression!r}: unexpected space inside a number or dice group",
            field="expression",
        )
    notation = _SPACE_RE.sub("", expression)
    if not notation:
        raise DiceError("dice expression is empty", field="expression")
    text = _expand_weapon_dice(notation, weapon)
    if len(text) > MAX_EXPRESSION_LENGTH:
        raise DiceError(
            f"dice expression {notation!r} is too long once weapon dice are expanded "
            f"({len(text)} characters; at most {MAX_EXPRESSION_LENGTH})",
            field="expression",
        )
    if "[" in text or "]" in text:
        raise DiceError(
            f"invalid dice expression {notation!r}: brackets are only allowed in weapon dice such as 2[W]",
            field="expression",
        )
    tree = _parse_tree(text)
    terms: list[Term] = []
    _walk(tree, 1, terms, text)
    return text, (notation if notation != text else None), terms


def _expand_weapon_dice(notation: str, weapon: object) -> str:
    """Expand ``n[W]`` / ``ndW`` to ``(n*X)dY`` for a weapon die ``XdY`` (SW-26)."""
    if not _WEAPON_DICE_RE.search(notation):
        return notation
    if weapon is None:
        raise DiceError(
            f"dice expression {notation!r} uses weapon dice [W] but no weapon die was given", field="weapon"
        )
    if not isinstance(weapon, str):
        raise DiceError("a weapon die must be a string such as '1d8'", field="weapon")
    match = _WEAPON_RE.fullmatch(weapon.strip()) if len(weapon) <= MAX_EXPRESSION_LENGTH else None
    if match is None:
        raise DiceError(
            f"invalid weapon die {weapon[:MAX_EXPRESSION_LENGTH]!r}: expected XdY such as '2d6'",
            field="weapon",
        )
    per_weapon = int(match.group(1) or "1")
    sides = int(match.group(2))
    if not 1 <= per_weapon <= MAX_DICE:
        raise DiceError(f"a weapon die needs 1 to {MAX_DICE} dice, not {per_weapon}", field="weapon")
    if not 1 <= sides <= MAX_SIDES:
        raise DiceError(f"a weapon die needs 1 to {MAX_SIDES} sides, not {sides}", field="weapon")

    def expand(found: re.Match[str]) -> str:
        multiple = int(found.group(1) or "1")
        count = multiple * per_weapon
        if multiple < 1:
            raise DiceError(
                f"weapon dice need a multiple of at least 1, not {found.group(0)!r}", field="expression"
            )
        if count > MAX_DICE:
            raise DiceError(
                f"too many dice: {found.group(0)} with {weapon} rolls {count} (at most {MAX_DICE})",
                field="expression",
            )
        return f"{count}d{sides}"

    return _WEAPON_DICE_RE.sub(expand, notation)


def _parse_tree(text: str) -> Any:
    """Parse whitespace-free ``text`` with d20, mapping every failure to DiceError."""
    try:
        with _PARSE_LOCK:
            return _ROLLER.parse(text)
    except d20.RollSyntaxError as exc:
        got = exc.got
        if getattr(got, "type", None) == "$END" or str(got) == "":
            detail = "it ends too early"
        else:
            detail = f"unexpected {str(got)[:10]!r} at position {exc.col}"
        raise _invalid(text, detail) from exc
    except Exception as exc:  # RecursionError, ValueError, lark errors: never leak them.
        raise DiceError(f"invalid dice expression {text!r}", field="expression") from exc


def _walk(node: Any, sign: int, terms: list[Term], text: str) -> None:
    """Flatten a d20 AST into signed terms, refusing anything non-linear."""
    ast = d20.ast
    if isinstance(node, ast.Expression):
        if node.comment:
            raise _invalid(text, "comments are not supported")
        _walk(node.roll, sign, terms, text)
    elif isinstance(node, ast.Parenthetical):
        _walk(node.value, sign, terms, text)
    elif isinstance(node, ast.UnOp):
        if node.op not in ("+", "-"):
            raise _unsupported(node.op, text)
        _walk(node.value, -sign if node.op == "-" else sign, terms, text)
    elif isinstance(node, ast.BinOp):
        if node.op not in ("+", "-"):
            raise _unsupported(node.op, text)
        _walk(node.left, sign, terms, text)
        _walk(node.right, -sign if node.op == "-" else sign, terms, text)
    elif isinstance(node, ast.Literal):
        value = node.value
        if not isinstance(value, int) or isinstance(value, bool):
            raise _invalid(text, f"constants must be whole numbers, not {value!r}")
        if abs(value) > MAX_CONSTANT:
            raise DiceError(f"constant {value} is too large (at most {MAX_CONSTANT})", field="expression")
        terms.append({"const": sign * value})
    elif isinstance(node, ast.Dice):
        _add_dice(node, None, sign, terms, text)
    elif isinstance(node, ast.OperatedDice):
        _add_dice(node.value, _keep_spec(node, text), sign, terms, text)
    elif isinstance(node, (ast.NumberSet, ast.OperatedSet)):
        raise _invalid(text, "sets and set operations are not supported")
    elif isinstance(node, ast.AnnotatedNumber):
        raise _invalid(text, "annotations are not supported")
    else:
        raise DiceError(f"invalid dice expression {text!r}", field="expression")


def _add_dice(dice: Any, keep: tuple[str, int] | None, sign: int, terms: list[Term], text: str) -> None:
    count = int(dice.num)
    sides = 100 if dice.size == "%" else int(dice.size)
    if count < 1:
        raise _invalid(text, "a dice group needs at least 1 die")
    if sides < 1:
        raise _invalid(text, "a die needs at least 1 side")
    if sides > MAX_SIDES:
        raise DiceError(f"a d{sides} has too many sides (at most {MAX_SIDES})", field="expression")
    total = count + sum(term.get("count", 0) for term in terms)
    if total > MAX_DICE:
        raise DiceError(f"too many dice in {text!r} (at most {MAX_DICE} per roll)", field="expression")
    term: Term = {"sides": sides, "count": count, "faces": [], "sign": sign}
    if keep is not None:
        end, number = keep
        if number > count:
            raise _invalid(text, f"cannot keep {number} of {count} dice")
        term["keep"] = f"{end}{number}"
    terms.append(term)


def _keep_spec(node: Any, text: str) -> tuple[str, int]:
    """Return (``"h"``|``"l"``, N) from ``khN``/``klN``/``phN``/``plN``.

    Drops are turned into keeps: dropping the lowest N of M dice keeps the
    highest M-N (so ``4d6pl1`` keeps ``h3``).
    """
    operations = list(node.operations)
    if len(operations) != 1 or len(operations[0].sels) != 1:
        raise _invalid(text, "a dice group takes at most one keep/drop operation")
    operation = operations[0]
    selector = operation.sels[0]
    if operation.op not in ("k", "p") or selector.cat not in ("h", "l"):
        raise _unsupported(str(operation), text)
    count = int(node.value.num)
    number = int(selector.num)
    if operation.op == "k":
        if number < 1:
            raise _invalid(text, "must keep at least 1 die")
        return selector.cat, number
    if not 1 <= number < count:
        raise _invalid(text, f"cannot drop {number} of {count} dice")
    return ("l" if selector.cat == "h" else "h"), count - number


def _invalid(text: str, detail: str) -> DiceError:
    return DiceError(f"invalid dice expression {text!r}: {detail}", field="expression")


def _unsupported(operation: str, text: str) -> DiceError:
    return DiceError(
        f"unsupported dice operation {operation!r} in {text!r}: only sums and differences of dice "
        "groups (with khN/klN/phN/plN) and whole numbers are allowed",
        field="expression",
    )


# --------------------------------------------------------------------------- #
# Records
# --------------------------------------------------------------------------- #


def _record(expression: str, notation: str | None, terms: list[Term], manual: bool) -> Roll:
    record: Roll = {"expression": expression}
    if notation is not None and notation != expression:
        record["notation"] = notation
    record["terms"] = terms
    record["manual"] = manual
    return record


def _check_manual_faces(faces: object, plan: list[Term], expression: str) -> list[int]:
    if not isinstance(faces, (list, tuple)):
        raise DiceError("faces must be a list of whole numbers", field="faces")
    expected = sum(term["count"] for term in plan if "sides" in term)
    if len(faces) != expected:
        raise DiceError(
            f"{expression!r} rolls {expected} dice but {len(faces)} face(s) were given", field="faces"
        )
    sides_per_die = [term["sides"] for term in plan if "sides" in term for _ in range(term["count"])]
    for position, (face, sides) in enumerate(zip(faces, sides_per_die, strict=True), start=1):
        _check_face(face, sides, f"face {position}", "faces")
    return [int(face) for face in faces]


def _check_face(face: object, sides: int, where: str, field: str) -> None:
    if not isinstance(face, int) or isinstance(face, bool):
        raise DiceError(f"{where} must be a whole number, not {face!r}", field=field)
    if not 1 <= face <= sides:
        raise DiceError(f"{where} is {face}, outside 1..{sides} for a d{sides}", field=field)


def _check_term(given: object, planned: Term, index: int) -> Term:
    where = f"term {index + 1}"
    if not isinstance(given, dict):
        raise DiceError(f"{where} must be an object", field="terms")
    if "const" in planned:
        value = given.get("const")
        if set(given) != {"const"} or not isinstance(value, int) or isinstance(value, bool):
            raise DiceError(f"{where} must be {{'const': {planned['const']}}}", field="terms")
        if value != planned["const"]:
            raise DiceError(
                f"{where} is the constant {value}; the expression says {planned['const']}", field="terms"
            )
        return {"const": value}
    unknown = sorted(str(key) for key in given if key not in _DICE_KEYS)
    if unknown or not {"sides", "faces", "sign"} <= set(given):
        raise DiceError(f"{where} must have exactly sides, faces, sign (and optional keep)", field="terms")
    sides, sign, keep, faces = given["sides"], given["sign"], given.get("keep"), given["faces"]
    if type(sides) is not int or sides != planned["sides"]:
        raise DiceError(f"{where} has sides {sides!r}; the expression says {planned['sides']}", field="terms")
    if type(sign) is not int or sign != planned["sign"]:
        raise DiceError(f"{where} has sign {sign!r}; the expression says {planned['sign']}", field="terms")
    if keep is not None and not (isinstance(keep, str) and _KEEP_RE.fullmatch(keep)):
        raise DiceError(f"{where} has an invalid keep {keep!r} (expected hN or lN)", field="terms")
    if keep != planned.get("keep"):
        raise DiceError(
            f"{where} has keep {keep!r}; the expression says {planned.get('keep')!r}", field="terms"
        )
    if not isinstance(faces, list) or len(faces) != planned["count"]:
        got = len(faces) if isinstance(faces, list) else faces
        raise DiceError(f"{where} needs {planned['count']} face(s), got {got!r}", field="terms")
    for position, face in enumerate(faces, start=1):
        _check_face(face, sides, f"{where} face {position}", "terms")
    term: Term = {"sides": sides, "faces": list(faces), "sign": sign}
    if keep is not None:
        term["keep"] = keep
    return term


def _kept_flags(faces: list[int], keep: str | None) -> list[bool]:
    """Which faces count; ties keep the earlier die."""
    if keep is None:
        return [True] * len(faces)
    highest = keep[0] == "h"
    order = sorted(range(len(faces)), key=lambda i: (-faces[i] if highest else faces[i], i))
    kept = set(order[: int(keep[1:])])
    return [i in kept for i in range(len(faces))]
