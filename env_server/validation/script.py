"""Scripts a policy-following agent can finish: identity facts, then an explicit yes, then a line to spare.

The scripted user answers the agent's k-th message with line k of the script. A policy-following agent
looks things up, asks for the caller's identity facts, verifies them, proposes the change, waits for an
explicit yes, acts and reports. The domain's `Conduct` says which writes need identity and which need a
yes. Two checks hold every action task to it:

- `script` (static): the identity facts the gold verifies with appear in the script before any line that
  confirms; a line after the identity facts (never the opening) says an explicit yes; a line is left
  after the yes for the agent's report.
- `script-replay` (dynamic): that canonical agent talks to the real `ScriptedUser` and every one of its
  messages, the report included, gets a line before the script runs out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from env_server.domain import Domain
from env_server.scoring.communicate import communicated
from env_server.users.base import TranscriptMessage
from env_server.users.scripted import ScriptedUser
from env_server.validation._replay import is_write
from env_server.validation._report import CheckOutcome
from shared.tasks import Task

_ACTION_VERBS = (
    "do|go ahead|proceed|file|open|book|cancel|add|send|make|change|update|apply|issue|submit|reinstate|"
    "remove|exclude|move|upgrade|set|put|switch|charge|process|refund|credit|log|subscribe|create|raise|"
    "request|pay|return|reship|record|take|arrange|start|go on|lower|raise|use|refer|approve|take"
)
#: What counts as an explicit yes to a proposed change ("okay" and "all right" alone do not).
EXPLICIT_YES = re.compile(
    rf"""(?ix)
    \b(?:yes|yeah|yep|yup|go\ ahead|go\ for\ it|do\ it|proceed|confirm(?:ed)?|please\ (?:{_ACTION_VERBS})
       |that'?s\ (?:fine|right|correct)|sounds\ (?:good|fine|right)|i\ agree|agreed|deal)\b
    | ^\W*(?:sure|ok(?:ay)?|alright|all\ right)\W*(?:,\s*)?(?:go|do|please|book|file|cancel|change)\b
    """
)


def says_yes(line: str) -> bool:
    """Whether a script line is an explicit yes to a proposed change."""
    return EXPLICIT_YES.search(line) is not None


@dataclass(frozen=True)
class Needs:
    """What the policy needs from the user before the gold's writes."""

    identity_facts: tuple[str, ...]  # values the caller must give (empty: no identity check)
    yes: bool  # an explicit yes before a write
    problems: tuple[str, ...]  # gold orderings the policy forbids


def needs(task: Task, domain: Domain) -> Needs:
    """Derive from the gold and the domain's conduct what the script must give."""
    conduct = domain.conduct
    facts: list[str] = []
    problems = []
    verified = False
    for i, action in enumerate(task.gold_actions):
        if action.tool == conduct.identity_tool:
            verified = True
            facts += [str(v) for k, v in action.args.items() if not k.endswith("_id") and str(v) not in facts]
        elif is_write(domain, action) and conduct.needs_identity(action.tool) and not verified:
            problems.append(f"gold write #{i} {action.tool} comes before {conduct.identity_tool}")
    yes = any(is_write(domain, a) and conduct.needs_yes(a.tool) for a in task.gold_actions)
    return Needs(tuple(facts), yes, tuple(problems))


def script_check(task: Task, domain: Domain) -> CheckOutcome:
    """The static check: identity facts, then an explicit yes, then a line for the report."""
    need = needs(task, domain)
    script = task.user.script
    problems = list(need.problems)
    identity_line = 0
    for fact in need.identity_facts:
        line = next((i for i, s in enumerate(script) if communicated(fact, [s])), None)
        if line is None:
            problems.append(f"no line gives the identity fact '{fact}' the gold verifies with")
        else:
            identity_line = max(identity_line, line)
    if need.yes:
        first = max(1, identity_line + 1) if need.identity_facts else 1
        yes_line = next((i for i in range(first, len(script)) if says_yes(script[i])), None)
        if yes_line is None:
            where = f"after line {identity_line} (identity)" if need.identity_facts else "after the opening"
            problems.append(f"no line {where} gives the explicit yes the policy requires before a change")
        elif yes_line == len(script) - 1:
            problems.append(
                f"the yes (line {yes_line}) is the last line: none is left for the agent's report"
            )
    if problems:
        return CheckOutcome("script", False, "; ".join(problems))
    return CheckOutcome("script", True, "identity, yes and report lines in order")


def script_replay(task: Task, domain: Domain) -> CheckOutcome:
    """The dynamic check: the canonical policy-following flow through the real scripted user."""
    need = needs(task, domain)
    user = ScriptedUser()
    heard = [user.opening(task).content]
    transcript = [TranscriptMessage("user", heard[0])]

    def say(text: str) -> str | None:
        transcript.append(TranscriptMessage("assistant", text))
        turn = user.reply(task, transcript, writes_this_turn=0)
        if turn.done:
            return None
        transcript.append(TranscriptMessage("user", turn.content))
        heard.append(turn.content)
        return turn.content

    def missing_facts() -> list[str]:
        return [f for f in need.identity_facts if not any(communicated(f, [h]) for h in heard)]

    while missing_facts():
        if say("To verify your identity, could you give me " + ", ".join(missing_facts()) + "?") is None:
            return CheckOutcome(
                "script-replay",
                False,
                f"the script ran out while the agent asked for identity (never given: {missing_facts()})",
            )
    if need.yes:
        while True:
            answer = say("Here is exactly what I will do and what it costs. Shall I go ahead?")
            if answer is None:
                return CheckOutcome(
                    "script-replay", False, "the script ran out before the user said an explicit yes"
                )
            if says_yes(answer):
                break
    if say("Done: here is the result.") is None:
        return CheckOutcome(
            "script-replay",
            False,
            f"the script ran out before the agent's report got an answer ({len(task.user.script)} lines)",
        )
    return CheckOutcome("script-replay", True, f"the canonical flow ends with {len(heard)} of its lines used")
