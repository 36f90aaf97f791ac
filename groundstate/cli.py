"""The `groundstate` console script: server commands and trainer commands under one roof."""

from __future__ import annotations

import typer

from env_server import cli as server_cli
from trainer import cli as trainer_cli
from trainer.train_cli import train_app

app = typer.Typer(
    help="groundstate: sandboxed business databases for tool-using agents, rewarded by the state they leave.",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
)
app.command("serve")(server_cli.serve)
app.add_typer(server_cli.db_app, name="db")
app.add_typer(server_cli.tasks_app, name="tasks")
app.add_typer(server_cli.sandboxes_app, name="sandboxes")
app.add_typer(trainer_cli.app)  # eval, metrics, probe, select, report at the top level
app.add_typer(train_app, name="train")


def main() -> None:
    """Entry point."""
    app()
