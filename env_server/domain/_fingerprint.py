"""A domain's fingerprint: a hash of what its databases hold, so copies of an older version are not reused.

A docstring, a comment or a refactor that writes the same rows keeps the fingerprint: it hashes the
tables' DDL (columns, constraints, indexes) and the rows the seed writes, not the source code that writes
them. The seed runs once into an in-memory SQLite database to read those rows.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable
from functools import cache

from sqlalchemy import MetaData, create_engine, select
from sqlalchemy.orm import Session
from sqlalchemy.schema import CreateIndex, CreateTable

SeedFn = Callable[[Session, random.Random], None]


def fingerprint(name: str, metadata: MetaData, seed: SeedFn, seed_value: int) -> str:
    """16 hex digits of the hash of the domain's name, its tables' DDL and its seeded rows."""
    digest = hashlib.sha256(name.encode())
    digest.update(schema_digest(metadata))
    digest.update(seeded_rows_digest(metadata, seed, seed_value))
    return digest.hexdigest()[:16]


def schema_digest(metadata: MetaData) -> bytes:
    """The hash of every table's CREATE TABLE and CREATE INDEX statement, in dependency order."""
    digest = hashlib.sha256()
    for table in metadata.sorted_tables:
        digest.update(str(CreateTable(table)).encode())
        for index in sorted(table.indexes, key=lambda i: str(i.name)):
            digest.update(str(CreateIndex(index)).encode())
    return digest.digest()


@cache
def seeded_rows_digest(metadata: MetaData, seed: SeedFn, seed_value: int) -> bytes:
    """The hash of every row `seed` writes (as the sandboxes run it), table by table in primary-key order.

    Computed once per process for each (tables, seed, seed value): copies of a domain share it.
    """
    engine = create_engine("sqlite://")
    try:
        metadata.create_all(engine)
        digest = hashlib.sha256()
        with Session(engine, autoflush=False) as session:
            seed(session, random.Random(seed_value))
            session.flush()
            for table in metadata.sorted_tables:
                digest.update(f"\0{table.name}\0".encode())
                order = list(table.primary_key.columns) or list(table.columns)
                for row in session.execute(select(table).order_by(*order)):
                    digest.update(repr(tuple(row)).encode())
        return digest.digest()
    finally:
        engine.dispose()
