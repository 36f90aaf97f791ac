"""`groundstate train verl`: the exact command, and the recipes composed and validated by Verl's own code."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from groundstate.cli import app
from trainer.verl.launch import AGENT_LOOPS, CONFIG_DIR, compose, plan, validate

runner = CliRunner()
SERVER = "http://10.0.0.7:8000"  # never contacted: a dry run composes and validates only


@pytest.fixture
def train_file(tmp_path: Path) -> Path:
    path = tmp_path / "train.parquet"
    path.write_bytes(b"PAR1")  # the checks only need the file to exist
    return path


def dry_run(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, ["train", "verl", "--server", SERVER, "--dry-run", *args])
    return result.exit_code, result.output


def test_dry_run_prints_the_exact_command_and_validates_the_recipe(train_file: Path) -> None:
    code, output = dry_run(
        "--config", "grpo", f"data.train_files={train_file}", "trainer.total_training_steps=3"
    )
    assert code == 0, output
    command = output.splitlines()[0]
    assert (
        command
        == plan("grpo", SERVER, [f"data.train_files={train_file}", "trainer.total_training_steps=3"]).shell()
    )
    assert f"-m verl.trainer.main_ppo --config-path {CONFIG_DIR} --config-name groundstate_grpo" in command
    assert f"groundstate.server_url={SERVER}" in command
    assert f"actor_rollout_ref.rollout.agent.agent_loop_config_path={AGENT_LOOPS}" in command
    assert "config valid" in output and "8 episodes x 18 tasks per step, 3 steps" in output


def test_the_published_recipe_says_what_the_readme_says(train_file: Path) -> None:
    config = compose(plan("grpo", SERVER, [f"data.train_files={train_file}"]))
    validate(config)
    actor = config.actor_rollout_ref.actor
    assert config.algorithm.adv_estimator == "grpo"
    assert config.actor_rollout_ref.rollout.n == 8 and config.data.train_batch_size == 18
    assert actor.loss_agg_mode == "token-mean"
    assert actor.optim.optimizer == "AdamW" and actor.optim.lr == 1e-6 and actor.optim.weight_decay == 0.0
    assert not actor.use_kl_loss and not config.algorithm.use_kl_in_reward
    assert config.algorithm.filter_groups.enable and config.algorithm.filter_groups.metric == "gs_reward"
    assert config.trainer.total_training_steps == 50
    assert config.trainer.v1.sampler.sync_refill_failed_groups
    assert config.actor_rollout_ref.rollout.agent.default_agent_loop == "groundstate"


def test_the_lora_variant_changes_only_the_adapter_settings(train_file: Path) -> None:
    full = compose(plan("grpo", SERVER, [f"data.train_files={train_file}"]))
    lora = compose(plan("grpo_lora", SERVER, [f"data.train_files={train_file}"]))
    validate(lora)
    assert lora.actor_rollout_ref.model.lora.get("merge") is False  # the copy checked without vLLM, not this
    assert lora.actor_rollout_ref.model.lora_rank == 64 and full.actor_rollout_ref.model.lora_rank == 0
    assert lora.actor_rollout_ref.actor.optim.lr == 1e-5
    assert lora.actor_rollout_ref.actor.optim.weight_decay == 0.0
    assert lora.actor_rollout_ref.rollout.n == full.actor_rollout_ref.rollout.n == 8
    assert lora.algorithm == full.algorithm


@pytest.mark.parametrize(
    ("override", "fragment"),
    [
        ("algorithm.filter_groups.metric=acc", "algorithm.filter_groups.metric='acc'"),
        ("trainer.v1.sampler.sync_refill_failed_groups=false", "sync_refill_failed_groups must be true"),
        ("trainer.use_v1=false", "trainer.use_v1 must be true"),
        ("groundstate.max_turns=0", "groundstate.max_turns"),
        ("+groundstate.max_turn=3", "groundstate.max_turn"),
        ("actor_rollout_ref.actor.loss_agg_mode=seq-median", "Invalid loss_agg_mode: seq-median"),
        ("data.no_such_key=1", "does not compose"),
    ],
)
def test_dry_run_refuses_configs_that_cannot_train(train_file: Path, override: str, fragment: str) -> None:
    code, output = dry_run(f"data.train_files={train_file}", override)
    assert code == 1, output
    assert fragment in output


def test_dry_run_refuses_a_missing_dataset() -> None:
    code, output = dry_run("data.train_files=/nonexistent/train.parquet")
    assert code == 1
    assert "data.train_files: no file at /nonexistent/train.parquet" in output


def test_an_unknown_recipe_is_refused() -> None:
    code, output = dry_run("--config", "ppo-deluxe")
    assert code == 2
    assert "grpo, grpo_lora" in output


def test_a_launch_stops_before_verl_when_the_server_does_not_answer(train_file: Path) -> None:
    from tests.live_server import free_port

    url = f"http://127.0.0.1:{free_port()}"
    result = runner.invoke(app, ["train", "verl", "--server", url, f"data.train_files={train_file}"])
    assert result.exit_code == 1
    assert f"the groundstate server at {url} does not answer /healthz" in result.output


def test_the_cli_and_the_server_do_not_import_verl_or_torch() -> None:
    code = (
        "import sys, groundstate.cli, env_server.app, trainer.rollout, trainer.selection, trainer.metrics; "
        "heavy = sorted(m for m in ('verl', 'torch', 'pyarrow', 'ray') if m in sys.modules); "
        "assert not heavy, heavy"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
