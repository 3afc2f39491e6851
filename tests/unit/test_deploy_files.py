"""The deployment files, checked by parsing them (there is no container engine in CI):
every setting is documented and in the example env file; compose uses only documented
variables; the image and the units have what operations relies on."""

from __future__ import annotations

import ast
import configparser
import re
from pathlib import Path
from typing import Any

import yaml

import api.service.settings as settings_module
from api.service.settings import Settings

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy"


def setting_variables() -> dict[str, str]:
    """Every ``NAME = PREFIX + "..."`` constant of api/service/settings.py: constant name -> variable."""
    tree = ast.parse((REPO / "api" / "service" / "settings.py").read_text(encoding="utf-8"))
    found = {}
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and isinstance(node.value, ast.BinOp)
            and isinstance(node.value.left, ast.Name)
            and node.value.left.id == "PREFIX"
            and isinstance(node.value.right, ast.Constant)
        ):
            target = node.targets[0]
            assert isinstance(target, ast.Name)
            found[target.id] = "CHRONICLE_" + str(node.value.right.value)
    return found


VARIABLES = sorted(setting_variables().values())


def test_the_settings_module_is_parsed() -> None:
    assert len(VARIABLES) >= 13
    for name, variable in setting_variables().items():
        assert getattr(settings_module, name) == variable
    for variable in VARIABLES:  # and each one is named in the module's own table
        assert variable in (settings_module.__doc__ or ""), variable


def test_every_variable_is_in_the_configuration_reference_with_default_and_example() -> None:
    doc = (REPO / "docs" / "configuration.md").read_text(encoding="utf-8")
    for variable in VARIABLES:
        assert re.search(rf"^\| `{variable}` \| `[^`]+` \|", doc, re.M), f"{variable} not in the table"
        assert re.search(rf"^{variable}=\S", doc, re.M), f"{variable} has no example"


def env_example() -> dict[str, str]:
    pairs = {}
    for line in (DEPLOY / "chronicle.env.example").read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            key, sep, value = line.partition("=")
            assert sep, line
            pairs[key] = value
    return pairs


def test_the_env_example_has_every_variable_with_its_default() -> None:
    example = env_example()
    assert sorted(example) == VARIABLES
    # The defaults in the example are what Settings uses when nothing is set.
    assert Settings.from_env(example) == Settings.from_env({})
    lines = (DEPLOY / "chronicle.env.example").read_text(encoding="utf-8").splitlines()
    for i, line in enumerate(lines):
        if line.startswith("CHRONICLE_") and not lines[i - 1].startswith("CHRONICLE_"):
            assert lines[i - 1].startswith("#"), f"no comment above {line}"


def compose() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((DEPLOY / "compose.yaml").read_text(encoding="utf-8"))
    return data


def test_compose_uses_only_documented_variables() -> None:
    text = (DEPLOY / "compose.yaml").read_text(encoding="utf-8")
    used = set(re.findall(r"\bCHRONICLE_[A-Z_]+\b", text))
    assert used and used <= set(VARIABLES), sorted(used - set(VARIABLES))
    for name in ("api", "worker"):
        env = compose()["services"][name]["environment"]
        assert set(env) <= set(VARIABLES), name
        assert env["CHRONICLE_DATABASE_URL"].startswith("postgresql://")
        assert "@postgres:5432/" in env["CHRONICLE_DATABASE_URL"]
        Settings.from_env({k: str(v) for k, v in env.items() if "${" not in str(v)})  # valid values


def test_compose_services() -> None:
    data = compose()
    services = data["services"]
    assert set(services) >= {"postgres", "api", "worker"}
    pg = services["postgres"]
    assert "pg_isready" in " ".join(pg["healthcheck"]["test"])
    volume = pg["volumes"][0].split(":")[0]
    assert volume in data["volumes"]  # a named, persistent volume
    for name in ("api", "worker"):
        assert services[name]["depends_on"]["postgres"]["condition"] == "service_healthy"
        assert services[name]["stop_grace_period"]
    assert services["api"]["command"] == ["serve"]
    assert services["worker"]["command"] == ["worker"]


def dockerfile() -> list[str]:
    text = (DEPLOY / "Dockerfile").read_text(encoding="utf-8").replace("\\\n", " ")
    return [line.strip() for line in text.splitlines() if line.strip() and not line.strip().startswith("#")]


def test_the_dockerfile_is_multi_stage_slim_non_root_with_a_healthcheck() -> None:
    lines = dockerfile()
    froms = [line for line in lines if line.startswith("FROM ")]
    assert len(froms) >= 2 and all("slim" in line for line in froms)
    assert any("pip wheel" in line for line in lines)
    runtime = lines[lines.index(froms[-1]) :]
    user = [line.split()[1] for line in runtime if line.startswith("USER ")]
    assert user and user[-1].split(":")[0] not in ("root", "0")
    health = [line for line in runtime if line.startswith("HEALTHCHECK ")]
    assert health and "/healthz" in health[0]
    assert "EXPOSE 8000" in runtime
    assert 'ENTRYPOINT ["chronicle"]' in runtime and 'CMD ["serve"]' in runtime
    assert "STOPSIGNAL SIGTERM" in runtime
    for line in runtime:
        for variable in re.findall(r"\bCHRONICLE_[A-Z_]+\b", line):
            assert variable in VARIABLES, variable


def unit(name: str) -> configparser.ConfigParser:
    parser = configparser.ConfigParser(strict=False, interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read_string((DEPLOY / "systemd" / name).read_text(encoding="utf-8"))
    return parser


def test_the_systemd_units() -> None:
    for name, command in (("chronicle-api.service", "serve"), ("chronicle-worker.service", "worker")):
        service = unit(name)["Service"]
        assert service["ExecStart"].split()[-1] == command
        assert service["ExecStart"].split()[0].endswith("/chronicle")
        assert service["EnvironmentFile"].startswith("/etc/chronicle/")
        assert service["Restart"] == "on-failure"
        assert service["KillSignal"] == "SIGTERM"
        # More than the API's default graceful shutdown (CHRONICLE_SHUTDOWN_TIMEOUT).
        assert int(service["TimeoutStopSec"]) > Settings().shutdown_timeout
        assert service["User"] not in ("", "root")
        for hardening in ("NoNewPrivileges", "ProtectSystem", "ProtectHome", "PrivateTmp"):
            assert hardening in service, hardening
        assert unit(name)["Install"]["WantedBy"] == "multi-user.target"


def test_the_deploy_readme_and_scaling_notes_cover_the_topics() -> None:
    readme = (DEPLOY / "README.md").read_text(encoding="utf-8").lower()
    for topic in ("compose", "systemd", "first start", "upgrade", "backup"):
        assert topic in readme, topic
    scaling = (DEPLOY / "SCALING.md").read_text(encoding="utf-8")
    for topic in ("1,400", "replica", "worker", "shard", "notification order", "Citus"):
        assert topic in scaling, topic
    ops = (REPO / "docs" / "operations.md").read_text(encoding="utf-8")
    topics = ("/healthz", "/readyz", "CHRONICLE_READY_MAX_LAG", "pg_dump", "pg_restore", "chronicle export")
    for topic in topics:
        assert topic in ops, topic


def test_every_container_healthcheck_is_liveness_on_healthz_never_readiness() -> None:
    """The image and compose agree: a container's health is /healthz (the process answers).
    /readyz (store reachable, worker not too far behind) is for load balancers; a container
    marked unhealthy on it would be restarted for an outage a restart cannot fix."""
    image = [line for line in dockerfile() if line.startswith("HEALTHCHECK ")]
    api = " ".join(compose()["services"]["api"]["healthcheck"]["test"])
    for check in (image[0], api):
        assert "/healthz" in check and "/readyz" not in check, check
    ops = (REPO / "docs" / "operations.md").read_text(encoding="utf-8")
    assert "Why not `/readyz` for the container's health" in " ".join(ops.split())  # says why


def test_the_wheel_carries_every_file_the_server_serves_itself() -> None:
    """The image installs a wheel (deploy/Dockerfile), not a checkout: every file under
    api/http/static (GraphiQL's vendored build, the table page) must match the package data
    pyproject.toml declares, or the container serves 404s where a checkout works."""
    import tomllib

    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = config["tool"]["setuptools"]["package-data"]["api.http"]
    package = REPO / "api" / "http"
    declared = {p for pattern in patterns for p in package.glob(pattern) if p.is_file()}
    served = {p for p in (package / "static").rglob("*") if p.is_file()}
    assert served and served <= declared, sorted(str(p.relative_to(package)) for p in served - declared)
