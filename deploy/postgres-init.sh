#!/bin/sh
# Runs once, as the cluster's superuser, when the PostgreSQL volume is first initialised
# (docker-entrypoint-initdb.d). It makes the roles the stack runs as, so no server runs as a superuser:
#
#   groundstate_migrate  owns the control-plane store (`groundstate`); `migrate` runs Alembic as it.
#   groundstate_app      the servers: DML on the store's tables, owner of the sandbox database
#                        (`groundstate_sandboxes`, kept apart so a backup of the store stays small), and
#                        CREATEROLE to make each sandbox slot's two roles when it makes the slot. Neither
#                        superuser, nor replication, nor any pg_read_all_* / pg_*_server_files right.
#
# and hardens the sandbox database: the functions that change the session's role or run a query given as
# text are taken from PUBLIC (env_server/sandbox/postgres/roles.py: REVOKED_FUNCTIONS, harden_statements),
# so a slot's roles cannot call them; docs/operations/security.md explains the scheme.
set -eu
APP_PASSWORD="${GROUNDSTATE_APP_PASSWORD:?set GROUNDSTATE_APP_PASSWORD}"
MIGRATE_PASSWORD="${GROUNDSTATE_MIGRATE_PASSWORD:?set GROUNDSTATE_MIGRATE_PASSWORD}"

psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" <<SQL
CREATE ROLE groundstate_migrate LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION PASSWORD '$MIGRATE_PASSWORD';
CREATE ROLE groundstate_app LOGIN NOSUPERUSER NOCREATEDB CREATEROLE NOREPLICATION PASSWORD '$APP_PASSWORD';
-- temporary files of one statement (sorts, hashes): only a superuser can bound them, so here, per role
ALTER ROLE groundstate_app SET temp_file_limit = '1GB';
CREATE DATABASE groundstate OWNER groundstate_migrate;
CREATE DATABASE groundstate_sandboxes OWNER groundstate_app;
SQL

psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname groundstate <<SQL
REVOKE ALL ON DATABASE groundstate FROM PUBLIC;
GRANT CONNECT ON DATABASE groundstate TO groundstate_migrate, groundstate_app;
ALTER SCHEMA public OWNER TO groundstate_migrate;
REVOKE CREATE ON SCHEMA public FROM PUBLIC;
GRANT USAGE ON SCHEMA public TO groundstate_app;
ALTER DEFAULT PRIVILEGES FOR ROLE groundstate_migrate IN SCHEMA public
    GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO groundstate_app;
ALTER DEFAULT PRIVILEGES FOR ROLE groundstate_migrate IN SCHEMA public
    GRANT USAGE, SELECT ON SEQUENCES TO groundstate_app;
SQL

psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname groundstate_sandboxes <<SQL
REVOKE ALL ON DATABASE groundstate_sandboxes FROM PUBLIC;
GRANT CONNECT, CREATE ON DATABASE groundstate_sandboxes TO groundstate_app;
ALTER SCHEMA public OWNER TO groundstate_app;
REVOKE CREATE ON SCHEMA public FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION pg_catalog.set_config(text, text, boolean) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION pg_catalog.query_to_xml(text, boolean, boolean, text) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION pg_catalog.query_to_xmlschema(text, boolean, boolean, text) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION pg_catalog.query_to_xml_and_xmlschema(text, boolean, boolean, text) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION pg_catalog.cursor_to_xml(refcursor, integer, boolean, boolean, text) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION pg_catalog.cursor_to_xmlschema(refcursor, boolean, boolean, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION pg_catalog.set_config(text, text, boolean) TO groundstate_app;
SQL
