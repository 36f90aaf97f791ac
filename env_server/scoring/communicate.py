"""What the agent told the user, and the `communicate` check: facts it must have said, on token boundaries.

`agent_messages` is also all that the rubric judge is shown, so both checks read the same messages.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from shared.judge import JudgeMessage

_NON_WORD = re.compile(r"[^0-9a-z]+")


def normalise_text(text: str) -> str:
    """Lower-case words and numbers separated by single spaces ("$1,450.00" -> "1 450 00")."""
    return " " + _NON_WORD.sub(" ", text.lower()).strip() + " "


def communicated(item: str, agent_messages: list[str]) -> bool:
    """True iff `item` appears, as whole tokens, in any of the agent's messages to the user."""
    needle = normalise_text(item)
    return needle.strip() != "" and any(needle in normalise_text(m) for m in agent_messages)


def agent_messages(transcript: Sequence[Mapping[str, Any] | JudgeMessage]) -> list[str]:
    """What the judge may see of a conversation: the agent's non-empty messages to the user, in order.

    Args:
        transcript: `{role, content}` mappings or `JudgeMessage`s; user, system and tool messages and
            assistant turns without text (tool calls) are dropped.

    Returns:
        The agent's message texts, stripped.
    """
    said = []
    for m in transcript:
        role: Any = m.role if isinstance(m, JudgeMessage) else m.get("role")
        content: Any = m.content if isinstance(m, JudgeMessage) else m.get("content")
        if role == "assistant" and isinstance(content, str) and content.strip():
            said.append(content.strip())
    return said
