"""The `groundstate` console script: server commands and trainer commands under one roof.

The trainer's commands are imported only when one of them runs: a server installed without the `trainer`
extra (numpy, scipy, matplotlib) starts, and starts its workers, without importing any of it. A trainer
command that finds its extra missing says what to install.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any, NamedTuple

import typer
from typer import _click as click  # Typer vendors Click; its groups take its own Context and Command types
from typer.core import TyperCommand, TyperGroup

from env_server import cli as server_cli
from env_server import diagnostics


class TrainerCommand(NamedTuple):
    """Where a trainer command lives, and the line `groundstate --help` shows for it without importing it."""

    app: str
    """`module:attribute` of the Typer app that holds the command, or is it (the `train` group)."""
    summary: str
    """The first paragraph of the command's help (a test holds the two equal)."""


#: The trainer's top-level commands, in the order `groundstate --help` lists them.
TRAINER_COMMANDS: dict[str, TrainerCommand] = {
    "metrics": TrainerCommand(
        "trainer.cli:app",
        "Print pass@1 (95% CI), pass@k, pass^k, k/k and cost of a run, overall and per domain.",
    ),
    "select": TrainerCommand(
        "trainer.cli:app",
        "Band the probed train tasks by Jeffreys posterior and write a training pool of the kept bands.",
    ),
    "report": TrainerCommand(
        "trainer.cli:app",
        "Write a self-contained HTML report of a run (optionally against a baseline run).",
    ),
    "eval": TrainerCommand(
        "trainer.cli:app",
        "Evaluate a policy: K trials of every selected task; rerun the same command to resume.",
    ),
    "probe": TrainerCommand(
        "trainer.cli:app",
        "Probe a base policy on the train split (8 trials a task) for `groundstate select RUN_DIR`.",
    ),
    "gateway": TrainerCommand(
        "trainer.gateway.cli:app",
        "Serve an OpenAI-compatible model gateway that records every call's exact tokens, per episode.",
    ),
    "train": TrainerCommand(
        "trainer.train_cli:train_app",
        "Build training datasets and train policies against a groundstate server.",
    ),
}

#: The extra that brings the trainer's dependencies, and their top-level modules.
TRAINER_EXTRA = "trainer"
TRAINER_EXTRA_MODULES = frozenset({"numpy", "scipy", "matplotlib"})


def load_trainer_command(name: str) -> click.Command:
    """Import the trainer command `name` (a `ModuleNotFoundError` if its extra is missing)."""
    module, attribute = TRAINER_COMMANDS[name].app.split(":")
    command = typer.main.get_command(getattr(importlib.import_module(module), attribute))
    if isinstance(command, TyperGroup) and name in command.commands:
        return command.commands[name]
    command.name = name  # the app is the command (a group of its own), mounted under this name
    return command


#: `groundstate --help` lists the commands in the order a user meets them: serve the environment, look at the
#: tasks, evaluate and read the results, probe and select a pool, train; then diagnostics and administration.
WORKFLOW_ORDER = (
    "serve", "tasks", "eval", "metrics", "report", "probe", "select", "train", "blame", "regrade", "db",
    "sandboxes",
)  # fmt: skip


class LazyTrainerGroup(TyperGroup):
    """The root command group: lists the trainer's commands up front, imports one only when it runs."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        """The commands in workflow order (`WORKFLOW_ORDER`); any other after them, by name."""
        rank = {name: i for i, name in enumerate(WORKFLOW_ORDER)}
        return sorted(super().list_commands(ctx), key=lambda n: (rank.get(n, len(rank)), n))

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        for name, where in TRAINER_COMMANDS.items():  # what `--help` lists and typos are matched against
            self.commands.setdefault(name, TyperCommand(name, help=where.summary))

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        """The command about to run (or complete): a trainer command is imported here."""
        name, command, rest = super().resolve_command(ctx, args)
        if name in TRAINER_COMMANDS:
            command = load_trainer_command(name)
        return name, command, rest


app = typer.Typer(
    cls=LazyTrainerGroup,
    help="groundstate: sandboxed business databases for tool-using agents, rewarded by the state they leave.",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
)
app.command("serve")(server_cli.serve)
app.command("regrade")(diagnostics.regrade)
app.command("blame")(diagnostics.blame)
app.add_typer(server_cli.db_app, name="db")
app.add_typer(server_cli.tasks_app, name="tasks")
app.add_typer(server_cli.sandboxes_app, name="sandboxes")


def missing_extra_message(exc: ModuleNotFoundError) -> str | None:
    """What to install when `exc` is a module of the `trainer` extra (None for any other module)."""
    top = (exc.name or "").split(".")[0]
    if top not in TRAINER_EXTRA_MODULES:
        return None
    return install_hint(top, source_checkout())


def install_hint(module: str, checkout: Path | None) -> str:
    """The line telling what to install for a missing `module` of the `trainer` extra.

    In a source checkout (`make run` installs the server alone) it is the exact command for this
    interpreter and that checkout: `groundstate` from a package index is not what the reader runs.

    Args:
        module: The missing top-level module.
        checkout: The source checkout this package runs from, or None for an installed wheel.
    """
    needs = f"this command needs the trainer's dependencies ({module} is not installed)"
    if checkout is not None:
        return (
            f"{needs}: {sys.executable} -m pip install -e '{checkout}[{TRAINER_EXTRA}]' "
            f"(or `make install` in {checkout}: the trainer, training and the tests)"
        )
    return f"{needs}: pip install 'groundstate[{TRAINER_EXTRA}]' (or 'groundstate[train]' to train as well)"


def source_checkout() -> Path | None:
    """The source checkout this package runs from (an editable install), or None for an installed wheel."""
    root = Path(__file__).resolve().parents[1]
    pyproject = root / "pyproject.toml"
    if pyproject.is_file() and 'name = "groundstate"' in pyproject.read_text(encoding="utf-8"):
        return root
    return None


def main() -> None:
    """Entry point."""
    try:
        app()
    except ModuleNotFoundError as exc:
        message = missing_extra_message(exc)
        if message is None:
            raise
        print(f"error: {message}", file=sys.stderr)
        sys.exit(1)
