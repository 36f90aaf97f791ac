"""The OpenAPI schema declares the errors the server really sends: the envelope, for every status.

A real error of each kind (401, 404, 409, 410, 413, 415, 422) is provoked through HTTP and checked by
schemathesis against the operation's declaration in the served `/openapi.json` (its status is declared, its
body matches the declared schema); marked slow, generated requests (valid and invalid) are checked the same
way for every operation.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import schemathesis
from fastapi import FastAPI
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)

from env_server.app import create_app
from env_server.domain.registry import DomainRegistry
from env_server.settings import Settings
from tests.toy_domain import domain as toy_domain

TASK = "toybank-transfer-001"
CONFORMANCE = [status_code_conformance, response_schema_conformance, content_type_conformance]


def make_app(tmp_path: Path, **options: Any) -> FastAPI:
    settings = Settings(store_url=f"sqlite:///{tmp_path}/store.db", **options)
    return create_app(settings, registry=DomainRegistry([toy_domain]))


@pytest.fixture
def app(tmp_path: Path) -> FastAPI:
    return make_app(tmp_path)


@pytest.fixture
def client(app: FastAPI) -> Iterator[TestClient]:
    with TestClient(app) as c:
        yield c


def check(app: FastAPI, method: str, path: str, response: httpx.Response, status: int, **parts: Any) -> None:
    """The response has `status`, and the schema the app serves declares it, with a body it matches."""
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message", "field"}, body
    schema = schemathesis.openapi.from_asgi("/openapi.json", app)
    operation = schema[path][method]
    operation.Case(**parts).validate_response(response, checks=CONFORMANCE)


def test_the_schema_has_no_fastapi_default_error_shape(app: FastAPI) -> None:
    schema = app.openapi()
    assert "HTTPValidationError" not in json.dumps(schema)
    for path, operations in schema["paths"].items():
        if not path.startswith("/v1"):
            continue
        for method, operation in operations.items():
            errors = {s: r for s, r in operation["responses"].items() if s[0] in "45"}
            assert {"401", "503"} <= set(errors), (method, path)
            for declared in errors.values():
                ref = declared["content"]["application/json"]["schema"]["$ref"]
                assert ref == "#/components/schemas/ErrorResponse", (method, path)


def test_unknown_resources_are_declared_404s(app: FastAPI, client: TestClient) -> None:
    response = client.get("/v1/tasks/nope")
    check(app, "GET", "/v1/tasks/{task_id}", response, 404, path_parameters={"task_id": "nope"})
    response = client.post("/v1/episodes", json={"task_id": "nope"})
    check(app, "POST", "/v1/episodes", response, 404, body={"task_id": "nope"})


def test_invalid_bodies_are_declared_422s_and_415s(app: FastAPI, client: TestClient) -> None:
    response = client.post("/v1/episodes", json={"task_id": TASK, "seed": "x"})
    check(app, "POST", "/v1/episodes", response, 422, body={"task_id": TASK, "seed": "x"})
    response = client.post("/v1/episodes", content=b"task", headers={"content-type": "text/plain"})
    check(app, "POST", "/v1/episodes", response, 415, body="task", media_type="text/plain")


def test_finished_and_disposed_episodes_are_declared_409s_and_410s(app: FastAPI, client: TestClient) -> None:
    call = {"name": "get_account", "arguments": {"account_id": "AC-0001"}}
    finished = client.post("/v1/episodes", json={"task_id": TASK}).json()["episode_id"]
    client.post(f"/v1/episodes/{finished}/score")
    path = "/v1/episodes/{episode_id}/tool_calls"
    response = client.post(f"/v1/episodes/{finished}/tool_calls", json=call)
    check(app, "POST", path, response, 409, path_parameters={"episode_id": finished}, body=call)
    disposed = client.post("/v1/episodes", json={"task_id": TASK}).json()["episode_id"]
    client.delete(f"/v1/episodes/{disposed}")
    response = client.post(f"/v1/episodes/{disposed}/tool_calls", json=call)
    check(app, "POST", path, response, 410, path_parameters={"episode_id": disposed}, body=call)


def test_the_middleware_refusals_are_declared_401s_and_413s(tmp_path: Path) -> None:
    guarded = make_app(tmp_path, api_key="k" * 32, max_request_bytes=2048)
    with TestClient(guarded) as client:
        response = client.get("/v1/domains")
        check(guarded, "GET", "/v1/domains", response, 401)
        big = {"task_id": "x" * 4096}
        response = client.post("/v1/episodes", json=big, headers={"authorization": "Bearer " + "k" * 32})
        check(guarded, "POST", "/v1/episodes", response, 413, body=big)


@pytest.mark.slow
def test_generated_requests_get_responses_the_schema_declares(
    tmp_path: Path, subtests: pytest.Subtests
) -> None:
    """Valid and invalid generated requests to every operation: each answer conforms to the schema."""
    app = make_app(tmp_path)
    schema = schemathesis.openapi.from_asgi("/openapi.json", app)
    operations = [result.ok() for result in schema.get_all_operations()]
    with TestClient(app) as client:
        live = client.post("/v1/episodes", json={"task_id": TASK}).json()["episode_id"]
    for operation in operations:

        @given(case=operation.as_strategy())
        @settings(
            max_examples=15,
            deadline=None,
            derandomize=True,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        def conform(case: schemathesis.Case) -> None:
            if "episode_id" in (case.path_parameters or {}):
                case.path_parameters["episode_id"] = live
            response = case.call()
            case.validate_response(response, checks=[*CONFORMANCE], excluded_checks=[not_a_server_error])

        with subtests.test(operation=operation.label):
            conform()
