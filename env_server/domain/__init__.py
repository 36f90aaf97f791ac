"""The public domain API: everything a domain plug-in needs, and nothing else.

A domain package imports only from here (and SQLAlchemy/pydantic); see `env_server/domains/hotel` for the
model to follow.
"""

from env_server.domain._conduct import Conduct
from env_server.domain._context import ToolContext, ToolError
from env_server.domain._domain import Domain, DomainFields, collect_tools, load_task_text, volatile
from env_server.domain._family import ScenarioContext, ScenarioFamily, ScenarioPatch, ScenarioUnavailable
from env_server.domain._schema import allowed_values, one_of
from env_server.domain._tables import IdentityVerificationTable, named_metadata
from env_server.domain._tool import Tool, ToolKind, tool
from env_server.domain._view import RowView
from shared.tasks import GoldAction

__all__ = [
    "Conduct",
    "Domain",
    "DomainFields",
    "GoldAction",
    "IdentityVerificationTable",
    "RowView",
    "ScenarioContext",
    "ScenarioFamily",
    "ScenarioPatch",
    "ScenarioUnavailable",
    "Tool",
    "ToolContext",
    "ToolError",
    "ToolKind",
    "allowed_values",
    "collect_tools",
    "load_task_text",
    "named_metadata",
    "one_of",
    "tool",
    "volatile",
]
