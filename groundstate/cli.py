"""The `groundstate` console script: server commands and trainer commands under one roof."""

from __future__ import annotations

import typer

from env_server import cli as server_cli

app = typer.Typer(
    help="groundstate: sandboxed business databases for tool-using agents, rewarded by the state they leave.",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
)
app.command("serve")(server_cli.serve)
app.add_typer(server_cli.db_app, name="db")
app.add_typer(server_cli.tasks_app, name="tasks")


def _mount_trainer() -> None:
    """Trainer commands (eval, metrics, probe, select, report) live in the trainer package."""
    from trainer.cli import app as trainer_app

    for command in trainer_app.registered_commands:
        app.registered_commands.append(command)


try:
    import trainer.cli  # noqa: F401
except ImportError:  # the trainer package is optional in a server-only install
    pass
else:
    _mount_trainer()


def main() -> None:
    """Entry point."""
    app()
