"""Names of the schemas PostgreSQL sandboxes live in, derived from the domain's code and the task's patch.

A base schema (`gs_b_...`) holds a domain's seed, a template schema (`gs_t_...`) a task's patch over it, and
a slot pool is named after the domain's fingerprint; each name hashes the layout version in, so schemas built
by older code are never reused.
"""

from __future__ import annotations

import hashlib

from env_server.domain import Domain
from env_server.sandbox.template import Template

#: Bumped whenever the layout of sandbox schemas changes, so schemas built by older code are never reused.
LAYOUT_VERSION = 3
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
