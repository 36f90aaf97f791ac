"""The endpoint client and the LLM user's failure paths, without a model: dead and misbehaving servers."""

from __future__ import annotations

import time

import pytest
from pydantic import ValidationError

from env_server.errors import BackendError
from env_server.llm.endpoint import ChatEndpoint, LLMEndpoint, RequestRejected
from env_server.users.base import TranscriptMessage
from env_server.users.llm import LLMUser
from env_server.users.prompt import PROMPT_VERSION, STOP_TOKEN
from shared.tasks import Task
from tests.live_server import free_port, serve
from tests.llm_server import EdgeScript, completion, edge_app, edge_endpoint


def unreachable(**overrides: object) -> LLMEndpoint:
    settings: dict[str, object] = {
        "base_url": f"http://127.0.0.1:{free_port()}/v1",
        "model": "nobody-home",
        "max_retries": 2,
        "backoff_s": 0.05,
        "timeout_s": 5.0,
    }
    settings.update(overrides)
    return LLMEndpoint.model_validate(settings)


def make_task() -> Task:
    return Task.model_validate(
        {
            "id": "toy-llm-user-001",
            "domain": "toy",
            "split": "train",
            "user": {"persona": "A customer", "goal": "Cancel order O-1", "script": ["Cancel O-1 please."]},
        }
    )


def test_unreachable_endpoint_raises_backend_error_after_retries_with_backoff() -> None:
    chat = ChatEndpoint(unreachable(), purpose="simulated-user")
    started = time.monotonic()
    with pytest.raises(BackendError) as caught:
        chat.complete([{"role": "user", "content": "hi"}], str)
    elapsed = time.monotonic() - started
    message = caught.value.message
    assert "simulated-user endpoint http://127.0.0.1:" in message
    assert "model nobody-home" in message
    assert "after 3 attempts" in message
    assert "APIConnectionError" in message
    assert caught.value.status == 503 and caught.value.code == "backend-error"
    assert 0.05 + 0.1 <= elapsed < 5.0  # two backoffs (0.05 s, 0.1 s), far below the request timeout


def test_llm_user_opening_on_an_unreachable_endpoint_is_a_backend_error() -> None:
    user = LLMUser(unreachable(max_retries=0))
    with pytest.raises(BackendError, match="after 1 attempt: APIConnectionError"):
        user.opening(make_task())


def test_turn_cap_ends_the_conversation_without_calling_the_model() -> None:
    # Nothing listens on the endpoint: any request would raise, so a clean stop proves none was made.
    user = LLMUser(unreachable(), max_user_turns=2)
    transcript = [
        TranscriptMessage("user", "Cancel O-1 please."),
        TranscriptMessage("assistant", "Which order?"),
        TranscriptMessage("user", "O-1."),
        TranscriptMessage("assistant", "Anything else?"),
    ]
    turn = user.reply(make_task(), transcript, writes_this_turn=0)
    assert turn.done and turn.content == STOP_TOKEN
    with pytest.raises(BackendError):  # one message short of the cap: the model is asked
        user.reply(make_task(), transcript[:2], writes_this_turn=0)


def test_llm_user_records_kind_model_and_prompt_version() -> None:
    user = LLMUser(unreachable(model="qwen2.5-7b-instruct"))
    assert (user.kind, user.model, user.prompt_version) == ("llm", "qwen2.5-7b-instruct", PROMPT_VERSION)
    assert PROMPT_VERSION == "llm-user-v6"


def test_turn_cap_must_allow_the_opening() -> None:
    with pytest.raises(ValueError, match="max_user_turns must be at least 1, got 0"):
        LLMUser(unreachable(), max_user_turns=0)


@pytest.mark.parametrize(
    "bad",
    [{"model": ""}, {"timeout_s": 0}, {"max_retries": -1}, {"temperature": 3.0}, {"surprise": 1}],
)
def test_endpoint_config_is_validated(bad: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        unreachable(**bad)


# Edge cases a real model will not produce on demand come from `tests.llm_server.edge_app`, a real HTTP
# server answering the OpenAI chat route the way a failing endpoint would.


def test_5xx_is_retried_until_the_endpoint_recovers() -> None:
    script = EdgeScript((503, {"error": {"message": "overloaded"}}), (200, completion("Hello there.")))
    with serve(edge_app(script)) as url:
        assert ChatEndpoint(edge_endpoint(url), purpose="judge").complete([], str) == "Hello there."
    assert len(script.requests) == 2


def test_5xx_on_every_attempt_is_a_backend_error_naming_the_status() -> None:
    script = EdgeScript((500, {"error": {"message": "CUDA out of memory"}}))
    with serve(edge_app(script)) as url, pytest.raises(BackendError) as caught:
        ChatEndpoint(edge_endpoint(url), purpose="judge").complete([], str)
    assert "judge endpoint" in caught.value.message and "after 3 attempts: HTTP 500" in caught.value.message
    assert "CUDA out of memory" in caught.value.message
    assert len(script.requests) == 3


def test_a_4xx_is_not_retried() -> None:
    script = EdgeScript((404, {"error": {"message": "model 'edge' not found"}}))
    with serve(edge_app(script)) as url, pytest.raises(RequestRejected) as caught:
        ChatEndpoint(edge_endpoint(url), purpose="judge").complete([], str)
    assert caught.value.status == 404 and "after 1 attempt: HTTP 404" in caught.value.message
    assert isinstance(caught.value, BackendError)
    assert len(script.requests) == 1


def test_blank_replies_are_retried_then_a_backend_error() -> None:
    script = EdgeScript((200, completion("  ")), (200, completion(None)))
    with serve(edge_app(script)) as url, pytest.raises(BackendError, match="empty reply"):
        LLMUser(edge_endpoint(url)).opening(make_task())
    assert len(script.requests) == 3


def test_an_opening_that_is_only_a_stop_is_malformed() -> None:
    script = EdgeScript((200, completion(STOP_TOKEN)), (200, completion("I want to cancel O-1.")))
    with serve(edge_app(script)) as url:
        turn = LLMUser(edge_endpoint(url)).opening(make_task())
    assert (turn.content, turn.done) == ("I want to cancel O-1.", False)
    assert len(script.requests) == 2


def test_a_hanging_endpoint_times_out_within_the_configured_timeout() -> None:
    script = EdgeScript(3.0)
    with serve(edge_app(script)) as url:
        chat = ChatEndpoint(edge_endpoint(url, timeout_s=0.5, max_retries=1), purpose="simulated-user")
        started = time.monotonic()
        with pytest.raises(BackendError, match="APITimeoutError"):
            chat.complete([], str)
        assert time.monotonic() - started < 2 * 0.5 + 0.01 + 1.0


def test_requests_carry_the_sampling_settings() -> None:
    script = EdgeScript((200, completion("Hi.")))
    with serve(edge_app(script)) as url:
        ep = edge_endpoint(url, temperature=0.7, seed=42, max_tokens=64)
        ChatEndpoint(ep, purpose="simulated-user").complete([{"role": "user", "content": "hi"}], str)
        ChatEndpoint(edge_endpoint(url, seed=None), purpose="judge").complete([], str, temperature=0.0)
    first, second = script.requests
    assert (first["model"], first["temperature"], first["seed"], first["max_tokens"]) == ("edge", 0.7, 42, 64)
    assert first["messages"] == [{"role": "user", "content": "hi"}]
    assert second["temperature"] == 0.0 and "seed" not in second


def test_a_body_that_is_not_a_chat_completion_is_retried_then_a_backend_error() -> None:
    script = EdgeScript((200, {"id": "x", "choices": []}))
    with serve(edge_app(script)) as url, pytest.raises(BackendError, match="not a chat completion"):
        ChatEndpoint(edge_endpoint(url), purpose="judge").complete([], str)
    assert len(script.requests) == 3


def test_a_body_validation_error_reported_as_500_is_a_rejection_not_retried() -> None:
    detail = "1 validation error: {'loc': ('body', 'response_format', 'type'), 'msg': 'Input should be'}"
    script = EdgeScript((500, {"error": {"message": detail}}))
    with serve(edge_app(script)) as url, pytest.raises(RequestRejected) as caught:
        ChatEndpoint(edge_endpoint(url), purpose="judge").complete([], str)
    assert caught.value.status == 500 and len(script.requests) == 1
