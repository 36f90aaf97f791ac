"""Tool schemas with their length bounds capped, for model servers that compile a schema into a grammar.

llama.cpp turns a JSON schema into a grammar that repeats a rule once per allowed character: a string
bounded at 4,000 characters (the domains' default, which the sandbox enforces) makes a grammar it refuses
or crashes on, while 1,000 compiles. The bound sent to the model only shapes what it may write; the tool's
own validation still applies the real one.
"""

from __future__ import annotations

from typing import Any

#: The largest `maxLength` / `maxItems` llama.cpp's grammar compiler took in our measurements.
LLAMA_CPP_SCHEMA_BOUND = 1_000


def bounded(schema: Any, limit: int) -> Any:
    """A copy of `schema` with every `maxLength` / `maxItems` at most `limit`."""
    if isinstance(schema, dict):
        return {
            k: min(v, limit) if k in ("maxLength", "maxItems") and isinstance(v, int) else bounded(v, limit)
            for k, v in schema.items()
        }
    if isinstance(schema, list):
        return [bounded(v, limit) for v in schema]
    return schema
