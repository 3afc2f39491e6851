"""Every GraphQL example in docs/api.md is valid against the schema the server serves."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from graphql import build_schema, parse, validate

REPO = Path(__file__).resolve().parents[2]
BLOCKS = re.findall(r"```graphql\n(.*?)```", (REPO / "docs" / "api.md").read_text(encoding="utf-8"), re.S)
SCHEMA = build_schema((REPO / "schema.graphql").read_text(encoding="utf-8"))


def test_the_guide_has_examples() -> None:
    assert len(BLOCKS) >= 6


@pytest.mark.parametrize("block", BLOCKS, ids=[f"example-{i + 1}" for i in range(len(BLOCKS))])
def test_each_example_validates(block: str) -> None:
    errors = validate(SCHEMA, parse(block))
    assert errors == [], [e.message for e in errors]
