"""The judge's prompt, the JSON shape it must answer in, and the tolerant parser of its replies (pure)."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from env_server.llm.endpoint import MalformedOutput
from shared.judge import JudgeAnswer

PROMPT_VERSION = "judge-v1"

#: Longest reason the constrained grammar lets a model write (keeps the JSON short enough to close).
REASON_MAX_CHARS = 300

#: What one answer looks like; `answer` first, so a reply cut short still carries it.
VERDICT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "answer": {"type": "string", "enum": ["yes", "no"]},
        "reason": {"type": "string"},
    },
    "required": ["answer", "reason"],
    "additionalProperties": False,
}

_SYSTEM = """\
You are a strict evaluator of a customer-service conversation. You are shown only the messages the \
agent sent to the customer{diff_note}. Answer the question with "yes" or "no", using only that evidence; \
when the evidence does not show that the answer is yes, answer "no".
Reply with one JSON object and nothing else, with two keys: "answer" ("yes" or "no") and "reason" (one \
short sentence saying why)."""


def build_messages(
    agent_messages: Sequence[str], question: str, state_diff: str | None
) -> list[dict[str, str]]:
    """The chat asking one rubric question.

    Args:
        agent_messages: what the agent said to the user, oldest first.
        question: the yes/no question.
        state_diff: the database changes the agent made, as text, if the judge should see them.

    Returns:
        OpenAI chat messages: the instructions, then the evidence and the question.
    """
    said = "\n".join(f"[{i}] {m}" for i, m in enumerate(agent_messages, 1)) or "(the agent sent no messages)"
    parts = [f"Messages the agent sent to the customer:\n{said}"]
    if state_diff is not None:
        parts.append(f"Database changes the agent made:\n{state_diff.strip() or '(none)'}")
    parts.append(f"Question: {question}\nAnswer with the JSON object only.")
    diff_note = " and the database changes it made" if state_diff is not None else ""
    return [
        {"role": "system", "content": _SYSTEM.format(diff_note=diff_note)},
        {"role": "user", "content": "\n\n".join(parts)},
    ]


def response_formats() -> dict[str, dict[str, Any]]:
    """The `response_format` bodies to try, most specific first.

    `json_schema` is the OpenAI / vLLM form; `json_object` with a `schema` is llama.cpp's form (whose
    grammar also honours `maxLength`, keeping the reason short).
    """
    bounded = json.loads(json.dumps(VERDICT_SCHEMA))
    bounded["properties"]["reason"]["maxLength"] = REASON_MAX_CHARS
    return {
        "json_schema": {
            "type": "json_schema",
            "json_schema": {"name": "verdict", "schema": VERDICT_SCHEMA, "strict": True},
        },
        "json_object": {"type": "json_object", "schema": bounded},
    }


_ANSWER_FIELD = re.compile(r'"answer"\s*:\s*"?\s*(yes|no|true|false)\b', re.IGNORECASE)
_REASON_FIELD = re.compile(r'"reason"\s*:\s*"((?:[^"\\]|\\.)*)', re.DOTALL)
_LEADING = re.compile(r"^\W*(yes|no)\b[\s.,:;!)\-]*(.*)$", re.IGNORECASE | re.DOTALL)


def parse_verdict(text: str) -> tuple[JudgeAnswer, str]:
    """Read a judge reply: the first JSON object, else a cut-off JSON's answer field, else a leading yes/no.

    Args:
        text: the model's reply.

    Returns:
        `(answer, reason)`.

    Raises:
        MalformedOutput: no yes/no can be read from the reply (the caller retries, then fails; it never
            guesses "no").
    """
    obj = _first_object(text)
    if obj is not None and "answer" in obj:
        answer = _answer(obj["answer"])
        if answer is None:
            raise MalformedOutput(f"answer {obj['answer']!r} is neither yes nor no")
        reason = obj.get("reason", "")
        return answer, reason.strip() if isinstance(reason, str) else json.dumps(reason)
    field = _ANSWER_FIELD.search(text)
    if field:
        reason = _REASON_FIELD.search(text, field.end())
        return _word(field.group(1)), _unescape(reason.group(1)) if reason else ""
    leading = _LEADING.match(text.strip())
    if leading:
        return _word(leading.group(1)), leading.group(2).strip()
    raise MalformedOutput("no yes/no answer found")


def _first_object(text: str) -> dict[str, Any] | None:
    decoder = json.JSONDecoder()
    for start in (i for i, ch in enumerate(text) if ch == "{"):
        try:
            value, _ = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            return value
    return None


def _answer(value: Any) -> JudgeAnswer | None:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if not isinstance(value, str):
        return None
    word = value.strip().strip(".!").lower()
    if word in ("yes", "true"):
        return "yes"
    if word in ("no", "false"):
        return "no"
    return None


def _word(matched: str) -> JudgeAnswer:
    """A yes/no/true/false word the patterns above captured."""
    return "yes" if matched.lower() in ("yes", "true") else "no"


def _unescape(fragment: str) -> str:
    try:
        return str(json.loads(f'"{fragment}"')).strip()
    except json.JSONDecodeError:
        return fragment.strip()
