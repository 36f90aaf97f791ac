"""`groundstate train ...`: training data and training runs (Verl on a GPU cluster, TRL GRPO on one machine).

Each command lives with the integration it drives and is mounted here; nothing heavy (torch, verl, trl) is
imported until a command runs, so `groundstate --help` stays fast on a bare server install.
"""

from __future__ import annotations

import typer

__all__ = ["train_app"]

train_app = typer.Typer(
    help="Build training datasets and train policies against a groundstate server.",
    no_args_is_help=True,
    add_completion=False,
)

from trainer.verl.cli import register as _register_verl  # noqa: E402 - mounts `dataset` and `verl`

_register_verl(train_app)
