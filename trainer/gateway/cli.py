"""`groundstate gateway`: serve the model gateway in front of a local model (CPU) until stopped."""

from __future__ import annotations

from typing import Annotated

import typer
from pydantic import ValidationError

from trainer.cli_options import ThreadsOpt, ToolFormatOpt, invalid_options

__all__ = ["app", "gateway_command"]

app = typer.Typer(add_completion=False)


@app.command("gateway")
def gateway_command(
    model: Annotated[
        str, typer.Option("--model", help="smollm2, or a transformers model directory.")
    ] = "smollm2",
    host: Annotated[str, typer.Option("--host", help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=1, max=65535, help="Port to listen on.")] = 8100,
    max_new_tokens: Annotated[
        int,
        typer.Option(
            "--max-new-tokens", min=1, help="Cap on generated tokens per call (a request may lower it)."
        ),
    ] = 256,
    temperature: Annotated[
        float, typer.Option("--temperature", min=0.0, help="0 decodes greedily (a request may set its own).")
    ] = 0.0,
    tool_format: ToolFormatOpt = "auto",
    threads: ThreadsOpt = None,
) -> None:
    """Serve an OpenAI-compatible model gateway that records every call's exact tokens, per episode.

    Give an agent program `http://HOST:PORT/episodes/EPISODE_ID/v1` as its model's base URL and the episode's
    MCP endpoint for its tools; read the recorded calls at `/episodes/EPISODE_ID/calls`.
    """
    import uvicorn

    from trainer.gateway.app import create_gateway_app
    from trainer.gateway.backend import LocalBackend
    from trainer.policies import PolicySpecError
    from trainer.policies.local import LocalOptions, load_model

    try:
        options = LocalOptions.model_validate(
            {
                "max_new_tokens": max_new_tokens,
                "temperature": temperature,
                "tool_format": tool_format,
                "kv_cache": False,
            }
        )
    except ValidationError as exc:
        raise invalid_options(exc) from exc
    try:
        backend = LocalBackend(load_model(model, threads), options)
    except PolicySpecError as exc:
        raise typer.BadParameter(str(exc)) from exc
    uvicorn.run(create_gateway_app(backend), host=host, port=port, log_level="warning")
