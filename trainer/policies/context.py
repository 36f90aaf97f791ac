"""The context window a policy's endpoint serves, and the context a domain's first prompt needs.

A model endpoint that cannot hold a task's first prompt fails every request ("maximum context length is 2048
tokens, you requested 3030"); the trial is then a `policy_error`, never the agent's 0. A campaign checks
before it starts: when the endpoint reports its context window, every selected domain's first prompt (the
policy, which is the system prompt, and the tool schemas) must fit it.

Where endpoints report the window:
- vLLM: `GET /v1/models`, each model's `max_model_len`;
- llama.cpp's `llama-server`: `GET /props`, `default_generation_settings.n_ctx` (the served window), and
  `GET /v1/models`, each model's `meta.n_ctx_train` (the model's trained window, used only without `/props`);
- OpenAI and llama-cpp-python report none: nothing is checked, a failure is still a named `policy_error`.

The need is an estimate in characters, four to a token: a floor, since chat templates add scaffolding (hotel
with llama-cpp-python's `chatml-function-calling` format takes about 7,000 tokens where the estimate says
6,100), so a domain refused by it can never fit.
"""

from __future__ import annotations

import json
from typing import Any

import httpx

__all__ = ["CHARS_PER_TOKEN", "estimated_prompt_tokens", "served_context"]

CHARS_PER_TOKEN = 4
"""Characters per token of the estimate (English prose and JSON in BPE vocabularies: about 4)."""


def estimated_prompt_tokens(policy: str, tools: list[dict[str, Any]]) -> int:
    """A floor on the tokens of a domain's first prompt: its policy (the system prompt) and tool schemas."""
    return (len(policy) + len(json.dumps(tools, ensure_ascii=False))) // CHARS_PER_TOKEN


async def served_context(base_url: str, model: str, *, timeout_s: float = 5.0) -> int | None:
    """The context window the endpoint at `base_url` (the API root, with `/v1`) serves `model` with.

    Args:
        base_url: The OpenAI API root, e.g. `http://127.0.0.1:8080/v1`.
        model: The model name the requests send.
        timeout_s: Per request; an endpoint that does not answer reports nothing.

    Returns:
        The window in tokens, or None when the endpoint reports none (or cannot be asked).
    """
    root = base_url.rstrip("/").removesuffix("/v1")
    async with httpx.AsyncClient(timeout=timeout_s) as http:
        props = await _json(http, f"{root}/props")
        models = await _json(http, f"{base_url.rstrip('/')}/models")
    if isinstance(props, dict):
        settings = props.get("default_generation_settings")
        n_ctx = settings.get("n_ctx") if isinstance(settings, dict) else props.get("n_ctx")
        if isinstance(n_ctx, int) and n_ctx > 0:
            return n_ctx
    entries = models.get("data") if isinstance(models, dict) else None
    if not isinstance(entries, list):
        return None
    chosen = [e for e in entries if isinstance(e, dict) and e.get("id") == model] or (
        entries if len(entries) == 1 else []
    )
    for entry in chosen:
        meta = entry.get("meta")
        meta = meta if isinstance(meta, dict) else {}
        for value in (entry.get("max_model_len"), meta.get("n_ctx"), meta.get("n_ctx_train")):
            if isinstance(value, int) and value > 0:
                return value
    return None


async def _json(http: httpx.AsyncClient, url: str) -> Any:
    try:
        response = await http.get(url)
    except httpx.HTTPError:
        return None
    if response.status_code != 200:
        return None
    try:
        return response.json()
    except ValueError:
        return None
