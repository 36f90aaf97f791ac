"""The insurance agent's tools, one module per business area; `TOOLS` lists them in a stable order."""

from env_server.domain import collect_tools
from env_server.domains.insurance.tools import billing, claims, customers, household, policies

TOOLS = collect_tools(customers, policies, household, billing, claims)

__all__ = ["TOOLS"]
