"""Property-based requests from the server's own OpenAPI schema (schemathesis): no input is a server error.

Every operation gets generated bodies, queries and path parameters. Episode ids are replaced by a live
episode's, and every other generated task id by a real one, so generated values reach the tool, message and
scoring code instead of stopping at a 404. Any answer is fine but a 5xx — except the 503 of `/v1/judge`,
which means "no judge configured" on this server.
"""

from __future__ import annotations

import tempfile
import zlib

import pytest
import schemathesis
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, settings

from env_server.app import create_app
from env_server.domain.registry import DomainRegistry
from env_server.settings import Settings
from tests.toy_domain import domain as toy_domain

pytestmark = pytest.mark.slow

TASK = "toybank-transfer-001"
_app = create_app(
    Settings(store_url=f"sqlite:///{tempfile.mkdtemp()}/store.db"), registry=DomainRegistry([toy_domain])
)
schema = schemathesis.openapi.from_asgi("/openapi.json", _app)


def _live_episode() -> str:
    with TestClient(_app) as client:
        return str(client.post("/v1/episodes", json={"task_id": TASK}).json()["episode_id"])


@schema.parametrize()
@settings(
    max_examples=40, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck)
)
def test_no_generated_request_is_a_server_error(case: schemathesis.Case) -> None:
    if "episode_id" in (case.path_parameters or {}):
        case.path_parameters["episode_id"] = _live_episode()
    if isinstance(case.body, dict) and "task_id" in case.body and zlib.crc32(repr(case.body).encode()) % 2:
        case.body["task_id"] = TASK
    response = case.call()
    judge_unconfigured = case.path == "/v1/judge" and response.status_code == 503
    assert response.status_code < 500 or judge_unconfigured, (
        f"{case.method} {case.formatted_path} body={case.body!r:.300} -> {response.status_code} "
        f"{response.text[:300]}"
    )
