"""The telecom tools: the agent's (`TOOLS`: account and service) and the customer's own (`USER_TOOLS`)."""

from env_server.domain import collect_tools
from env_server.domains.telecom.tools import account, customer, service

TOOLS = collect_tools(account, service)
USER_TOOLS = collect_tools(customer)

__all__ = ["TOOLS", "USER_TOOLS"]
