"""The ``chronicle`` command as a user meets it: --version, ``campaigns``, one exit status per kind
of failure in every command, the format aliases, help without stray metavars, progress bars."""

from __future__ import annotations

import re
import weakref
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from uuid import UUID, uuid4

import pytest
from typer.testing import CliRunner

from api.cli.exits import MEANINGS, Exit
from api.cli.main import app
from api.graphql.ids import campaign_gid
from api.service.application import IMPORT_EXPECTS
from api.service.settings import Settings
from api.service.store import open_application

runner = CliRunner()


def chronicle(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def on_sqlite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    url = f"sqlite:///{tmp_path / 'store.sqlite'}"
    monkeypatch.setenv("CHRONICLE_DATABASE_URL", url)
    return url


def demo() -> UUID:
    code, out, err = chronicle("demo")
    assert code == 0, err
    return UUID(re.search(r"Demo campaign ([0-9a-f-]{36})", out).group(1))  # type: ignore[union-attr]


def test_version_prints_the_installed_version() -> None:
    code, out, _ = chronicle("--version")
    assert code == 0
    assert out == f"chronicle {metadata.version('chronicle')}\n"


def test_campaigns_lists_every_campaign_newest_first(
    store: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CHRONICLE_DATABASE_URL", store.database_url)
    code, out, _ = chronicle("campaigns")
    assert code == 0 and out.startswith("No campaigns on ")
    began = datetime.now(UTC).replace(microsecond=0)
    first = demo()
    application = open_application(store)
    try:
        second = application.create_campaign("Quiet table", flags={})
        application.advance_time(second, 10)
        stalled = application.create_campaign("Half imported", meta={IMPORT_EXPECTS: 12})
        demo_facts = application.campaign(first).ledger.last_seq - 1
    finally:
        application.close()
    code, out, _ = chronicle("campaigns")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == ["ID", "NAME", "RULESET", "FACTS", "LAST", "ACTIVITY", "(UTC)"]
    rows = {UUID(line.split()[0]): line for line in lines[1:]}
    assert list(rows) == [stalled, second, first]  # the most recently active first
    assert re.search(r"\bQuiet table\s+stellar-winds\s+1\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$", rows[second])
    assert re.search(rf"\bstellar-winds\s+{demo_facts:,}\s", rows[first])
    assert "0 of 12 (import incomplete)" in rows[stalled]
    shown = datetime.strptime(rows[second][-19:], "%Y-%m-%d %H:%M:%S").replace(tzinfo=UTC)
    assert began <= shown <= datetime.now(UTC)


def test_an_unknown_campaign_is_the_same_failure_in_every_command(on_sqlite: str, tmp_path: Path) -> None:
    missing = str(uuid4())
    to_file = ["export", missing, "-o", str(tmp_path / "out.md")]
    for args in (["export", missing], to_file, ["token", missing]):
        code, _, err = chronicle(*args)
        assert (code, err) == (Exit.NOT_FOUND, f"chronicle: no campaign {missing}\n"), args
    assert list(tmp_path.glob("out.md*")) == []  # nothing half written


def test_a_campaign_is_named_by_its_id_or_its_graphql_id(on_sqlite: str) -> None:
    cid = demo()
    by_id = chronicle("export", str(cid), "--format", "jsonl")
    by_gid = chronicle("export", campaign_gid(cid), "--format", "jsonl")
    assert by_id[0] == by_gid[0] == 0 and by_id[1] == by_gid[1]
    assert chronicle("token", campaign_gid(cid))[0] == 0
    code, _, err = chronicle("export", "Kestrel Relay")
    assert (
        code == Exit.USAGE and "'Kestrel Relay' is neither a campaign's id (a UUID) nor its GraphQL ID" in err
    )


def test_markdown_is_accepted_for_md_and_an_unknown_format_is_a_usage_error(on_sqlite: str) -> None:
    cid = str(demo())
    md = chronicle("export", cid, "--format", "md")
    assert md[0] == 0 and md[1].startswith("# Stellar Winds demo")
    assert chronicle("export", cid, "--format", "markdown") == md
    assert chronicle("export", cid, "-f", "Markdown") == md
    code, out, err = chronicle("export", cid, "--format", "pdf")
    assert (code, out) == (Exit.USAGE, "")
    assert err == "chronicle: unknown format 'pdf': use md (or markdown), jsonl or html\n"


def test_a_refused_selection_is_a_usage_error_and_a_missing_encounter_not_found(on_sqlite: str) -> None:
    cid = str(demo())
    assert chronicle("export", cid, "--from", "9", "--to", "3")[0] == Exit.USAGE
    code, _, err = chronicle("export", cid, "--encounter", "nope")
    assert code == Exit.NOT_FOUND and "no encounter 'nope'" in err


def test_an_unwritable_output_exits_73_and_leaves_nothing(on_sqlite: str, tmp_path: Path) -> None:
    cid = str(demo())
    target = tmp_path / "no-such-dir" / "out.md"
    code, _, err = chronicle("export", cid, "-o", str(target))
    assert code == Exit.CANT_WRITE
    assert err == f"chronicle: cannot write {target}: No such file or directory\n"
    assert not target.parent.exists()


def test_a_refused_import_exits_65(on_sqlite: str, tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"format": "something else"}\n', encoding="utf-8")
    code, _, err = chronicle("import", str(bad))
    assert code == Exit.DATA and "import refused, nothing stored" in err


@pytest.mark.parametrize(
    "args",
    [["campaigns"], ["demo"], ["export", str(uuid4())], ["token", str(uuid4())], ["worker"], ["rebuild"]],
    ids=lambda a: a[0],
)
def test_a_bad_configuration_exits_78_in_every_command(
    args: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CHRONICLE_DATABASE_URL", "mysql://root@127.0.0.1/chronicle")
    code, _, err = chronicle(*args)
    assert code == Exit.CONFIG
    assert err.startswith("chronicle: configuration error: CHRONICLE_DATABASE_URL: unknown store scheme")


def test_help_lists_the_exit_statuses_and_shows_no_bool_metavar() -> None:
    code, out, _ = chronicle("--help")
    assert code == 0
    for status, meaning in MEANINGS.items():
        assert re.search(rf"^\s+{int(status)}  {re.escape(meaning)}$", out, re.M), status
    assert "campaigns" in out and "--version" in out
    for command in ("serve", "worker", "rebuild", "campaigns", "demo", "export", "import", "token"):
        code, text, _ = chronicle(command, "--help")
        assert code == 0 and "--help" in text, command
        assert "<bool>" not in text, command
    assert "<bool>" not in out


def test_the_exit_statuses_are_documented() -> None:
    doc = (Path(__file__).resolve().parents[2] / "docs" / "operations.md").read_text(encoding="utf-8")
    for status, meaning in MEANINGS.items():
        assert f"| {int(status)} | {meaning} |" in doc, status


def in_a_terminal(args: list[str], url: str, tmp_path: Path) -> tuple[int, str, str]:
    """Run ``chronicle ARGS`` with stderr on a pseudo-terminal (where the bars are drawn): the exit
    status, stdout, and every state the terminal showed (ANSI codes removed, one per line)."""
    import fcntl
    import os
    import pty
    import struct
    import subprocess
    import sys
    import termios

    from api.cli.process import clean_env

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 160, 0, 0))
    out = tmp_path / "stdout.txt"
    with out.open("wb") as stdout:
        proc = subprocess.Popen(
            [sys.executable, "-m", "api.cli.main", *args],
            stdin=subprocess.DEVNULL,
            stdout=stdout,
            stderr=slave,
            env=clean_env(CHRONICLE_DATABASE_URL=url, TERM="xterm-256color"),
            cwd=tmp_path,
        )
        os.close(slave)
        shown = bytearray()
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not data:
                break
            shown += data
        code = proc.wait(60)
    os.close(master)
    screen = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", shown.decode(errors="replace")).replace("\r", "\n")
    return code, out.read_text(encoding="utf-8"), screen


def test_import_shows_the_facts_it_stores_not_bytes(on_sqlite: str, tmp_path: Path) -> None:
    cid = str(demo())
    dump = tmp_path / "demo.jsonl"
    assert chronicle("export", cid, "--format", "jsonl", "-o", str(dump))[0] == 0
    facts = len(dump.read_text(encoding="utf-8").splitlines()) - 2  # header and trailer
    code, out, screen = in_a_terminal(["import", str(dump)], on_sqlite, tmp_path)
    assert code == 0, screen
    assert out.startswith(f"Imported {dump} as campaign ")
    assert re.search(r"^validating .* \d+(\.\d+)?/\d+(\.\d+)? (bytes|kB)", screen, re.M), screen
    storing = [line for line in screen.splitlines() if line.startswith("storing")]
    assert storing and re.search(rf" {facts}/{facts} facts ", storing[-1]), screen
    assert "bytes" not in "".join(storing)


def test_import_lets_the_dry_run_go_before_it_reads_the_campaign_back(
    on_sqlite: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the GM token's grant loads the imported campaign (from the snapshot the dry run's fold
    # became): the dry run's ledger must be gone by then, not held beside it
    from api.exports import jsonl
    from api.service.auth import AccessControl

    cid = str(demo())
    dump = tmp_path / "demo.jsonl"
    assert chronicle("export", cid, "--format", "jsonl", "-o", str(dump))[0] == 0
    folds: list[weakref.ref[object]] = []
    read, grant = jsonl.read_export, AccessControl.grant_gm

    def reading(*args: object, **kwargs: object) -> jsonl.Validated:
        checked = read(*args, **kwargs)  # type: ignore[arg-type]
        folds.append(weakref.ref(checked.ledger))
        return checked

    def granting(self: AccessControl, campaign_id: UUID, *args: object) -> str:
        assert folds and folds[0]() is None, "the dry run's ledger is still held"
        return grant(self, campaign_id, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(jsonl, "read_export", reading)
    monkeypatch.setattr(AccessControl, "grant_gm", granting)
    code, out, err = chronicle("import", str(dump))
    assert code == 0, err
    assert out.startswith(f"Imported {dump} as campaign ")


def test_export_to_a_file_shows_its_progress_and_says_where_it_wrote(on_sqlite: str, tmp_path: Path) -> None:
    cid = str(demo())
    target = tmp_path / "demo.html"
    code, _, screen = in_a_terminal(
        ["export", cid, "--format", "html", "-o", str(target)], on_sqlite, tmp_path
    )
    assert code == 0, screen
    assert re.search(r"^writing \(html\) .* (\d+)/\1 facts ", screen, re.M), screen
    assert screen.rstrip().endswith(f"Wrote {target}")
    assert target.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


def test_without_a_terminal_there_is_no_bar_only_the_result(on_sqlite: str, tmp_path: Path) -> None:
    cid = str(demo())
    code, _, err = chronicle("export", cid, "--format", "md", "-o", str(tmp_path / "demo.md"))
    assert (code, err) == (0, f"Wrote {tmp_path / 'demo.md'}\n")


def test_ctrl_c_exits_130_with_one_line_and_stores_nothing(on_sqlite: str, tmp_path: Path) -> None:
    import os
    import signal
    import subprocess
    import sys

    from api.cli.process import clean_env

    fifo = tmp_path / "slow.jsonl"
    os.mkfifo(fifo)
    proc = subprocess.Popen(
        [sys.executable, "-m", "api.cli.main", "import", str(fifo)],
        env=clean_env(CHRONICLE_DATABASE_URL=on_sqlite),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    with fifo.open("w") as writer:  # returns once the import has opened the file: it is running
        writer.write('{"format":"chronicle-campaign"')
        writer.flush()
        # Ctrl-C while it waits for the rest of the file; again, as a person would, should the
        # first one land just before the read blocks (a signal cannot wake a read not yet begun).
        for _ in range(100):
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(0.2)
                break
            except subprocess.TimeoutExpired:
                continue
        out, err = proc.communicate(timeout=10)
    assert proc.returncode == Exit.INTERRUPTED
    assert err.strip() == "chronicle: interrupted" and out == ""
    assert chronicle("campaigns")[1].startswith("No campaigns on ")


@pytest.mark.parametrize("on_path", [False, True], ids=["venv-not-on-PATH", "on-PATH"])
def test_the_demo_tells_a_command_that_runs_as_given(on_sqlite: str, tmp_path: Path, on_path: bool) -> None:
    import os
    import shlex
    import subprocess
    import sys

    from api.cli.process import clean_env

    script = Path(sys.executable).with_name("chronicle")
    if not script.exists():
        pytest.skip(f"no console script next to {sys.executable} (package not installed with pip)")
    path = os.pathsep.join([str(script.parent)] * on_path + ["/usr/bin", "/bin"])
    env = clean_env(CHRONICLE_DATABASE_URL=on_sqlite, PATH=path)
    made = subprocess.run([str(script), "demo"], env=env, cwd=tmp_path, capture_output=True, text=True)
    assert made.returncode == 0, made.stderr
    told = made.stdout.splitlines()[-1]
    assert told.startswith("Read it: ")
    command = shlex.split(told.removeprefix("Read it: "))
    assert command[0] == ("chronicle" if on_path else str(script))
    done = subprocess.run(command, env=env, cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "demo.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


def test_rulesets_lists_the_installed_game_systems_with_the_default_marked() -> None:
    code, out, _ = chronicle("rulesets")
    assert code == 0
    lines = {line.split()[0]: line for line in out.splitlines() if line and not line.startswith(" ")}
    assert "default" in lines["stellar-winds"] and "GraphQL plug-in" in lines["stellar-winds"]
    assert "d20" in lines and "default" not in lines["d20"]


def test_rulesets_shows_one_systems_flags_and_refuses_an_unknown_one() -> None:
    code, out, _ = chronicle("rulesets", "--ruleset", "stellar-winds")
    assert code == 0
    assert '    sw.crit_mode = "wounding"  [B-SW-5]' in out
    code, _, err = chronicle("rulesets", "--ruleset", "nope")
    assert code == 2 and "no ruleset 'nope' is installed" in err


def test_demo_refuses_a_ruleset_without_a_demo_with_a_usage_error(on_sqlite: str) -> None:
    code, _, err = chronicle("demo", "--ruleset", "nope")
    assert code == 2 and "unknown ruleset 'nope'" in err


def test_the_worker_takes_its_widest_batching_window_from_the_command_line(
    on_sqlite: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``chronicle worker --max-window`` trades the read models' lag for CPU per fact: it reaches
    the follower; out of range it is refused before anything starts."""
    from api.service import views

    made: list[float] = []
    real = views.follower

    def follower(*args: object, **options: float) -> object:
        runner = real(*args, **options)  # type: ignore[arg-type]
        made.append(runner.max_window)
        runner.close()
        raise SystemExit(0)  # (stop before it follows)

    monkeypatch.setattr(views, "follower", follower)
    code, _, _ = chronicle("worker", "--max-window", "0.1")
    assert code == 0 and made == [0.1]
    code, _, err = chronicle("worker", "--max-window", "11")
    assert code != 0 and "max-window" in err and made == [0.1]
