-- Runs once, when the PostgreSQL volume is first initialised (docker-entrypoint-initdb.d): the sandbox
-- database next to the control-plane store (POSTGRES_DB). Two databases, so a backup of the store is small
-- and never includes thousands of disposable sandbox schemas.
CREATE DATABASE groundstate_sandboxes;
