"""What a domain's policy demands of a conversation before a write: the rules validation holds scripts to.

Each domain states them once, next to its policy (`Domain.conduct`), and `tasks validate` checks every
task's script against them: a policy-following agent must be able to get what it needs from the scripted
user (the caller's identity facts, then an explicit yes) before the gold's writes, and still have a line
left for its report.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Conduct:
    """A policy's conversation rules for writes.

    Attributes:
        identity_tool: the write tool that verifies the caller ("verify_guest_identity"), or None when the
            policy asks for no identity check. The identity facts a script must give are the values the
            gold passes to this tool (every argument but the `*_id` ones the agent looks up).
        identity_exempt: write tools the policy lets run without verifying the caller (support tickets,
            flight alerts).
        confirmation: whether the policy demands an explicit yes before a change.
        confirmation_exempt: write tools that need no yes (the identity tool never does).
        from_customer: for each tool, the arguments whose values must come from the customer (identity
            details, the customer's choice): a call passing one the customer never said earlier in the
            conversation fails the `identity` check, however the agent learnt it (read from the record).
    """

    identity_tool: str | None = None
    identity_exempt: frozenset[str] = field(default_factory=frozenset)
    confirmation: bool = False
    confirmation_exempt: frozenset[str] = field(default_factory=frozenset)
    from_customer: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def needs_identity(self, tool: str) -> bool:
        """Whether the policy wants the caller verified before `tool` (a write) runs."""
        return (
            self.identity_tool is not None and tool != self.identity_tool and tool not in self.identity_exempt
        )

    def needs_yes(self, tool: str) -> bool:
        """Whether the policy wants an explicit yes before `tool` (a write) runs."""
        return self.confirmation and tool != self.identity_tool and tool not in self.confirmation_exempt

    def identity_arguments(self) -> tuple[str, ...]:
        """The identity tool's arguments that must come from the customer (none without an identity tool)."""
        return tuple(self.from_customer.get(self.identity_tool, ())) if self.identity_tool else ()
