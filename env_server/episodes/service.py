"""The episode service: the one place REST routers (and any protocol adapter) call.

An episode's sandbox lives in its backend; its events live in the store, committed before each response.
If this process does not hold the sandbox (a restart, another worker on SQLite), it rebuilds it by replaying
the recorded tool calls, which are deterministic.
"""

from __future__ import annotations

import re
import threading
import uuid
import weakref
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, Literal

from env_server.domain import Domain
from env_server.domain.registry import DomainRegistry
from env_server.episodes.admission import Admission
from env_server.episodes.live import LiveSandboxes
from env_server.episodes.log import EpisodeLog
from env_server.episodes.user_side import EpisodeUserSide
from env_server.errors import (
    BackendError,
    ConversationOverError,
    EpisodeDisposedError,
    EpisodeFinishedError,
    EpisodeReclaimedError,
    GroundstateError,
    InvalidRequestError,
    UnknownEpisodeError,
)
from env_server.execution import episode_tools, find_tool, run_tool, user_tools
from env_server.sandbox import Sandbox, SandboxEngine, template_of
from env_server.scoring.diff import listed
from env_server.scoring.scorer import Scorer, submitted_answer
from env_server.scoring.trajectory import Call, CustomerCall, Message, Trajectory
from env_server.store import EpisodeRecord, Store
from env_server.store.events import (
    AssistantMessageEvent,
    BackendErrorEvent,
    ConversationEndEvent,
    RejectedToolCallEvent,
    ToolCallEvent,
    UserMessageEvent,
    UserToolCallEvent,
)
from env_server.store.store import utcnow
from env_server.users.base import SimulatedUser
from env_server.users.conduct import asked_for
from env_server.users.scripted import respond
from shared.models import (
    ChatMessage,
    EpisodeInfo,
    EpisodeStarted,
    EpisodeStatus,
    MessageRequest,
    ScoreRequest,
    ScoreResult,
    StartEpisodeRequest,
    ToolCallRequest,
    ToolCallResult,
    ToolCallSpec,
    TrajectoryScore,
    UserReply,
)
from shared.tasks import GoldAction, Task


class EpisodeService:
    """Start, act in, converse in, score and dispose of episodes."""

    def __init__(
        self,
        registry: DomainRegistry,
        sandboxes: SandboxEngine,
        store: Store,
        scorer: Scorer,
        users: Mapping[str, SimulatedUser],
        default_user: str = "scripted",
        max_live_sandboxes: int = 2000,
        sandbox_idle_s: float = 1800.0,
        inline: bool = False,
        admission: Admission | None = None,
    ) -> None:
        self.registry = registry
        self.sandboxes = sandboxes
        self.store = store
        self.scorer = scorer
        self.users = dict(users)
        self.default_user = default_user
        #: Whether calls that only compute may run on the caller's thread (the event loop): see `claim`.
        self.inline = inline
        #: This worker's live episodes and requests in flight: refuses work past capacity, finds idle ones.
        self.admission = admission or Admission()
        self._live = LiveSandboxes(max_live_sandboxes, sandbox_idle_s)
        # One lock per episode orders its calls; weak values drop a lock once no call holds or waits on it.
        # Re-entrant: `claim` takes it on the caller's thread before the call itself takes it again.
        self._locks: weakref.WeakValueDictionary[str, threading.RLock] = weakref.WeakValueDictionary()
        self._guard = threading.Lock()

    # -- where a call runs -----------------------------------------------------------------------------------

    def starts_inline(self, request: StartEpisodeRequest) -> bool:
        """Whether starting this episode only computes (see `claim`).

        That is: inline mode, a user that waits on nothing, and a template ready to copy (a domain's first
        seed build takes a second or more: that goes to a thread).
        """
        user = self.users.get(request.user or self.default_user)
        if not self.inline or user is None or user.waits:
            return False
        task = self.registry.task(request.task_id)
        return self.sandboxes.is_warm(template_of(task, self.registry.domain(task.domain)))

    @contextmanager
    def claim(self, episode_id: str, *, talks: bool = False, scores: bool = False) -> Iterator[bool]:
        """Whether the episode's next call may run right here, on the caller's thread, holding its lock.

        Yes only in inline mode, for a call that waits on nothing: the episode's lock is free now (a call
        of it running in a thread, such as a slow LLM reply, is never waited for here), this process holds
        its sandbox (no replay to wait through), and no simulated user (`talks`) or judge (`scores`) on
        a network is involved. Otherwise the caller hands the call to a worker thread.
        """
        waits = (talks and any(u.waits for u in self.users.values())) or (scores and self.scorer.judge)
        if not self.inline or waits or self._live.peek(episode_id) is None:
            yield False
            return
        lock = self._lock(episode_id)
        if not lock.acquire(blocking=False):
            yield False
            return
        try:
            yield True
        finally:
            lock.release()

    # -- lifecycle -------------------------------------------------------------------------------------------

    def start(self, request: StartEpisodeRequest) -> EpisodeStarted:
        """Create the sandbox, ask the user for its opening line, and record both (if there is room)."""
        self.admission.admit_start()
        task = self.registry.task(request.task_id)
        domain = self.registry.domain(task.domain)
        user = self._user(request.user or self.default_user)
        episode_id = uuid.uuid4().hex
        opening = user.opening(task, request.seed)
        sandbox = self.sandboxes.create(episode_id, template_of(task, domain))
        tools = episode_tools(task, domain).values()
        record = EpisodeRecord(
            id=episode_id,
            task_id=task.id,
            domain=domain.name,
            user_kind=user.kind,
            user_model=user.model,
            user_prompt_version=user.prompt_version,
            seed=request.seed,
            status="active",
            disposed=False,
            user_done=False,
        )
        self.store.create_episode(record, UserMessageEvent(content=opening.content, done=False))
        self._live.put(episode_id, sandbox)
        self.admission.touch(episode_id)
        self._evict()
        return EpisodeStarted(
            episode_id=episode_id,
            task_id=task.id,
            domain=domain.name,
            system_prompt=domain.policy,
            tools=[t.openai_schema() for t in tools],
            tool_kinds={t.name: t.kind for t in tools},
            first_message=opening.content,
            user=user.kind,  # type: ignore[arg-type]  # "scripted" | "llm", checked by pydantic
            user_model=user.model,
        )

    def call_tool(self, episode_id: str, request: ToolCallRequest) -> ToolCallResult:
        """Run one tool call in the episode's sandbox and record it."""
        with self._lock(episode_id):
            record, task, domain = self._active(episode_id)
            if request.idempotency_key is not None:  # a resend: the first run's result, not a second run
                first = self.store.keyed_event(episode_id, request.idempotency_key)
                if first is not None and isinstance(first.event, ToolCallEvent):
                    return first.event.result()
            tools = episode_tools(task, domain)
            try:
                find_tool(tools, request.name, domain.name).validate(request.arguments)
            except InvalidRequestError as exc:  # the agent's mistake: on record, and the agent is told
                rejected = RejectedToolCallEvent.of(request.name, request.call_id, request.arguments, exc)
                self.store.append_event(episode_id, rejected)
                raise
            sandbox = self._sandbox(record, task, domain)
            try:
                result = run_tool(sandbox, tools, request.name, request.arguments, request.call_id)
            except BackendError as exc:
                self._fail(episode_id, exc)
                raise
            sandbox.applied_seq = self.store.append_event(
                episode_id, ToolCallEvent.of(result, request.arguments), request.idempotency_key
            )
            return result

    def tools(self, episode_id: str) -> list[tuple[dict[str, Any], str]]:
        """The episode's tools as `start` listed them (OpenAI entries), each with its kind, for adapters."""
        record = self._record(episode_id)
        task = self.registry.task(record.task_id)
        tools = episode_tools(task, self.registry.domain(task.domain)).values()
        return [(t.openai_schema(), t.kind) for t in tools]

    def message(self, episode_id: str, request: MessageRequest) -> UserReply:
        """Record the agent's message, get the simulated user's reply, and record that."""
        with self._lock(episode_id):
            record, task, _ = self._active(episode_id)
            if record.user_done:
                raise ConversationOverError(
                    f"the user ended episode {episode_id}'s conversation; call score", field="content"
                )
            self.store.append_event(episode_id, AssistantMessageEvent(content=request.content))
            log = EpisodeLog(self.store.events(episode_id))
            user = self._user(record.user_kind)
            domain = self.registry.domain(task.domain)
            try:
                writes = log.writes_since_user(domain)
                # dual control: the customer may act on their side as they answer (a script that acts in a
                # domain without user tools gets its calls refused and recorded, never a crash)
                if domain.user_tools or task.user.user_actions():
                    side = EpisodeUserSide(
                        episode_id,
                        user_tools(domain),
                        self.store,
                        lambda: self._sandbox(record, task, domain),
                        domain.user_instructions,
                    )
                    turn = user.reply(task, log.transcript(), writes, record.seed, side=side)
                else:  # a user written before dual control need not take a side
                    turn = user.reply(task, log.transcript(), writes, record.seed)
            except BackendError as exc:
                self._fail(episode_id, exc)
                raise
            if turn.words:
                self.store.append_event(episode_id, UserMessageEvent(content=turn.words))
            if turn.done:
                self.store.append_event(episode_id, ConversationEndEvent(), user_done=True)
            return UserReply(content=turn.words, done=turn.done)

    def score(self, episode_id: str) -> ScoreResult:
        """End the episode and score it; scoring again returns the same result."""
        with self._lock(episode_id):
            record = self._record(episode_id)
            saved = self.store.score(episode_id)
            if saved is not None:
                return ScoreResult.model_validate(saved)
            task = self.registry.task(record.task_id)
            domain = self.registry.domain(task.domain)
            result = self._evaluate(record, task, domain)
            result.user_model, result.user_prompt_version = record.user_model, record.user_prompt_version
            stored = self.store.save_score(
                episode_id, result.status, result.reward, result.model_dump(mode="json")
            )
            # attach: an episode scored without its sandbox (a backend error) still frees its slot
            self._drop_sandbox(episode_id, attach=True)
            self.admission.end(episode_id)
            return ScoreResult.model_validate(stored)

    def info(self, episode_id: str) -> EpisodeInfo:
        """The episode's events, its diff against the expected changes so far, and its score if any.

        A disposed episode still answers, as `disposed`: its events and its score stay in the store; with
        its sandbox gone, an unscored one has no diff and no changes to show.
        """
        with self._lock(episode_id):
            record = self._record(episode_id, include_disposed=True)
            saved = self.store.score(episode_id)
            score = None if saved is None else ScoreResult.model_validate(saved)
            task = self.registry.task(record.task_id)
            domain = self.registry.domain(task.domain)
            if record.disposed:
                diff, changed = (score.diff, score.changes) if score is not None else ([], [])
            elif score is not None:
                diff, changed = score.diff, score.changes
            else:
                actual = self.scorer.actual(self._sandbox(record, task, domain), domain)
                diff, changed = self.scorer.diff(task, domain, actual), listed(actual, domain.user_tables)
            return EpisodeInfo(
                episode_id=record.id,
                task_id=record.task_id,
                domain=record.domain,
                status=_status(record),
                user=record.user_kind,  # type: ignore[arg-type]
                events=[e.wire() for e in self.store.events(episode_id)],
                diff=diff,
                changes=changed,
                score=score,
            )

    def dispose(self, episode_id: str) -> None:
        """Drop the sandbox; the episode then reads `disposed` and takes no more calls (410)."""
        with self._lock(episode_id):
            self._record(episode_id)
            self._drop_sandbox(episode_id, attach=True)
            self.store.update_episode(episode_id, disposed=True)
            self.admission.end(episode_id)

    def reclaim_idle(self) -> int:
        """Reclaim this worker's episodes idle past the timeout; returns how many were reclaimed.

        An episode another worker used since (its last event is recent) is kept; one scored or disposed
        elsewhere is only forgotten here. A reclaimed one is disposed of, its record marked `reclaimed`.
        """
        count = 0
        for episode_id in self.admission.idle():
            lock = self._lock(episode_id)
            if not lock.acquire(blocking=False):  # a call is running on it: not idle after all
                continue
            try:
                count += self._reclaim(episode_id)
            finally:
                lock.release()
        return count

    def _reclaim(self, episode_id: str) -> bool:
        record = self.store.episode(episode_id)
        if record is None or record.status != "active":
            self.admission.end(episode_id)
            return False
        last = self.store.events(episode_id, after=max(0, self.store.last_seq(episode_id) - 1))
        if last and (utcnow() - last[-1].created_at).total_seconds() < self.admission.idle_timeout_s:
            self.admission.touch(episode_id)  # served by another worker meanwhile
            return False
        self._drop_sandbox(episode_id, attach=True)
        self.store.update_episode(episode_id, disposed=True, status="reclaimed", finished_at=utcnow())
        self.admission.reclaimed(episode_id)
        return True

    def score_trajectory(self, request: ScoreRequest) -> TrajectoryScore:
        """Replay a submitted trajectory on a fresh sandbox and score it (no episode is stored).

        Judged exactly as a live episode of the same agent turns. Calls carried by the assistant messages
        (OpenAI `tool_calls`) keep their place in the conversation; calls given as the separate
        `tool_calls` list have none, and are read as made before every message.

        The scripted customer (the default) says its turns again: its opening, then its answer to each of
        the agent's messages (`scripted.respond`), its own calls right before the words; once it has ended
        the conversation the agent's later messages are not heard (live, they are refused), though its
        calls still run. The user turns the transcript gives are not read, so a turn the script
        would not say there (an invented yes, an acting line nobody asked for) changes nothing. The
        evaluator's own customer (`ScoreRequest.own_customer`) keeps its turns; each of its calls must name
        a user tool, and a call that changes something counts only where the agent's message before asked
        for that one action (`asked_for`), as the scripted customer would act.
        """
        task = self.registry.task(request.task_id)
        domain = self.registry.domain(task.domain)
        replayed: list[ToolCallSpec | GoldAction] = []  # the agent's and the customer's calls, in order
        order: list[Message | int] = []  # the transcript: a message, or the index of a replayed call

        def add(calls: Sequence[ToolCallSpec | GoldAction]) -> None:
            order.extend(range(len(replayed), len(replayed) + len(calls)))
            replayed.extend(calls)

        if request.tool_calls:
            add(request.tool_calls)
        own = request.own_customer()
        if not own:
            order.append(Message("user", task.user.lines[0]))
        agent_said: list[str] = []  # the agent's messages so far
        at, over = 1, False  # the scripted customer's next line, and whether it ended the conversation
        for i, m in enumerate(request.messages):
            if m.role == "user" and own:
                add(_own_customer_calls(domain, i, m, agent_said))
                if m.content:
                    order.append(Message("user", m.content))
            elif m.role == "assistant":
                if m.content and not over:  # live, a message after the customer ended it is refused
                    order.append(Message("assistant", m.content))
                if not request.tool_calls:
                    add(m.calls())
                if m.content and not own and not over:
                    response = respond(task, domain, at, m.content, agent_said)
                    add(response.calls)
                    if not response.done:
                        order.append(Message("user", response.content))
                    at += response.line is not None
                    over = response.done
                if m.content:
                    agent_said.append(m.content)
        try:
            everything, actual = self.scorer.replay(task, domain, replayed)
        except BackendError as exc:
            return TrajectoryScore(status="backend_error", reward=None, error=exc.message)
        steps = [s if isinstance(s, Message) else _step(replayed[s], everything[s]) for s in order]
        results = [r for r, c in zip(everything, replayed, strict=True) if not _by_customer(c)]
        trajectory = (
            Trajectory.unordered(
                [s for s in steps if not isinstance(s, Message)], [s for s in steps if isinstance(s, Message)]
            )
            if request.tool_calls
            else Trajectory.of(steps)
        )
        answer = submitted_answer(trajectory.calls())
        result = self._with_credit(
            task, domain, trajectory, self.scorer.score(task, domain, actual, trajectory, answer)
        )
        return TrajectoryScore(**result.model_dump(), tool_results=results, ordered=trajectory.ordered)

    def rescore(self, episode_id: str) -> tuple[ScoreResult, list[str]]:
        """Score a stored episode again from its event log, against today's task and scorer.

        The episode's successful calls are replayed on a fresh sandbox (no policy, no user: the log holds
        everything); its stored score is left as it was. Disposed episodes count: their events stay.

        Returns:
            The new score (with credit), and a note for each call whose replay now gives another result
            than it gave in the episode (the task's initial state or a tool changed since).

        Raises:
            UnknownEpisodeError: No such episode in the store.
            UnknownTaskError: The episode's task is no longer served.
        """
        record = self.store.episode(episode_id, include_disposed=True)
        if record is None:
            raise UnknownEpisodeError(f"unknown episode '{episode_id}'", field="episode_id")
        task = self.registry.task(record.task_id)
        domain = self.registry.domain(task.domain)
        if record.backend_error:
            return ScoreResult(status="backend_error", reward=None, error=record.backend_error), []
        log = EpisodeLog(self.store.events(episode_id))
        trajectory = log.trajectory()
        ran = log.replayable_calls()  # the agent's and the customer's, in order
        specs = [GoldAction(name=c.name, arguments=dict(c.arguments), actor=_actor(c)) for _, c in ran]
        try:
            results, actual = self.scorer.replay(task, domain, specs)
        except BackendError as exc:
            return ScoreResult(status="backend_error", reward=None, error=exc.message), []
        # a call's number among all the agent's calls (refused ones too), as `trajectory.calls()` counts them
        agent_index = {
            e.seq: i for i, e in enumerate(e for e in log.events if isinstance(e.event, ToolCallEvent))
        }
        notes = [
            (f"call {agent_index[seq]}" if _actor(c) == "agent" else "the customer's call")
            + f" ({c.name}) now gives "
            + (f"the refusal '{r.error}'" if r.error else f"{r.output!r} (it gave {c.output!r})")
            for (seq, c), r in zip(ran, results, strict=True)
            if r.error is not None or r.output != c.output
        ]
        answer = submitted_answer(trajectory.calls())
        result = self._with_credit(
            task, domain, trajectory, self.scorer.score(task, domain, actual, trajectory, answer)
        )
        result.user_model, result.user_prompt_version = record.user_model, record.user_prompt_version
        return result, notes

    # -- helpers ---------------------------------------------------------------------------------------------

    def _user(self, kind: str) -> SimulatedUser:
        try:
            return self.users[kind]
        except KeyError:
            known = ", ".join(sorted(self.users))
            raise InvalidRequestError(
                f"simulated user '{kind}' is not configured on this server (available: {known})", field="user"
            ) from None

    def _lock(self, episode_id: str) -> threading.RLock:
        with self._guard:
            lock = self._locks.get(episode_id)
            if lock is None:
                lock = self._locks[episode_id] = threading.RLock()
            return lock

    def _record(self, episode_id: str, *, include_disposed: bool = False) -> EpisodeRecord:
        if not _EPISODE_ID.fullmatch(episode_id):  # never sent to the store (a NUL is a PostgreSQL error)
            raise UnknownEpisodeError(f"unknown episode {episode_id[:80]!r}", field="episode_id")
        record = self.store.episode(episode_id, include_disposed=True)
        if record is None:
            raise UnknownEpisodeError(f"unknown episode '{episode_id}'", field="episode_id")
        if record.disposed and not include_disposed and record.status == "reclaimed":
            raise EpisodeReclaimedError(
                f"episode {episode_id} was reclaimed after {self.admission.idle_timeout_s:g} s without a "
                "call (GROUNDSTATE_EPISODE_IDLE_TIMEOUT_S): its "
                f"sandbox is gone (GET /v1/episodes/{episode_id} still shows its record); start a new one",
                field="episode_id",
            )
        if record.disposed and not include_disposed:
            raise EpisodeDisposedError(
                f"episode {episode_id} was disposed of: its sandbox is gone, so it takes no more calls "
                f"(GET /v1/episodes/{episode_id} still shows its record); start a new one",
                field="episode_id",
            )
        return record

    def _active(self, episode_id: str) -> tuple[EpisodeRecord, Task, Domain]:
        record = self._record(episode_id)
        if record.status != "active":
            raise EpisodeFinishedError(f"episode {episode_id} is finished (scored); start a new one")
        task = self.registry.task(record.task_id)
        self.admission.touch(episode_id)
        return record, task, self.registry.domain(task.domain)

    def _sandbox(self, record: EpisodeRecord, task: Task, domain: Domain) -> Sandbox:
        """The episode's sandbox: held here, attached on the backend, or rebuilt from the event log."""
        sandbox = self._live.get(record.id)
        if sandbox is None:
            template = template_of(task, domain)
            sandbox = self.sandboxes.attach(record.id, template) or self._rebuild(record, task, domain)
            self._live.put(record.id, sandbox)
            self._evict()
        elif not self.sandboxes.shared:
            self._catch_up(record, task, domain, sandbox)
        return sandbox

    def _evict(self) -> None:
        """Let go of sandboxes beyond capacity or idle too long; a later request attaches or rebuilds them."""
        for episode_id, reason in self._live.candidates():
            lock = self._lock(episode_id)
            if not lock.acquire(blocking=False):  # a request is using it right now: not idle after all
                continue
            try:
                sandbox = self._live.pop(episode_id)
                if sandbox is not None:
                    sandbox.evict()
                    self._live.evicted(reason)
            finally:
                lock.release()

    def _rebuild(self, record: EpisodeRecord, task: Task, domain: Domain) -> Sandbox:
        sandbox = self.sandboxes.create(record.id, template_of(task, domain))
        self._catch_up(record, task, domain, sandbox)
        return sandbox

    def _catch_up(self, record: EpisodeRecord, task: Task, domain: Domain, sandbox: Sandbox) -> None:
        """Replay onto this process's copy the calls it has not seen (all of them for a new copy).

        Several workers on SQLite each hold their own copy of an episode's sandbox: a call another worker
        served is in the store but not in this copy. A replayed call must give what it gave then.
        """
        if sandbox.applied_seq and self.store.last_seq(record.id) <= sandbox.applied_seq:
            return  # up to date: the common case, for one cheap statement instead of reading events
        events = self.store.events(record.id, after=sandbox.applied_seq)
        if not events:
            return
        tools = {"agent": episode_tools(task, domain), "user": user_tools(domain)}
        for seq, call in EpisodeLog(events).replayable_calls():
            replayed = run_tool(sandbox, tools[_actor(call)], call.name, call.arguments)
            if replayed.output != call.output:
                sandbox.dispose()
                self._live.pop(record.id)
                raise BackendError(f"episode {record.id}: replaying tool call {seq} gave a different result")
        sandbox.applied_seq = events[-1].seq

    def _drop_sandbox(self, episode_id: str, attach: bool = False) -> None:
        sandbox = self._live.pop(episode_id)
        if sandbox is None and attach:
            record = self.store.episode(episode_id)
            if record is not None:
                task = self.registry.task(record.task_id)
                template = template_of(task, self.registry.domain(task.domain))
                sandbox = self.sandboxes.attach(episode_id, template, any_version=True)
        if sandbox is not None:
            sandbox.dispose()

    def _fail(self, episode_id: str, exc: GroundstateError) -> None:
        self.store.append_event(episode_id, BackendErrorEvent(error=exc.message), backend_error=exc.message)

    def _evaluate(self, record: EpisodeRecord, task: Task, domain: Domain) -> ScoreResult:
        if record.backend_error:
            return ScoreResult(status="backend_error", reward=None, error=record.backend_error)
        try:
            actual = self.scorer.actual(self._sandbox(record, task, domain), domain)
        except BackendError as exc:
            return ScoreResult(status="backend_error", reward=None, error=exc.message)
        trajectory = EpisodeLog(self.store.events(record.id)).trajectory()
        answer = submitted_answer(trajectory.calls())
        return self._with_credit(
            task, domain, trajectory, self.scorer.score(task, domain, actual, trajectory, answer)
        )

    def _with_credit(
        self, task: Task, domain: Domain, trajectory: Trajectory, result: ScoreResult
    ) -> ScoreResult:
        """`result` with its per-call credit, which never voids the reward (`Scorer.with_credit`)."""
        return self.scorer.with_credit(task, domain, trajectory, result)


#: What an episode id can look like (the server mints uuid4 hex); anything else is no episode.
_EPISODE_ID = re.compile(r"[0-9A-Za-z_-]{1,128}")


def _status(record: EpisodeRecord) -> EpisodeStatus:
    """The episode's status as the API shows it: `reclaimed`, `disposed`, or the record's own."""
    if record.disposed:
        return "reclaimed" if record.status == "reclaimed" else "disposed"
    return record.status  # type: ignore[return-value]  # "active" | "finished", as the store writes them


def _actor(call: ToolCallEvent | UserToolCallEvent) -> Literal["agent", "user"]:
    """Whose recorded call this is: the customer's own (a user tool) or the agent's."""
    return "user" if isinstance(call, UserToolCallEvent) else "agent"


def _own_customer_calls(
    domain: Domain, index: int, message: ChatMessage, agent_said: Sequence[str]
) -> list[GoldAction]:
    """The evaluator's customer's calls of user turn `index` that count, to replay in place.

    Each must name one of the domain's user tools (a transcript cannot give the customer a tool they do
    not have); one that changes something counts only where the agent's last message asked for it.

    Raises:
        InvalidRequestError: naming the call that names no user tool.
    """
    offered = domain.user_tools_by_name
    for j, call in enumerate(message.calls()):
        if call.name not in offered:
            names = ", ".join(sorted(offered)) or "none"
            raise InvalidRequestError(
                f"the customer has no tool {call.name!r} (user tools: {names})",
                field=f"messages[{index}].tool_calls[{j}].function.name",
            )
    asked = agent_said[-1] if agent_said else ""
    return [
        GoldAction(name=c.name, arguments=c.arguments, actor="user")
        for c in message.calls()
        if asked_for(c.name, asked, domain)
    ]


def _by_customer(call: ToolCallSpec | GoldAction) -> bool:
    return isinstance(call, GoldAction) and call.actor == "user"


def _step(call: ToolCallSpec | GoldAction, result: ToolCallResult) -> Call | CustomerCall:
    """A replayed call as the trajectory step it was: the agent's call, or the customer's own."""
    if _by_customer(call):
        return CustomerCall(call.name, call.arguments, result.error)
    return Call(call.name, call.arguments, result.output, result.error)
