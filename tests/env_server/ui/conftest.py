"""Viewer fixtures: the app on both backends with a runs directory; runs written in the documented format."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from env_server.settings import Settings


@pytest.fixture
def runs_dir(tmp_path: Path) -> Path:
    directory = tmp_path / "runs"
    directory.mkdir()
    return directory


@pytest.fixture
def settings(tmp_path: Path, sandbox_url: str, runs_dir: Path) -> Settings:
    """The root `settings`, plus the runs directory the viewer shows."""
    return Settings(store_url=f"sqlite:///{tmp_path}/store.db", sandbox_url=sandbox_url, runs_dirs=[runs_dir])


def trial(task_id: str, trial: int, reward: int | None, **extra: Any) -> dict[str, Any]:
    """A `results.jsonl` line as docs/evaluation/index.md documents it (`reward` None: a backend error)."""
    line: dict[str, Any] = {
        "task_id": task_id,
        "domain": task_id.split("-")[0],
        "split": "test",
        "trial": trial,
        "sample": 0,
        "policy": "replay",
        "status": "scored" if reward is not None else "backend_error",
        "reward": reward,
        "episode_id": f"ep{task_id[:8]}{trial}",
    }
    if reward is None:
        line["error"] = "judge endpoint down"
    elif reward == 0:
        line["failed_checks"] = [{"name": "state", "passed": False, "detail": "1 missing"}]
    return line | extra


def write_run(directory: Path, lines: list[dict[str, Any]], config: dict[str, Any] | None = None) -> Path:
    directory.mkdir(parents=True)
    (directory / "results.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    if config is not None:
        (directory / "run.json").write_text(json.dumps(config))
    return directory
