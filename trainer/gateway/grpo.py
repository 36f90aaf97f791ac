"""One TRL GRPO step on gateway samples: the recorded episodes of each task are its group.

TRL's `GRPOTrainer` takes the rows from a `rollout_func` (the path `groundstate train local` uses): here the
rows are the episodes' `episode_row` samples, already played by the agent program, token for token as the
model sampled them, with `env_mask` 0 on the environment's tokens and the server's reward.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

from trainer.gateway.samples import TokenSample
from trainer.train_local import episode_reward

__all__ = ["grpo_step", "trl_rows"]


def trl_rows(groups: dict[str, list[TokenSample]], slots: list[str]) -> dict[str, list[Any]]:
    """The `rollout_func` output for the tasks in `slots` (each once per group, in TRL's order).

    Raises:
        KeyError: A slot names a task with no recorded group.
    """
    batch: dict[str, list[Any]] = {
        k: []
        for k in ("prompt_ids", "completion_ids", "logprobs", "env_mask", "episode_reward", "episode_task")
    }
    for task in slots:
        for sample in groups[task]:
            batch["prompt_ids"].append(sample.prompt_ids)
            batch["completion_ids"].append(sample.completion_ids)
            batch["logprobs"].append(sample.logprobs)
            batch["env_mask"].append(sample.mask)
            batch["episode_reward"].append(sample.reward)
            batch["episode_task"].append(task)
    return batch


def grpo_step(
    model: Any, tokenizer: Any, groups: dict[str, list[TokenSample]], out: Path, learning_rate: float = 1e-5
) -> dict[str, Any]:
    """Run one GRPO step on CPU over the groups (task id -> its episodes' samples, the same count each).

    Returns:
        TRL's log of the step (loss, reward, ...).

    Raises:
        ValueError: The groups are empty or of different sizes.
    """
    sizes = {len(g) for g in groups.values()}
    if len(sizes) != 1 or 0 in sizes:
        raise ValueError(f"every task needs the same number (>0) of episodes; got {sorted(sizes)}")
    (size,) = sizes
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    logging.getLogger("trl.trainer.grpo_trainer").setLevel(logging.ERROR)
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    rows = size * len(groups)

    def rollout_func(prompts: list[Any], trainer: Any) -> dict[str, list[Any]]:
        return trl_rows(groups, [str(p) for p in prompts[::size]])

    args = GRPOConfig(
        output_dir=str(out),
        max_steps=1,
        num_generations=size,
        per_device_train_batch_size=rows,
        gradient_accumulation_steps=1,
        num_iterations=1,
        learning_rate=learning_rate,
        lr_scheduler_type="constant",
        optim="adamw_torch",
        beta=0.0,
        loss_type="dapo",
        logging_steps=1,
        save_strategy="no",
        report_to="none",
        use_cpu=True,
        bf16=False,
        disable_tqdm=True,
        log_completions=False,
    )
    trainer = GRPOTrainer(
        model=model,
        reward_funcs=[episode_reward],
        args=args,
        train_dataset=Dataset.from_list([{"prompt": t} for t in groups]),
        processing_class=tokenizer,
        rollout_func=rollout_func,
    )
    trainer.train()
    logs = [entry for entry in trainer.state.log_history if "loss" in entry]
    return dict(logs[-1]) if logs else {}
