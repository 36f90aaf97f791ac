"""Server settings: one pydantic-settings class; every knob is an environment variable GROUNDSTATE_*."""

from __future__ import annotations

import ipaddress
import json
import socket
from pathlib import Path
from typing import Any, Literal, Self

from pydantic import Field, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

#: The PostgreSQL database of a local install (trust authentication), where no other is given.
DEFAULT_PG_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"

#: The `Host` patterns of a server reached on loopback (the SDK's `name:*` means any port).
LOOPBACK_HOSTS = ("127.0.0.1", "127.0.0.1:*", "localhost", "localhost:*", "[::1]", "[::1]:*")


class SettingsError(ValueError):
    """A combination of settings that must not start a server."""


def is_loopback(host: str) -> bool:
    """True for 127.0.0.0/8, ::1 and localhost."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class Settings(BaseSettings):
    """Everything the server reads from its environment."""

    model_config = SettingsConfigDict(env_prefix="GROUNDSTATE_", extra="ignore")

    host: str = Field(default="127.0.0.1", description="Bind address.")
    port: int = Field(default=8000, ge=1, le=65535, description="Port.")
    sandbox_url: str = Field(
        default="sqlite://", description="Sandbox backend: `sqlite://` or `postgresql+psycopg://...`."
    )
    store_url: str = Field(
        default="sqlite:///.groundstate/store.db",
        description="Control-plane store (episodes, events, scores).",
    )
    api_key: str | None = Field(default=None, description="Bearer key; required off loopback.")
    db_pool_size: int = Field(
        default=8,
        ge=1,
        description="PostgreSQL connections each worker keeps, for the store and for the sandboxes each, and "
        "up to twice as many more in bursts: a worker may hold 6x this many; size max_connections by it.",
    )
    previous_api_keys: list[str] = Field(
        default_factory=list,
        description="Keys still accepted besides `api_key` while clients move to a new one (key rotation; "
        "a JSON list). Only with `api_key` set.",
    )
    tasks_dirs: list[Path] = Field(
        default_factory=list, description="Extra task directories (generated tasks)."
    )
    domains: list[str] | None = Field(default=None, description="Serve only these domains (default: all).")
    runs_dirs: list[Path] = Field(
        default_factory=lambda: [Path("runs")],
        description="Run directories the viewer shows: evaluation runs (`/ui/campaigns`, holding "
        "results.jsonl) and training runs with an adaptive curriculum (`/ui/curricula`, holding "
        "curriculum.jsonl); each a run directory or a directory of run directories. Listed again on every "
        "page load, so `groundstate eval --out runs/NAME` shows up without a restart (default: `runs` in "
        "the server's working directory).",
    )
    default_user: Literal["scripted", "llm"] = Field(
        default="scripted", description="The simulated user of an episode whose request does not choose one."
    )
    auto_migrate: bool = Field(
        default=True,
        description="Apply store migrations when the server starts; false where a separate step migrates "
        "(several replicas must not race on one store): the server then refuses a store not at head.",
    )
    replica_id: str = Field(
        default="",
        description="This server's name in the `x-groundstate-replica` response header (default "
        "`hostname:port`): shows which replica behind a load balancer served a request.",
    )
    max_request_bytes: int = Field(
        default=4 * 2**20, ge=1024, description="Largest request body accepted (413 beyond it)."
    )
    max_live_sandboxes: int = Field(
        default=2000,
        ge=1,
        description="Sandboxes a worker holds at most; the least recently used beyond it are evicted "
        "(SQLite ones are rebuilt by replay on next use; PostgreSQL ones stay in their slot).",
    )
    worker_threads: int = Field(
        default=40,
        ge=1,
        description="Threads each worker runs requests' blocking work on (tool calls, store writes); "
        "anyio's default is 40.",
    )
    inline_calls: Literal["auto", "on", "off"] = Field(
        default="auto",
        description="Run an episode's calls on the event loop instead of a worker thread when they only "
        "compute: a held in-process sandbox, no simulated user or judge to wait on (falling back to a thread "
        "otherwise). `auto` does so when both the sandboxes and the store are SQLite, whose calls never "
        "wait on a network; `off` always hops to a thread.",
    )
    max_live_episodes: int = Field(
        default=0,
        ge=0,
        description="Live episodes (started, and neither scored, disposed nor reclaimed) a worker holds at "
        "most: a start beyond it is refused with 503 `over-capacity` and `Retry-After`, which the clients "
        "retry with jittered backoff, so the episodes admitted keep their latency instead of every one "
        "slowing down. Per worker (the server holds workers x this). 0: no limit. Size it from the knee "
        "of `benchmarks/grpo_step.py` (docs/training/cluster.md).",
    )
    max_in_flight: int = Field(
        default=0,
        ge=0,
        description="Episode requests (`/v1/episodes...`) a worker works on at once; the next is refused "
        "with 503 `over-capacity` and `Retry-After` before any work (a retry runs it once). 0: no limit.",
    )
    retry_after_s: float = Field(
        default=1.0,
        gt=0,
        description="The `Retry-After` of an over-capacity refusal, in seconds (sent rounded up to whole "
        "seconds); the clients wait at least this, plus jitter.",
    )
    episode_idle_timeout_s: float = Field(
        default=3600.0,
        ge=0,
        description="An episode with no call for this long (a dead rollout worker's) is reclaimed: its "
        "sandbox, slot and memory freed, its record and events kept and marked `reclaimed`, and any later "
        "call answered 410 `episode-reclaimed`. Checked by each worker for the episodes it served. 0: never.",
    )
    sandbox_idle_s: float = Field(
        default=1800.0, gt=0, description="Sandboxes unused this long are evicted (see max_live_sandboxes)."
    )
    mcp_allowed_hosts: list[str] | None = Field(
        default=None,
        description="`Host` headers the MCP endpoint accepts (DNS-rebinding protection): `name` or `name:*` "
        '(any port); `["*"]` accepts any host. Default: loopback names on a loopback bind address; any '
        "host otherwise, where the required API key is what keeps a rebound browser page out.",
    )

    user_base_url: str | None = Field(
        default=None,
        description="The LLM user's OpenAI-compatible endpoint, the API root including `/v1` (vLLM, "
        "llama.cpp, OpenAI); without it `user: llm` episodes are refused.",
    )
    user_model: str = Field(default="", description="The LLM user's model name at that endpoint.")
    user_api_key: str = Field(
        default="not-needed", description="The LLM user's key (any string for local servers)."
    )
    user_temperature: float = Field(default=0.0, description="The LLM user's sampling temperature.")
    user_seed: int | None = Field(
        default=0,
        description="The LLM user's sampling seed; an episode's own `seed` replaces it for its turns.",
    )
    user_max_tokens: int = Field(default=256, description="Most tokens of one user turn.")
    user_timeout_s: float = Field(
        default=30.0, description="Seconds one user turn may take (then a backend error)."
    )
    user_max_turns: int = Field(
        default=12, description="User turns before the LLM user ends the conversation."
    )
    user_tool_choice: Literal["auto", "guided"] = Field(
        default="auto",
        description="How the LLM user of a dual-control task calls its own tools. `auto`: the tools go with "
        'each request as `tool_choice: "auto"` and the model decides. `guided`, for models too small to '
        "decide (or servers whose `auto` never calls): the task's script decides when and what the customer "
        "does, as for the scripted user (the line answering the agent's message acts, once the agent said "
        "its `when_told` terms), and each of that line's tools is forced by name; the model writes the "
        "arguments and its own words.",
    )
    user_extra_body: dict[str, Any] = Field(
        default_factory=dict,
        description="Fields added to every request body of the LLM user, for sampling options a server "
        'accepts beyond OpenAI\'s (llama.cpp: `{"repeat_penalty": 1.0}`; vLLM: `{"top_k": 20}`).',
        examples=[{"repeat_penalty": 1.0}],
    )

    judge_base_url: str | None = Field(
        default=None,
        description="The rubric judge's OpenAI-compatible endpoint (API root including `/v1`); without it, "
        "an episode whose rubric questions need a judge scores as a backend error and `/v1/judge` is "
        "refused.",
    )
    judge_model: str = Field(
        default="", description="The judge's model name (always asked at temperature 0)."
    )
    judge_api_key: str = Field(
        default="not-needed", description="The judge's key (any string for local servers)."
    )
    judge_timeout_s: float = Field(default=30.0, description="Seconds one judge request may take.")
    judge_max_retries: int = Field(
        default=3, description="Retries with exponential backoff before a judge failure is a backend error."
    )

    def environment(self, *fields: str) -> dict[str, str]:
        """The GROUNDSTATE_* variables that give another process (a server worker) these fields' values.

        Strings are passed as they are, everything else as JSON (as pydantic-settings reads lists); a field
        whose value is None has no spelling and is refused.
        """
        values = self.model_dump(mode="json", include=set(fields))
        if None in values.values():
            raise ValueError(f"cannot pass None through the environment: {sorted(fields)}")
        return {
            f"GROUNDSTATE_{name.upper()}": value if isinstance(value, str) else json.dumps(value)
            for name, value in values.items()
        }

    @property
    def runs_inline(self) -> bool:
        """Whether calls that only compute run on the event loop (`inline_calls`; `auto`: all on SQLite)."""
        if self.inline_calls == "auto":
            return self.sandbox_url.startswith("sqlite") and self.store_url.startswith("sqlite")
        return self.inline_calls == "on"

    @model_validator(mode="after")
    def _default_replica_id(self) -> Self:
        if not self.replica_id:
            self.replica_id = f"{socket.gethostname()}:{self.port}"
        return self

    @model_validator(mode="after")
    def _require_models_with_endpoints(self) -> Self:
        for role in ("user", "judge"):
            if getattr(self, f"{role}_base_url") and not getattr(self, f"{role}_model"):
                raise SettingsError(
                    f"GROUNDSTATE_{role.upper()}_BASE_URL is set but GROUNDSTATE_{role.upper()}_MODEL is not"
                )
        return self

    @model_validator(mode="after")
    def _default_mcp_hosts(self) -> Self:
        if self.mcp_allowed_hosts is None:
            self.mcp_allowed_hosts = list(LOOPBACK_HOSTS) if is_loopback(self.host) else ["*"]
        return self

    @model_validator(mode="after")
    def _previous_keys_need_a_key(self) -> Self:
        if self.previous_api_keys and not self.api_key:
            raise SettingsError("GROUNDSTATE_PREVIOUS_API_KEYS is set but GROUNDSTATE_API_KEY is not")
        return self

    @model_validator(mode="after")
    def _require_key_off_loopback(self) -> Self:
        if not is_loopback(self.host) and not self.api_key:
            raise SettingsError(
                f"GROUNDSTATE_API_KEY is required when binding to the non-loopback address {self.host}"
            )
        return self
