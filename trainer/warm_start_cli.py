"""`groundstate train warm-start`: the command line of `trainer.warm_start` (supervised steps before GRPO)."""

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
from trainer.warm_start import WarmStartConfig, WarmStartError, warm_start

__all__ = ["warm_start_command"]


def warm_start_command(
    out: Annotated[Path, typer.Option("--out", help="Where to save the tuned model (a model directory).")],
    model: Annotated[
        str, typer.Option("--model", help="smollm2, or a transformers model directory.")
    ] = "smollm2",
    domains: Annotated[
        list[str] | None, typer.Option("--domain", help="Every train action task of this domain (repeat).")
    ] = None,
    tasks: Annotated[
        list[str] | None, typer.Option("--task", help="Or exactly this train task (repeat).")
    ] = None,
    epochs: Annotated[int, typer.Option("--epochs", min=1, help="Passes over the examples.")] = 1,
    lr: Annotated[float, typer.Option("--lr", help="AdamW learning rate (constant).")] = 3e-5,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the example order.")] = 0,
    threads: ThreadsOpt = None,
    tool_format: ToolFormatOpt = "auto",
    server: ServerOpt = DEFAULT_SERVER_URL,
    api_key: ApiKeyOpt = None,
    quiet: QuietOpt = False,
) -> None:
    """Tune a model on the gold first tool call of train tasks, so that GRPO has successes to learn from."""
    try:
        config = WarmStartConfig(
            server=server, out=out, model=model, domains=domains or [], tasks=tasks or [], epochs=epochs,
            learning_rate=lr, seed=seed, threads=threads, tool_format=tool_format,  # type: ignore[arg-type]
        )  # fmt: skip
    except ValidationError as exc:
        raise invalid_options(exc) from None
    progress = Progress(
        TextColumn("[bold]warm start"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[status]}"),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        disable=quiet,
    )
    bar = progress.add_task("steps", total=None, status="loading the model")

    def show(step: int, total: int, loss: float) -> None:
        progress.update(bar, completed=step, total=total, status=f"loss {loss:.3f}")

    try:
        with progress:
            summary = warm_start(config, api_key=api_key, on_step=show)
    except (WarmStartError, PolicySpecError, ClientError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from exc
    losses = ", ".join(f"{x:.3f}" for x in summary.epoch_losses)
    typer.echo(
        f"{summary.examples} examples, {summary.steps} steps in {summary.wall_s:.0f} s (loss per epoch: "
        f"{losses}); saved to {summary.out}: train it with --model {summary.out}"
    )
