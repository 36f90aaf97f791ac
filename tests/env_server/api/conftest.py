"""API test fixtures: the interpreter of OpenEnv's client, which has a virtual environment of its own."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.conftest import IN_CI

ROOT = Path(__file__).parents[3]


@pytest.fixture(scope="session")
def openenv_python() -> str:
    """The interpreter of the virtual environment holding OpenEnv's client (`make openenv-client`).

    That environment has the older `mcp` (1.x) OpenEnv pins, so it doubles as a handshake-era MCP client.
    """
    python = os.environ.get("GROUNDSTATE_OPENENV_PYTHON", str(ROOT / ".venv-openenv" / "bin" / "python"))
    importable = Path(python).exists() and subprocess.run([python, "-c", "import openenv"]).returncode == 0
    if not importable:
        if IN_CI:
            pytest.fail(f"OpenEnv's client is required under CI but {python} cannot import openenv")
        pytest.skip(f"no OpenEnv client at {python} (make openenv-client)")
    return python
