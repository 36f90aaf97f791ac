"""`groundstate train local`: GRPO on one machine with TRL's `GRPOTrainer`, episodes played on the server.

TRL owns the optimisation (advantages, the clipped policy-gradient loss, AdamW, gradient accumulation); we
own the data. `GRPOTrainer` calls our `rollout_func` once per step with the step's prompts (each of the
step's task ids repeated G times); it runs G episodes of every task through `trainer.rollout` with a
`local` policy generating with the very model being trained (`trainer.policies.local.wrap_model`), and
hands back each episode's exact token ids:

    prompt_ids       the first turn's prompt (system policy, tools, the user's first message)
    completion_ids   everything after it: generated turns, and the tool results and user replies between them
    env_mask         1 on generated tokens, 0 on the environment's tokens (TRL multiplies its loss mask by it)
    logprobs         the sampling log-probs of generated tokens (0 on environment tokens)

The reward is the server's (read by a reward function from the `episode_reward` field). Groups follow
`trainer.groups`: uninformative groups are replaced from the pool, and slots left without one are dropped
(all-zero `env_mask`, reward None: TRL gives them zero advantage and they add no token to the loss);
backend errors are rerun and never reach the loss.

The recipe, and what this command does with it on a CPU:

| recipe | here |
|---|---|
| GRPO, 8 episodes per task, 18 tasks per step | `--episodes-per-task 8 --tasks-per-step 18` (defaults) |
| token-mean loss | TRL `loss_type="dapo"`: summed over the step's generated tokens, divided by their count |
| AdamW, lr 1e-6, weight decay 0, constant schedule | same (`--lr` to change the rate) |
| no KL | `beta=0`: no reference model |
| zero-variance groups replaced | `--replacements` other tasks per slot, then dropped; both counted |
| backend errors retried, never failures | `--retries` reruns; an abandoned group is dropped |

Outputs in `--out`: `train_log.jsonl` (one `StepLog` per step), `checkpoints/step-NNNNN/` every
`--save-every` steps and `final/` (transformers model directories: `--policy local:OUT/final`), `run.json`.
With `--curriculum adaptive`, `trainer.curriculum` chooses each step's tasks instead of TRL's shuffled
order (the prompts TRL hands over then only say how many slots there are); its state goes to
`curriculum.json` in the run and in every checkpoint, one `StepRecord` per step to `curriculum.jsonl`, and
a run started from a checkpoint (`--model OUT/checkpoints/step-N`) continues that checkpoint's curriculum.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import random
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, model_validator

from shared.client import DEFAULT_SERVER_URL, AsyncGroundstateClient
from shared.models import MAX_MINT
from shared.strict_model import StrictModel
from trainer.credit import MAX_CREDIT_WEIGHT, shaped_reward
from trainer.curriculum import CURRICULUM_FILE, CURRICULUM_LOG, Curriculum, CurriculumSettings
from trainer.groups import GroupSettings, StepGroups, collect_groups
from trainer.minting import Minter, MintingError, families_of
from trainer.policies.local import (
    LocalModel,
    LocalOptions,
    LocalPolicy,
    portable_target,
    read_model,
    resolve_model,
    wrap_model,
)
from trainer.policies.tool_formats import ToolFormatName
from trainer.retry import EpisodeLimits, RetrySettings
from trainer.rollout_models import RolloutResult
from trainer.selection import Pool

__all__ = [
    "LOG_FILE",
    "LocalTrainConfig",
    "StepLog",
    "TrainError",
    "TrainSummary",
    "train_local",
    "trl_batch",
]

LOG_FILE = "train_log.jsonl"
"""One JSON line per optimizer step, inside the output directory."""


class TrainError(RuntimeError):
    """A training run that cannot start as asked (pool too small, tasks the server lacks, bad batch shape)."""


class LocalTrainConfig(EpisodeLimits, RetrySettings):
    """A single-machine GRPO run (episode limits and retries inherited, as for `eval` and Verl)."""

    pool: Path | None = None
    """The training pool (`groundstate select ... --out POOL.json`): train-split tasks only. Without one,
    `tasks` or `domains` name the train tasks directly (no probe, no selection)."""
    tasks: list[str] = Field(default_factory=list)
    """Train task ids to train on, instead of a pool."""
    domains: list[str] = Field(default_factory=list)
    """Domains whose every train task to train on, instead of a pool (e.g. `starter`)."""
    out: Path
    """The output directory."""
    steps: int = Field(ge=1)
    """Optimizer steps."""
    model: str = "smollm2"
    """What `local:` loads: `smollm2` or a model directory (e.g. a checkpoint of an earlier run)."""
    server: str = DEFAULT_SERVER_URL
    """The environment server."""
    tasks_per_step: int = Field(default=18, ge=1)
    """Groups (tasks) per step."""
    episodes_per_task: int = Field(default=8, ge=2)
    """Episodes per group (G)."""
    learning_rate: float = Field(default=1e-6, gt=0)
    """AdamW learning rate (constant)."""
    weight_decay: float = Field(default=0.0, ge=0)
    """AdamW weight decay."""
    temperature: float = Field(default=1.0, gt=0)
    """Sampling temperature of the episodes (TRL rescales the logits by it when it recomputes log-probs)."""
    max_new_tokens: int = Field(default=256, ge=1)
    """Cap on generated tokens per turn."""
    micro_batch: int = Field(default=4, ge=1)
    """Episodes per forward/backward pass (gradients accumulate over the step); divides tasks x episodes."""
    replacements: int = Field(default=2, ge=0)
    """Other tasks tried per slot whose group has zero reward variance or cannot complete."""
    concurrency: int = Field(default=1, ge=1)
    """Episodes running at once."""
    save_every: int = Field(default=0, ge=0)
    """Save a checkpoint every N steps (0: only `final/`)."""
    credit_weight: float = Field(default=0.0, ge=0, le=MAX_CREDIT_WEIGHT)
    """0: train on the server's binary reward. Above 0 (an opt-in), a failed episode of a mixed group earns
    this share of its partial progress by per-call credit (`trainer.credit`)."""
    curriculum: Literal["static", "adaptive"] = "static"
    """`static`: TRL draws the pool's tasks in shuffled order; `adaptive`: `trainer.curriculum` draws each
    step from tasks the current policy is likely to split on (a model's `curriculum.json` resumes it)."""
    mint_per_step: int = Field(default=0, ge=0, le=MAX_MINT)
    """With the adaptive curriculum: when its band holds fewer tasks than a step has slots, ask the server
    for up to this many fresh validated tasks from the families in the band before the step (0: never)."""
    seed: int = 0
    """Seeds torch's sampling, TRL's task order and the replacement draws."""
    threads: int | None = Field(default=None, ge=1)
    """torch CPU threads; torch's default if null."""
    tool_format: ToolFormatName = "auto"
    """How the model writes tool calls; `auto` reads its chat template (docs/training/chat-formats.md)."""

    @model_validator(mode="after")
    def _one_source_of_tasks(self) -> LocalTrainConfig:
        if (self.pool is None) == (not self.tasks and not self.domains):
            raise ValueError("pool: give a pool (--pool), or tasks (--tasks) and/or domains (--domains)")
        return self

    @model_validator(mode="after")
    def _minting_needs_the_curriculum(self) -> LocalTrainConfig:
        if self.mint_per_step and self.curriculum != "adaptive":
            raise ValueError("mint_per_step: minting feeds the adaptive curriculum (--curriculum adaptive)")
        return self

    def group_settings(self) -> GroupSettings:
        """The group collection settings of this run."""
        return GroupSettings(
            episodes=self.episodes_per_task,
            replacements=self.replacements,
            retries=self.retries,
            retry_backoff_s=self.retry_backoff_s,
            max_turns=self.max_turns,
            timeout_s=self.timeout_s,
            user=self.user,
            concurrency=self.concurrency,
        )


class StepTimes(StrictModel):
    """Where one step's wall time went, in seconds."""

    generation_s: float
    """The policy producing turns (summed over episodes)."""
    tools_s: float
    """Tool calls on the server."""
    user_s: float
    """The simulated user's replies."""
    scoring_s: float
    """Scoring episodes."""
    start_s: float
    """Starting episodes."""
    rollout_s: float
    """Wall time of collecting the step's groups (all of the above, and bookkeeping)."""
    update_s: float
    """Wall time of the rest of the step: TRL's log-prob pass, loss, backward and the AdamW update."""
    step_s: float
    """Wall time of the whole step."""


class StepLog(StrictModel):
    """One optimizer step, as written to `train_log.jsonl`."""

    step: int
    """1-based step number."""
    reward_mean: float | None
    """Mean reward of every episode scored this step, replaced groups included: the policy's success rate."""
    loss: float | None
    """TRL's loss of the step (token-mean clipped policy-gradient objective; about 0 on-policy, by design)."""
    grad_norm: float | None
    """Gradient norm before clipping."""
    groups: int
    """Slots (tasks) in the step."""
    informative_groups: int
    """Slots with a group of nonzero reward variance: the only groups that move the weights."""
    replaced: int
    """Slots whose first group was uninformative (or failed) and that drew another task from the pool."""
    dropped: int
    """Slots left without an informative group: masked out of the loss."""
    uninformative: int
    """Zero-variance groups seen (replaced or dropped), over all tries."""
    incomplete: int
    """Groups abandoned because an episode kept ending in backend errors."""
    backend_errors: int
    """Episodes that ended in a backend error (rerun; never counted as failures, never in the loss)."""
    episodes: int
    """Episodes scored this step, over all tries."""
    trained_tokens: int
    """Generated tokens in the loss (env_mask 1) of the kept groups."""
    env_tokens: int
    """Environment tokens (tool results, user replies, template markup) of the kept groups, masked out."""
    env_share: float
    """Share of the step's wall time spent in the environment (start, tools, user, scoring)."""
    times: StepTimes
    """The step's time by part."""


class TrainSummary(StrictModel):
    """What a run did."""

    steps: int
    """Optimizer steps run."""
    wall_s: float
    """Wall-clock seconds, model loading included."""
    final: Path
    """The final model directory (`--policy local:<final>`)."""
    log: Path
    """The step log."""


def _logprobs(result: RolloutResult) -> list[float]:
    """Per-token sampling log-probs aligned with `token_ids()` (0 on environment tokens)."""
    values: list[float] = []
    for turn in result.turns:
        values += [0.0] * len(turn.context_ids or [])
        values += list(turn.logprobs or [0.0] * len(turn.token_ids or []))
    return values


def trl_batch(
    step: StepGroups, episodes: int, filler: int, credit_weight: float = 0.0
) -> dict[str, list[Any]]:
    """The `rollout_func` output for TRL: G rows per slot, in slot order.

    Rows of an informative group carry the episode's tokens: `prompt_ids` is its first turn's prompt,
    `completion_ids` the rest of the sequence, `env_mask` 0 on environment tokens. Rows of a dropped slot are
    one `filler` token with `env_mask` 0 and reward None: TRL leaves them out of the baseline, gives them
    zero advantage, and they add nothing to the token count of the loss.

    Args:
        step: The step's groups.
        episodes: G.
        filler: A token id for the rows of dropped slots (the end-of-sequence token).
        credit_weight: 0 for the binary reward; else a failure's share of partial progress
            (`trainer.credit.shaped_reward`), for informative groups only.
    """
    batch: dict[str, list[Any]] = {
        k: []
        for k in ("prompt_ids", "completion_ids", "logprobs", "env_mask", "episode_reward", "episode_task")
    }

    def row(prompt: list[int], completion: list[int], mask: list[int], logprobs: list[float]) -> None:
        batch["prompt_ids"].append(prompt)
        batch["completion_ids"].append(completion)
        batch["env_mask"].append(mask)
        batch["logprobs"].append(logprobs)

    for group in step.groups:
        for i in range(episodes):
            result = group.rollouts[i] if group.informative else None
            if result is None or not result.turns:
                row([filler], [filler], [0], [0.0])
                batch["episode_reward"].append(None if result is None else float(result.reward or 0))
                batch["episode_task"].append(group.task_id)
                continue
            ids, mask, logprobs = result.token_ids(), result.loss_mask(), _logprobs(result)
            cut = len(result.turns[0].context_ids or [])
            row(ids[:cut], ids[cut:], mask[cut:], logprobs[cut:])
            batch["episode_reward"].append(shaped_reward(result, credit_weight))
            batch["episode_task"].append(result.task_id)
    return batch


def episode_reward(
    prompts: list[Any], completions: list[Any], episode_reward: list[float | None], **_: Any
) -> list[float | None]:
    """TRL reward function: the server's reward, carried in from `rollout_func` (None for dropped rows)."""
    return list(episode_reward)


class _Rollouts:
    """TRL's `rollout_func`: one group of G episodes per task of the step, with the model being trained."""

    def __init__(
        self,
        config: LocalTrainConfig,
        loaded: LocalModel,
        pool: list[str],
        api_key: str | None,
        curriculum: Curriculum | None = None,
        minter: Minter | None = None,
    ) -> None:
        self.config, self.loaded, self.pool, self.api_key = config, loaded, pool, api_key
        self.curriculum, self.minter = curriculum, minter
        self.policy = LocalPolicy(
            config.model,
            LocalOptions(
                max_new_tokens=config.max_new_tokens,
                temperature=config.temperature,
                top_p=1.0,
                tool_format=config.tool_format,
            ),
            loaded=loaded,
        )
        loaded.chat_format(config.tool_format)  # an unsupported template is refused before any episode
        self.rng = random.Random(config.seed)
        self.last: StepGroups | None = None
        self.last_batch: dict[str, list[Any]] | None = None

    def __call__(self, prompts: list[Any], trainer: Any) -> dict[str, list[Any]]:
        """Play the step's groups; `prompts` holds each task id G times in a row."""
        episodes = self.config.episodes_per_task
        slots = [str(p) for p in prompts[::episodes]]
        refills = self.pool
        if self.curriculum is not None:
            if self.minter is not None:
                asyncio.run(self._top_up(self.curriculum, self.minter, len(slots)))
            slots = self.curriculum.draw(len(slots))
            refills = self.curriculum.refills(slots)
        model = self.loaded.model
        training = model.training
        model.eval()
        self.loaded.forget_prefixes()  # the weights changed since the prefixes were cached
        try:
            step = asyncio.run(self._collect(slots, refills))
        finally:
            model.train(training)
        if self.curriculum is not None:
            self._record(self.curriculum, step)
        self.last = step
        self.last_batch = trl_batch(step, episodes, self.loaded.eos_ids[0], self.config.credit_weight)
        return self.last_batch

    def _record(self, curriculum: Curriculum, step: StepGroups) -> None:
        """Fold the step's groups into the curriculum; log the step and save the state."""
        record = curriculum.update(step.tries)
        with (self.config.out / CURRICULUM_LOG).open("a", encoding="utf-8") as handle:
            handle.write(record.model_dump_json() + "\n")
        curriculum.save(self.config.out / CURRICULUM_FILE)

    def _client(self) -> AsyncGroundstateClient:
        connections = max(8, 2 * self.config.concurrency)
        return AsyncGroundstateClient(self.config.server, api_key=self.api_key, max_connections=connections)

    async def _collect(self, slots: list[str], refills: list[str]) -> StepGroups:
        async with self._client() as client:
            return await collect_groups(
                client, self.policy, slots, refills, self.config.group_settings(), self.rng
            )

    async def _top_up(self, curriculum: Curriculum, minter: Minter, slots: int) -> None:
        """Mint fresh tasks into a thin band before the step (reported in the step's curriculum record)."""
        async with self._client() as client:
            await minter.top_up(curriculum, slots, client)


def _step_log(
    step_no: int, groups: StepGroups, batch: dict[str, list[Any]], logs: dict[str, Any], step_s: float
) -> StepLog:
    timing = groups.timing
    masks = [m for m, r in zip(batch["env_mask"], batch["episode_reward"], strict=True) if r is not None]
    trained = sum(sum(m) for m in masks)
    total = sum(len(m) for m in masks)
    return StepLog(
        step=step_no,
        reward_mean=groups.reward_mean,
        loss=logs.get("loss"),
        grad_norm=logs.get("grad_norm"),
        groups=len(groups.groups),
        informative_groups=sum(g.informative for g in groups.groups),
        replaced=groups.replaced,
        dropped=groups.dropped,
        uninformative=groups.uninformative,
        incomplete=groups.incomplete,
        backend_errors=groups.backend_errors,
        episodes=groups.episodes,
        trained_tokens=trained,
        env_tokens=total - trained,
        env_share=round(timing.env_s / step_s, 4) if step_s > 0 else 0.0,
        times=StepTimes(
            generation_s=round(timing.generation_s, 3),
            tools_s=round(timing.tools_s, 3),
            user_s=round(timing.user_s, 3),
            scoring_s=round(timing.scoring_s, 3),
            start_s=round(timing.start_s, 3),
            rollout_s=round(groups.wall_s, 3),
            update_s=round(max(0.0, step_s - groups.wall_s), 3),
            step_s=round(step_s, 3),
        ),
    )


def _pool_tasks(config: LocalTrainConfig, served: dict[str, str]) -> list[str]:
    """The run's train tasks: the pool's, or those `tasks` and `domains` name among the server's."""
    if config.pool is not None:
        try:
            pool = Pool.read(config.pool)
        except (OSError, ValueError) as exc:
            raise TrainError(f"cannot read the pool {config.pool}: {exc}") from exc
        tasks, source = sorted({t.task_id for t in pool.tasks}), f"the pool {config.pool}"
        hint = "lower it or keep more bands in `groundstate select`"
    else:
        known = set(served.values())
        unknown = sorted(set(config.domains) - known)
        if unknown:
            raise TrainError(f"no train task of domain {', '.join(unknown)} on {config.server} (it has: "
                             f"{', '.join(sorted(known))})")  # fmt: skip
        tasks = sorted(set(config.tasks) | {t for t, d in served.items() if d in config.domains})
        source, hint = "--tasks/--domains", "lower it or name more tasks"
    if len(tasks) < config.tasks_per_step:
        raise TrainError(
            f"{source} holds {len(tasks)} tasks, fewer than --tasks-per-step {config.tasks_per_step}: {hint}"
        )
    return tasks


def _curriculum(config: LocalTrainConfig, tasks: list[str], served: dict[str, str]) -> Curriculum | None:
    """The adaptive curriculum: the starting checkpoint's, continued, or a fresh one over the pool.

    A resumed curriculum may hold minted tasks a server with another store no longer serves: they are
    retired (with their history kept) rather than drawn into episodes that cannot start.
    """
    if config.curriculum == "static":
        return None
    saved = Path(config.model) / CURRICULUM_FILE
    if saved.is_file():
        curriculum = Curriculum.load(saved)
        curriculum.add(tasks)
        curriculum.retire([t for t in curriculum.active() if t not in served])
        return curriculum
    settings = CurriculumSettings(group=config.episodes_per_task, seed=config.seed)
    return Curriculum.start(tasks, settings)


async def _served_tasks(config: LocalTrainConfig, api_key: str | None) -> dict[str, str]:
    """The server's train tasks, with their domains."""
    async with AsyncGroundstateClient(config.server, api_key=api_key) as client:
        return {t.id: t.domain for t in await client.tasks(split="train")}


def _check_served(config: LocalTrainConfig, tasks: list[str], served: dict[str, str]) -> None:
    """A task the server does not serve as a train task stops the run (a test task never trains)."""
    missing = [t for t in tasks if t not in served]
    if missing:
        raise TrainError(f"the server at {config.server} has no train task {', '.join(missing[:5])}")


async def _minter(config: LocalTrainConfig, domains: list[str], api_key: str | None) -> Minter | None:
    """The minter of a run that asked for one, over every family the server offers for the pool's domains."""
    if not config.mint_per_step:
        return None
    async with AsyncGroundstateClient(config.server, api_key=api_key) as client:
        details = [await client.domain(domain) for domain in domains]
    try:
        families = families_of(details)
    except MintingError as exc:
        raise TrainError(str(exc)) from None
    return Minter(per_step=config.mint_per_step, families=families, seed=config.seed)


def train_local(
    config: LocalTrainConfig,
    *,
    api_key: str | None = None,
    on_step: Callable[[StepLog], None] | None = None,
) -> TrainSummary:
    """Run GRPO with TRL on this machine.

    Args:
        config: The run.
        api_key: The server's bearer key, if it needs one.
        on_step: Called with each step's log line (progress display).

    Returns:
        What the run did and where its outputs are.

    Raises:
        TrainError: A pool smaller than a step, tasks the server does not serve, or a micro-batch that does
            not divide the step.
        PolicySpecError: No model at `config.model`, or the `train` extra is missing.
    """
    started = time.monotonic()
    resolve_model(config.model)
    rows = config.tasks_per_step * config.episodes_per_task
    if rows % config.micro_batch:
        raise TrainError(
            f"--micro-batch {config.micro_batch} must divide tasks-per-step x episodes-per-task = {rows}"
        )
    served = asyncio.run(_served_tasks(config, api_key))
    tasks = _pool_tasks(config, served)
    _check_served(config, tasks, served)
    minter = asyncio.run(_minter(config, sorted({served[t] for t in tasks}), api_key))

    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    import torch
    from datasets import Dataset
    from transformers import TrainerCallback
    from transformers.trainer_callback import PrinterCallback
    from trl import GRPOConfig, GRPOTrainer

    # Rows of dropped slots return a None reward by design; TRL would warn about each of them every step.
    logging.getLogger("trl.trainer.grpo_trainer").setLevel(logging.ERROR)

    torch.manual_seed(config.seed)
    model, tokenizer = read_model(config.model, config.threads)
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    name = config.model if config.model == "smollm2" else Path(config.model).name
    curriculum = _curriculum(config, tasks, served)
    rollouts = _Rollouts(config, wrap_model(model, tokenizer, name), tasks, api_key, curriculum, minter)
    out = config.out
    out.mkdir(parents=True, exist_ok=True)
    if curriculum is not None:
        (out / CURRICULUM_LOG).touch()
    (out / "run.json").write_text(
        json.dumps(
            {
                "config": {**config.model_dump(mode="json"), "model": portable_target(config.model)},
                "pool_tasks": tasks,
            },
            indent=2,
        )
        + "\n"
    )
    log_path = out / LOG_FILE
    log_path.write_text("")

    def save(directory: Path) -> None:
        model.save_pretrained(directory)
        tokenizer.save_pretrained(directory)
        if curriculum is not None:
            curriculum.save(directory / CURRICULUM_FILE)

    class _Logger(TrainerCallback):  # type: ignore[misc]
        def __init__(self) -> None:
            self.begun = time.monotonic()
            self.step_s = 0.0

        def on_step_begin(self, args: Any, state: Any, control: Any, **_: Any) -> None:
            self.begun = time.monotonic()

        def on_step_end(self, args: Any, state: Any, control: Any, **_: Any) -> None:
            self.step_s = time.monotonic() - self.begun
            if config.save_every and state.global_step % config.save_every == 0:
                save(out / "checkpoints" / f"step-{state.global_step:05d}")

        def on_log(self, args: Any, state: Any, control: Any, logs: Any = None, **_: Any) -> None:
            if not logs or "loss" not in logs or rollouts.last is None or rollouts.last_batch is None:
                return
            line = _step_log(state.global_step, rollouts.last, rollouts.last_batch, logs, self.step_s)
            with log_path.open("a", encoding="utf-8") as handle:
                handle.write(line.model_dump_json() + "\n")
            if on_step is not None:
                on_step(line)

    args = GRPOConfig(
        output_dir=str(out / "trl"),
        max_steps=config.steps,
        num_generations=config.episodes_per_task,
        per_device_train_batch_size=config.micro_batch,
        gradient_accumulation_steps=rows // config.micro_batch,
        num_iterations=1,
        learning_rate=config.learning_rate,
        weight_decay=config.weight_decay,
        lr_scheduler_type="constant",
        optim="adamw_torch",
        beta=0.0,
        loss_type="dapo",
        temperature=config.temperature,
        logging_steps=1,
        save_strategy="no",
        report_to="none",
        use_cpu=True,
        bf16=False,
        seed=config.seed,
        disable_tqdm=True,
        log_completions=False,
    )
    trainer = GRPOTrainer(
        model=model,
        reward_funcs=[episode_reward],
        args=args,
        train_dataset=Dataset.from_list([{"prompt": t} for t in tasks]),
        processing_class=tokenizer,
        rollout_func=rollouts,
        callbacks=[_Logger()],
    )
    trainer.remove_callback(PrinterCallback)  # our step log replaces its raw dicts on stdout
    trainer.train()
    final = out / "final"
    save(final)
    return TrainSummary(
        steps=int(trainer.state.global_step),
        wall_s=round(time.monotonic() - started, 1),
        final=final,
        log=log_path,
    )
