"""What the LLM user is told, how its replies are read, and the premature-stop guard (all pure functions).

The LLM plays the customer, so roles are mirrored: the agent's messages reach it as `user` messages and its
own earlier lines come back as `assistant` messages. Tool calls and tool outputs are never shown to it.
Bump `PROMPT_VERSION` whenever the text or the parsing changes: it is recorded with every score.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from env_server.llm.endpoint import MalformedOutput
from env_server.users.base import STOP_MARK, TranscriptMessage
from shared.tasks import UserSpec

PROMPT_VERSION = "llm-user-v6"  # v6: the customer holds the agent to its conduct (identity when asked,
# a yes only to a proposal naming the change and its cost, one fix at a time)
# v5: the customer's own earlier calls are in its history
# v4: tools go with tool_choice "auto"; a blank reply to them is no call

#: The user ends the conversation by writing this; it is stripped from the text the agent sees.
STOP_TOKEN = STOP_MARK

#: The agent's greeting the opening line answers (the conversation starts with the user's request).
GREETING = "Hi! How can I help you today?"

#: Sent instead of a premature stop: the agent announced a write but has not made it yet.
NUDGE = "Yes, please go ahead and do that now."

#: The stop token, tolerating case, spaces and a wrong number of `#` (small models mangle it).
_STOP = re.compile(r"#{2,}\s*STOP\s*#{2,}|#{2,}\s*STOP\b", re.IGNORECASE)

_SYSTEM = """\
You are role-playing a customer who contacts a customer-service agent. You are the customer, never the \
agent. Stay in character for the whole conversation.

Who you are: {persona}
Your goal: {goal}

Facts you know (give one only when the agent asks for it; give identity details such as your name, date \
of birth, PIN, email or postcode only when the agent asks you to verify who you are):
{known}

Things you do not know (if asked, say you do not know; never make them up):
{unknown}

How to behave: {instructions}

Rules:
- Write only the customer's next message: one to three short sentences of plain text.
- Never invent names, numbers, dates or other details that are not listed above.
- Do not tell the agent how to do its job and do not take the agent's role.
- Say yes only to a proposal: when the agent has told you exactly what it will change (which booking, \
order, plan or item) and its decisive value (the amount, the refund, the fee, the date) and asks whether \
to go ahead, answer with an explicit "Yes, please go ahead." If you do not want it, say no. If the agent \
asks to go ahead without saying what it will change or what it costs, ask what exactly it will do and \
what it will cost; never say yes to that.
- When your goal has been met, or the agent has clearly refused it and you accept that, or there is \
nothing left to do, write {stop} at the end of your message. Do not write {stop} before then.{acting}"""

#: Added to the rules when the customer has tools on their own side (a dual-control task).
_ACTING = """
- You have tools that act on your own devices, apps and equipment. Use one only when the agent asks you \
to do that very thing (restart, toggle, re-enter a setting), never on your own initiative; then tell the \
agent in words what you did and what you see now.
- Do one thing at a time. If the agent's message lists several things to try at once, do none of them and \
ask which one thing to do first."""


def system_prompt(spec: UserSpec, acting: bool = False) -> str:
    """The LLM user's instructions for one task's customer; `acting`: it has user tools to call."""
    return _SYSTEM.format(
        persona=spec.persona,
        goal=spec.goal,
        known=_bullets([f"{k}: {_value(v)}" for k, v in spec.known_info.items()]),
        unknown=_bullets(spec.unknown_info),
        instructions=spec.instructions or "Be cooperative and answer the agent's questions.",
        stop=STOP_TOKEN,
        acting=_ACTING if acting else "",
    )


def build_messages(
    spec: UserSpec, transcript: Sequence[TranscriptMessage], acting: bool = False
) -> list[dict[str, Any]]:
    """The chat the user model continues: its instructions, the greeting, then the mirrored transcript.

    Args:
        spec: the task's user section.
        transcript: the conversation as the user sees it, oldest first (empty for the opening line).
        acting: the user has tools on its own side (the rules then say when to use them).

    Returns:
        OpenAI chat messages ending with an agent message, so the model writes the customer's next line.
    """
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": system_prompt(spec, acting)},
        {"role": "user", "content": GREETING},
    ]
    for k, m in enumerate(transcript):
        if m.did:  # the customer's own earlier calls, as the model made them, so it remembers them
            ids = [f"past-{k}-{j}" for j in range(len(m.did))]
            messages.append(
                {
                    "role": "assistant",
                    "content": "",
                    "tool_calls": [
                        {
                            "id": i,
                            "type": "function",
                            "function": {"name": a.name, "arguments": json.dumps(a.arguments)},
                        }
                        for i, a in zip(ids, m.did, strict=True)
                    ],
                }
            )
            messages += [
                {"role": "tool", "tool_call_id": i, "content": act_result(a.output, a.error)}
                for i, a in zip(ids, m.did, strict=True)
            ]
        messages.append({"role": "assistant" if m.role == "user" else "user", "content": m.content})
    return messages


def act_result(output: Any, error: str | None) -> str:
    """What the model reads back from one of its calls: the output, or the error (JSON)."""
    body = {"error": error} if error is not None else {"output": output}
    return json.dumps(body, ensure_ascii=False, default=str)


def parse_reply(text: str) -> tuple[str, bool]:
    """Split a raw model reply into what the agent sees and whether the user stopped.

    Everything from the first stop token on is dropped (a model may keep writing after it).

    Args:
        text: the model's reply.

    Returns:
        `(content, stopped)`; `content` may be empty only when `stopped` is true.

    Raises:
        MalformedOutput: the reply is blank and has no stop token.
    """
    match = _STOP.search(text)
    content = (text[: match.start()] if match else text).strip()
    if not content and not match:
        raise MalformedOutput("blank reply")
    return content, match is not None


#: A first-person announcement of an action: "I will", "I'll", "let me", "I'm going to", "while I", ...
_INTENT = (
    r"\b(?:i\s+will|i'll|i\s+shall|let\s+me|let\s+us|let's|we\s+will|we'll|i\s+am\s+going\s+to|"
    r"i'm\s+going\s+to|i\s+am\s+about\s+to|i'm\s+about\s+to|i\s+am\s+now|i'm\s+now|i\s+can\s+now|"
    r"proceeding\s+to|while\s+i)"
)
#: Words that may stand between the announcement and its verb ("I'll go ahead and cancel").
_FILLER = (
    r"(?:\s+(?:now|then|also|just|first|quickly|immediately|right\s+away|go\s+ahead\s+and|"
    r"proceed\s+to|proceed\s+with|going\s+to|be\s+happy\s+to|gladly|happily|be))*"
)
#: Verbs of the write tools across domains; each also matches its -ing form.
_WRITE_VERBS = (
    "cancel", "change", "modify", "update", "book", "reserve", "rebook", "refund", "move", "process",
    "issue", "submit", "create", "place", "apply", "file", "add", "remove", "delete", "upgrade",
    "downgrade", "transfer", "exchange", "return", "hold", "reschedule", "extend", "finalize", "finalise",
    "register", "enrol", "enroll", "schedule", "raise", "pay", "charge", "switch", "lodge", "approve",
    "put", "request", "escalate",
)  # fmt: skip
_DOUBLED = frozenset({"cancel", "transfer", "enrol"})


def _forms(verb: str) -> list[str]:
    forms = [verb, verb + "ing"]
    if verb.endswith("e") and not verb.endswith("ee"):
        forms.append(verb[:-1] + "ing")
    if verb in _DOUBLED:
        forms.append(verb + verb[-1] + "ing")
    return forms


_ANNOUNCEMENT = re.compile(
    _INTENT + _FILLER + r"\s+(?:" + "|".join(f for v in _WRITE_VERBS for f in _forms(v)) + r")\b",
    re.IGNORECASE,
)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")


def announces_write(agent_message: str) -> bool:
    """Whether the agent's message announces a state change it is about to make.

    Heuristic, per sentence: a first-person announcement ("I will", "I'll", "let me", "I'm going to",
    "I'm now", "proceeding to", "while I", ...), optionally followed by filler ("now", "go ahead and",
    "proceed to", ...), directly followed by a write verb ("cancel", "change", "book", "refund", "update",
    ... or its -ing form). So "Let me look up your booking" and "I will not cancel it" are no
    announcements, and questions ("Shall I cancel it?", "Should I go ahead and cancel?") are offers, not
    announcements, so a sentence ending in "?" never counts.

    Args:
        agent_message: the agent's last message to the user.

    Returns:
        True when some sentence announces a write.
    """
    for sentence in _SENTENCE_END.split(agent_message.replace("\u2019", "'")):
        sentence = sentence.strip()
        if sentence and not sentence.endswith("?") and _ANNOUNCEMENT.search(sentence):
            return True
    return False


def premature_stop(agent_message: str, writes_this_turn: int) -> bool:
    """Whether a stop must be refused: the agent announced a write but made no write call this turn.

    Args:
        agent_message: the agent's last message to the user.
        writes_this_turn: successful write tool calls since the user's previous message.

    Returns:
        True when the user should answer with `NUDGE` instead of stopping.
    """
    return writes_this_turn == 0 and announces_write(agent_message)


def _bullets(items: Sequence[str]) -> str:
    return "\n".join(f"- {item}" for item in items) if items else "- (nothing)"


def _value(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
