"""`groundstate train local`: the command line of `trainer.train_local` (GRPO with TRL on this machine)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from shared.client import DEFAULT_SERVER_URL
from shared.errors import ClientError
from trainer.cli_options import ApiKeyOpt, QuietOpt, ServerOpt, ThreadsOpt, ToolFormatOpt, invalid_options
from trainer.policies import PolicySpecError
from trainer.train_local import LocalTrainConfig, StepLog, TrainError, train_local

__all__ = ["local_command"]


def local_command(
    steps: Annotated[int, typer.Option("--steps", min=1, help="Optimizer steps.")],
    out: Annotated[Path, typer.Option("--out", help="Output directory (log, checkpoints, final/).")],
    pool: Annotated[
        Path | None, typer.Option("--pool", help="Training pool from `groundstate select` (JSON).")
    ] = None,
    tasks: Annotated[
        str | None, typer.Option("--tasks", help="Comma-separated train task ids, instead of a pool.")
    ] = None,
    domains: Annotated[
        str | None,
        typer.Option("--domains", help="Comma-separated domains: all their train tasks, instead of a pool."),
    ] = None,
    model: Annotated[
        str, typer.Option("--model", help="smollm2, or a transformers model directory (e.g. a checkpoint).")
    ] = "smollm2",
    server: ServerOpt = DEFAULT_SERVER_URL,
    api_key: ApiKeyOpt = None,
    tasks_per_step: Annotated[int, typer.Option("--tasks-per-step", min=1, help="Groups per step.")] = 18,
    episodes_per_task: Annotated[
        int, typer.Option("--episodes-per-task", min=2, help="Episodes per group (G).")
    ] = 8,
    lr: Annotated[float, typer.Option("--lr", min=0.0, help="AdamW learning rate (constant).")] = 1e-6,
    weight_decay: Annotated[float, typer.Option("--weight-decay", min=0.0, help="AdamW weight decay.")] = 0.0,
    temperature: Annotated[float, typer.Option("--temperature", help="Sampling temperature.")] = 1.0,
    max_new_tokens: Annotated[int, typer.Option("--max-new-tokens", min=1, help="Tokens per turn.")] = 256,
    max_turns: Annotated[int, typer.Option("--max-turns", min=1, help="Policy turns per episode.")] = 30,
    micro_batch: Annotated[
        int, typer.Option("--micro-batch", min=1, help="Episodes per forward/backward pass.")
    ] = 4,
    replacements: Annotated[
        int, typer.Option("--replacements", min=0, help="Tasks tried per slot with a zero-variance group.")
    ] = 2,
    retries: Annotated[int, typer.Option("--retries", min=0, help="Reruns of a backend-error episode.")] = 2,
    concurrency: Annotated[int, typer.Option("--concurrency", min=1, help="Episodes running at once.")] = 1,
    save_every: Annotated[
        int, typer.Option("--save-every", min=0, help="Checkpoint every N steps (0: final only).")
    ] = 0,
    credit_weight: Annotated[
        float,
        typer.Option(
            "--credit-weight",
            min=0.0,
            max=0.5,
            help="0: the binary reward. Above 0 (opt-in): a failed episode of a mixed group earns this share "
            "of its partial progress by per-call credit (trainer.credit).",
        ),
    ] = 0.0,
    curriculum: Annotated[
        str,
        typer.Option(
            "--curriculum",
            help="static: the pool in shuffled order; adaptive: each step's tasks follow the policy's "
            "current success (trainer.curriculum; resumed from the --model checkpoint's curriculum.json).",
        ),
    ] = "static",
    mint_per_step: Annotated[
        int,
        typer.Option(
            "--mint-per-step",
            min=0,
            help="With --curriculum adaptive: when the band holds fewer tasks than a step's slots, have the "
            "server mint up to N fresh validated tasks from the families in the band (0: never).",
        ),
    ] = 0,
    seed: Annotated[int, typer.Option("--seed", help="Seed of sampling, task order, replacements.")] = 0,
    threads: ThreadsOpt = None,
    tool_format: ToolFormatOpt = "auto",
    user: Annotated[str | None, typer.Option("--user", help="Simulated user: scripted or llm.")] = None,
    quiet: QuietOpt = False,
) -> None:
    """Train a local model with GRPO (TRL) on a pool's tasks, or on --tasks/--domains, on the server."""
    try:
        config = LocalTrainConfig.model_validate(
            dict(
                pool=pool,
                tasks=[t.strip() for t in (tasks or "").split(",") if t.strip()],
                domains=[d.strip() for d in (domains or "").split(",") if d.strip()],
                out=out,
                steps=steps,
                model=model,
                server=server,
                tasks_per_step=tasks_per_step,
                episodes_per_task=episodes_per_task,
                learning_rate=lr,
                weight_decay=weight_decay,
                temperature=temperature,
                max_new_tokens=max_new_tokens,
                max_turns=max_turns,
                micro_batch=micro_batch,
                replacements=replacements,
                retries=retries,
                concurrency=concurrency,
                save_every=save_every,
                credit_weight=credit_weight,
                curriculum=curriculum,
                mint_per_step=mint_per_step,
                seed=seed,
                threads=threads,
                tool_format=tool_format,
                user=user,
            )
        )
    except ValidationError as exc:
        raise invalid_options(exc) from None
    console = Console(stderr=True)
    progress = Progress(
        TextColumn("[bold]train local"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[status]}"),
        TimeElapsedColumn(),
        console=console,
        disable=quiet,
    )
    bar = progress.add_task("steps", total=steps, status="loading the model")

    def show(line: StepLog) -> None:
        reward = "—" if line.reward_mean is None else f"{line.reward_mean:.3f}"
        loss = "—" if line.loss is None else f"{line.loss:+.4f}"
        progress.update(
            bar,
            completed=line.step,
            status=f"reward {reward}  loss {loss}  informative {line.informative_groups}/{line.groups}  "
            f"env {line.env_share:.0%}  {line.times.step_s:.0f} s/step",
        )
        if quiet:
            typer.echo(line.model_dump_json())

    try:
        with progress:
            summary = train_local(config, api_key=api_key, on_step=show)
    except (TrainError, PolicySpecError, ClientError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from exc
    typer.echo(
        f"{summary.steps} steps in {summary.wall_s:.0f} s; log {summary.log}; "
        f"evaluate with: groundstate eval --policy local:{summary.final}"
    )
