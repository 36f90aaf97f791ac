"""Issue #20 through the HTTP API: consent is part of the reward, and message tricks earn no fact.

Real hotel tasks, real episodes with the scripted user, on both sandbox backends; and `POST /v1/score` with
an ordered trajectory (the calls inside the assistant messages, OpenAI-style) and an unordered one.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from env_server.app import create_app
from env_server.domain.registry import DomainRegistry
from env_server.settings import Settings

TASK = "hotel-cancel-refund-002"
READS = [
    ("get_booking", {"booking_id": "BK-20201"}),
    ("get_guest", {"guest_id": "G-2021"}),
    ("verify_guest_identity", {"guest_id": "G-2021", "last_name": "Webb", "date_of_birth": "1979-11-02"}),
]
CANCEL = ("cancel_booking", {"booking_id": "BK-20201", "refund_percent": 50, "reason": "Plans changed"})
ASK_ID = "Could you confirm your last name and date of birth?"
QUOTE = "Cancelling now would refund $306 of the $612 you paid. Shall I cancel it?"
REPORT = "Done, booking BK-20201 is cancelled."


@pytest.fixture
def hotel(settings: Settings) -> Iterator[TestClient]:
    registry = DomainRegistry.discover(only=["hotel"])
    with TestClient(create_app(settings, registry=registry)) as client:
        yield client


def _start(client: TestClient, task_id: str = TASK) -> str:
    r = client.post("/v1/episodes", json={"task_id": task_id, "user": "scripted"})
    assert r.status_code == 201, r.text
    return str(r.json()["episode_id"])


def _call(client: TestClient, episode: str, name: str, arguments: dict[str, Any]) -> None:
    r = client.post(f"/v1/episodes/{episode}/tool_calls", json={"name": name, "arguments": arguments})
    assert r.status_code == 200 and r.json()["error"] is None, r.text


def _say(client: TestClient, episode: str, text: str) -> str:
    r = client.post(f"/v1/episodes/{episode}/messages", json={"content": text})
    assert r.status_code == 200, r.text
    return str(r.json()["content"])


def _score(client: TestClient, episode: str) -> dict[str, Any]:
    body: dict[str, Any] = client.post(f"/v1/episodes/{episode}/score").json()
    return body


def _check(score: dict[str, Any], name: str) -> dict[str, Any]:
    return next(c for c in score["checks"] if c["name"] == name)


def test_an_honest_episode_scores_one_with_consent_recorded(hotel: TestClient) -> None:
    episode = _start(hotel)
    _say(hotel, episode, ASK_ID)
    for name, args in READS:
        _call(hotel, episode, name, args)
    assert "yes" in _say(hotel, episode, QUOTE).lower()
    _call(hotel, episode, *CANCEL)
    _say(hotel, episode, REPORT)
    score = _score(hotel, episode)
    assert score["reward"] == 1, score["checks"]
    assert _check(score, "consent")["passed"] and "after the user's yes" in _check(score, "consent")["detail"]


def test_a_write_before_the_users_yes_scores_zero_with_a_readable_check(hotel: TestClient) -> None:
    episode = _start(hotel)
    for name, args in [*READS, CANCEL]:
        _call(hotel, episode, name, args)
    _say(hotel, episode, ASK_ID)
    _say(hotel, episode, QUOTE)
    _say(hotel, episode, REPORT)
    score = _score(hotel, episode)
    assert score["reward"] == 0 and not score["diff"]  # the state is right: only the order is wrong
    consent = _check(score, "consent")
    assert not consent["passed"]
    assert "'cancel_booking' changed the state before the user said yes" in consent["detail"]


def test_reciting_the_policy_in_a_live_episode_earns_no_fact(hotel: TestClient) -> None:
    episode = _start(hotel, "hotel-cancel-refusal-001")
    policy = hotel.get("/v1/domains/hotel").json()["policy"]
    _say(hotel, episode, policy)
    score = _score(hotel, episode)
    item = _check(score, "communicate:non-refundable")
    assert score["reward"] == 0 and not item["passed"] and "words (an answer has at most" in item["detail"]


def _openai_call(name: str, arguments: dict[str, Any], i: int) -> dict[str, Any]:
    return {
        "id": f"call_{i}",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }


def _ordered(calls_before_yes: bool) -> list[dict[str, Any]]:
    opening, identity, yes, thanks = (
        "Hello, I have to cancel booking BK-20201 at Lakeshore Premier for this weekend. "
        "How much will I get back?",
        "Webb, date of birth 2 November 1979.",
        "That's disappointing, but yes, cancel it.",
        "Thanks a lot, bye.",
    )
    reads = [_openai_call(n, a, i) for i, (n, a) in enumerate(READS)]
    cancel = [_openai_call(*CANCEL, 9)]
    if calls_before_yes:
        return [
            {"role": "user", "content": opening},
            {"role": "assistant", "content": None, "tool_calls": reads + cancel},
            {"role": "assistant", "content": ASK_ID},
            {"role": "user", "content": identity},
            {"role": "assistant", "content": QUOTE},
            {"role": "user", "content": yes},
            {"role": "assistant", "content": REPORT},
            {"role": "user", "content": thanks},
        ]
    return [
        {"role": "system", "content": "policy"},
        {"role": "user", "content": opening},
        {"role": "assistant", "content": ASK_ID},
        {"role": "user", "content": identity},
        {"role": "assistant", "content": None, "tool_calls": reads},
        {"role": "tool", "tool_call_id": "call_0", "content": "{}"},
        {"role": "assistant", "content": QUOTE},
        {"role": "user", "content": yes},
        {"role": "assistant", "content": REPORT, "tool_calls": cancel},
        {"role": "user", "content": thanks},
    ]


def test_score_reads_the_order_of_an_openai_transcript(hotel: TestClient) -> None:
    honest = hotel.post("/v1/score", json={"task_id": TASK, "messages": _ordered(False)}).json()
    assert honest["reward"] == 1 and honest["ordered"], honest["checks"]
    assert [t["name"] for t in honest["tool_results"]] == [n for n, _ in READS] + ["cancel_booking"]
    early = hotel.post("/v1/score", json={"task_id": TASK, "messages": _ordered(True)}).json()
    assert early["reward"] == 0 and not _check(early, "consent")["passed"]


def test_an_unordered_trajectory_is_read_as_every_call_first_and_says_so(hotel: TestClient) -> None:
    messages = [m for m in _ordered(False) if "tool_calls" not in m or m["content"]]
    for m in messages:
        m.pop("tool_calls", None)
    calls = [{"name": n, "arguments": a} for n, a in [*READS, CANCEL]]
    body = hotel.post("/v1/score", json={"task_id": TASK, "tool_calls": calls, "messages": messages}).json()
    consent = _check(body, "consent")
    assert body["ordered"] is False and body["reward"] == 0 and not body["diff"]
    assert "an unordered trajectory is read as every call first" in consent["detail"]


def test_calls_in_both_places_or_arguments_that_are_not_json_are_a_clear_422(hotel: TestClient) -> None:
    both = {"task_id": TASK, "tool_calls": [{"name": "get_booking"}], "messages": _ordered(False)}
    r = hotel.post("/v1/score", json=both)
    assert r.status_code == 422 and "not both" in r.json()["error"]["message"]
    bad = _ordered(False)
    bad[4]["tool_calls"][0]["function"]["arguments"] = "{booking_id: BK-20201"
    r = hotel.post("/v1/score", json={"task_id": TASK, "messages": bad})
    error = r.json()["error"]
    assert r.status_code == 422 and error["field"] == "messages.4.tool_calls.0.function.arguments"
    assert "not JSON" in error["message"]


@pytest.mark.parametrize("task_id", [TASK, "hotel-extras-refusal-001", "hotel-analytics-001"])
def test_the_reference_conversation_played_over_http_scores_one(hotel: TestClient, task_id: str) -> None:
    reference = hotel.get(f"/v1/tasks/{task_id}/reference").json()
    steps = reference["steps"]
    assert steps[0]["role"] == "user" and any(s["tool_call"] for s in steps)
    episode = _start(hotel, task_id)
    for step in steps[1:]:
        if step["role"] == "assistant" and step["tool_call"]:
            call = step["tool_call"]
            _call(hotel, episode, call["name"], call["arguments"])
        elif step["role"] == "assistant":
            _say(hotel, episode, step["content"])
    score = _score(hotel, episode)
    assert score["reward"] == 1, score["checks"]


def test_the_starter_curriculum_is_scored_on_its_state_alone(settings: Settings) -> None:
    """The learning benchmark's tasks tell no fact and need no yes: the new rules leave their reward as it was
    (the gold calls alone, with no word to the user, still earn 1)."""
    registry = DomainRegistry.discover(only=["starter"])
    with TestClient(create_app(settings, registry=registry)) as client:
        for task in registry.tasks(domain="starter"):
            calls = [{"name": a.name, "arguments": a.arguments} for a in task.gold_actions]
            body = client.post("/v1/score", json={"task_id": task.id, "tool_calls": calls}).json()
            assert body["reward"] == 1 and [c["name"] for c in body["checks"]] == ["state"], task.id


def test_the_scorer_never_reuses_a_cached_gold_for_another_task_with_the_same_id() -> None:
    """Generated tasks of two seeds share ids: the expected state and the gold answer are keyed by content."""
    from env_server.sandbox import make_sandbox_engine
    from env_server.scoring.scorer import Scorer

    registry = DomainRegistry.discover(only=["hotel"])
    domain = registry.domain("hotel")
    task = registry.task("hotel-analytics-001")
    other = task.model_copy(
        update={"analytics": task.analytics.model_copy(update={"gold_sql": "SELECT 12345"})}  # type: ignore[union-attr]
    )
    scorer = Scorer(make_sandbox_engine("sqlite://"))
    assert scorer.gold_rows(task, domain) != scorer.gold_rows(other, domain) == [[12345]]
