"""Blame: did a failed episode fail because of the agent, or because of the simulated user?

Up to a third of the failures of LLM-user benchmarks come from the user, not the agent. Every event of an
episode is stored and every score carries per-call credit, so the question is answered mechanically, with
evidence, for a failed episode played with the LLM user:

1. **The scripted counterfactual.** The agent's own calls and messages are kept, in order, and the user's
   lines are replaced by what the deterministic scripted user says at each point; the trajectory is scored
   again (the state is the same: the calls are the same). If it now scores 1, the LLM user's words alone
   cost the reward (a yes it never gave, a fact it said first): **user**.
2. **The user's mistakes**, read off its transcript:
   - *stopped early*: it ended the conversation while an expected change was still missing and its script
     had lines left;
   - *refused the confirmation*: an expected change is missing, its script gives a yes, and it never said
     yes to the agent;
   - *wrong facts*: a value the agent wrote wrong was said by the user first, and is not one of the facts
     the user knows (`known_info`);
   - *broke its persona*: it spoke as the assistant or as a model ("how can I help you", "as an AI").
   A mistake that explains the failure blames the **user**.
3. Otherwise the agent's own evidence (its first decisive deviation: a wrong or unwanted write, a write
   before the yes, a fact never told) blames the **agent**. User mistakes that do not explain the failure
   beside agent evidence leave it **undecided**, with both.

Episodes played with the scripted user, successes and backend errors are not blamed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from env_server.domain import Domain, Instruction
from env_server.episodes.log import EpisodeLog
from env_server.episodes.service import EpisodeService
from env_server.errors import NotFoundError, UnknownEpisodeError
from env_server.scoring.consent import says_yes
from env_server.scoring.scorer import submitted_answer
from env_server.scoring.trajectory import CustomerCall, Message, Step, Trajectory
from env_server.store.events import ConversationEndEvent, UserMessageEvent
from env_server.users.base import TranscriptMessage
from env_server.users.scripted import ScriptedUser
from shared.models import BlameResult, ScoreResult, ToolCallResult, ToolCallSpec, WireModel
from shared.results import TrialResult
from shared.tasks import GoldAction, Task

#: A simulated customer speaking as the assistant or as a model has broken its persona.
_STAFF = r"(?:ai|(?:customer service |support )?(?:assistant|agent|representative))"
PERSONA_BREAK = re.compile(
    rf"(?i)\b(?:as an ai|language model|how (?:can|may) i (?:help|assist) you|(?:i am|i'?m) (?:an?|the) "
    rf"{_STAFF}|as an? {_STAFF})\b"
)


class BlameReport(WireModel):
    """A run's failures, blamed."""

    episodes: list[BlameResult]
    agent: int
    user: int
    undecided: int
    not_blamed: int


def blame_run(service: EpisodeService, results: Iterable[TrialResult]) -> BlameReport:
    """Blame every failed trial of a run that names its episode (one the store lacks is not blamed)."""
    found = []
    for r in results:
        if r.status != "scored" or r.reward != 0 or r.episode_id is None:
            continue
        try:
            found.append(blame_episode(service, r.episode_id))
        except NotFoundError as exc:
            found.append(
                BlameResult(
                    episode_id=r.episode_id, task_id=r.task_id, verdict="not-blamed", reason=exc.message
                )
            )
    count = {v: sum(1 for b in found if b.verdict == v) for v in ("agent", "user", "undecided", "not-blamed")}
    return BlameReport(
        episodes=found,
        agent=count["agent"],
        user=count["user"],
        undecided=count["undecided"],
        not_blamed=count["not-blamed"],
    )


def blame_episode(service: EpisodeService, episode_id: str) -> BlameResult:
    """Blame one stored episode (its score is computed again from its event log, with credit).

    Raises:
        UnknownEpisodeError: The store holds no such episode.
        UnknownTaskError: Its task is no longer served.
    """
    record = service.store.episode(episode_id, include_disposed=True)
    if record is None:
        raise UnknownEpisodeError(f"unknown episode '{episode_id}'", field="episode_id")
    score, _ = service.rescore(episode_id)
    base = BlameResult(episode_id=episode_id, task_id=record.task_id, verdict="not-blamed", reason="")
    if score.status != "scored" or score.reward == 1:
        return base.model_copy(update={"reason": "not a failure" if score.reward == 1 else "a backend error"})
    if record.user_kind != "llm":
        return base.model_copy(
            update={"reason": f"played with the {record.user_kind} user, which makes no mistakes"}
        )
    task = service.registry.task(record.task_id)
    domain = service.registry.domain(task.domain)
    log = EpisodeLog(service.store.events(episode_id))
    scripted = _scripted_counterfactual(service, task, domain, log)
    mistakes, explains = _user_mistakes(log, score, task)
    agent = _agent_evidence(score, stopped=any(m.startswith("stopped early") for m in mistakes))
    found = base.model_copy(
        update={"user_evidence": mistakes, "agent_evidence": agent, "scripted_reward": scripted.reward}
    )
    if scripted.reward == 1:
        failed = ", ".join(c.name for c in score.checks if not c.passed)
        why = f"with the scripted user's lines the agent's own turns score 1 (failed here: {failed})"
        return found.model_copy(update={"verdict": "user", "reason": why})
    if explains is not None:
        return found.model_copy(update={"verdict": "user", "reason": explains})
    if agent and mistakes:
        why = f"the agent deviated ({agent[0]}) and the user erred ({mistakes[0]})"
        return found.model_copy(update={"verdict": "undecided", "reason": why})
    if agent:
        return found.model_copy(update={"verdict": "agent", "reason": agent[0]})
    why = mistakes[0] if mistakes else "no evidence either way"
    return found.model_copy(update={"verdict": "undecided", "reason": why})


def _scripted_counterfactual(
    service: EpisodeService, task: Task, domain: Domain, log: EpisodeLog
) -> ScoreResult:
    """The agent's calls and messages, in order, answered by the scripted user instead; scored.

    The calls are the same, so the state is the same; only what the user said (a yes, a fact said first)
    and where the conversation ends differ.
    """
    user = ScriptedUser(lambda _: domain)
    side = _CustomerCalls(domain.user_instructions)
    opening = user.opening(task).content
    steps: list[Step] = [Message("user", opening)]
    heard = [TranscriptMessage("user", opening)]
    replayed: list[ToolCallSpec | GoldAction] = []  # the agent's calls and the scripted customer's, in order
    done = False
    for step in log.trajectory().steps:
        if isinstance(step, CustomerCall) or (isinstance(step, Message) and step.role == "user"):
            continue  # the scripted user says its own lines and makes its own calls (`side.taken()`)
        if isinstance(step, Message):
            if done:
                break  # the scripted user had ended the conversation: the agent could say no more
            steps.append(step)
            heard.append(TranscriptMessage("assistant", step.content))
            turn = user.reply(task, heard, 0, side=side)
            replayed += side.taken()
            done = turn.done
            if not done:
                steps.append(Message("user", turn.content))
                heard.append(TranscriptMessage("user", turn.content))
        else:
            steps.append(step)
            if step.ran:
                replayed.append(ToolCallSpec(name=step.name, arguments=dict(step.arguments)))
    trajectory = Trajectory.of(steps)
    _, actual = service.scorer.replay(task, domain, replayed)
    return service.scorer.score(task, domain, actual, trajectory, submitted_answer(trajectory.calls()))


@dataclass
class _CustomerCalls:
    """The scripted customer's side in the counterfactual: its calls are noted, then replayed in order."""

    instructions: Sequence[Instruction] = ()
    calls: list[GoldAction] = field(default_factory=list)

    def tools(self) -> list[dict[str, Any]]:
        """None to offer: the scripted customer's script names each call."""
        return []

    def act(self, name: str, arguments: dict[str, Any]) -> ToolCallResult:
        """Note the call; it runs when the counterfactual trajectory is replayed."""
        self.calls.append(GoldAction(name=name, arguments=arguments, actor="user"))
        return ToolCallResult(name=name)

    def taken(self) -> list[GoldAction]:
        """The calls noted since the last time, oldest first."""
        taken, self.calls = self.calls, []
        return taken


def _user_mistakes(log: EpisodeLog, score: ScoreResult, task: Task) -> tuple[list[str], str | None]:
    """The user's mistakes, and the one that explains the failure (None when none does)."""
    lines = [e.event for e in log.events if isinstance(e.event, UserMessageEvent)]
    script = task.user.lines
    deviation = score.credit.first_deviation if score.credit else None
    missing = deviation is not None and deviation.kind == "missing"
    found: list[str] = []
    explains: str | None = None
    ended = any(isinstance(e.event, ConversationEndEvent) for e in log.events)
    # the user's last words before the end (stores from before `conversation_end` mark them `done`)
    stop = next((line for line in lines if line.done), None) or (lines[-1] if ended and lines else None)
    if stop is not None and missing and len(lines) <= len(script):  # the script would still talk
        found.append(
            f"stopped early: ended the conversation after {len(lines)} of its script's {len(script)} lines "
            f"('{stop.content[:80]}') while an expected change was missing"
        )
        explains = found[-1]
    if missing and any(says_yes(x) for x in script[1:]) and not any(says_yes(x.content) for x in lines):
        found.append("refused the confirmation: never said yes, where its script gives one")
        explains = explains or found[-1]
    facts = {str(v).lower() for v in task.user.known_info.values()}
    calls = score.credit.calls if score.credit else []
    for call in calls:
        for change in call.changes:
            value = str(change.after)
            if change.label != "wrong" or change.column is None or not value.strip():
                continue
            said = next((x.content for x in lines if value.lower() in x.content.lower()), None)
            if said is None or value.lower() in facts:
                continue
            found.append(f"wrong facts: said '{value}' ('{said[:80]}'), which its known facts do not hold")
            if deviation is not None and deviation.call_index == call.index:
                explains = explains or found[-1]
    broke = next((x.content for x in lines if PERSONA_BREAK.search(x.content)), None)
    if broke is not None:
        found.append(f"broke its persona: '{broke[:80]}'")
    return found, explains


def _agent_evidence(score: ScoreResult, *, stopped: bool) -> list[str]:
    """The agent's own deviation; an early stop counts against it only if the user did not end the talk."""
    deviation = score.credit.first_deviation if score.credit else None
    if deviation is None:
        return [f"failed {c.name}: {c.detail}" for c in score.checks if not c.passed][:1]
    if deviation.kind == "missing":
        return [] if stopped else [f"the agent stopped first: {deviation.reason}"]
    where = f"call {deviation.call_index}: " if deviation.call_index is not None else ""
    return [f"{where}{deviation.reason}"]
