"""Every string a request carries is checked where it enters: bad text is a 4xx naming its field, never a 500.

A lone surrogate, a control character or an over-long name in any field of any request gets a 422 whose
`field` names it; nothing of it is recorded, so the episode's record stays readable.
"""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.factories import start_episode

BAD = {"surrogate": "\\ud800", "control": "\\u0001", "nul": "\\u0000"}


def _post(client: TestClient, url: str, raw: str) -> Any:
    """Post raw JSON text: the JSON escapes reach the server as they are (an encoder would refuse them)."""
    return client.post(url, content=raw.encode(), headers={"content-type": "application/json"})


@pytest.mark.parametrize("bad", sorted(BAD))
@pytest.mark.parametrize(
    ("body", "field"),
    [
        ('{{"name": "get{x}"}}', "name"),
        ('{{"name": "get_account", "call_id": "c{x}", "arguments": {{"account_id": "AC-0001"}}}}', "call_id"),
        ('{{"name": "get_account", "arguments": {{"account_id": "AC{x}"}}}}', "arguments"),
        ('{{"name": "get_account", "arguments": {{"k{x}": 1}}}}', "arguments"),
        ('{{"name": "get_account", "arguments": {{"a": [{{"b": "{x}"}}]}}}}', "arguments"),
    ],
)
def test_bad_text_in_a_tool_call_is_a_422_and_the_record_stays_readable(
    client: TestClient, bad: str, body: str, field: str
) -> None:
    episode = start_episode(client)
    r = _post(client, f"/v1/episodes/{episode}/tool_calls", body.format(x=BAD[bad]))
    assert r.status_code == 422, r.text
    assert r.json()["error"]["field"] == field
    record = client.get(f"/v1/episodes/{episode}")
    assert record.status_code == 200 and record.json()["events"][1:] == []
    assert client.post(f"/v1/episodes/{episode}/score").status_code == 200


@pytest.mark.parametrize(
    ("url", "body", "field"),
    [
        ("/v1/episodes", '{"task_id": "t\\ud800"}', "task_id"),
        ("/v1/score", '{"task_id": "t\\u0007"}', "task_id"),
        (
            "/v1/score",
            '{"task_id": "toybank-transfer-001", "messages": [{"role": "assistant", "content": "a\\udfff"}]}',
            "messages.0",
        ),
        (
            "/v1/score",
            '{"task_id": "toybank-transfer-001", "messages": [{"role": "assistant", "tool_calls": '
            '[{"id": "\\ud800", "function": {"name": "transfer", "arguments": "{}"}}]}]}',
            "messages.0.tool_calls.0.id",
        ),
        (
            "/v1/score",
            '{"task_id": "toybank-transfer-001", '
            '"messages": [{"role": "user", "content": "x", "name": "\\ud800"}]}',
            "messages.0",
        ),
        ("/v1/tasks/mint", '{"domain": "toy\\u0000", "n": 1}', "domain"),
    ],
)
def test_bad_text_anywhere_else_is_a_422_naming_the_field(
    client: TestClient, url: str, body: str, field: str
) -> None:
    r = _post(client, url, body)
    assert r.status_code == 422, r.text
    assert r.json()["error"]["field"].startswith(field)


def test_a_message_with_a_surrogate_is_refused_and_the_record_stays_readable(client: TestClient) -> None:
    episode = start_episode(client)
    assert _post(client, f"/v1/episodes/{episode}/messages", '{"content": "hi \\ud800"}').status_code == 422
    assert _post(client, f"/v1/episodes/{episode}/messages", '{"content": "hi\\u001b[0m"}').status_code == 422
    assert client.get(f"/v1/episodes/{episode}").status_code == 200


def test_over_long_names_and_deep_arguments_are_refused(client: TestClient) -> None:
    episode = start_episode(client)
    url = f"/v1/episodes/{episode}/tool_calls"
    assert client.post(url, json={"name": "x" * 300}).json()["error"]["field"] == "name"
    deep: Any = "leaf"
    for _ in range(40):
        deep = [deep]
    r = client.post(url, json={"name": "get_account", "arguments": {"account_id": deep}})
    assert r.status_code == 422 and "nested deeper" in r.json()["error"]["message"]
    nested = (
        '{"task_id": "toybank-transfer-001", "messages": [{"role": "assistant", "tool_calls": [{"id": "1", '
        '"function": {"name": "transfer", "arguments": "' + "[" * 5000 + '"}}]}]}'
    )
    assert _post(client, "/v1/score", nested).status_code == 422


def test_an_unknown_episode_id_of_any_shape_is_a_404(client: TestClient) -> None:
    for episode in ("%00", "%ED%A0%80", "x" * 500):
        r = client.post(f"/v1/episodes/{episode}/tool_calls", json={"name": "get_account"})
        assert r.status_code == 404 and r.json()["error"]["field"] == "episode_id"


def test_prose_keeps_its_line_breaks_and_tabs(client: TestClient) -> None:
    episode = start_episode(client)
    r = client.post(f"/v1/episodes/{episode}/messages", json={"content": "Done.\n\tThanks\r\n"})
    assert r.status_code == 200, r.text
