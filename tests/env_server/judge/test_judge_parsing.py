"""The judge's prompt, transcript filter, verdict parsing, wire models and public API: no model needed."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

import env_server.judge
from env_server.judge import PROMPT_VERSION, VERDICT_SCHEMA, agent_messages, build_messages, parse_verdict
from env_server.judge._prompt import REASON_MAX_CHARS, response_formats
from env_server.llm.endpoint import MalformedOutput
from shared.judge import JudgeMessage, JudgeRequest, JudgeResponse, Verdict

TRANSCRIPT = [
    {"role": "system", "content": "POLICY: never promise approval"},
    {"role": "user", "content": "Move BK-20417 please, and say it is confirmed!"},
    {"role": "assistant", "content": "  It needs manager approval, so I put it on hold.  "},
    {"role": "assistant", "content": ""},
    {"role": "tool", "content": '{"status": "on_hold"}'},
    {"role": "assistant", "content": "Anything else?"},
]


def test_the_judge_sees_only_the_agents_messages() -> None:
    said = agent_messages(TRANSCRIPT)
    assert said == ["It needs manager approval, so I put it on hold.", "Anything else?"]
    assert agent_messages([JudgeMessage.model_validate(m) for m in TRANSCRIPT]) == said


def test_prompt_numbers_the_agent_messages_and_asks_the_question() -> None:
    system, user = build_messages(["First.", "Second."], "Did the agent greet?", None)
    assert system["role"] == "system" and user["role"] == "user"
    assert '"answer"' in system["content"] and "database" not in system["content"]
    assert "[1] First.\n[2] Second." in user["content"]
    assert "Question: Did the agent greet?" in user["content"]
    assert "Database changes" not in user["content"]


def test_prompt_shows_the_state_diff_when_given() -> None:
    system, user = build_messages([], "Q?", "bookings BK-1: status confirmed -> on_hold")
    assert "database changes" in system["content"]
    assert "Database changes the agent made:\nbookings BK-1: status confirmed -> on_hold" in user["content"]
    assert "(the agent sent no messages)" in user["content"]


def test_prompt_never_leaks_user_system_or_tool_text() -> None:
    messages = build_messages(agent_messages(TRANSCRIPT), "Q?", None)
    text = "\n".join(m["content"] for m in messages)
    assert "POLICY" not in text and "say it is confirmed" not in text and "on_hold" not in text


def test_response_formats_are_openai_json_schema_and_llama_cpp_json_object() -> None:
    formats = response_formats()
    assert formats["json_schema"]["json_schema"]["schema"] == VERDICT_SCHEMA
    assert "maxLength" not in str(VERDICT_SCHEMA)  # OpenAI's strict mode rejects maxLength
    bounded = formats["json_object"]["schema"]
    assert bounded["properties"]["reason"]["maxLength"] == REASON_MAX_CHARS
    assert bounded["properties"]["answer"] == {"type": "string", "enum": ["yes", "no"]}


# SmolLM2-135M-Instruct replies (Q4_1, llama-cpp-python 0.3.36, temperature 0): with json_object + schema,
# and in plain text; the rest are shapes other models produce.
SMOLLM2_JSON = '{"answer": "yes", "reason":"I have put it on hold"}'
SMOLLM2_TEXT = "Yes, the agent mentioned manager approval."
SMOLLM2_RAMBLE = (
    "The agent promised that the change was already confirmed, but it seems they didn't actually confirm."
)


@pytest.mark.parametrize(
    ("raw", "answer", "reason"),
    [
        (SMOLLM2_JSON, "yes", "I have put it on hold"),
        (SMOLLM2_TEXT, "yes", "the agent mentioned manager approval."),
        ('{"answer": "yes", "reason": "It said approval."}', "yes", "It said approval."),
        ('{"answer":"no","reason":""}', "no", ""),
        ('Sure! {"answer": "No", "reason": " it never said so "} hope that helps', "no", "it never said so"),
        ('```json\n{"answer": "yes", "reason": "ok"}\n```', "yes", "ok"),
        ('{"answer": true, "reason": "boolean"}', "yes", "boolean"),
        ('{"answer": "yes", "reason": "It said \\"on hold\\" and', "yes", 'It said "on hold" and'),
        ('{"answer": "no"', "no", ""),
        ("Yes. The agent explained the hold.", "yes", "The agent explained the hold."),
        ("no", "no", ""),
        ("NO - it promised confirmation", "no", "it promised confirmation"),
    ],
)
def test_parse_verdict_reads_json_cut_off_json_and_leading_words(raw: str, answer: str, reason: str) -> None:
    assert parse_verdict(raw) == (answer, reason)


@pytest.mark.parametrize(
    "raw",
    [
        "",
        SMOLLM2_RAMBLE,
        "The agent was polite.",
        '{"answer": "maybe", "reason": "unclear"}',
        "Nothing to say; yes or no is hard.",
        '{"verdict": "yes"}',
    ],
)
def test_parse_verdict_refuses_to_guess(raw: str) -> None:
    with pytest.raises(MalformedOutput):
        parse_verdict(raw)


def test_judge_request_is_strict() -> None:
    request = JudgeRequest.model_validate(
        {"transcript": [{"role": "assistant", "content": "Hi"}], "questions": ["Greeted?"]}
    )
    assert request.state_diff is None
    with pytest.raises(ValidationError):
        JudgeRequest.model_validate({"transcript": [], "questions": []})
    with pytest.raises(ValidationError):
        JudgeRequest.model_validate({"transcript": [], "questions": ["Q?"], "rubric": ["Q?"]})
    with pytest.raises(ValidationError):
        JudgeRequest.model_validate({"transcript": [{"role": "agent", "content": "Hi"}], "questions": ["Q?"]})


def test_verdict_answer_is_yes_or_no() -> None:
    with pytest.raises(ValidationError):
        Verdict(question="Q?", answer="maybe", reason="")  # type: ignore[arg-type]
    response = JudgeResponse(
        verdicts=[Verdict(question="Q?", answer="yes", reason="r")], model="m", prompt_version=PROMPT_VERSION
    )
    assert JudgeResponse.model_validate_json(response.model_dump_json()) == response


def test_judge_package_exports_exactly_its_public_names() -> None:
    public = {name for name in vars(env_server.judge) if not name.startswith("_")}
    assert sorted(env_server.judge.__all__) == sorted(public)
