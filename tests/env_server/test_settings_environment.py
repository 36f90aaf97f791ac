"""`Settings.environment`: what `serve` hands its uvicorn workers, who build their settings from it."""

from __future__ import annotations

from pathlib import Path

import pytest

from env_server.settings import Settings

FIELDS = ("host", "port", "tasks_dirs", "auto_migrate")


def test_a_worker_reads_back_the_values_it_was_handed(monkeypatch: pytest.MonkeyPatch) -> None:
    chosen = Settings(
        host="0.0.0.0",
        port=8123,
        api_key="k",
        tasks_dirs=[Path("/tasks/with space"), Path('/tasks/with"quote')],
        auto_migrate=False,
    )
    variables = chosen.environment(*FIELDS)
    assert variables["GROUNDSTATE_HOST"] == "0.0.0.0" and variables["GROUNDSTATE_AUTO_MIGRATE"] == "false"
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    worker = Settings(api_key="k")
    assert {f: getattr(worker, f) for f in FIELDS} == {f: getattr(chosen, f) for f in FIELDS}


def test_only_the_named_fields_are_handed_over() -> None:
    assert set(Settings().environment("port")) == {"GROUNDSTATE_PORT"}


def test_a_field_without_a_value_is_refused() -> None:
    with pytest.raises(ValueError, match="None"):
        Settings().environment("api_key")
