"""`groundstate train ...`: training data and training runs (Verl on a GPU cluster, TRL GRPO on one machine).

Each command lives with the integration it drives and is mounted here; nothing heavy (torch, verl, trl) is
imported until a command runs, so `groundstate --help` stays fast on a bare server install.
"""

from __future__ import annotations

import typer

from trainer.train_local_cli import local_command
from trainer.verl.cli import dataset_command, verl_command
from trainer.warm_start_cli import warm_start_command

__all__ = ["train_app"]

train_app = typer.Typer(
    help="Build training datasets and train policies against a groundstate server.",
    no_args_is_help=True,
    add_completion=False,
)
train_app.command("dataset")(dataset_command)
train_app.command("verl")(verl_command)
train_app.command("warm-start")(warm_start_command)
train_app.command("local")(local_command)
