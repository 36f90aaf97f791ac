"""The CLI in an 80-column terminal, through the real entry point, and an install without warnings."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from groundstate.cli import TRAINER_COMMANDS

ROOT = Path(__file__).parents[2]


def _help(*command: str) -> str:
    out = subprocess.run(
        [sys.executable, "-m", "groundstate", *command, "--help"],
        env={**os.environ, "COLUMNS": "80", "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=True,
    )
    return out.stdout


def test_eval_help_shows_the_whole_policy_description() -> None:
    text = _help("eval")
    assert "…" not in text and max(len(line) for line in text.splitlines()) <= 80
    for part in ("KIND:TARGET?opt=val&...", "openai:MODEL@BASE_URL", "local:smollm2", "recorded:PATH."):
        assert part in text, part


@pytest.mark.parametrize("command", [*sorted(set(TRAINER_COMMANDS) - {"train"}), "serve"])
def test_no_help_is_cut_at_80_columns(command: str) -> None:
    assert "…" not in _help(command)


def test_the_package_metadata_builds_without_deprecation_warnings() -> None:
    """setuptools warned at every install that a `license = {text = ...}` table is deprecated."""
    from setuptools.config.pyprojecttoml import apply_configuration
    from setuptools.dist import Distribution

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dist = apply_configuration(Distribution(), ROOT / "pyproject.toml")
    assert dist.metadata.license_expression == "Apache-2.0"  # type: ignore[attr-defined]
