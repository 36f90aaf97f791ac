"""The judge against a real model (SmolLM2-135M-Instruct on llama.cpp), and against dead endpoints."""

from __future__ import annotations

import time

import pytest

from env_server.errors import BackendError
from env_server.judge import PROMPT_VERSION, LLMJudge
from env_server.llm.endpoint import LLMEndpoint, RequestRejected
from shared.judge import JudgeMessage, JudgeResponse
from tests.live_server import free_port, serve
from tests.llm_server import MODEL_ALIAS, EdgeScript, LlamaServer, completion, edge_app, edge_endpoint

TRANSCRIPT = [
    {"role": "user", "content": "Please move booking BK-20417 to 14-16 Oct and confirm it right away."},
    {"role": "assistant", "content": "This change needs manager approval, so I have put it on hold."},
    {"role": "tool", "content": '{"booking_id": "BK-20417", "status": "on_hold"}'},
    {"role": "assistant", "content": "You will hear from us once a manager approves it."},
]
QUESTIONS = [
    "Did the agent mention manager approval?",
    "Did the agent promise that the change was already confirmed?",
]


def test_unreachable_judge_endpoint_is_a_backend_error_never_a_no() -> None:
    endpoint = LLMEndpoint(
        base_url=f"http://127.0.0.1:{free_port()}/v1", model="judge", max_retries=1, backoff_s=0.05
    )
    with pytest.raises(BackendError, match=r"judge endpoint .* failed after 2 attempts: APIConnectionError"):
        LLMJudge(endpoint).ask(TRANSCRIPT, QUESTIONS)


def test_requests_carry_only_the_agents_messages_at_temperature_zero() -> None:
    script = EdgeScript((200, completion('{"answer": "yes", "reason": "It said so."}')))
    with serve(edge_app(script)) as url:
        verdicts = LLMJudge(edge_endpoint(url, temperature=0.9)).ask(TRANSCRIPT, QUESTIONS, state_diff="d1")
    assert [(v.answer, v.reason) for v in verdicts] == [("yes", "It said so.")] * 2
    first, second = script.requests
    assert first["temperature"] == 0.0 and first["response_format"]["type"] == "json_schema"
    prompt = first["messages"][1]["content"]
    assert "[1] This change needs manager approval" in prompt and "[2] You will hear from us" in prompt
    assert "confirm it right away" not in prompt and "on_hold" not in prompt and "d1" in prompt
    assert QUESTIONS[0] in prompt and QUESTIONS[1] in second["messages"][1]["content"]


def test_auto_format_falls_back_to_plain_text_when_json_modes_are_refused() -> None:
    refused = (400, {"error": {"message": "response_format is not supported"}})
    script = EdgeScript(refused, refused, (200, completion("No, it never said that.")))
    with serve(edge_app(script)) as url:
        judge = LLMJudge(edge_endpoint(url))
        [verdict] = judge.ask(TRANSCRIPT, QUESTIONS[:1])
        assert (verdict.answer, verdict.reason) == ("no", "it never said that.")
        assert judge.response_format == "none"
        judge.ask(TRANSCRIPT, QUESTIONS[:1])
    kinds = [r.get("response_format", {}).get("type") for r in script.requests]
    assert kinds == ["json_schema", "json_object", None, None]


def test_a_forced_format_is_never_downgraded() -> None:
    script = EdgeScript((400, {"error": {"message": "response_format is not supported"}}))
    with serve(edge_app(script)) as url, pytest.raises(RequestRejected, match="HTTP 400"):
        LLMJudge(edge_endpoint(url), response_format="json_object").ask(TRANSCRIPT, QUESTIONS[:1])
    assert len(script.requests) == 1


def test_an_unreadable_verdict_is_a_backend_error_never_a_no() -> None:
    script = EdgeScript((200, completion("The agent was polite.")))
    with serve(edge_app(script)) as url, pytest.raises(BackendError, match="malformed reply"):
        LLMJudge(edge_endpoint(url)).ask(TRANSCRIPT, QUESTIONS[:1])
    assert len(script.requests) == 3


@pytest.mark.slow
def test_verdicts_are_yes_or_no_with_a_reason_one_per_question_in_order(llm_server: LlamaServer) -> None:
    judge = LLMJudge(llm_server.endpoint(max_tokens=128, temperature=0.9))  # the judge samples at 0 anyway
    verdicts = judge.ask(TRANSCRIPT, QUESTIONS)
    assert [v.question for v in verdicts] == QUESTIONS  # the model's fields hold yes/no and a reason
    response = JudgeResponse(verdicts=verdicts, model=judge.model, prompt_version=judge.prompt_version)
    assert (response.model, response.prompt_version) == (MODEL_ALIAS, PROMPT_VERSION)
    assert judge.ask(TRANSCRIPT, QUESTIONS) == verdicts  # temperature 0: the same answers again


@pytest.mark.slow
def test_auto_format_falls_back_to_llama_cpps_json_object_and_keeps_it(llm_server: LlamaServer) -> None:
    judge = LLMJudge(llm_server.endpoint(max_tokens=128))
    modes = [judge.response_format]
    judge.ask(TRANSCRIPT, QUESTIONS[:1])
    modes.append(judge.response_format)
    judge.ask(TRANSCRIPT, QUESTIONS[:1])
    modes.append(judge.response_format)
    assert modes == ["json_schema", "json_object", "json_object"]  # llama-cpp-python refuses json_schema


@pytest.mark.slow
def test_a_forced_format_the_endpoint_refuses_is_an_error_not_a_no(llm_server: LlamaServer) -> None:
    judge = LLMJudge(llm_server.endpoint(), response_format="json_schema")
    with pytest.raises(RequestRejected) as caught:
        judge.ask(TRANSCRIPT, QUESTIONS[:1])
    # llama-cpp-python reports its body validation error as a 500 naming the field
    assert caught.value.status == 500 and "response_format" in caught.value.message
    assert judge.response_format == "json_schema"


@pytest.mark.slow
def test_state_diff_and_wire_messages_are_accepted(llm_server: LlamaServer) -> None:
    judge = LLMJudge(llm_server.endpoint(max_tokens=128), response_format="json_object")
    transcript = [JudgeMessage.model_validate(m) for m in TRANSCRIPT]
    diff = "bookings BK-20417: status confirmed -> on_hold"
    [verdict] = judge.ask(transcript, QUESTIONS[:1], state_diff=diff)
    assert verdict.question == QUESTIONS[0]


@pytest.mark.slow
def test_a_judge_whose_server_died_raises_within_the_timeout(own_llm_server: LlamaServer) -> None:
    timeout_s = 10.0
    judge = LLMJudge(
        own_llm_server.endpoint(max_tokens=128, timeout_s=timeout_s, backoff_s=0.1, max_retries=2)
    )
    assert len(judge.ask(TRANSCRIPT, QUESTIONS[:1])) == 1
    own_llm_server.kill()
    started = time.monotonic()
    with pytest.raises(BackendError, match="after 3 attempts: APIConnectionError"):
        judge.ask(TRANSCRIPT, QUESTIONS[:1])
    assert time.monotonic() - started < timeout_s
