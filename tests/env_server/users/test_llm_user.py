"""The LLM user against a real model (SmolLM2-135M-Instruct, llama.cpp): protocol and plumbing only."""

from __future__ import annotations

import time

import pytest

from env_server.errors import BackendError
from env_server.users.base import TranscriptMessage
from env_server.users.llm import LLMUser
from env_server.users.prompt import NUDGE, STOP_TOKEN
from shared.tasks import Task
from tests.llm_server import MODEL_ALIAS, LlamaServer

pytestmark = pytest.mark.slow

TASK = Task.model_validate(
    {
        "id": "toy-llm-user-001",
        "domain": "toy",
        "split": "train",
        "user": {
            "persona": "Sam Lee, a customer of an online shop, polite",
            "goal": "Cancel order O-1001",
            "known_info": {"order_id": "O-1001", "email": "sam@example.com"},
            "unknown_info": ["the refund amount"],
            "instructions": "Give your order id when asked.",
            "script": ["I want to cancel order O-1001."],
        },
    }
)

#: A conversation in which SmolLM2-135M says "Bye ###STOP###" at temperature 0 (it copies its own earlier
#: lines; asked in words to write the token, it never did; with prompt llm-user-v3 two earlier stops were
#: not always enough, three are). Append the agent's last message.
STOPPING = [
    TranscriptMessage("user", f"Bye {STOP_TOKEN}"),
    TranscriptMessage("assistant", "Anything else?"),
    TranscriptMessage("user", f"Bye {STOP_TOKEN}"),
    TranscriptMessage("assistant", "Anything else?"),
    TranscriptMessage("user", f"Bye {STOP_TOKEN}"),
]


def test_opening_and_reply_are_non_empty_lines_from_the_model(llm_server: LlamaServer) -> None:
    user = LLMUser(llm_server.endpoint())
    assert (user.kind, user.model, user.prompt_version) == ("llm", MODEL_ALIAS, "llm-user-v6")
    opening = user.opening(TASK)
    assert isinstance(opening.content, str) and opening.content.strip()
    assert not opening.done and STOP_TOKEN not in opening.content
    transcript = [
        TranscriptMessage("user", opening.content),
        TranscriptMessage("assistant", "Sure. What is your order number?"),
    ]
    turn = user.reply(TASK, transcript, writes_this_turn=0)
    assert isinstance(turn.content, str) and turn.content.strip()
    assert "###" not in turn.content or turn.content == STOP_TOKEN


def test_same_prompt_same_reply_at_temperature_zero(llm_server: LlamaServer) -> None:
    user = LLMUser(llm_server.endpoint())
    assert user.opening(TASK) == user.opening(TASK)


def test_the_models_stop_token_ends_the_conversation(llm_server: LlamaServer) -> None:
    user = LLMUser(llm_server.endpoint())
    turn = user.reply(TASK, [*STOPPING, TranscriptMessage("assistant", "Anything else?")], writes_this_turn=0)
    assert (turn.content, turn.done) == ("Bye", True)  # the token is stripped


def test_a_stop_right_after_an_announced_write_is_refused_with_a_nudge(llm_server: LlamaServer) -> None:
    user = LLMUser(llm_server.endpoint())
    transcript = [*STOPPING, TranscriptMessage("assistant", "I will cancel order O-1001 now.")]
    nudged = user.reply(TASK, transcript, writes_this_turn=0)
    assert (nudged.content, nudged.done) == (NUDGE, False)
    written = user.reply(TASK, transcript, writes_this_turn=1)  # the write happened: the stop stands
    assert (written.content, written.done) == ("Bye", True)


def test_turn_cap_ends_a_real_conversation(llm_server: LlamaServer) -> None:
    user = LLMUser(llm_server.endpoint(), max_user_turns=2)
    transcript = [TranscriptMessage("user", user.opening(TASK).content)]
    transcript.append(TranscriptMessage("assistant", "Sure. What is your order number?"))
    second = user.reply(TASK, transcript, writes_this_turn=0)
    assert second.content.strip()
    transcript.append(TranscriptMessage("user", second.content))
    transcript.append(TranscriptMessage("assistant", "Anything else?"))
    capped = user.reply(TASK, transcript, writes_this_turn=0)
    assert (capped.content, capped.done) == (STOP_TOKEN, True)


def test_a_server_killed_mid_episode_raises_within_the_timeout(own_llm_server: LlamaServer) -> None:
    timeout_s = 10.0
    # the first reply may be slow on a busy machine (prompt processing); the kill is what is timed
    opening = LLMUser(own_llm_server.endpoint(timeout_s=180.0)).opening(TASK)
    user = LLMUser(own_llm_server.endpoint(timeout_s=timeout_s, max_retries=2, backoff_s=0.1))
    assert opening.content.strip()
    own_llm_server.kill()
    transcript = [TranscriptMessage("user", opening.content), TranscriptMessage("assistant", "Order number?")]
    started = time.monotonic()
    with pytest.raises(BackendError) as caught:
        user.reply(TASK, transcript, writes_this_turn=0)
    assert time.monotonic() - started < timeout_s
    assert "simulated-user endpoint" in caught.value.message and "after 3 attempts" in caught.value.message
    assert "APIConnectionError" in caught.value.message
