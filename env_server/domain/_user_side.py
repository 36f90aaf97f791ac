"""The customer's side of a dual-control domain: tables the customer owns and tools only they may call.

In most domains only the agent changes the world and the customer only talks. A dual-control domain (a
router in the customer's home, the settings of their phone, a consent in their app) also models what the
customer holds: those tables are the *user side*, and the *user tools* are how the simulated customer acts
on them when the agent asks ("please restart your router"). The agent never sees or calls a user tool; it
learns what happened from what the customer says. One sandbox database holds both sides, so the state diff
and the reward cover both, and each change in a diff is labelled with the side it is on.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from env_server.domain._tool import Tool
from shared.models import Side

__all__ = ["Side", "check_user_side", "side_of"]


def side_of(table: str, user_tables: Collection[str]) -> Side:
    """The side `table` is on: "user" for a table the domain declares customer-owned, else "agent"."""
    return "user" if table in user_tables else "agent"


def check_user_side(
    domain: str,
    tools: Sequence[Tool],
    user_tools: Sequence[Tool],
    user_tables: Collection[str],
    tables: Collection[str],
) -> None:
    """Refuse a user side that cannot work: unknown tables, duplicate or shared tool names.

    A user tool named like an agent tool would make a recorded call ambiguous (whose was it?) and would let
    the agent's call of that name reach the customer's side, so names are disjoint.

    Raises:
        ValueError: naming the domain and what is wrong.
    """
    unknown = sorted(set(user_tables) - set(tables))
    if unknown:
        raise ValueError(f"domain {domain}: user_tables names unknown tables {unknown}")
    names = [t.name for t in user_tools]
    if len(set(names)) != len(names):
        raise ValueError(f"domain {domain}: duplicate user tool names in {names}")
    shared = sorted(set(names) & {t.name for t in tools})
    if shared:
        raise ValueError(f"domain {domain}: {shared} are both agent tools and user tools; rename one")
