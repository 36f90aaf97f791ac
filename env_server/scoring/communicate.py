"""The `communicate` check: facts the agent must have told the user, matched on token boundaries."""

from __future__ import annotations

import re

_NON_WORD = re.compile(r"[^0-9a-z]+")


def normalise_text(text: str) -> str:
    """Lower-case words and numbers separated by single spaces ("$1,450.00" -> "1 450 00")."""
    return " " + _NON_WORD.sub(" ", text.lower()).strip() + " "


def communicated(item: str, agent_messages: list[str]) -> bool:
    """True iff `item` appears, as whole tokens, in any of the agent's messages to the user."""
    needle = normalise_text(item)
    return needle.strip() != "" and any(needle in normalise_text(m) for m in agent_messages)
