"""The travel agent's tools, grouped by business area; `TOOLS` lists them in the order the agent sees."""

from env_server.domain import collect_tools
from env_server.domains.travel.tools import (
    baggage,
    changes,
    compensation,
    flights,
    identity,
    loyalty,
    reservations,
)

TOOLS = collect_tools(identity, reservations, flights, changes, baggage, compensation, loyalty)

__all__ = ["TOOLS"]
