"""`groundstate train verl`: the exact command, and the recipes composed and validated by Verl's own code."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

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


@pytest.fixture
def parquet_rows(tmp_path: Path) -> object:
    """A real Parquet train file of `n` rows (only their count matters to the checks)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    def make(n: int) -> Path:
        path = tmp_path / f"train-{n}.parquet"
        pq.write_table(pa.table({"extra_info": [{"task_id": f"t-{i}"} for i in range(n)]}), path)
        return path

    return make


def test_dry_run_refuses_more_parallelism_than_gpus(train_file: Path) -> None:
    code, output = dry_run(f"data.train_files={train_file}", "trainer.n_gpus_per_node=1")
    assert code == 1
    assert "tensor_model_parallel_size=2 x pipeline_model_parallel_size=1" in output
    assert "does not divide the 1 GPUs declared" in output


def test_dry_run_refuses_a_dataset_smaller_than_a_batch(parquet_rows: Any) -> None:
    code, output = dry_run(f"data.train_files={parquet_rows(1)}")
    assert code == 1 and "1 rows, fewer than data.train_batch_size=18" in output
    code, output = dry_run(f"data.train_files={parquet_rows(18)}")
    assert code == 0, output


def test_dry_run_refuses_a_model_too_large_for_the_gpus(train_file: Path) -> None:
    one_gpu = ["trainer.n_gpus_per_node=1", "actor_rollout_ref.rollout.tensor_model_parallel_size=1"]
    code, output = dry_run(f"data.train_files={train_file}", *one_gpu)
    assert code == 1
    assert "Qwen/Qwen2.5-7B-Instruct (~7.0B parameters) needs at least 104 GB per GPU" in output
    assert "more than the 80 GB declared (groundstate.gpu_memory_gb)" in output


@pytest.mark.parametrize("recipe", ["grpo", "grpo_lora"])
def test_the_documented_one_gpu_overrides_pass_the_dry_run(recipe: str, parquet_rows: Any) -> None:
    page = (Path(__file__).resolve().parents[3] / "docs/training/verl.md").read_text()
    block = page.split(f"<!-- one-gpu:{recipe} -->")[1].split("```bash")[1].split("```")[0]
    words = block.replace("\\\n", " ").split()
    overrides = [w for w in words if "=" in w and not w.startswith("data.train_files")]
    assert words[:5] == ["groundstate", "train", "verl", "--config", recipe]
    code, output = dry_run("--config", recipe, f"data.train_files={parquet_rows(4)}", *overrides)
    assert code == 0, output
