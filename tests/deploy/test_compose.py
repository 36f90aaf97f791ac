"""docker-compose.yml and the Dockerfile, checked by a real compose implementation (Debian's docker-compose:
it resolves anchors, merges and variables and validates against the compose schema; no image is pulled)."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.deploy.conftest import required_executable

ROOT = Path(__file__).parents[2]
REPLICAS = ("gs1", "gs2", "gs3")


def compose_config(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    exe = required_executable("docker-compose", "docker-compose")
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("GROUNDSTATE_", "POSTGRES_"))}
    return subprocess.run(
        [exe, "-f", str(ROOT / "docker-compose.yml"), *args, "config"],
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )


@pytest.fixture(scope="module")
def config() -> dict[str, Any]:
    out = compose_config({"GROUNDSTATE_API_KEY": "k-123", "GROUNDSTATE_WORKERS": "6"})
    assert out.returncode == 0, out.stderr
    parsed: dict[str, Any] = yaml.safe_load(out.stdout)
    return parsed


def test_the_stack_has_postgres_migrations_replicas_and_a_load_balancer(config: dict[str, Any]) -> None:
    services = config["services"]
    assert set(services) == {"postgres", "migrate", *REPLICAS, "lb", "vllm"}
    postgres = services["postgres"]
    assert any(v.startswith("pgdata:") for v in _volumes(postgres))
    assert "pg_isready" in " ".join(postgres["healthcheck"]["test"])
    assert "pgdata" in config["volumes"]
    migrate = services["migrate"]
    assert migrate["command"] == ["db", "upgrade"]
    assert migrate["depends_on"]["postgres"]["condition"] == "service_healthy"
    for name in REPLICAS:
        server = services[name]
        assert server["depends_on"]["migrate"]["condition"] == "service_completed_successfully"
        assert server["command"][:1] == ["serve"] and "--no-migrate" in server["command"]
        assert server["command"][server["command"].index("--workers") + 1] == "6"
        env = server["environment"]
        assert env["GROUNDSTATE_API_KEY"] == "k-123" and env["GROUNDSTATE_REPLICA_ID"] == name
        assert env["GROUNDSTATE_SANDBOX_URL"].startswith("postgresql+psycopg://")
        assert env["GROUNDSTATE_SANDBOX_URL"] != env["GROUNDSTATE_STORE_URL"]
        assert "/healthz" in " ".join(server["healthcheck"]["test"])
    lb = services["lb"]
    assert lb["image"].startswith("haproxy:")
    assert {lb["depends_on"][n]["condition"] for n in REPLICAS} == {"service_healthy"}
    assert services["vllm"]["profiles"] == ["llm"]


def test_haproxy_gets_every_variable_its_config_reads(config: dict[str, Any]) -> None:
    """deploy/haproxy.cfg is shared with run-local.sh; the compose service must set all it reads."""
    lb = config["services"]["lb"]
    lines = (ROOT / "deploy" / "haproxy.cfg").read_text().splitlines()
    wanted = {
        v for line in lines if not line.lstrip().startswith("#") for v in re.findall(r"\$\{(\w+)\}", line)
    }
    assert wanted == {k for k in lb["environment"] if k.startswith("GS_")}
    assert {lb["environment"][f"GS_REPLICA_{i}"] for i in (1, 2, 3)} == {f"{n}:8000" for n in REPLICAS}
    assert any(v.endswith("deploy/haproxy.cfg:/usr/local/etc/haproxy/haproxy.cfg:ro") for v in _volumes(lb))


def test_without_an_api_key_compose_refuses_to_start_the_stack() -> None:
    out = compose_config({})
    assert out.returncode != 0
    assert "set GROUNDSTATE_API_KEY" in out.stderr


def test_the_image_never_contains_the_api_key() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert "API_KEY" not in dockerfile.replace("GROUNDSTATE_API_KEY)", "")
    assert "tests" in (ROOT / ".dockerignore").read_text().split()


def _volumes(service: dict[str, Any]) -> list[str]:
    """Volumes as `source:target[:ro]`, whichever syntax the compose implementation prints."""
    return [
        v if isinstance(v, str) else f"{v['source']}:{v['target']}" + (":ro" if v.get("read_only") else "")
        for v in service.get("volumes", [])
    ]


def test_no_server_runs_as_a_superuser_and_the_sandboxes_are_hardened(config: dict[str, Any]) -> None:
    """The servers connect as groundstate_app, migrations as groundstate_migrate; never as `postgres`."""
    from env_server.sandbox.postgres.roles import REVOKED_FUNCTIONS

    services = config["services"]
    superuser = services["postgres"]["environment"]["POSTGRES_USER"]
    for name in REPLICAS:
        env = services[name]["environment"]
        for url in (env["GROUNDSTATE_STORE_URL"], env["GROUNDSTATE_SANDBOX_URL"]):
            assert url.startswith("postgresql+psycopg://groundstate_app:"), url
    assert services["migrate"]["environment"]["GROUNDSTATE_STORE_URL"].startswith(
        "postgresql+psycopg://groundstate_migrate:"
    )
    assert superuser not in ("groundstate_app", "groundstate_migrate")
    script = (ROOT / "deploy" / "postgres-init.sh").read_text()
    assert "NOSUPERUSER" in script and "NOREPLICATION" in script
    for function in REVOKED_FUNCTIONS:
        assert f"REVOKE EXECUTE ON FUNCTION {function} FROM PUBLIC" in script
