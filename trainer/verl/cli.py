"""`groundstate train dataset` and `groundstate train verl`: Verl's training data and its launch.

Mounted on `trainer.train_cli.train_app`. Nothing here imports verl, torch or pyarrow at import time: the
dataset command needs pyarrow when it writes, the verl command needs verl when it composes the config.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Annotated, cast, get_args

import httpx
import typer
from rich.console import Console
from rich.table import Table

from shared.errors import ClientError
from trainer.cli_options import ServerOpt
from trainer.verl.dataset import DatasetError, read_pool, server_test_ids, write_dataset
from trainer.verl.launch import RECIPES, LaunchError, compose, curriculum_of, plan, validate
from trainer.verl.settings import CurriculumMode

__all__ = ["dataset_command", "verl_command"]


def dataset_command(
    pool: Annotated[Path, typer.Option("--pool", help="Training pool written by `groundstate select`.")],
    out: Annotated[Path, typer.Option("--out", help="The Parquet file to write (e.g. train.parquet).")],
    server: Annotated[
        str | None,
        typer.Option("--server", help="Also refuse any task this server lists under the test split."),
    ] = None,
    api_key: Annotated[
        str | None, typer.Option("--api-key", envvar="GROUNDSTATE_API_KEY", help="The server's bearer key.")
    ] = None,
) -> None:
    """Write a pool's tasks as the Parquet rows Verl's dataset class loads (test tasks are refused)."""
    try:
        loaded = read_pool(pool)
        test_ids = server_test_ids(server, api_key) if server else None
        target = write_dataset(loaded, out, test_ids=test_ids)
    except (DatasetError, ClientError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from exc
    domains: dict[str, int] = {}
    for task in loaded.tasks:
        domains[task.domain] = domains.get(task.domain, 0) + 1
    table = Table(title=f"{target}: {len(loaded.tasks)} rows (agent_name groundstate)")
    table.add_column("domain")
    table.add_column("tasks", justify="right")
    for domain, count in sorted(domains.items()):
        table.add_row(domain, str(count))
    Console().print(table)


def verl_command(
    server: ServerOpt,
    overrides: Annotated[
        list[str] | None,
        typer.Argument(help="Hydra overrides for Verl's config, e.g. trainer.total_training_steps=10."),
    ] = None,
    config: Annotated[
        str, typer.Option("--config", help=f"A recipe ({', '.join(RECIPES)}) or a YAML recipe file.")
    ] = "grpo",
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run", help="Print the command, compose and validate the config with Verl; run nothing."
        ),
    ] = False,
    curriculum: Annotated[
        str | None,
        typer.Option(
            "--curriculum",
            help="static: Verl's sampler draws the dataset's tasks; adaptive: trainer.curriculum draws each "
            "step (runs trainer.verl.main). Default: the recipe's groundstate.curriculum (static).",
        ),
    ] = None,
    mint_per_step: Annotated[
        int | None,
        typer.Option(
            "--mint-per-step",
            min=0,
            help="With --curriculum adaptive: after a step whose band ran thin, the server mints up to N "
            "fresh train tasks into the running dataset (groundstate.mint_per_step; default: the recipe's).",
        ),
    ] = None,
) -> None:
    """Train with Verl (`main_ppo`, or `trainer.verl.main` when adaptive) on groundstate episodes."""
    try:
        if curriculum not in (None, *get_args(CurriculumMode)):
            raise LaunchError(f"--curriculum: static or adaptive, got {curriculum!r}")
        launch = plan(
            config,
            server,
            overrides,
            curriculum=cast("CurriculumMode | None", curriculum),
            mint_per_step=mint_per_step,
        )
    except LaunchError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
    console = Console(soft_wrap=True)
    try:
        composed = compose(launch)
    except LaunchError as exc:
        console.print(launch.shell(), markup=False, highlight=False)
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from exc
    launch = launch.for_curriculum(curriculum_of(composed))  # the composed config decides what runs
    console.print(launch.shell(), markup=False, highlight=False)
    try:
        validation = validate(composed)
    except LaunchError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from exc
    settings = validation.settings
    actor, rollout = composed.actor_rollout_ref.actor, composed.actor_rollout_ref.rollout
    console.print(
        f"config valid: {composed.actor_rollout_ref.model.path}, {composed.algorithm.adv_estimator} with "
        f"{rollout.n} episodes x {composed.data.train_batch_size} tasks per step, "
        f"{composed.trainer.total_training_steps} steps, lr {actor.optim.lr}, "
        f"filter_groups {'on' if composed.algorithm.filter_groups.enable else 'off'}; "
        f"episodes on {settings.server_url} (max {settings.max_turns} turns, {settings.retries} retries); "
        f"curriculum {settings.curriculum}"
        + (f", minting up to {settings.mint_per_step} a step" if settings.mint_per_step else ""),
        markup=False,
        highlight=False,
    )
    for note in validation.notes:
        console.print(f"note: {note}", markup=False, highlight=False)
    if dry_run:
        return
    _check_server(settings.server_url)
    raise typer.Exit(subprocess.run(launch.command(), check=False).returncode)


def _check_server(url: str) -> None:
    """Fail before Ray and vLLM start when the server does not answer."""
    try:
        httpx.get(f"{url.rstrip('/')}/healthz", timeout=10).raise_for_status()
    except httpx.HTTPError as exc:
        typer.echo(f"error: the groundstate server at {url} does not answer /healthz: {exc}", err=True)
        raise typer.Exit(1) from exc
