"""Scripts a policy-following agent can finish: identity facts, then an explicit yes, then a line to spare.

The scripted user says its lines in order, each once the agent's message earns it (identity details when
asked, a yes to a proposal naming the change and its decisive values, a fix when asked for that one fix),
and a fallback otherwise (`users.scripted`). A policy-following agent looks things up, asks for the
caller's identity facts, verifies them, gives one fix per message, proposes the change, waits for an
explicit yes, acts and reports. The domain's `Conduct` says which writes need identity and which need a
yes. Two checks hold every action task to it:

- `script` (static): the identity facts the gold verifies with appear in the script before any line that
  confirms; a line after the identity facts (never the opening) says an explicit yes; a line is left
  after the yes for the agent's report.
- `script-replay` (dynamic): that canonical agent (`_flow.honest_script`, telling the task's reference reply)
  talks to the real `ScriptedUser` and every one of its messages, the report included, gets a line before
  the script runs out.
"""

from __future__ import annotations

from env_server.domain import Domain
from env_server.scoring.communicate import communicated
from env_server.scoring.consent import says_yes
from env_server.validation._flow import honest_script, missing_facts, needs
from env_server.validation._report import CheckOutcome
from shared.tasks import Task

__all__ = ["says_yes", "script_check", "script_replay"]


def script_check(task: Task, domain: Domain) -> CheckOutcome:
    """The static check: identity facts, then an explicit yes, then a line for the report."""
    need = needs(task, domain)
    script = task.user.lines
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
    ref = task.reference_reply
    talk = honest_script(
        task, domain, task.gold_actions, ref.text if ref else None, bool(ref and ref.after_writes)
    )
    missing = missing_facts(need, talk.heard)
    if missing:
        return CheckOutcome(
            "script-replay",
            False,
            f"the script ran out while the agent asked for identity (never given: {missing})",
        )
    if need.yes and not talk.consented:
        return CheckOutcome("script-replay", False, "the script ran out before the user said an explicit yes")
    if not talk.reported:
        return CheckOutcome(
            "script-replay",
            False,
            f"the script ran out before the agent's report got an answer ({len(task.user.script)} lines)",
        )
    return CheckOutcome(
        "script-replay", True, f"the canonical flow ends with {len(talk.heard)} of its lines used"
    )
