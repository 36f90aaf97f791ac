"""The docs site's generated reference pages (`docs/hooks.py`) cover the code they are generated from."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest
from pydantic import BaseModel, Field

from env_server.settings import Settings

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def hooks() -> ModuleType:
    spec = importlib.util.spec_from_file_location("docs_hooks", ROOT / "docs" / "hooks.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_settings_page_lists_every_variable(hooks: ModuleType) -> None:
    page = hooks.settings_reference()
    for name in Settings.model_fields:
        assert f"| `GROUNDSTATE_{name.upper()}` |" in page


def test_a_setting_without_a_description_is_refused(hooks: ModuleType) -> None:
    class Undocumented(BaseModel):
        documented: int = Field(default=1, description="Said once.")
        bare: int = 2

    with pytest.raises(ValueError, match=r"Undocumented\.bare has no description"):
        list(hooks._field_rows(Undocumented, str.upper))


def test_cli_page_documents_every_command_with_its_options(hooks: ModuleType) -> None:
    page = hooks.cli_reference()
    for command in ("serve", "tasks validate", "sandboxes prune", "eval", "train verl", "train local"):
        assert f"`groundstate {command}`" in page
    assert "| `--policy` | required |" in page  # a trainer command's options, imported for the page


def test_rest_page_documents_every_operation(hooks: ModuleType) -> None:
    schema = hooks.openapi_schema()
    page = hooks.rest_reference(schema)
    for path, operations in schema["paths"].items():
        for method in operations:
            assert f"### `{method.upper()} {path}`" in page
    assert "### EpisodeStarted {#schema-episodestarted}" in page


def test_rest_page_shows_the_error_envelope_for_every_error_status(hooks: ModuleType) -> None:
    page = hooks.rest_reference(hooks.openapi_schema())
    assert "HTTPValidationError" not in page
    section = page.split("### `POST /v1/episodes/{episode_id}/tool_calls`")[1].split("### ")[0]
    for status in (401, 404, 409, 410, 413, 415, 422, 503):
        row = next(line for line in section.splitlines() if line.startswith(f"| {status} |"))
        assert "ErrorResponse" in row, row


BLOCK_HEAVY = """
import importlib.abc, importlib.util, sys
HEAVY = {"torch", "verl", "transformers", "trl", "vllm", "ray", "llama_cpp", "accelerate"}
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in HEAVY:
            raise ImportError(f"the docs extra has no {name}")
        return None
sys.meta_path.insert(0, Block())
spec = importlib.util.spec_from_file_location("docs_hooks", "docs/hooks.py")
hooks = importlib.util.module_from_spec(spec)
spec.loader.exec_module(hooks)
hooks.cli_reference(); hooks.settings_reference(); hooks.task_schema_table()
hooks.rest_reference(hooks.openapi_schema())
print("built without", sorted(HEAVY))
"""


@pytest.mark.slow
def test_the_docs_build_needs_no_torch_nor_verl() -> None:
    """`make docs` installs the `docs` extra alone: the hooks must generate every page without them."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", BLOCK_HEAVY], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-2000:]
