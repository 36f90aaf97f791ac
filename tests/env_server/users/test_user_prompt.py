"""The LLM user's prompt, reply parsing and premature-stop guard: pure functions, no model needed."""

from __future__ import annotations

import pytest

from env_server.llm.endpoint import MalformedOutput
from env_server.users.base import TranscriptMessage
from env_server.users.prompt import (
    GREETING,
    STOP_TOKEN,
    announces_write,
    build_messages,
    parse_reply,
    premature_stop,
    system_prompt,
)
from shared.tasks import UserSpec

SPEC = UserSpec(
    persona="Dana Whitfield, travel coordinator at Nordwind GmbH, brisk but polite",
    goal="Move booking BK-20417 to 14-16 Oct at the same hotel",
    known_info={
        "booking_id": "BK-20417",
        "email": "dana@nordwind.example",
        "guests": 2,
        "dates": ["14", "16"],
    },
    unknown_info=["the new total"],
    instructions="Accept a hold if the agent explains why.",
    script=["Hi, I need to move my booking BK-20417."],
)


def test_system_prompt_holds_every_part_of_the_user_spec() -> None:
    prompt = system_prompt(SPEC)
    for part in (SPEC.persona, SPEC.goal, SPEC.instructions, "- the new total", STOP_TOKEN):
        assert part in prompt
    assert "- booking_id: BK-20417" in prompt
    assert "- email: dana@nordwind.example" in prompt
    assert "- guests: 2" in prompt
    assert '- dates: ["14", "16"]' in prompt
    assert SPEC.script[0] not in prompt  # the script is for the scripted user only


def test_system_prompt_marks_empty_sections_and_default_instructions() -> None:
    spec = UserSpec(persona="P", goal="G", script=["hi"])
    prompt = system_prompt(spec)
    assert prompt.count("- (nothing)") == 2
    assert "Be cooperative" in prompt


def test_opening_prompt_is_instructions_then_the_agent_greeting() -> None:
    messages = build_messages(SPEC, [])
    assert [m["role"] for m in messages] == ["system", "user"]
    assert messages[0]["content"] == system_prompt(SPEC)
    assert messages[1]["content"] == GREETING


def test_transcript_roles_are_mirrored_for_the_user_model() -> None:
    transcript = [
        TranscriptMessage("user", "Hi, I need to move my booking."),
        TranscriptMessage("assistant", "Sure, what is the booking id?"),
        TranscriptMessage("user", "BK-20417."),
        TranscriptMessage("assistant", "Found it. Which dates?"),
    ]
    messages = build_messages(SPEC, transcript)
    assert messages[2:] == [
        {"role": "assistant", "content": "Hi, I need to move my booking."},
        {"role": "user", "content": "Sure, what is the booking id?"},
        {"role": "assistant", "content": "BK-20417."},
        {"role": "user", "content": "Found it. Which dates?"},
    ]
    assert messages[-1]["role"] == "user"  # the model answers the agent


# Replies recorded from SmolLM2-135M-Instruct (Q4_1, llama-cpp-python 0.3.36, temperature 0): the opening
# for SPEC, an answer to "What is your order number?", and a stop copied from its earlier lines.
SMOLLM2_OPENING = (
    "I'm so glad you're here. I'll be happy to help with any questions or issues you might have, and I'd "
    "love to chat about something fun! What brings you to my office today?"
)


@pytest.mark.parametrize(
    ("raw", "content", "stopped"),
    [
        (SMOLLM2_OPENING, SMOLLM2_OPENING, False),
        ("O-1001.", "O-1001.", False),
        ("Bye ###STOP###", "Bye", True),
        ("  Thanks, that is all.\n", "Thanks, that is all.", False),
        ("Thanks, that is all. ###STOP###", "Thanks, that is all.", True),
        ("###STOP###", "", True),
        ("Great, thank you! ### STOP ### Agent: You're welcome!", "Great, thank you!", True),
        ("ok ###stop###", "ok", True),
        ("Perfect. ####STOP", "Perfect.", True),
        ("The STOP sign was red.", "The STOP sign was red.", False),
        ("# STOP #", "# STOP #", False),
    ],
)
def test_parse_reply_strips_the_stop_token_and_what_follows(raw: str, content: str, stopped: bool) -> None:
    assert parse_reply(raw) == (content, stopped)


@pytest.mark.parametrize("raw", ["", "   ", "\n\t"])
def test_parse_reply_rejects_a_blank_reply(raw: str) -> None:
    with pytest.raises(MalformedOutput):
        parse_reply(raw)


@pytest.mark.parametrize(
    "message",
    [
        "I will cancel booking BK-20417 now.",
        "I'll go ahead and change your dates to 14-16 Oct.",
        "I\u2019ll update the email on file.",
        "Thanks for confirming. Let me process the refund for you.",
        "I'm going to rebook you on the 9am flight.",
        "I am now cancelling the order.",
        "Please hold on while I modify the reservation",
        "Sure! I'm now transferring the funds.",
        "Understood.\nI will put it on hold and request manager approval.",
        "Let me check. I will change the dates to 14-16 Oct.",
    ],
)
def test_announced_writes_are_detected(message: str) -> None:
    assert announces_write(message)


@pytest.mark.parametrize(
    "message",
    [
        "Let me look up your booking.",
        "I will check the availability first.",
        "I will not cancel it without your confirmation.",
        "Shall I cancel it?",
        "Should I go ahead and change the dates?",
        "Your booking has been cancelled.",
        "Let me address your concern.",
        "I have updated your email.",
        "Could you tell me your booking id?",
        "",
    ],
)
def test_lookups_questions_and_past_actions_are_not_announcements(message: str) -> None:
    assert not announces_write(message)


def test_a_stop_after_an_announced_write_is_premature_only_without_a_write() -> None:
    announced = "Thanks! I'll cancel booking BK-20417 for you now."
    assert premature_stop(announced, writes_this_turn=0)
    assert not premature_stop(announced, writes_this_turn=1)
    assert not premature_stop("Your booking is cancelled. Anything else?", writes_this_turn=0)
