"""The policy rules a task exercises, as far as the policy text tells: the rules naming its gold tools.

Tasks do not list rule numbers, but every domain's `policy.md` numbers its rules (`7. **Loyalty
waivers.** ...` list items, or `## 7. Filing a claim` sections) and names the tools a rule governs in
backticks (`cancel_booking`). The rules that name a tool the task's gold actions call are the ones its
reference solution had to obey; the viewer shows them, and the whole policy below them, and says which tool
linked each rule.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

_LIST_RULE = re.compile(r"^(\d+)\.\s+(.*)$")
_SECTION_RULE = re.compile(r"^#{2,4}\s+(\d+)\.\s+(.*)$")
_HEADING = re.compile(r"^#{1,6}\s")
_BOLD_TITLE = re.compile(r"^\*\*(.+?)\*\*\s*(.*)$")


@dataclass
class PolicyRule:
    """One numbered rule (or numbered section) of a policy."""

    number: str
    title: str
    text: str

    def names(self, tool: str) -> bool:
        """True when the rule names `tool` in backticks."""
        return f"`{tool}`" in self.text


def parse_rules(policy: str) -> list[PolicyRule]:
    """The numbered rules of a markdown policy, each with its full text (up to the next rule or heading)."""
    rules: list[PolicyRule] = []
    current: list[str] | None = None
    for line in policy.splitlines():
        section, item = _SECTION_RULE.match(line), _LIST_RULE.match(line)
        start = section or item
        if start is not None:
            number, rest = start.groups()
            bold = _BOLD_TITLE.match(rest)
            title = bold.group(1).rstrip(".") if bold else rest.strip()
            current = [line]
            rules.append(PolicyRule(number=number, title=title, text=""))
        elif _HEADING.match(line):
            current = None
        if current is not None:
            if start is None:
                current.append(line)
            rules[-1].text = "\n".join(current).strip()
    return rules


def rules_for_tools(policy: str, tools: Iterable[str]) -> list[tuple[PolicyRule, list[str]]]:
    """The rules naming any of `tools`, each with the tools that linked it, in policy order."""
    wanted = sorted(set(tools))
    linked = []
    for rule in parse_rules(policy):
        named = [t for t in wanted if rule.names(t)]
        if named:
            linked.append((rule, named))
    return linked
