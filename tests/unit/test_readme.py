"""The README's first steps work on a fresh clone, in the order it gives them."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text(encoding="utf-8")
MAKEFILE = (REPO / "Makefile").read_text(encoding="utf-8")


def commands(section: str) -> list[str]:
    """The commands of the first code block after the heading ``section`` (comments dropped)."""
    after = README.split(section, 1)[1]
    block = re.search(r"```\n(.*?)```", after, re.S)
    assert block, section
    lines = [line.split("#", 1)[0].strip() for line in block.group(1).splitlines()]
    return [line for line in lines if line]


def make_targets_that_create_the_venv() -> set[str]:
    return set(re.findall(r"^([a-z]+): \$\((?:RUN|DEV)_STAMP\)", MAKEFILE, re.M))


def test_nothing_runs_from_the_venv_before_a_make_target_has_created_it() -> None:
    creators = make_targets_that_create_the_venv()
    assert {"run", "demo", "test"} <= creators
    for section in ("# Chronicle\n", "## A first look"):
        created = False
        for command in commands(section):
            if command.startswith("make "):
                created = created or command.split()[1] in creators
            if ".venv/" in command:
                assert created, f"{command!r} runs before any make target creates .venv ({section.strip()})"


def test_the_first_look_starts_with_the_demo_target() -> None:
    assert commands("## A first look")[0] == "make demo"
    recipe = re.search(r"^demo: \$\(RUN_STAMP\)\n\t(.+)$", MAKEFILE, re.M)
    assert recipe and recipe.group(1) == "$(BIN)/chronicle demo"


def test_the_readme_says_that_make_test_installs_chromium_with_apt_get_as_root() -> None:
    said = " ".join(README.split())
    assert (
        "If Chromium is missing and `make test` runs as root, it installs the Debian package "
        "`chromium` with `apt-get`" in said
    )
    assert "apt-get install" in MAKEFILE and '"$$(id -u)" = 0' in MAKEFILE  # and that is what it does


def test_the_readme_starts_with_the_two_commands_that_set_up_a_fresh_machine() -> None:
    assert commands("# Chronicle\n") == ["make run", "make test"]
