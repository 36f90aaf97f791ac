"""Which tools an episode has: the agent's, and the customer's (which the agent never gets).

The agent's are the domain's tools, plus SQL and an answer tool for analytics tasks; the customer's are the
domain's user tools (dual control).
"""

from __future__ import annotations

from env_server.analytics import ANALYTICS_TOOLS
from env_server.domain import Domain, Tool
from env_server.errors import UnknownToolError
from shared.tasks import Actor, Task


def episode_tools(task: Task, domain: Domain) -> dict[str, Tool]:
    """The tools an agent gets for `task`: the domain's, plus SQL and an answer tool for analytics tasks."""
    tools = dict(domain.tools_by_name)
    if task.kind == "analytics":
        tools.update({t.name: t for t in ANALYTICS_TOOLS})
    return tools


def user_tools(domain: Domain) -> dict[str, Tool]:
    """The tools the simulated customer may call on their own side; disjoint from the agent's."""
    return dict(domain.user_tools_by_name)


def tools_of(actor: Actor, task: Task, domain: Domain) -> dict[str, Tool]:
    """The tools `actor` may call in an episode of `task`: a call is looked up only among its own."""
    return user_tools(domain) if actor == "user" else episode_tools(task, domain)


def find_tool(tools: dict[str, Tool], name: str, domain: str) -> Tool:
    """The tool `name`, or `UnknownToolError` listing the valid names."""
    try:
        return tools[name]
    except KeyError:
        known = ", ".join(sorted(tools))
        raise UnknownToolError(
            f"domain '{domain}' has no tool '{name}' (tools: {known})", field="name"
        ) from None
