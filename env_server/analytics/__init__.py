"""Analytics tasks: read-only SQL questions with execution-accuracy rewards (BIRD-style).

Its tools and its answer comparison use only the domain API; the SQL guard that keeps the agent's queries
read-only belongs to tool execution (`env_server.execution.sql_guard`).
"""

from env_server.analytics.answers import answer_matches, as_rows
from env_server.analytics.tools import ANALYTICS_TOOLS, MAX_ROWS

__all__ = ["ANALYTICS_TOOLS", "MAX_ROWS", "answer_matches", "as_rows"]
