"""Options that several `groundstate` trainer commands share, and their usage errors, declared once.

Light on purpose (typer and pydantic only): training commands import it without the evaluation stack.
"""

from __future__ import annotations

from typing import Annotated

import typer
from pydantic import ValidationError

__all__ = ["ApiKeyOpt", "QuietOpt", "ServerOpt", "ThreadsOpt", "ToolFormatOpt", "invalid_options"]

ServerOpt = Annotated[
    str, typer.Option("--server", envvar="GROUNDSTATE_SERVER", help="The environment server's base URL.")
]
ApiKeyOpt = Annotated[
    str | None, typer.Option("--api-key", envvar="GROUNDSTATE_API_KEY", help="The server's bearer key.")
]
QuietOpt = Annotated[bool, typer.Option("--quiet", help="No progress bar.")]
ThreadsOpt = Annotated[int | None, typer.Option("--threads", min=1, help="torch CPU threads.")]
ToolFormatOpt = Annotated[
    str,
    typer.Option(
        "--tool-format",
        help="Tool-call format: auto (from the chat template), hermes, llama3_json, mistral, qwen3_coder.",
    ),
]


def invalid_options(exc: ValidationError) -> typer.BadParameter:
    """A config's validation errors as one usage error that names each offending field."""
    return typer.BadParameter(
        "; ".join(f"{'.'.join(map(str, e['loc'])) or 'options'}: {e['msg']}" for e in exc.errors())
    )
