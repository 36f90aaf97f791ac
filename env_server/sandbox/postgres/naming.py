"""Names of the schemas PostgreSQL sandboxes live in, derived from the domain's code and the task's patch.

A base schema (`gs_b_...`) holds a domain's seed, a template schema (`gs_t_...`) a task's patch over it, and
a slot pool is named after the domain's fingerprint; each name hashes the layout version in, so schemas built
by older code are never reused. Each slot has two roles of its own (`slot_roles`): roles are global to the
PostgreSQL cluster, so their names carry the database's too.
"""

from __future__ import annotations

import hashlib

from env_server.domain import Domain
from env_server.sandbox.template import Template

#: Bumped whenever the layout of sandbox schemas changes, so schemas built by older code are never reused.
LAYOUT_VERSION = 4
#: The table that records every slot schema and the episode holding it.
REGISTRY = "public.gs_sandbox_slots"


def hashed(prefix: str, key: str) -> str:
    """A schema name under 63 bytes for an arbitrary key (and the layout version)."""
    return prefix + hashlib.sha256(f"{LAYOUT_VERSION}:{key}".encode()).hexdigest()[:32]


def base_schema(domain: Domain) -> str:
    """The schema holding `domain`'s seed."""
    return hashed("gs_b_", domain.fingerprint)


def template_schema(template: Template) -> str:
    """The schema holding a task's template (used only when the template has a patch)."""
    return hashed("gs_t_", template.key)


def slot_pool(domain: Domain) -> str:
    """The pool of slots that episodes of `domain` claim."""
    return hashed("", domain.fingerprint)


def slot_roles(schema: str, database: str) -> tuple[str, str]:
    """The roles of slot `schema` in `database`: tools run as the first, the agent's SQL as the second.

    `<schema>_<database hash>_rw` may read and write the slot's tables; `..._ro` may only read its domain
    tables. Neither reaches any other schema (`env_server.sandbox.postgres.roles`).
    """
    tag = hashlib.sha256(database.encode()).hexdigest()[:8]
    return f"{schema}_{tag}_rw", f"{schema}_{tag}_ro"


def database_roles_pattern(database: str) -> str:
    """A `LIKE` pattern matching every slot role of `database` (to drop them with the database)."""
    return "gs\\_s\\_%\\_" + hashlib.sha256(database.encode()).hexdigest()[:8] + "\\_r_"
