"""Evaluation campaigns: K trials of every selected task, run concurrently, resumable, streamed to disk.

A campaign (`run_campaign`, CLI `groundstate eval` / `groundstate probe`):
1. selects tasks from the server's catalogue (domains, split, ids, at most N per domain);
2. skips every trial `RUN_DIR/results.jsonl` already holds as scored, so rerunning the same command resumes a
   killed or partly failed campaign: only missing trials and trials that ended in a backend error run;
3. runs the remaining trials through `trainer.rollout`, at most `concurrency` episodes at a time; a rollout
   ending in a backend error (server, policy endpoint, timeout) is retried up to `retries` times with
   exponential backoff, and if it still fails it is recorded as `backend_error`, or `policy_error` when the
   policy's own endpoint failed (both left out of the metrics, counted apart and named in the summary);
   once `EARLY_STOP_AFTER` trials have run and most of them were policy errors, the campaign stops early
   (the trials not yet started are left for a rerun) and the summary says why;
4. appends each trial's `TrialResult` to `results.jsonl` as soon as it finishes (fsynced), and keeps
   `run.json` (the config and every invocation's summary).

Best-of-N at evaluation time (`samples` = N > 1): see `trainer.best_of`.
"""

from __future__ import annotations

import asyncio
import os
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import Field, model_validator
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    TextColumn,
    TimeRemainingColumn,
)

from shared.client import DEFAULT_SERVER_URL, AsyncGroundstateClient
from shared.strict_model import StrictModel
from shared.tasks import Split, TaskPublic
from trainer.best_of import (
    SAMPLES_FILE,
    Candidate,
    Selection,
    majority_vote,
    read_candidates,
    state_signature,
)
from trainer.policies import Policy, load_policy
from trainer.policies.context import estimated_prompt_tokens
from trainer.policies.local import portable_spec
from trainer.progress import PlainProgress
from trainer.results import TrialResult, append_jsonl, append_result, read_results, results_path
from trainer.retry import EpisodeLimits, RetrySettings, run_with_retries
from trainer.rollout import run_rollout
from trainer.rollout_models import RolloutResult

__all__ = [
    "RUN_FILE",
    "SAMPLES_FILE",
    "CampaignConfig",
    "CampaignError",
    "CampaignSummary",
    "Candidate",
    "Selection",
    "evaluate",
    "majority_vote",
    "run_campaign",
    "state_signature",
]

RUN_FILE = "run.json"
"""The campaign's config and invocation history, inside the run directory."""

EARLY_STOP_AFTER = 8
"""Trials an invocation runs before it may stop early because most of them were policy errors."""


class CampaignError(RuntimeError):
    """A campaign that cannot run as asked (unknown domain or task, a run directory of another campaign)."""


class CampaignConfig(EpisodeLimits, RetrySettings):
    """What to run: policy, server, task selection, trials; the episode limits and retries are inherited."""

    policy: str
    """The policy spec (`trainer.policies`)."""
    server: str = DEFAULT_SERVER_URL
    """The server's base URL."""
    domains: list[str] = Field(default_factory=list)
    """Domains to take tasks from; if empty, the server's benchmark domains (a curriculum such as `starter`
    only when named, or when `tasks` names its tasks)."""
    split: Split | None = "test"
    """The split to take tasks from; both if null."""
    tasks: list[str] = Field(default_factory=list)
    """Only these task ids, if given."""
    limit: int | None = Field(default=None, ge=1)
    """At most this many tasks per domain (the first by id)."""
    trials: int = Field(default=4, ge=1)
    """Trials K of every task."""
    concurrency: int = Field(default=4, ge=1)
    """Episodes running at once."""
    samples: int = Field(default=1, ge=1)
    """Candidates per trial (best-of-N); 1 for plain trials."""
    select: Selection | None = None
    """How best-of-N picks a candidate; required when `samples` > 1."""

    @model_validator(mode="after")
    def _selection_matches_samples(self) -> CampaignConfig:
        if (self.samples > 1) != (self.select is not None):
            raise ValueError(
                "best-of-N needs both samples > 1 and a selection (majority|first-success-verified)"
            )
        return self

    def identity(self) -> dict[str, Any]:
        """The settings a run directory must keep across invocations (so its results stay comparable)."""
        identity = self.model_dump(include={"policy", "split", "user", "max_turns", "samples", "select"})
        return {**identity, "policy": portable_spec(self.policy)}


class CampaignSummary(StrictModel):
    """What one invocation of a campaign did."""

    tasks: int = 0
    """Tasks selected."""
    planned: int = 0
    """Trials in the campaign (tasks x trials)."""
    skipped: int = 0
    """Trials already in the results (scored) and not run again."""
    run: int = 0
    """Trials run by this invocation."""
    rollouts: int = 0
    """Episodes run (retries and best-of-N candidates included)."""
    retries: int = 0
    """Rollouts that were retries after a backend error."""
    successes: int = 0
    """Trials run by this invocation that scored 1."""
    backend_errors: int = 0
    """Trials run by this invocation that still ended in a backend error."""
    policy_errors: int = 0
    """Trials run by this invocation whose policy endpoint failed (the model never played)."""
    error_causes: dict[str, int] = Field(default_factory=dict)
    """The messages of the backend and policy errors (truncated), each with how many trials ended in it."""
    stopped: str | None = None
    """Why the invocation stopped before running every pending trial (most trials were policy errors);
    null when it ran them all."""
    peak_running: int = 0
    """Most episodes that ran at once."""
    elapsed_s: float = 0.0
    """Wall-clock seconds of the invocation."""


class _Invocation(StrictModel):
    config: CampaignConfig
    started_at: datetime
    finished_at: datetime | None = None
    summary: CampaignSummary | None = None


class _RunRecord(StrictModel):
    config: CampaignConfig
    created_at: datetime
    invocations: list[_Invocation] = Field(default_factory=list)


def evaluate(config: CampaignConfig, run_dir: str | os.PathLike[str], **kwargs: Any) -> CampaignSummary:
    """Run a campaign to completion (synchronous wrapper of `run_campaign`, same arguments)."""
    return asyncio.run(run_campaign(config, run_dir, **kwargs))


async def run_campaign(
    config: CampaignConfig,
    run_dir: str | os.PathLike[str],
    *,
    policy: Policy | None = None,
    api_key: str | None = None,
    console: Console | None = None,
    progress: bool = True,
    progress_every_s: float = 30.0,
) -> CampaignSummary:
    """Run (or resume) a campaign, streaming results to `run_dir/results.jsonl`.

    Args:
        config: What to run.
        run_dir: The run directory (created if needed).
        policy: A ready policy instance; by default `config.policy` is loaded (and closed at the end).
        api_key: The server's bearer key, if it needs one.
        console: Where the progress bar goes (stderr by default).
        progress: Show progress: Rich's bar on a terminal, else a plain line every `progress_every_s`
            seconds and at the end (`trainer.progress`), for a log file.
        progress_every_s: Seconds between the plain lines.

    Returns:
        What this invocation did.

    Raises:
        CampaignError: Unknown domains or tasks, no task selected, or a run directory holding another
            campaign (a different policy, split, user, turn limit or best-of-N setting).
        ApiError: The server rejected the campaign's requests (bad credentials, unconfigured user).
    """
    directory = Path(run_dir)
    # run.json names the policy as results do (`portable_spec`): never a path of this machine
    record = _open_run(directory, config.model_copy(update={"policy": portable_spec(config.policy)}))
    own_policy = policy is None
    active = policy or load_policy(config.policy)
    started = time.monotonic()
    client = AsyncGroundstateClient(
        config.server, api_key=api_key, max_connections=max(8, 2 * config.concurrency)
    )
    try:
        tasks = await _select_tasks(client, config)
        await _check_context(client, active, tasks)
        _write_run(directory, record)
        campaign = _Campaign(config, directory, active, client, tasks)
        jobs = campaign.pending()
        out = console or Console(stderr=True)
        plain = progress and not out.is_terminal
        with campaign.progress_bar(out, progress and not plain):
            if plain:
                campaign.plain = PlainProgress(
                    policy_label(config.policy),
                    campaign.summary.planned,
                    done=campaign.summary.skipped,
                    every_s=progress_every_s,
                    stream=out.file,
                )
            try:
                async with asyncio.TaskGroup() as group:
                    for job in jobs:
                        group.create_task(campaign.trial(*job))
            except ExceptionGroup as failed:  # a configuration error stops the campaign; results so far stay
                raise failed.exceptions[0] from failed
            if campaign.plain is not None:
                campaign.plain.write()
        summary = campaign.summary
    finally:
        await client.aclose()
        if own_policy:
            await active.aclose()
    summary.elapsed_s = round(time.monotonic() - started, 3)
    record.invocations[-1].finished_at = datetime.now(UTC)
    record.invocations[-1].summary = summary
    _write_run(directory, record)
    return summary


def _open_run(directory: Path, config: CampaignConfig) -> _RunRecord:
    path = directory / RUN_FILE
    now = datetime.now(UTC)
    if path.is_file():
        record = _RunRecord.model_validate_json(path.read_text(encoding="utf-8"))
        before, after = record.config.identity(), config.identity()
        changed = {k: (before[k], after[k]) for k in before if before[k] != after[k]}
        if changed:
            diffs = ", ".join(f"{k}: {old!r} -> {new!r}" for k, (old, new) in changed.items())
            raise CampaignError(
                f"{directory} holds another campaign ({diffs}); resume it unchanged or use another "
                "run directory"
            )
        record.config = config
    else:
        record = _RunRecord(config=config, created_at=now)
    record.invocations.append(_Invocation(config=config, started_at=now))
    return record


async def _check_context(client: AsyncGroundstateClient, policy: Policy, tasks: list[TaskPublic]) -> None:
    """Refuse a campaign whose every trial of a domain would be a policy error: its prompt cannot fit.

    Raises:
        CampaignError: The policy's endpoint reports a context window smaller than a selected domain's
            first prompt (estimated from below: `trainer.policies.context`).
    """
    window = await policy.context_window()
    if window is None:
        return
    for name in sorted({t.domain for t in tasks}):
        domain = await client.domain(name)
        needed = estimated_prompt_tokens(domain.policy, domain.tools)
        if needed > window:
            raise CampaignError(
                f"the policy's endpoint serves a context of {window} tokens, but domain {name}'s first "
                f"prompt (its policy and tool schemas) takes at least {needed:,} tokens: every trial would "
                "fail. Serve the model with a larger context (llama.cpp: --ctx-size / --n_ctx; vLLM: "
                "--max-model-len); docs/evaluation/index.md lists each domain's need."
            )


def _write_run(directory: Path, record: _RunRecord) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    temporary = directory / f".{RUN_FILE}.tmp"
    temporary.write_text(record.model_dump_json(indent=2) + "\n", encoding="utf-8")
    temporary.replace(directory / RUN_FILE)


async def _select_tasks(client: AsyncGroundstateClient, config: CampaignConfig) -> list[TaskPublic]:
    catalogue = await client.domains()
    known = [d.name for d in catalogue]
    benchmark = [d.name for d in catalogue if d.benchmark]
    unknown = [d for d in config.domains if d not in known]
    if unknown:
        raise CampaignError(f"unknown domains {', '.join(unknown)}; the server has: {', '.join(known)}")
    wanted = set(config.tasks)
    selected: list[TaskPublic] = []
    # tasks named by id name their domains: a curriculum's too
    domains = config.domains or (known if wanted else benchmark)
    for domain in domains:
        found = sorted(await client.tasks(domain=domain, split=config.split), key=lambda t: t.id)
        if wanted:
            found = [t for t in found if t.id in wanted]
        selected += found[: config.limit] if config.limit else found
    missing = sorted(wanted - {t.id for t in selected})
    if missing:
        where = f"domains {', '.join(domains)}, split {config.split or 'any'}"
        raise CampaignError(f"tasks not found in {where}: {', '.join(missing)}")
    if not selected:
        raise CampaignError(
            f"no task matches (domains {config.domains or 'all'}, split {config.split or 'any'})"
        )
    return selected


class _Stopped(Exception):
    """Raised in a trial that was about to start after the campaign stopped early."""


class _Campaign:
    """One invocation's state: what is done, what runs, the counters and the progress bar."""

    def __init__(
        self,
        config: CampaignConfig,
        directory: Path,
        policy: Policy,
        client: AsyncGroundstateClient,
        tasks: list[TaskPublic],
    ) -> None:
        self.config, self.directory, self.policy, self.client, self.tasks = (
            config,
            directory,
            policy,
            client,
            tasks,
        )
        self.results_file = results_path(directory)
        self.samples_file = directory / SAMPLES_FILE
        self.done = {r.key: r for r in read_results(directory)} if self.results_file.is_file() else {}
        self.candidates = read_candidates(self.samples_file)
        self.semaphore = asyncio.Semaphore(config.concurrency)
        self.summary = CampaignSummary(tasks=len(tasks), planned=len(tasks) * config.trials)
        self.running = 0
        self.outcomes: dict[str, list[int]] = {}
        self.stop: str | None = None
        self.plain: PlainProgress | None = None
        self._progress: Progress | None = None
        self._bar: Any = None

    # -- what to run -----------------------------------------------------------------------------------------

    def pending(self) -> list[tuple[TaskPublic, int]]:
        """The trials still to run; counts the others as skipped (and into the running pass rate)."""
        jobs = []
        for trial in range(self.config.trials):  # trial-major: a partial campaign covers every task
            for task in self.tasks:
                finished = self._finished(task.id, trial)
                if finished is None:
                    jobs.append((task, trial))
                else:
                    self.summary.skipped += 1
                    self.outcomes.setdefault(task.id, []).append(finished)
        return jobs

    def _finished(self, task_id: str, trial: int) -> int | None:
        """The reward of a trial already done, or None if it must run."""
        n = self.config.samples
        if self.config.select == "first-success-verified":
            lines = [self.done.get((task_id, trial, s)) for s in range(1, n + 1)]
            scored = [r for r in lines if r is not None and r.status == "scored"]
            if any(r.reward == 1 for r in scored):
                return 1
            return 0 if len(scored) == n else None
        line = self.done.get((task_id, trial, n if self.config.select == "majority" else 0))
        return line.reward if line is not None and line.status == "scored" else None

    # -- running ---------------------------------------------------------------------------------------------

    async def trial(self, task: TaskPublic, trial: int) -> None:
        """Run one trial (all its candidates for best-of-N) and record it; nothing once the campaign stops."""
        try:
            if self.config.select == "first-success-verified":
                line = await self._first_success(task, trial)
            elif self.config.select == "majority":
                line = await self._majority(task, trial)
            else:
                line = await self._rollout(task, trial, 0)
                append_result(self.results_file, line)
        except _Stopped:
            return
        self.summary.run += 1
        if line.status == "scored":
            self.summary.successes += line.reward or 0
            self.outcomes.setdefault(task.id, []).append(line.reward or 0)
        else:
            self._count_error(line)
        self._update(advance=1)

    def _count_error(self, line: TrialResult) -> None:
        """Count an unscored trial and its cause; stop the campaign when most trials are policy errors."""
        summary = self.summary
        if line.status == "policy_error":
            summary.policy_errors += 1
        else:
            summary.backend_errors += 1
        cause = (line.error or "(no message)")[:300]
        summary.error_causes[cause] = summary.error_causes.get(cause, 0) + 1
        if self.stop is None and summary.run >= EARLY_STOP_AFTER and 2 * summary.policy_errors > summary.run:
            self.stop = (
                f"stopped early: {summary.policy_errors} of {summary.run} trials failed in the policy's "
                f"endpoint, not in the agent; the latest cause: {cause}"
            )
            summary.stopped = self.stop

    async def _first_success(self, task: TaskPublic, trial: int) -> TrialResult:
        lines: list[TrialResult] = []
        for sample in range(1, self.config.samples + 1):
            line = self.done.get((task.id, trial, sample))
            if line is None or line.status != "scored":
                line = await self._rollout(task, trial, sample)
                append_result(self.results_file, line)
            lines.append(line)
            if line.reward == 1:
                return line
        scored = [x for x in lines if x.status == "scored"]
        return scored[-1] if scored else lines[-1]

    async def _majority(self, task: TaskPublic, trial: int) -> TrialResult:
        async def candidate(sample: int) -> Candidate:
            kept = self.candidates.get((task.id, trial, sample))
            if kept is not None and kept.signature is not None:
                return kept
            rollout = await self._run(task, trial, sample)
            fresh = Candidate(
                signature=state_signature(rollout), result=self._line(rollout, task, trial, sample)
            )
            append_jsonl(self.samples_file, fresh.model_dump_json())
            return fresh

        candidates = await asyncio.gather(*(candidate(s) for s in range(1, self.config.samples + 1)))
        line = majority_vote(candidates, self.config.samples)
        append_result(self.results_file, line)
        return line

    async def _rollout(self, task: TaskPublic, trial: int, sample: int) -> TrialResult:
        return self._line(await self._run(task, trial, sample), task, trial, sample)

    @staticmethod
    def _line(rollout: RolloutResult, task: TaskPublic, trial: int, sample: int) -> TrialResult:
        return rollout.to_trial(split=task.split, trial=trial, sample=sample, domain=task.domain)

    async def _run(self, task: TaskPublic, trial: int, sample: int) -> RolloutResult:
        """One rollout, rerun while it ends in a backend error (`trainer.retry`)."""
        rollout_config = self.config.rollout_config(seed=trial)

        async def attempt(number: int) -> RolloutResult:
            self.summary.retries += 1 if number else 0
            async with self.semaphore:
                if self.stop is not None:
                    raise _Stopped
                self.running += 1
                self.summary.peak_running = max(self.summary.peak_running, self.running)
                self._update()
                try:
                    result = await run_rollout(self.client, self.policy, task.id, rollout_config)
                finally:
                    self.running -= 1
            self.summary.rollouts += 1
            return result

        result, _ = await run_with_retries(self.config, attempt)
        self._update()
        return result

    # -- progress --------------------------------------------------------------------------------------------

    def progress_bar(self, console: Console, show: bool) -> Progress:
        """The Rich progress bar: done / running / backend errors / ETA / running pass rate."""
        self._progress = Progress(*progress_columns(), console=console, disable=not show)
        self._bar = self._progress.add_task(
            policy_label(self.config.policy),
            total=self.summary.planned,
            completed=self.summary.skipped,
            running=0,
            errors="",
            rate="",
        )
        self._update()
        return self._progress

    def _update(self, advance: int = 0) -> None:
        if self._progress is None and self.plain is None:
            return
        rates = [sum(v) / len(v) for v in self.outcomes.values() if v]
        label = "pass@1" if self.config.samples == 1 else f"best-of-{self.config.samples}"
        rate = f"{label} {sum(rates) / len(rates):.1%}" if rates else f"{label} —"
        errors = self.summary.backend_errors + self.summary.policy_errors
        if self.plain is not None:
            self.plain.update(advance=advance, running=self.running, errors=errors, rate=rate)
        if self._progress is None:
            return
        self._progress.update(
            self._bar,
            advance=advance,
            running=self.running,
            errors=f" · {errors} errors" if errors else "",  # backend and policy errors, once there is one
            rate=rate,
        )


#: The widest policy label on the progress line: with the bar, the counts and the ETA it fits 80 columns.
POLICY_LABEL_WIDTH = 18


def policy_label(spec: str) -> str:
    """The policy as the progress line names it: the spec without its options and endpoint, kept short."""
    label = spec.split("?")[0].split("@")[0]
    if len(label) > POLICY_LABEL_WIDTH:
        kind, _, target = label.partition(":")
        label = f"{kind}:{target.rsplit('/', 1)[-1]}" if target else label
    return label[:POLICY_LABEL_WIDTH]


def progress_columns() -> tuple[ProgressColumn, ...]:
    """The progress line: policy, bar, done/planned, running, backend errors (once any), pass rate, ETA.

    Sized for 80 columns: `openai:gpt-4o-mini ━━╸  120/480 4 running · 2 errors · pass@1 52.5% 0:03:10`.
    """
    return (
        TextColumn("[bold]{task.description}"),
        BarColumn(bar_width=4),
        MofNCompleteColumn(),
        TextColumn("{task.fields[running]} running{task.fields[errors]} · {task.fields[rate]}"),
        TimeRemainingColumn(),
    )
