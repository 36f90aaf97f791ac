"""Least privilege for PostgreSQL sandboxes, enforced by the engine: per-slot roles and a hardened database.

The server connects as one application role, which owns the slots and the registry. An episode's
statements never run as it: a tool's transaction does `SET LOCAL ROLE <slot>_rw`, the agent's SQL
`SET LOCAL ROLE <slot>_ro`, so PostgreSQL itself checks every table the statement touches:

- `_rw` has USAGE on its slot's schema and DML on its tables (the change log and ID counters included);
- `_ro` has USAGE on the schema and SELECT on the domain's tables only, inside a READ ONLY transaction;
- neither has any right on another schema (other slots, templates, the registry `public.gs_sandbox_slots`,
  a store in the same database), nor superuser, replication or `pg_read_all_*` rights, so
  `pg_authid`, other sessions' query text in `pg_stat_activity` and the sensitive rows of `pg_settings`
  are out of reach.

The roles are made once, when a slot is created (slots are pooled: no role DDL on the episode's path), and
dropped with it. Roles are global to a cluster, so their names carry the database's hash (`slot_roles`).

`SET ROLE` can be undone by whoever may run `RESET ROLE` or `set_config('role', ...)`: the agent's SQL runs
as one prepared statement (no second statement can follow), and `HARDEN` revokes from PUBLIC the functions
that would change the role or run a query given as text (`set_config`, the `query_to_xml` family), and
temporary tables. Those revocations need the database owner or a superuser: the deployment's init script
runs them (deploy/postgres-init.sh), and an engine that connects with that right applies them itself.
"""

from __future__ import annotations

import logging

from sqlalchemy import Connection, Table

logger = logging.getLogger(__name__)

#: Functions no sandbox role may call: each changes the session's role or runs a query given as text.
REVOKED_FUNCTIONS = (
    "pg_catalog.set_config(text, text, boolean)",
    "pg_catalog.query_to_xml(text, boolean, boolean, text)",
    "pg_catalog.query_to_xmlschema(text, boolean, boolean, text)",
    "pg_catalog.query_to_xml_and_xmlschema(text, boolean, boolean, text)",
    "pg_catalog.cursor_to_xml(refcursor, integer, boolean, boolean, text)",
    "pg_catalog.cursor_to_xmlschema(refcursor, boolean, boolean, text)",
)
#: Whether this database is hardened already (a function's EXECUTE for PUBLIC is gone).
HARDENED = (
    "SELECT NOT has_function_privilege('public', 'pg_catalog.set_config(text, text, boolean)', 'EXECUTE')"
)


def harden_statements(database: str) -> list[str]:
    """The statements that take from PUBLIC what a sandbox role must not have, in `database`.

    The server's own role keeps `set_config` (granted back to it): SQLAlchemy and psycopg never call it,
    but an operator's tooling might.
    """
    return [
        *(f"REVOKE EXECUTE ON FUNCTION {f} FROM PUBLIC" for f in REVOKED_FUNCTIONS),
        f"GRANT EXECUTE ON FUNCTION {REVOKED_FUNCTIONS[0]} TO CURRENT_USER",
        f'REVOKE TEMPORARY ON DATABASE "{database}" FROM PUBLIC',
        "REVOKE CREATE ON SCHEMA public FROM PUBLIC",
    ]


def harden(conn: Connection, database: str) -> bool:
    """Apply `harden_statements` if this connection may (a superuser); whether the database is hardened.

    A server that may not (the production application role) relies on the init script having done it,
    and logs a warning when it has not.
    """
    if conn.exec_driver_sql(HARDENED).scalar():
        return True
    if conn.exec_driver_sql("SELECT rolsuper FROM pg_roles WHERE rolname = current_user").scalar():
        for statement in harden_statements(database):
            conn.exec_driver_sql(statement)
        return True
    logger.warning(
        "database %s is not hardened: sandbox roles can still call set_config and the query_to_xml "
        "family; run deploy/postgres-init.sh's statements as its owner (docs/operations/security.md)",
        database,
    )
    return False


def roles_script(schema: str, rw: str, ro: str, domain_tables: list[Table]) -> str:
    """SQL creating slot `schema`'s two roles with their rights (run once, when the slot is created)."""
    readable = ", ".join(f'"{schema}"."{t.name}"' for t in domain_tables)
    statements = [
        f'CREATE ROLE "{rw}" NOLOGIN NOINHERIT',
        f'CREATE ROLE "{ro}" NOLOGIN NOINHERIT',
        f'GRANT "{rw}", "{ro}" TO CURRENT_USER',
        f'GRANT USAGE ON SCHEMA "{schema}" TO "{rw}", "{ro}"',
        f'GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA "{schema}" TO "{rw}"',
        f'GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA "{schema}" TO "{rw}"',
        f'GRANT SELECT ON {readable} TO "{ro}"',
    ]
    return ";\n".join(statements)


def drop_roles(conn: Connection, roles: tuple[str, ...]) -> None:
    """Drop slot roles (after their schema: nothing of them is left to revoke)."""
    for role in roles:
        conn.exec_driver_sql(f'DROP ROLE IF EXISTS "{role}"')
