"""The domain fingerprint follows what the database holds: a docstring or comment edit keeps it (stored
PostgreSQL schemas stay in use), a column or a seeded value that changes moves it."""

from __future__ import annotations

import dataclasses
import importlib
import itertools
import os
import subprocess
import sys
from datetime import datetime
from pathlib import Path

from env_server.domain import Domain

MODELS = '''"""Tables of a one-table domain."""

from sqlalchemy import Integer, String
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


class Base(DeclarativeBase):
    pass


class Shelf(Base):
    """A shelf."""

    __tablename__ = "shelves"
    id: Mapped[str] = mapped_column(String(8), primary_key=True)
    books: Mapped[int] = mapped_column(Integer)
'''

SEED = '''"""Ten shelves."""


def seed(session, rng):
    """Shelves S-0 .. S-9 with a random number of books."""
    from .models import Shelf

    session.add_all(Shelf(id=f"S-{i}", books=rng.randrange(100)) for i in range(10))
'''

_versions = itertools.count()


def _domain(tmp_path: Path, models: str = MODELS, seed: str = SEED) -> Domain:
    """A domain whose models and seed are imported afresh from these sources (as after an edit)."""
    name = f"shelves_v{next(_versions)}"
    package = tmp_path / name
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "models.py").write_text(models)
    (package / "seed.py").write_text(seed)
    sys.path.insert(0, str(tmp_path))
    try:
        models_module = importlib.import_module(f"{name}.models")
        seed_module = importlib.import_module(f"{name}.seed")
    finally:
        sys.path.remove(str(tmp_path))
    return Domain(
        name="shelves",
        description="A reading room.",
        metadata=models_module.Base.metadata,
        seed=seed_module.seed,
        now=datetime(2026, 1, 1),
        tools=(),
        policy="",
        seed_value=7,
    )


def test_the_same_sources_give_the_same_fingerprint(tmp_path: Path) -> None:
    assert _domain(tmp_path).fingerprint == _domain(tmp_path).fingerprint


def test_docstring_and_comment_edits_keep_the_fingerprint(tmp_path: Path) -> None:
    edited_models = MODELS.replace('"""A shelf."""', '"""A shelf in the reading room."""  # renamed')
    edited_seed = SEED.replace('"""Ten shelves."""', '"""Ten shelves, seeded."""\n# a comment')
    assert _domain(tmp_path, edited_models, edited_seed).fingerprint == _domain(tmp_path).fingerprint


def test_a_column_change_moves_the_fingerprint(tmp_path: Path) -> None:
    wider = MODELS.replace("String(8)", "String(12)")
    assert _domain(tmp_path, models=wider).fingerprint != _domain(tmp_path).fingerprint


def test_a_seed_change_moves_the_fingerprint(tmp_path: Path) -> None:
    more_books = SEED.replace("rng.randrange(100)", "rng.randrange(100) + 1")
    assert _domain(tmp_path, seed=more_books).fingerprint != _domain(tmp_path).fingerprint


def test_a_different_seed_value_moves_the_fingerprint(tmp_path: Path) -> None:
    domain = _domain(tmp_path)
    assert dataclasses.replace(domain, seed_value=8).fingerprint != domain.fingerprint


def test_every_shipped_domain_has_the_same_fingerprint_in_every_process() -> None:
    """Workers and restarts must find the same PostgreSQL schemas: no seed may depend on the process."""
    code = (
        "from env_server.domain.registry import DomainRegistry\n"
        "print(sorted((d.name, d.fingerprint) for d in DomainRegistry.discover().domains))"
    )
    root = Path(__file__).parents[3]
    seen = {
        subprocess.run(
            [sys.executable, "-c", code],
            env={**os.environ, "PYTHONHASHSEED": hash_seed},
            cwd=root,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for hash_seed in ("1", "2")
    }
    assert len(seen) == 1 and "starter" in next(iter(seen))
