"""The customer's side of a dual-control domain: tables the customer owns and tools only they may call.

In most domains only the agent changes the world and the customer only talks. A dual-control domain (a
router in the customer's home, the settings of their phone, a consent in their app) also models what the
customer holds: those tables are the *user side*, and the *user tools* are how the simulated customer acts
on them when the agent asks ("please restart your router"). The agent never sees or calls a user tool; it
learns what happened from what the customer says. One sandbox database holds both sides, so the state diff
and the reward cover both, and each change in a diff is labelled with the side it is on.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from env_server.domain._tool import Tool
from shared.models import Side
from shared.tasks import GoldAction

__all__ = ["Instruction", "Side", "check_user_side", "side_of"]


@dataclass(frozen=True)
class Instruction:
    """Something the customer does whenever the agent tells them to, whether or not their script says so.

    A real customer told "restart your router" restarts it, even when the router was never the problem
    (an outage, say, or old firmware). The scripted customer acts only on its script's lines, so without
    this an agent could spray every fix it knows and lose nothing for the ones that were not needed. A
    domain declares the instructions with a side effect; the scripted customer then follows each the first
    time the agent's message says all its `when_told` terms, unless a line of its script makes that call
    (the script, gated by its own `when_told`, covers those). An argument written `"{router_id}"` takes the
    task's `known_info` fact of that name; a customer who does not know it (no router) cannot follow.
    """

    when_told: tuple[str, ...]
    name: str
    arguments: Mapping[str, Any] = field(default_factory=dict)

    def call(self, known: Mapping[str, Any]) -> GoldAction | None:
        """The user-tool call for a customer who knows `known`, or None if a fact it names is unknown."""
        arguments: dict[str, Any] = {}
        for key, value in self.arguments.items():
            if isinstance(value, str) and value.startswith("{") and value.endswith("}"):
                fact = value[1:-1]
                if fact not in known:
                    return None
                value = known[fact]
            arguments[key] = value
        return GoldAction(name=self.name, arguments=arguments, actor="user")


def side_of(table: str, user_tables: Collection[str]) -> Side:
    """The side `table` is on: "user" for a table the domain declares customer-owned, else "agent"."""
    return "user" if table in user_tables else "agent"


def check_user_side(
    domain: str,
    tools: Sequence[Tool],
    user_tools: Sequence[Tool],
    user_tables: Collection[str],
    tables: Collection[str],
    instructions: Sequence[Instruction] = (),
) -> None:
    """Refuse a user side that cannot work: unknown tables, duplicate or shared tool names, bad instructions.

    An instruction must name a user tool and the words the customer is told it by.

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
    for instruction in instructions:
        what = f"domain {domain}: user_instructions {instruction.name!r}"
        if instruction.name not in names:
            raise ValueError(f"{what} is not a user tool")
        if not instruction.when_told:
            raise ValueError(f"{what} has no when_told terms")
