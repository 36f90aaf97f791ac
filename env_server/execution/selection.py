"""Which tools an episode has: the domain's, plus SQL and an answer tool for analytics tasks."""

from __future__ import annotations

from env_server.analytics import ANALYTICS_TOOLS
from env_server.domain import Domain, Tool
from env_server.errors import UnknownToolError
from shared.tasks import Task


def episode_tools(task: Task, domain: Domain) -> dict[str, Tool]:
    """The tools an agent gets for `task`: the domain's, plus SQL and an answer tool for analytics tasks."""
    tools = dict(domain.tools_by_name)
    if task.kind == "analytics":
        tools.update({t.name: t for t in ANALYTICS_TOOLS})
    return tools


def find_tool(tools: dict[str, Tool], name: str, domain: str) -> Tool:
    """The tool `name`, or `UnknownToolError` listing the valid names."""
    try:
        return tools[name]
    except KeyError:
        known = ", ".join(sorted(tools))
        raise UnknownToolError(
            f"domain '{domain}' has no tool '{name}' (tools: {known})", field="name"
        ) from None
