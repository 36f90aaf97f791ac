"""The rubric judge: yes/no questions about what the agent told the user, over any OpenAI-compatible API."""

from env_server.judge._judge import Judge, ResponseFormatMode
from env_server.judge._prompt import (
    PROMPT_VERSION,
    VERDICT_SCHEMA,
    build_messages,
    parse_verdict,
)
from env_server.scoring.communicate import agent_messages

__all__ = [
    "PROMPT_VERSION",
    "VERDICT_SCHEMA",
    "Judge",
    "ResponseFormatMode",
    "agent_messages",
    "build_messages",
    "parse_verdict",
]
