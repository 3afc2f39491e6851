"""Dice notation, rolls and Roll records (domain.dice; RULES C0.3, SW-26)."""

from __future__ import annotations

import heapq
import json
import random
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domain import dice
from domain.dice import (
    MAX_CONSTANT,
    MAX_DICE,
    MAX_EXPRESSION_LENGTH,
    MAX_SIDES,
    describe,
    dice_count,
    natural,
    parse,
    roll,
    roll_total,
    validate_roll,
)
from domain.errors import DiceError, DomainError


def assert_json_only(value: Any) -> None:
    """Only dicts with str keys, lists, str, int and bool: what JSON gives back."""
    if isinstance(value, dict):
        for key, item in value.items():
            assert isinstance(key, str)
            assert_json_only(item)
    elif isinstance(value, list):
        for item in value:
            assert_json_only(item)
    else:
        assert type(value) in (str, int, bool), f"{value!r} is not JSON-native"


def refuse(expression: Any, **kwargs: Any) -> DiceError:
    """Roll ``expression`` and return the DiceError; any other exception fails the test."""
    with pytest.raises(DiceError) as info:
        roll(expression, **kwargs)
    error = info.value
    assert error.code == "INVALID_DICE"
    assert isinstance(error, DomainError)
    assert error.message
    return error


# --------------------------------------------------------------------------- #
# Server-side rolls
# --------------------------------------------------------------------------- #


@given(seed=st.integers(min_value=0, max_value=2**32))
def test_server_roll_faces_in_range_and_total_equals_sum(seed: int) -> None:
    record = roll("3d6+1d20-1d4+5", rng=random.Random(seed))
    d6, d20, d4, const = record["terms"]
    assert [term.get("sides") for term in (d6, d20, d4)] == [6, 20, 4]
    assert len(d6["faces"]) == 3 and all(1 <= face <= 6 for face in d6["faces"])
    assert len(d20["faces"]) == 1 and 1 <= d20["faces"][0] <= 20
    assert len(d4["faces"]) == 1 and 1 <= d4["faces"][0] <= 4
    assert const == {"const": 5}
    assert roll_total(record) == sum(d6["faces"]) + d20["faces"][0] - d4["faces"][0] + 5
    assert record["manual"] is False


def test_server_roll_defaults_to_system_random() -> None:
    record = roll("100d1000")
    faces = record["terms"][0]["faces"]
    assert len(faces) == 100 and all(1 <= face <= 1000 for face in faces)
    assert record["manual"] is False


def test_server_roll_is_reproducible_with_a_seeded_rng_and_ignores_global_random(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def forbidden(*_: Any) -> Any:
        raise AssertionError("module-global random must not be used")

    monkeypatch.setattr(random, "randint", forbidden)
    monkeypatch.setattr(random, "random", forbidden)
    first = roll("4d6pl1+2d20kh1", rng=random.Random(42))
    second = roll("4d6pl1+2d20kh1", rng=random.Random(42))
    assert first == second


def test_roll_record_has_the_c03_shape_and_is_json_only() -> None:
    record = roll("2d20kh1+3", rng=random.Random(7))
    assert list(record) == ["expression", "terms", "manual"]
    assert record["expression"] == "2d20kh1+3"
    assert record["terms"][0]["keep"] == "h1"
    assert record["terms"][1] == {"const": 3}
    assert_json_only(record)
    assert json.loads(json.dumps(record)) == record


def test_expression_whitespace_is_normalised() -> None:
    record = roll("  2d6 +\t3 ", faces=[1, 2])
    assert record["expression"] == "2d6+3"
    assert "notation" not in record


@pytest.mark.parametrize("expression", ["1 2", "2 d6", "1d 6", "2d20 kh1", "1d6+1 0"])
def test_space_inside_a_number_or_dice_group_is_refused(expression: str) -> None:
    # d20's parse cache is keyed on the text with spaces removed: "1 2" would
    # otherwise come back as the cached tree of "12".
    parse(expression.replace(" ", ""))
    refuse(expression)


# --------------------------------------------------------------------------- #
# Manual faces (physical dice)
# --------------------------------------------------------------------------- #


def test_manual_faces_are_accepted_and_marked_manual() -> None:
    record = roll("3d6+5", faces=[4, 6, 2])
    assert record == {
        "expression": "3d6+5",
        "terms": [{"sides": 6, "faces": [4, 6, 2], "sign": 1}, {"const": 5}],
        "manual": True,
    }
    assert roll_total(record) == 17


def test_manual_faces_follow_term_order_and_include_dropped_dice() -> None:
    record = roll("2d20kh1+1d4", faces=[4, 17, 3])
    assert record["terms"][0]["faces"] == [4, 17]
    assert record["terms"][1]["faces"] == [3]
    assert roll_total(record) == 20


def test_percentile_die_is_a_d100_and_accepts_100() -> None:
    record = roll("d%", faces=[100])
    assert record["terms"] == [{"sides": 100, "faces": [100], "sign": 1}]
    assert roll_total(record) == 100


@pytest.mark.parametrize("faces", [[], [3], [3, 4], [3, 4, 5, 6]], ids=["none", "one", "two", "four"])
def test_wrong_number_of_manual_faces_is_refused(faces: list[int]) -> None:
    error = refuse("3d6+5", faces=faces)
    assert error.field == "faces"
    assert "3 dice" in error.message


@pytest.mark.parametrize(
    ("expression", "faces"),
    [("1d6", [0]), ("1d6", [7]), ("1d6", [-1]), ("2d20kh1", [20, 21]), ("1d4+1d8", [4, 9])],
)
def test_manual_face_out_of_range_is_refused(expression: str, faces: list[int]) -> None:
    error = refuse(expression, faces=faces)
    assert error.field == "faces"
    assert "outside" in error.message


@pytest.mark.parametrize("faces", [[True], [3.0], ["3"], [None], "3", 3])
def test_manual_faces_must_be_whole_numbers(faces: Any) -> None:
    assert refuse("1d6", faces=faces).field == "faces"


# --------------------------------------------------------------------------- #
# Weapon dice (SW-26)
# --------------------------------------------------------------------------- #


def test_weapon_dice_expand_heavy_flail_2w_to_4d6() -> None:
    # SW-26: "If you use a heavy flail (2d6 damage) with the same power, roll 4d6".
    record = roll("2[W]", weapon="2d6", rng=random.Random(1))
    assert record["expression"] == "4d6"
    assert record["notation"] == "2[W]"
    assert record["terms"][0]["sides"] == 6
    assert len(record["terms"][0]["faces"]) == 4
    assert dice_count("2[W]", weapon="2d6") == 4
    assert parse("2[W]", weapon="2d6") == [{"sides": 6, "count": 4, "faces": [], "sign": 1}]


@pytest.mark.parametrize(
    ("notation", "weapon", "expression"),
    [
        ("2[W]+4", "1d8", "2d8+4"),
        ("[W]+3", "1d10", "1d10+3"),
        ("3[W]-1", "d12", "3d12-1"),
        ("2dW+1d6", "1d8", "2d8+1d6"),
        ("1[W]+1[W]", "2d4", "2d4+2d4"),
    ],
)
def test_weapon_dice_expand_n_times_the_weapon_die(notation: str, weapon: str, expression: str) -> None:
    record = roll(notation, weapon=weapon, rng=random.Random(3))
    assert record["expression"] == expression
    assert record["notation"] == notation
    assert validate_roll(json.loads(json.dumps(record))) == record


def test_weapon_dice_without_a_weapon_is_refused() -> None:
    assert refuse("2[W]+4").field == "weapon"


@pytest.mark.parametrize("weapon", ["", "abc", "0d6", "1d0", "1d1001", "d", "1d6+1", "x" * 10_000])
def test_invalid_weapon_die_is_refused(weapon: str) -> None:
    assert refuse("1[W]", weapon=weapon).field == "weapon"


def test_weapon_dice_past_the_dice_limit_are_refused() -> None:
    refuse("51[W]", weapon="2d6")
    assert dice_count("50[W]", weapon="2d6") == MAX_DICE


def test_misplaced_weapon_dice_are_refused() -> None:
    refuse("1d6[W]", weapon="1d8")


# --------------------------------------------------------------------------- #
# Limits and garbage: one DiceError, nothing else
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize(
    "expression",
    ["1+" * 50 + "1", "1d4 + " * 20 + "1", " " * 200 + "1d6", "x" * 1_000_000],
    ids=["101-chars", "spaces-count", "padding", "a-million-chars"],
)
def test_too_long_expression_is_refused_before_parsing(
    monkeypatch: pytest.MonkeyPatch, expression: str
) -> None:
    # The limit counts the raw text, spaces included, and is checked first.
    def no_parse(text: str) -> Any:
        raise AssertionError("parsed an over-long expression")

    monkeypatch.setattr(dice, "_parse_tree", no_parse)
    assert len(expression) > MAX_EXPRESSION_LENGTH
    assert "too long" in refuse(expression).message


def test_expression_at_the_length_limit_is_accepted() -> None:
    expression = "1d4+" * 24 + "1234"
    assert len(expression) == MAX_EXPRESSION_LENGTH
    assert dice_count(expression) == 24


@pytest.mark.parametrize("expression", ["1000d6", "60d6+60d6", "101d4", "99d6+1d4+1d8"])
def test_too_many_dice_is_refused(expression: str) -> None:
    assert "too many dice" in refuse(expression).message


def test_exactly_max_dice_is_accepted() -> None:
    assert dice_count("50d6+25d4+25d8") == MAX_DICE


@pytest.mark.parametrize("expression", ["1d1001", "1d99999999", "2d1000+1d100000"])
def test_huge_sides_are_refused(expression: str) -> None:
    assert "too many sides" in refuse(expression).message


def test_max_sides_is_accepted() -> None:
    assert parse(f"1d{MAX_SIDES}")[0]["sides"] == MAX_SIDES


@pytest.mark.parametrize("expression", ["1d6+10001", "-10001", "1d6-99999999999999999999999"])
def test_huge_constant_is_refused(expression: str) -> None:
    assert "too large" in refuse(expression).message


def test_max_constant_is_accepted() -> None:
    assert roll_total(roll(f"{MAX_CONSTANT}-{MAX_CONSTANT}+1d1", faces=[1])) == 1


@pytest.mark.parametrize(
    "expression",
    [
        "2d",
        "d",
        "abc",
        "1d6*2",
        "((((((",
        "x" * 10_000,
        "(" * 5_000 + "1d6" + ")" * 5_000,
        "(" * 48 + "1",
        ")",
        "1d6+",
        "1.5",
        "1d6/2",
        "1d6//2",
        "1d6%2",
        "1d20>10",
        "1d20==20",
        "(1d6,2)",
        "(1d6)kh1",
        "1d6rr1",
        "1d6ro1",
        "1d6ra1",
        "1d6e6",
        "1d6mi2",
        "1d6ma5",
        "4d6k3",
        "4d6k>3",
        "2d20kh1kl1",
        "2d20kh3",
        "2d20kh0",
        "2d20pl2",
        "0d6",
        "1d0",
        "1d6[fire]",
        "1d6 fire",
        "",
        "   ",
        "1D6",
        "9" * 99,
        "1d6+\x00",
        "\u0661d6",
    ],
    ids=lambda value: repr(value)[:30],
)
def test_bad_expression_raises_dice_error_and_nothing_else(expression: str) -> None:
    error = refuse(expression)
    assert error.field in ("expression", "weapon")
    with pytest.raises(DiceError):
        parse(expression)


@pytest.mark.parametrize("expression", [None, 5, b"1d6", ["1d6"]])
def test_non_string_expression_is_refused(expression: Any) -> None:
    assert refuse(expression).field == "expression"


@pytest.mark.parametrize(
    ("expression", "operation"), [("1d6*2", "'*'"), ("1d20>=10", "'>='"), ("1d6rr1", "'rr1'")]
)
def test_unsupported_operation_is_named_in_the_message(expression: str, operation: str) -> None:
    message = refuse(expression).message
    assert message.startswith("unsupported dice operation")
    assert operation in message


def test_parentheses_only_regroup_signs() -> None:
    record = roll("10-(1d6+2)", faces=[3])
    assert record["terms"] == [{"const": 10}, {"sides": 6, "faces": [3], "sign": -1}, {"const": -2}]
    assert roll_total(record) == 5
    assert roll_total(roll("((((1d4))))", faces=[2])) == 2
    assert roll_total(roll("-(-(1d8))--3", faces=[5])) == 8


def test_parse_returns_a_plan_with_empty_faces() -> None:
    assert parse("2d20kh1-1d4+3") == [
        {"sides": 20, "count": 2, "faces": [], "sign": 1, "keep": "h1"},
        {"sides": 4, "count": 1, "faces": [], "sign": -1},
        {"const": 3},
    ]


def test_parsing_is_safe_from_several_threads() -> None:
    # More distinct expressions than d20's 256-entry parse cache, so it evicts.
    expressions = [f"{n % 9 + 1}d{n % 97 + 2}+{n}" for n in range(600)]
    with ThreadPoolExecutor(max_workers=8) as pool:
        counts = list(pool.map(dice_count, expressions))
    assert counts == [n % 9 + 1 for n in range(600)]


# --------------------------------------------------------------------------- #
# Keep highest / lowest, natural, describe
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize(
    ("expression", "faces", "total"),
    [
        ("2d20kh1+3", [17, 4], 20),
        ("2d20kh1+3", [4, 17], 20),
        ("2d20kl1+3", [17, 4], 7),
        ("4d6kh3", [1, 6, 3, 5], 14),
        ("4d6pl1", [1, 6, 3, 5], 14),
        ("4d6ph1", [1, 6, 3, 5], 9),
        ("10-2d6kh1", [2, 5], 5),
    ],
)
def test_keep_highest_or_lowest_sums_only_kept_faces(expression: str, faces: list[int], total: int) -> None:
    assert roll_total(roll(expression, faces=faces)) == total


def test_drop_lowest_is_stored_as_keep_highest() -> None:
    assert roll("4d6pl1", faces=[1, 6, 3, 5])["terms"][0]["keep"] == "h3"


@pytest.mark.parametrize(
    ("expression", "faces", "expected"),
    [
        ("1d20+7", [13], 13),
        ("1d20", [20], 20),
        ("2d20kh1+3", [17, 4], 17),
        ("2d20kl1+3", [17, 4], 4),
        ("3+1d20", [1], 1),
        ("1d6", [6], None),
        ("2d20", [10, 11], None),
        ("1d20+1d6", [20, 3], None),
        ("3-1d20", [20], None),
        ("d%", [20], None),
        ("5", [], None),
    ],
)
def test_natural_is_the_face_of_the_single_kept_d20(
    expression: str, faces: list[int], expected: int | None
) -> None:
    assert natural(roll(expression, faces=faces)) == expected


@pytest.mark.parametrize(
    ("expression", "faces", "expected"),
    [
        ("d%", [100], 100),
        ("1d100", [37], 37),
        ("d%+1", [5], None),
        ("2d100", [1, 2], None),
        ("1d20", [5], None),
    ],
)
def test_percentile_is_the_face_of_a_bare_d100_with_00_as_100(
    expression: str, faces: list[int], expected: int | None
) -> None:
    """RULES.md C0.3: d% is a d100 whose 00 face is 100 (the d20 house rules' stabilisation roll)."""
    assert dice.percentile(roll(expression, faces=faces)) == expected


@pytest.mark.parametrize(
    ("expression", "faces", "text"),
    [
        ("3d6+5", [4, 6, 2], "3d6 (4, 6, 2) + 5 = 17"),
        ("2d20kh1+3", [17, 4], "2d20kh1 (17, ~~4~~) + 3 = 20"),
        ("2d20kl1", [9, 9], "2d20kl1 (9, ~~9~~) = 9"),
        ("1d8-2", [1], "1d8 (1) - 2 = -1"),
        ("-3+1d4-1d6", [2, 5], "-3 + 1d4 (2) - 1d6 (5) = -6"),
        ("d%", [100], "1d100 (100) = 100"),
        ("2[W]+4", [3, 5], "2d8 (3, 5) + 4 = 12"),
        ("7", [], "7 = 7"),
    ],
)
def test_describe_shows_faces_with_dropped_dice_struck(expression: str, faces: list[int], text: str) -> None:
    assert describe(roll(expression, weapon="1d8", faces=faces)) == text


def test_totals_natural_and_describe_never_parse(monkeypatch: pytest.MonkeyPatch) -> None:
    record = roll("2d20kh1+1d4+3", faces=[4, 17, 2])

    def no_parse(*_: Any) -> Any:
        raise AssertionError("parsed during a total")

    monkeypatch.setattr(dice, "_plan", no_parse)
    monkeypatch.setattr(dice, "_parse_tree", no_parse)
    assert roll_total(record) == 22
    assert natural(record) is None
    assert describe(record) == "2d20kh1 (~~4~~, 17) + 1d4 (2) + 3 = 22"


# --------------------------------------------------------------------------- #
# validate_roll (stored, amended, imported records)
# --------------------------------------------------------------------------- #


def test_validate_roll_accepts_an_amended_face() -> None:
    record = roll("2d20kh1+3", faces=[17, 4])
    amended = json.loads(json.dumps(record))
    amended["terms"] = [{"sides": 20, "faces": [12, 4], "sign": 1, "keep": "h1"}, {"const": 3}]
    assert roll_total(validate_roll(amended)) == 15


def test_validate_roll_normalises() -> None:
    record = validate_roll(
        {
            "expression": " 1d6 + 2 ",
            "notation": "1d6+2",
            "terms": [{"faces": [4], "sign": 1, "sides": 6}, {"const": 2}],
        }
    )
    assert record == {
        "expression": "1d6+2",
        "terms": [{"sides": 6, "faces": [4], "sign": 1}, {"const": 2}],
        "manual": False,
    }
    assert list(record["terms"][0]) == ["sides", "faces", "sign"]


def _good() -> dict[str, Any]:
    return {
        "expression": "2d20kh1+1d4+3",
        "terms": [
            {"sides": 20, "faces": [17, 4], "sign": 1, "keep": "h1"},
            {"sides": 4, "faces": [2], "sign": 1},
            {"const": 3},
        ],
        "manual": True,
    }


def _set(path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    record = _good()
    target: Any = record
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return record


def _drop(path: tuple[Any, ...]) -> dict[str, Any]:
    record = _good()
    target: Any = record
    for key in path[:-1]:
        target = target[key]
    del target[path[-1]]
    return record


@pytest.mark.parametrize(
    "record",
    [
        pytest.param("2d6", id="not-a-dict"),
        pytest.param(_set(("terms", 0, "faces", 0), 21), id="face-too-high"),
        pytest.param(_set(("terms", 1, "faces", 0), 0), id="face-zero"),
        pytest.param(_set(("terms", 1, "faces", 0), True), id="face-bool"),
        pytest.param(_set(("terms", 1, "faces", 0), 2.0), id="face-float"),
        pytest.param(_set(("terms", 1, "faces", 0), "2"), id="face-str"),
        pytest.param(_set(("terms", 0, "faces"), [17]), id="too-few-faces"),
        pytest.param(_set(("terms", 1, "faces"), [2, 3]), id="too-many-faces"),
        pytest.param(_set(("terms", 1, "faces"), (2,)), id="faces-tuple"),
        pytest.param(_set(("terms", 1, "sides"), 6), id="sides-differ"),
        pytest.param(_set(("terms", 1, "sign"), -1), id="sign-differs"),
        pytest.param(_set(("terms", 1, "sign"), True), id="sign-bool"),
        pytest.param(_drop(("terms", 0, "keep")), id="keep-missing"),
        pytest.param(_set(("terms", 0, "keep"), "h2"), id="keep-differs"),
        pytest.param(_set(("terms", 0, "keep"), "x1"), id="keep-garbage"),
        pytest.param(_set(("terms", 1, "keep"), "h1"), id="keep-extra"),
        pytest.param(_set(("terms", 2, "const"), 4), id="const-differs"),
        pytest.param(_set(("terms", 2), {"const": 3, "sign": 1}), id="const-extra-key"),
        pytest.param(_set(("terms", 2), 3), id="term-not-a-dict"),
        pytest.param(_set(("terms", 1, "colour"), "red"), id="term-extra-key"),
        pytest.param(_set(("terms",), []), id="no-terms"),
        pytest.param(_set(("terms",), "x"), id="terms-not-a-list"),
        pytest.param(_drop(("expression",)), id="no-expression"),
        pytest.param(_set(("expression",), "2d20kh1+1d6+3"), id="expression-differs"),
        pytest.param(_set(("expression",), "2d20kh1*1d4+3"), id="expression-unsupported"),
        pytest.param(_set(("expression",), "1d4+" * 30 + "3"), id="expression-too-long"),
        pytest.param(_set(("expression",), "2[W]+1d4+3"), id="expression-unexpanded-weapon"),
        pytest.param(_set(("notation",), 7), id="notation-not-a-string"),
        pytest.param(_set(("notation",), "x" * 101), id="notation-too-long"),
        pytest.param(_set(("manual",), "yes"), id="manual-not-bool"),
        pytest.param(_set(("total",), 23), id="unknown-field"),
    ],
)
def test_validate_roll_refuses_bad_records(record: Any) -> None:
    with pytest.raises(DiceError) as info:
        validate_roll(record)
    assert info.value.code == "INVALID_DICE"


def test_validate_roll_does_not_mutate_its_input() -> None:
    record = _good()
    validated = validate_roll(record)
    assert validated == record
    assert validated is not record
    assert validated["terms"][0]["faces"] is not record["terms"][0]["faces"]


# --------------------------------------------------------------------------- #
# Properties
# --------------------------------------------------------------------------- #

SIDES = [1, 2, 3, 4, 6, 8, 10, 12, 20, 100, 1000]


@st.composite
def expressions_with_faces(draw: st.DrawFn) -> tuple[str, list[int], int]:
    """A valid expression, faces for it, and its total worked out independently."""
    parts: list[str] = []
    faces: list[int] = []
    total = 0
    for index in range(draw(st.integers(min_value=1, max_value=6))):
        negative = draw(st.booleans())
        if draw(st.booleans()):
            value = draw(st.integers(min_value=0, max_value=MAX_CONSTANT))
            text, subtotal = str(value), value
        else:
            count = draw(st.integers(min_value=1, max_value=8))
            sides = draw(st.sampled_from(SIDES))
            rolled = draw(st.lists(st.integers(1, sides), min_size=count, max_size=count))
            faces.extend(rolled)
            keep = draw(st.sampled_from(["", "kh", "kl"]))
            prefix = "" if count == 1 and draw(st.booleans()) else str(count)
            text = f"{prefix}d{'%' if sides == 100 and draw(st.booleans()) else sides}"
            if keep:
                number = draw(st.integers(min_value=1, max_value=count))
                text += f"{keep}{number}"
                pick = heapq.nlargest if keep == "kh" else heapq.nsmallest
                subtotal = sum(pick(number, rolled))
            else:
                subtotal = sum(rolled)
        if index == 0:
            parts.append(f"-{text}" if negative else text)
        else:
            parts.append(f"{'-' if negative else '+'}{text}")
        total += -subtotal if negative else subtotal
    return "".join(parts), faces, total


@given(expressions_with_faces())
def test_property_total_equals_independent_sum(case: tuple[str, list[int], int]) -> None:
    expression, faces, total = case
    record = roll(expression, faces=faces)
    assert roll_total(record) == total
    assert record["manual"] is True
    assert dice_count(expression) == len(faces)


@given(expressions_with_faces())
def test_property_validate_roll_round_trips_through_json(case: tuple[str, list[int], int]) -> None:
    expression, faces, _ = case
    record = roll(expression, faces=faces)
    assert_json_only(record)
    stored = json.loads(json.dumps(record))
    assert stored == record
    assert validate_roll(stored) == record
    assert json.loads(json.dumps(validate_roll(stored))) == record


@given(expressions_with_faces(), st.integers(min_value=0, max_value=2**32))
def test_property_server_rolls_validate_and_stay_in_range(
    case: tuple[str, list[int], int], seed: int
) -> None:
    record = roll(case[0], rng=random.Random(seed))
    assert validate_roll(json.loads(json.dumps(record))) == record
    for term in record["terms"]:
        if "sides" in term:
            assert all(1 <= face <= term["sides"] for face in term["faces"])


@settings(max_examples=300)
@given(
    st.one_of(
        st.text(alphabet="0123456789d%+-*/()khlpremiaW[], .<>=!#", max_size=120),
        st.text(max_size=40),
    ),
    st.sampled_from([None, "1d8", "2d6"]),
)
def test_property_any_text_either_parses_or_raises_dice_error(expression: str, weapon: str | None) -> None:
    try:
        plan = parse(expression, weapon=weapon)
    except DiceError:
        return
    record = roll(expression, weapon=weapon, rng=random.Random(0))
    assert sum(term.get("count", 0) for term in plan) <= MAX_DICE
    assert validate_roll(json.loads(json.dumps(record))) == record
