"""The rubric judge: yes/no questions about what the agent told the user, over any OpenAI-compatible API."""

from env_server.judge._llm_judge import LLMJudge, ResponseFormatMode
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
    "LLMJudge",
    "ResponseFormatMode",
    "agent_messages",
    "build_messages",
    "parse_verdict",
]
