"""A page of the history by position is computed from the positions' range, never by listing the
campaign's facts: it must be exactly the page that listing them would give."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from api.graphql.errors import ChronicleError
from api.graphql.types import encode_cursor, paginate, paginate_positions

cursor = st.none() | st.integers(-3, 70).map(encode_cursor)
size = st.none() | st.integers(1, 30)


@given(a=st.integers(1, 40), b=st.integers(-2, 60), first=size, after=cursor, last=size, before=cursor)
def test_a_page_of_positions_is_the_page_of_the_listed_positions(
    a: int, b: int, first: int | None, after: str | None, last: int | None, before: str | None
) -> None:
    listed = list(range(a, b + 1))
    try:
        expected = paginate(listed, lambda p: p, first, after, last, before)
    except ChronicleError as err:
        try:
            paginate_positions(a, b, first, after, last, before)
        except ChronicleError as same:
            assert same.code == err.code
            return
        raise AssertionError("paginate refused, paginate_positions did not") from None
    window, info = paginate_positions(a, b, first, after, last, before)
    assert (list(window), info) == expected
