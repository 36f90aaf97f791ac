"""Sandboxes: one isolated database per episode, on SQLite (embedded default) or PostgreSQL."""

from env_server.sandbox.base import Sandbox, SandboxEngine
from env_server.sandbox.template import Template, template_of


def make_sandbox_engine(url: str, pool_size: int = 8) -> SandboxEngine:
    """The engine for `GROUNDSTATE_SANDBOX_URL`: `sqlite://` (in memory) or `postgresql+psycopg://...`.

    `pool_size`: PostgreSQL connections kept per process (up to twice as many more under bursts).
    """
    if url.startswith("sqlite"):
        from env_server.sandbox.sqlite import SQLiteSandboxEngine

        return SQLiteSandboxEngine()
    if url.startswith("postgresql"):
        from env_server.sandbox.postgres import PostgresSandboxEngine

        return PostgresSandboxEngine(url, pool_size=pool_size)
    raise ValueError(f"GROUNDSTATE_SANDBOX_URL must start with sqlite or postgresql, got {url!r}")


__all__ = ["Sandbox", "SandboxEngine", "Template", "make_sandbox_engine", "template_of"]
