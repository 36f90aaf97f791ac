"""The retail tools, one module per business area; `TOOLS` is what the domain serves, in this order."""

from env_server.domain import collect_tools
from env_server.domains.retail.tools import (
    accounts,
    catalog,
    money,
    orders,
    returns,
    shipping,
    support,
    warranty,
)

TOOLS = collect_tools(accounts, catalog, orders, shipping, returns, money, warranty, support)

__all__ = ["TOOLS"]
