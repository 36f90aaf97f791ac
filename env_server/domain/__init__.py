"""The public domain API: everything a domain plug-in needs, and nothing else.

A domain package imports only from here (and SQLAlchemy/pydantic); see `env_server/domains/hotel` for the
model to follow.
"""

from env_server.domain._context import ToolContext
from env_server.domain._domain import Domain, collect_tools, load_task_text, volatile
from env_server.domain._family import ScenarioContext, ScenarioFamily, ScenarioUnavailable
from env_server.domain._schema import allowed_values, one_of
from env_server.domain._tool import Tool, ToolError, ToolKind, tool
from shared.tasks import GoldAction

__all__ = [
    "Domain",
    "GoldAction",
    "ScenarioContext",
    "ScenarioFamily",
    "ScenarioUnavailable",
    "Tool",
    "ToolContext",
    "ToolError",
    "ToolKind",
    "allowed_values",
    "collect_tools",
    "load_task_text",
    "one_of",
    "tool",
    "volatile",
]
