"""Analytics tasks: read-only SQL questions with execution-accuracy rewards (BIRD-style)."""

from env_server.analytics.answers import answer_matches, as_rows
from env_server.analytics.sql_guard import check_select
from env_server.analytics.tools import ANALYTICS_TOOLS, MAX_ROWS

__all__ = ["ANALYTICS_TOOLS", "MAX_ROWS", "answer_matches", "as_rows", "check_select"]
