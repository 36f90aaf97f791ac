"""A supervised warm start: a few steps on the gold first call of `train` tasks, before GRPO.

GRPO moves the weights only through groups whose episodes disagree. A model that never writes a valid tool
call (SmolLM2-135M, given the Hermes tool prompt, wrote none in 99 samples) gives every group reward 0 and
RL nothing to follow. A short supervised pass on each train task's first gold call teaches the call format
and little else: the rest of an episode (a second call after a tool result, the closing message, when to
stop) is left to RL. The examples are rendered by `ChatFormat`, the module the policies and both training
loops render through, so the model is tuned on exactly the tokens it is later sampled and evaluated on.
A plain loop rather than TRL's `SFTTrainer`: the examples are a few dozen pre-tokenized (prompt, target)
pairs, and `SFTTrainer` would re-render them with its own template handling.

Only `train` tasks: the benchmark's `test` tasks never enter training.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import Field

from shared.client import GroundstateClient
from shared.strict_model import StrictModel
from shared.tasks import Task
from trainer.policies.base import Message, ToolCall, Turn
from trainer.policies.chat_format import ChatFormat, IncrementalRenderError
from trainer.policies.tool_formats import ToolFormatName

__all__ = [
    "WarmStartConfig",
    "WarmStartError",
    "WarmStartSummary",
    "chosen_tasks",
    "collect_examples",
    "gold_first_turn",
    "warm_start",
]


class WarmStartError(ValueError):
    """The warm start cannot run as asked (no train task, a test task named)."""


class WarmStartConfig(StrictModel):
    """What `groundstate train warm-start` runs."""

    server: str
    """The environment server's base URL (it renders each task's prompt and holds its gold calls)."""
    out: Path
    """Where the tuned model is saved (a transformers model directory with its tokenizer)."""
    model: str = "smollm2"
    """`smollm2` or a transformers model directory."""
    domains: list[str] = Field(default_factory=list)
    """Take every `train` action task of these domains (all domains if empty and `tasks` is empty)."""
    tasks: list[str] = Field(default_factory=list)
    """Or exactly these task ids (each must be a `train` task)."""
    epochs: int = Field(default=1, ge=1)
    """Passes over the examples, each in a fresh shuffled order."""
    learning_rate: float = Field(default=3e-5, gt=0.0)
    """AdamW learning rate (constant, weight decay 0, one example per step)."""
    seed: int = 0
    """Seed of the example order."""
    threads: int | None = Field(default=None, ge=1)
    """torch CPU threads."""
    tool_format: ToolFormatName = "auto"
    """The tool-call format the targets are written in; `auto` reads the model's chat template."""


class WarmStartSummary(StrictModel):
    """What a warm start did."""

    examples: int
    """(prompt, gold first call) pairs, one per task."""
    steps: int
    """Optimizer steps (examples × epochs)."""
    epoch_losses: list[float]
    """Mean cross-entropy of the target tokens per epoch (before each step's update)."""
    tasks: list[str]
    """The tasks the examples came from."""
    out: Path
    """The saved model directory: `--model DIR` or `local:DIR`."""
    wall_s: float


@dataclass(frozen=True)
class Example:
    """The first turn's prompt, and the gold turn's tokens (the only ones in the loss)."""

    task_id: str
    prompt_ids: list[int]
    target_ids: list[int]


def gold_first_turn(
    fmt: ChatFormat, messages: list[Message], tools: list[dict[str, Any]], task: Task
) -> Example:
    """The first turn of `task` as the model should have written it: its first gold call, then end of turn.

    The target is the chat template's own rendering of that assistant turn (cut after its end-of-turn token),
    so it is what `ChatFormat.turn` parses back into the same call.
    """
    if not task.gold_actions:
        raise WarmStartError(f"{task.id} has no gold call to learn from")
    gold = task.gold_actions[0]
    call = ToolCall(id="call_0", name=gold.name, arguments=gold.arguments)
    prompt = fmt.render(messages, tools, generation_prompt=True)
    try:
        target = fmt.assistant_text(messages, tools, Turn(tool_calls=[call]).message())
    except IncrementalRenderError as exc:
        raise WarmStartError(str(exc)) from exc
    return Example(task.id, fmt.encode(prompt), fmt.encode(target))


def collect_examples(client: GroundstateClient, fmt: ChatFormat, tasks: list[Task]) -> list[Example]:
    """One example per task, its prompt exactly as an episode of it starts."""
    examples = []
    for task in tasks:
        started = client.start_episode(task.id)
        try:
            messages: list[Message] = [
                {"role": "system", "content": started.system_prompt},
                {"role": "user", "content": started.first_message},
            ]
            examples.append(gold_first_turn(fmt, messages, started.tools, task))
        finally:
            client.dispose(started.episode_id)
    return examples


def chosen_tasks(client: GroundstateClient, config: WarmStartConfig) -> list[Task]:
    """The train action tasks the config names, each with its gold calls; refuses any test task."""
    if config.tasks:
        ids = config.tasks
    else:
        domains: list[str | None] = list(config.domains) or [None]
        ids = [t.id for d in domains for t in client.tasks(domain=d, split="train") if t.kind == "action"]
    tasks = [client.task(task_id, include_gold=True) for task_id in ids]
    leaked = sorted(t.id for t in tasks if t.split != "train")
    if leaked:
        raise WarmStartError(f"test-split tasks never enter training: {', '.join(leaked)}")
    chosen = [t for t in tasks if isinstance(t, Task) and t.gold_actions]
    if not chosen:
        raise WarmStartError("no train action task with gold calls to learn from")
    return chosen


def warm_start(
    config: WarmStartConfig,
    api_key: str | None = None,
    on_step: Callable[[int, int, float], None] | None = None,
) -> WarmStartSummary:
    """Tune `config.model` on the gold first calls of the chosen train tasks and save it to `config.out`.

    Args:
        config: What to run.
        api_key: The server's bearer key, if it has one.
        on_step: Called after every optimizer step with (step, total steps, that example's loss).
    """
    import torch

    from trainer.policies.local import read_model, wrap_model

    started = time.monotonic()
    with GroundstateClient(config.server, api_key=api_key) as client:
        tasks = chosen_tasks(client, config)  # refuse bad input before the slow model load
        model, tokenizer = read_model(config.model, threads=config.threads)
        fmt = wrap_model(model, tokenizer, "warm-start").chat_format(config.tool_format)
        examples = collect_examples(client, fmt, tasks)
    torch.manual_seed(config.seed)
    optimizer = torch.optim.AdamW(model.parameters(), lr=config.learning_rate, weight_decay=0.0)
    order = random.Random(config.seed)
    total = len(examples) * config.epochs
    epoch_losses: list[float] = []
    model.train()
    for epoch in range(config.epochs):
        batch = examples[:]
        order.shuffle(batch)
        losses = []
        for i, example in enumerate(batch):
            ids = torch.tensor([example.prompt_ids + example.target_ids])
            labels = torch.tensor([[-100] * len(example.prompt_ids) + example.target_ids])
            loss = model(input_ids=ids, labels=labels).loss
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            losses.append(loss.item())
            if on_step is not None:
                on_step(epoch * len(batch) + i + 1, total, losses[-1])
        epoch_losses.append(sum(losses) / len(losses))
    model.eval()
    config.out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(config.out)
    tokenizer.save_pretrained(config.out)
    summary = WarmStartSummary(
        examples=len(examples),
        steps=total,
        epoch_losses=epoch_losses,
        tasks=[e.task_id for e in examples],
        out=config.out,
        wall_s=round(time.monotonic() - started, 1),
    )
    (config.out / "warm_start.json").write_text(
        json.dumps({"config": config.model_dump(mode="json"), **summary.model_dump(mode="json")}, indent=2)
        + "\n"
    )
    return summary
