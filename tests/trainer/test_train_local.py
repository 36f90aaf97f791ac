"""`groundstate train local` for real: SmolLM2 trained with TRL on starter tasks played on a live server."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from env_server.app import create_app
from env_server.domain.registry import DomainRegistry
from env_server.settings import Settings
from groundstate.cli import app
from tests.live_server import serve
from trainer.results import read_results
from trainer.train_local import LOG_FILE, StepLog

runner = CliRunner()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    store = tmp_path_factory.mktemp("store")
    settings = Settings(store_url=f"sqlite:///{store}/store.db", sandbox_url="sqlite://")
    with serve(create_app(settings, registry=DomainRegistry.discover(only=["starter"]))) as url:
        yield url


def pool_of(server: str, tmp_path: Path, tasks: str) -> Path:
    """A pool through the real path: probe (the gold-replaying policy solves every task) and select."""
    probe = runner.invoke(
        app, ["probe", "--policy", "replay", "--server", server, "--tasks", tasks, "--trials", "1",
              "--out", str(tmp_path / "probe"), "--quiet"],
    )  # fmt: skip
    assert probe.exit_code == 0, probe.output
    pool = tmp_path / "pool.json"
    selected = runner.invoke(
        app,
        ["select", str(tmp_path / "probe"), "--out", str(pool), "--keep", "too_easy", "--min-trials", "1"],
    )
    assert selected.exit_code == 0, selected.output
    return pool


def test_train_local_refuses_a_pool_smaller_than_a_step(server: str, tmp_path: Path) -> None:
    pool = pool_of(server, tmp_path, "starter-renew-101")
    result = runner.invoke(
        app, ["train", "local", "--pool", str(pool), "--steps", "1", "--out", str(tmp_path / "out"),
              "--server", server, "--tasks-per-step", "2", "--quiet"],
    )  # fmt: skip
    assert result.exit_code == 1
    assert "holds 1 tasks, fewer than --tasks-per-step 2" in result.output
    bad = runner.invoke(
        app, ["train", "local", "--pool", str(pool), "--steps", "1", "--out", str(tmp_path / "out"),
              "--server", server, "--tasks-per-step", "1", "--episodes-per-task", "3", "--micro-batch", "2"],
    )  # fmt: skip
    assert bad.exit_code == 1 and "--micro-batch 2 must divide" in bad.output


@pytest.mark.slow
def test_train_local_updates_the_model_masks_the_environment_and_saves_an_evaluable_checkpoint(
    server: str, tmp_path: Path
) -> None:
    import torch
    from safetensors.torch import load_file

    from trainer.policies.local import read_model

    tasks = "starter-renew-101,starter-renew-102,starter-return-101,starter-return-102"
    pool = pool_of(server, tmp_path, tasks)
    out = tmp_path / "run"
    args = ["train", "local", "--pool", str(pool), "--steps", "2", "--out", str(out), "--server", server]
    args += ["--tasks-per-step", "2", "--episodes-per-task", "4", "--micro-batch", "4", "--lr", "1e-4"]
    args += ["--max-new-tokens", "40", "--max-turns", "2", "--replacements", "1", "--save-every", "1"]
    args += ["--threads", "2", "--seed", "3", "--quiet"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    lines = [StepLog.model_validate_json(x) for x in (out / LOG_FILE).read_text().splitlines()]
    assert [x.step for x in lines] == [1, 2]
    for line in lines:
        assert line.groups == 2 and line.episodes >= 8 and line.backend_errors == 0
        assert line.informative_groups + line.dropped == 2
        assert line.uninformative + line.incomplete >= line.replaced
        assert line.times.generation_s > 0 and 0 < line.env_share < 1
    informative = [x for x in lines if x.informative_groups]
    assert informative, "the seeded run must meet a group with both outcomes"
    assert all(x.trained_tokens > 0 and x.env_tokens > 0 for x in informative)
    assert all(x.trained_tokens == 0 and x.loss == 0 for x in lines if not x.informative_groups)

    base, _ = read_model("smollm2")
    before = {k: v for k, v in base.state_dict().items()}
    after = load_file(str(out / "final" / "model.safetensors"))
    changed = [k for k, v in after.items() if k in before and not torch.equal(before[k], v)]
    assert changed, "an informative group must move the weights"
    assert sorted(p.name for p in (out / "checkpoints").iterdir()) == ["step-00001", "step-00002"]
    run = json.loads((out / "run.json").read_text())
    assert run["config"]["episodes_per_task"] == 4 and len(run["pool_tasks"]) == 4

    evaluated = runner.invoke(
        app, ["eval", "--policy", f"local:{out / 'final'}?max_new_tokens=40&threads=2", "--server", server,
              "--tasks", "starter-renew-001", "--trials", "1", "--max-turns", "2",
              "--out", str(tmp_path / "ev"), "--quiet"],
    )  # fmt: skip
    assert evaluated.exit_code == 0, evaluated.output
    (line,) = read_results(tmp_path / "ev")
    assert line.status == "scored" and line.policy == f"local:{out / 'final'}"
