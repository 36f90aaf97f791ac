"""Property-based requests from the server's own OpenAPI schema (schemathesis): no input is a server error.

Every operation gets generated bodies, queries and path parameters. Episode ids are replaced by a live
episode's, and every other generated task id by a real one, so generated values reach the tool, message and
scoring code instead of stopping at a 404. Any answer is fine but a 5xx — except the 503 of `/v1/judge`,
which means "no judge configured" on this server.
"""

from __future__ import annotations

import zlib

import pytest
import schemathesis
from fastapi import FastAPI
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings

from env_server.app import create_app
from env_server.domain.registry import DomainRegistry
from env_server.settings import Settings
from tests.toy_domain import domain as toy_domain

pytestmark = pytest.mark.slow

TASK = "toybank-transfer-001"


@pytest.fixture(scope="module")
def fuzzed_app(tmp_path_factory: pytest.TempPathFactory) -> FastAPI:
    """The app under test, built (and its store migrated) when the test runs, not when it is collected."""
    store = tmp_path_factory.mktemp("fuzz") / "store.db"
    return create_app(Settings(store_url=f"sqlite:///{store}"), registry=DomainRegistry([toy_domain]))


def _live_episode(app: FastAPI) -> str:
    with TestClient(app) as client:
        return str(client.post("/v1/episodes", json={"task_id": TASK}).json()["episode_id"])


def _send(case: schemathesis.Case, app: FastAPI) -> None:
    if "episode_id" in (case.path_parameters or {}):
        case.path_parameters["episode_id"] = _live_episode(app)
    if isinstance(case.body, dict) and "task_id" in case.body and zlib.crc32(repr(case.body).encode()) % 2:
        case.body["task_id"] = TASK
    response = case.call()
    judge_unconfigured = case.path == "/v1/judge" and response.status_code == 503
    assert response.status_code < 500 or judge_unconfigured, (
        f"{case.method} {case.formatted_path} body={case.body!r:.300} -> {response.status_code} "
        f"{response.text[:300]}"
    )


def test_no_generated_request_is_a_server_error(fuzzed_app: FastAPI, subtests: pytest.Subtests) -> None:
    """One subtest per operation of the schema the app serves."""
    schema = schemathesis.openapi.from_asgi("/openapi.json", fuzzed_app)
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 10
    for operation in operations:

        @given(case=operation.as_strategy())
        @settings(
            max_examples=40,
            deadline=None,
            derandomize=True,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        def fuzz(case: schemathesis.Case) -> None:
            _send(case, fuzzed_app)

        with subtests.test(operation=operation.label):
            fuzz()
