"""The hotel tools, one module per business area; `TOOLS` is what the domain serves, in this order."""

from env_server.domain import collect_tools
from env_server.domains.hotel.tools import bookings, corporate, guests, hotels, service

TOOLS = collect_tools(guests, hotels, bookings, corporate, service)

__all__ = ["TOOLS"]
