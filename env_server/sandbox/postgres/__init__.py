"""PostgreSQL sandboxes: schema building, the slot pool, the snapshot cache and pruning, one module each."""

from env_server.sandbox.postgres.engine import PostgresSandboxEngine
from env_server.sandbox.postgres.prune import PruneReport
from env_server.sandbox.postgres.sandbox import PostgresSandbox

__all__ = ["PostgresSandbox", "PostgresSandboxEngine", "PruneReport"]
