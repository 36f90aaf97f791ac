"""Tool execution: which tools an episode has, running a call in its sandbox, refusals, and the SQL guard.

It sits on the sandbox (storage) and under scoring and episodes, which both run tools through it.
"""

from env_server.execution.calls import run_tool
from env_server.execution.readonly import readonly_query
from env_server.execution.selection import episode_tools, find_tool, tools_of, user_tools
from env_server.execution.sql_guard import check_select

__all__ = [
    "check_select",
    "episode_tools",
    "find_tool",
    "readonly_query",
    "run_tool",
    "tools_of",
    "user_tools",
]
