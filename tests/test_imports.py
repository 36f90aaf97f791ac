"""Every module of the product imports on its own, in an interpreter that has imported none of the others.

The suite's conftest imports the app first, which can hide an import cycle: a module that imports only when
something else was imported before it breaks the first program that imports it directly. A child process
that has loaded only third-party libraries forks once per module, and each fork imports that one module.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ["env_server", "shared", "trainer", "groundstate"]
OPTIONAL = {
    "trainer.verl": "verl",
    # these run inside their framework's own virtual environment (make verifiers-env / nemo-gym-env)
    "trainer.adapters.verifiers_env": "verifiers",
    "trainer.adapters.nemo_gym_server": "nemo_gym",
}
"""Integrations importable only with an optional dependency installed (their own tests cover them)."""

PRELOAD = [
    "fastapi", "pydantic", "pydantic_settings", "sqlalchemy", "alembic", "typer", "httpx", "rich", "openai",
    "sqlglot", "yaml", "psycopg", "prometheus_client", "numpy", "uvicorn", "docstring_parser",
]  # fmt: skip
"""Third-party libraries the parent imports before forking (none of them imports our code)."""

_FORK_EACH = (
    f"PRELOAD = {PRELOAD!r}\n"
    + """
import os, sys
import importlib
for lib in PRELOAD:  # third-party only, preloaded once so that each fork imports just our code
    importlib.import_module(lib)
running = set()
for name in sys.argv[1:]:
    if len(running) >= (os.cpu_count() or 1):  # one child per core at a time
        running.discard(os.wait()[0])
    pid = os.fork()
    if pid == 0:
        try:
            __import__(name)
        except BaseException as exc:
            sys.stdout.write(f"{name}: {type(exc).__name__}: {exc}\\n")
            sys.stdout.flush()
            os._exit(1)
        os._exit(0)
    running.add(pid)
while running:
    running.discard(os.wait()[0])
"""
)


def _modules() -> list[str]:
    """Every module file under the packages (namespace packages included, which `pkgutil` skips)."""
    names = []
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return sorted(n for n in names if _available(n) and not n.endswith(".__main__"))


def _available(name: str) -> bool:
    for prefix, dependency in OPTIONAL.items():
        if name == prefix or name.startswith(prefix + "."):
            return importlib.util.find_spec(dependency) is not None
    return True


def test_module_list_covers_the_packages() -> None:
    modules = _modules()
    for expected in ("env_server.scoring.diff", "env_server.app", "shared.client", "trainer.rollout"):
        assert expected in modules


@pytest.mark.slow
@pytest.mark.skipif(sys.platform == "win32", reason="needs os.fork")
def test_every_module_imports_on_its_own() -> None:
    result = subprocess.run(
        [sys.executable, "-c", _FORK_EACH, *_modules()], capture_output=True, text=True, cwd=ROOT, timeout=600
    )
    assert result.returncode == 0, result.stderr
    failures = result.stdout.strip()
    assert not failures, f"modules that fail to import on their own:\n{failures}"
