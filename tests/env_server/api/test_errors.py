"""Bad input gets a specific 4xx naming the field; never a 500."""

import pytest
from fastapi.testclient import TestClient

from tests.factories import start_episode


def _error(response) -> dict:  # type: ignore[no-untyped-def]
    return response.json()["error"]


def test_unknown_task_is_404(client: TestClient) -> None:
    r = client.post("/v1/episodes", json={"task_id": "nope"})
    assert r.status_code == 404 and _error(r) == {
        "code": "unknown-task",
        "message": "unknown task 'nope'",
        "field": "task_id",
    }


def test_unknown_episode_is_404(client: TestClient) -> None:
    r = client.post("/v1/episodes/abc123/score")
    assert r.status_code == 404 and _error(r)["code"] == "unknown-episode"


def test_unknown_tool_lists_the_valid_ones(client: TestClient) -> None:
    eid = start_episode(client)
    r = client.post(f"/v1/episodes/{eid}/tool_calls", json={"name": "rob_bank", "arguments": {}})
    assert r.status_code == 422 and _error(r)["code"] == "unknown-tool" and _error(r)["field"] == "name"
    assert "transfer" in _error(r)["message"]


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({"source_id": "AC-0001", "target_id": "AC-0002"}, "arguments.amount_cents"),
        ({"source_id": "AC-0001", "target_id": "AC-0002", "amount_cents": "lots"}, "arguments.amount_cents"),
        ({"source_id": "AC-0001", "target_id": "AC-0002", "amount_cents": 1, "bogus": 1}, "arguments.bogus"),
    ],
)
def test_invalid_arguments_name_the_field(client: TestClient, arguments: dict, field: str) -> None:
    eid = start_episode(client)
    r = client.post(f"/v1/episodes/{eid}/tool_calls", json={"name": "transfer", "arguments": arguments})
    assert r.status_code == 422 and _error(r)["code"] == "invalid-arguments" and _error(r)["field"] == field


def test_field_constraint_from_signature_is_enforced(client: TestClient) -> None:
    eid = start_episode(client)
    r = client.post(
        f"/v1/episodes/{eid}/tool_calls",
        json={"name": "set_balance", "arguments": {"account_id": "AC-0001", "balance_cents": -5}},
    )
    assert r.status_code == 422 and _error(r)["field"] == "arguments.balance_cents"


def test_malformed_body_names_the_field(client: TestClient) -> None:
    r = client.post("/v1/episodes", json={"task": "x"})
    assert r.status_code == 422 and _error(r)["code"] == "invalid-request" and _error(r)["field"] == "task_id"


def test_finished_episode_is_409(client: TestClient) -> None:
    eid = start_episode(client)
    client.post(f"/v1/episodes/{eid}/score")
    r = client.post(f"/v1/episodes/{eid}/messages", json={"content": "hi"})
    assert r.status_code == 409 and _error(r)["code"] == "episode-finished"


def test_unconfigured_llm_user_is_422(client: TestClient) -> None:
    r = client.post("/v1/episodes", json={"task_id": "toybank-transfer-001", "user": "llm"})
    assert r.status_code == 422 and _error(r)["field"] == "user"


def test_unknown_domain_is_404(client: TestClient) -> None:
    r = client.get("/v1/domains/nope")
    assert r.status_code == 404 and _error(r)["code"] == "unknown-domain"


def test_malformed_json_names_the_offset_not_a_field(client: TestClient) -> None:
    body = b'{"task_id": "toybank-transfer-001",}'
    r = client.post("/v1/episodes", content=body, headers={"content-type": "application/json"})
    assert r.status_code == 422
    assert _error(r) == {
        "code": "invalid-json",
        "message": "the request body is not valid JSON: Expecting property name enclosed in double quotes "
        f"at offset {body.index(b'}')}",
        "field": "body",
    }


def test_a_body_without_a_json_content_type_says_so(client: TestClient) -> None:
    body = b'{"task_id": "toybank-transfer-001"}'
    for sent, named in ((None, "none"), ("text/plain", "text/plain")):
        headers = {} if sent is None else {"content-type": sent}
        r = client.post("/v1/episodes", content=body, headers=headers)
        assert r.status_code == 415, r.text
        assert _error(r)["code"] == "unsupported-media-type" and _error(r)["field"] == "content-type"
        assert (
            "content-type: application/json" in _error(r)["message"]
            and f"content-type: {named})" in _error(r)["message"]
        )


def test_unknown_routes_and_methods_use_the_error_shape(client: TestClient) -> None:
    r = client.get("/v1/nope")
    assert r.status_code == 404 and _error(r) == {
        "code": "not-found",
        "message": "no route GET /v1/nope (the API is listed at /docs)",
        "field": None,
    }
    r = client.post("/v1/domains")
    assert r.status_code == 405 and r.headers["allow"] == "GET"
    assert _error(r)["code"] == "method-not-allowed" and "allowed: GET" in _error(r)["message"]


def test_an_empty_body_is_named_as_the_body(client: TestClient) -> None:
    response = client.post("/v1/episodes", content=b"", headers={"content-type": "application/json"})
    assert response.status_code == 422
    assert response.json()["error"] == {
        "code": "invalid-request",
        "message": "the request body is empty: send a JSON object",
        "field": "body",
    }


def test_arguments_sent_as_a_json_string_get_a_hint(client: TestClient) -> None:
    episode = client.post("/v1/episodes", json={"task_id": "toybank-transfer-001"}).json()["episode_id"]
    call = {"name": "get_account", "arguments": '{"account_id": "AC-0001"}'}
    response = client.post(f"/v1/episodes/{episode}/tool_calls", json=call)
    assert response.status_code == 422
    error = response.json()["error"]
    assert error["field"] == "arguments"
    assert "send the JSON object itself" in error["message"] and "not a string" in error["message"]
