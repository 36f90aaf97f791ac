"""What the customer reads in the agent's message: did it ask for identity, propose a change, give one fix?

The scripted customer answers what the agent did, not the turn count (`scripted`): identity details only
when asked for them, a yes only after a proposal that names the change and its decisive values, an action
only when told that action, one at a time, in a message that is an answer rather than a recital. The same
reading decides, for the `consent` check, what a yes agreed to: the decisive values of the proposal it
answered (`decisive_values`).

The decisive values of a write (`consent.decisive_values`) are what a customer must hear before agreeing
to it: its amounts, its dates, else the records it names.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from env_server.domain import Domain
from env_server.scoring.communicate import Conversation, communicated
from env_server.scoring.consent import decisive_values
from env_server.scoring.trajectory import Message
from env_server.scoring.vocabulary import vocabulary
from shared.tasks import GoldAction, Task

#: Words that ask the caller to prove who they are, beside the identity tool's own argument names.
_IDENTITY_WORDS = ("verify", "verification", "identity", "identify", "confirm who")
#: User-tool name words that are verbs or the device, not the fix (`restart_router` is "restart").
_TOOL_VERBS = frozenset({"set", "enter", "update", "check", "router", "phone", "toggle"})


def is_answer(text: str, domain: Domain) -> bool:
    """Whether the agent's message is an answer: short, in its own words, no term spray (`communicate`)."""
    _DOMAINS[domain.name] = domain
    return _is_answer(text, domain.name)


_DOMAINS: dict[str, Domain] = {}


@lru_cache(maxsize=8192)
def _is_answer(text: str, name: str) -> bool:
    domain = _DOMAINS[name]
    heard = Conversation([Message("assistant", text)], vocabulary(domain), domain.policy)
    return bool(heard.answers())


def identity_arguments(domain: Domain) -> tuple[str, ...]:
    """The identity tool's arguments the customer must supply (the conduct's `from_customer` for it)."""
    return domain.conduct.identity_arguments()


def asks_identity(text: str, domain: Domain) -> bool:
    """Whether the agent's message asks the caller for identity details (verification, or one by name)."""
    lowered = text.lower()
    words = [*_IDENTITY_WORDS, *(a.replace("_", " ") for a in identity_arguments(domain))]
    return any(re.search(rf"\b{re.escape(w)}", lowered) for w in words)


def identity_facts(task: Task, domain: Domain) -> tuple[str, ...]:
    """The values the gold's identity check passes for the arguments the customer must supply."""
    wanted = identity_arguments(domain)
    facts: dict[str, None] = {}
    for action in task.gold_actions:
        if action.name == domain.conduct.identity_tool:
            facts.update((str(v), None) for k, v in action.arguments.items() if k in wanted)
    return tuple(facts)


def gives_identity(line: str, task: Task, domain: Domain) -> bool:
    """Whether a script line tells one of the caller's identity facts."""
    return any(communicated(fact, [line]) for fact in identity_facts(task, domain))


def needs_yes(domain: Domain, action: GoldAction) -> bool:
    """Whether `action` is an agent's write the domain's conduct wants an explicit yes for."""
    tool = domain.tools_by_name.get(action.name)
    return (
        action.actor == "agent"
        and tool is not None
        and tool.kind == "write"
        and domain.conduct.needs_yes(action.name)
    )


def proposed_changes(task: Task, domain: Domain) -> list[GoldAction]:
    """The gold's writes that need the customer's yes: what a proposal must name."""
    return [a for a in task.gold_actions if needs_yes(domain, a)]


def names_change(text: str, names: Iterable[str]) -> bool:
    """Whether `text` says one of the changes: a word that starts like a word of a tool's name.

    Compared on four letters at most: `cancel_booking` is said by "cancel", "cancelling", "book".
    """
    stems = {w[:4] for name in names for w in name.split("_") if len(w) >= 3}
    return any(token[:4] in stems for token in re.findall(r"[a-z]{3,}", text.lower()))


def proposes(text: str, task: Task, domain: Domain) -> bool:
    """Whether the agent's message proposes the task's change: names it and each of its decisive values.

    A task whose gold needs no yes is proposed by any answer (the customer has nothing to agree to).
    """
    if not is_answer(text, domain):
        return False
    changes = proposed_changes(task, domain)
    if not changes:
        return True
    values = proposal_values(task, domain)
    return names_change(text, [a.name for a in changes]) and all(communicated(v, [text]) for v in values)


def proposal_values(task: Task, domain: Domain) -> list[str]:
    """The values a proposal of the task's change must name.

    The decisive values of the gold's writes that need a yes (`consent.decisive_values`), and the task's
    facts with a number that its reference reply tells before the change (the refund, the fee).
    """
    values = [v for a in proposed_changes(task, domain) for v in decisive_values(a.name, a.arguments, domain)]
    ref = task.reference_reply
    if ref is not None and not ref.after_writes:
        values += [item for item in task.communicate if any(c.isdigit() for c in item)]
    return list(dict.fromkeys(values))


def proposal_sentence(task: Task, domain: Domain) -> str:
    """How the canonical agent proposes the task's change: the change and its decisive values, named."""
    verbs = dict.fromkeys(a.name.split("_")[0] for a in proposed_changes(task, domain))  # no fact of the task
    said = ", ".join([*verbs, *proposal_values(task, domain)])
    return f"Here is exactly what I will do: {said}. Shall I go ahead?"


def instruction_phrases(domain: Domain) -> dict[str, str]:
    """Each of the customer's acting user tools, by the phrase an agent names it with ("airplane mode")."""
    phrases = {}
    for tool in domain.user_tools:
        if tool.kind != "write":
            continue
        words = [w for w in tool.name.split("_") if w not in _TOOL_VERBS]
        phrases[tool.name] = " ".join(words or tool.name.split("_"))
    return phrases


def instructions_named(text: str, domain: Domain) -> list[str]:
    """The customer's acting tools the agent's message names (more than one: an instruction spray)."""
    lowered = text.lower()
    return [
        name
        for name, phrase in instruction_phrases(domain).items()
        if re.search(rf"\b{re.escape(phrase)}", lowered)
    ]


def asked_for(tool: str, text: str, domain: Domain) -> bool:
    """Whether a customer's call of user tool `tool` answers the agent's message `text`.

    A call that changes nothing (a check) always does; a fix only where `text` is an answer naming that
    fix and no other (one fix at a time).
    """
    found = domain.user_tools_by_name.get(tool)
    if found is None or found.kind != "write":
        return found is not None
    return is_answer(text, domain) and instructions_named(text, domain) == [tool]
