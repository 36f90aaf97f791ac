"""`groundstate train dataset`: the Parquet Verl's dataset class loads; its rows reach `run()` via Verl."""

from __future__ import annotations

import asyncio
import copy
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

from groundstate.cli import app
from tests.trainer.verl.conftest import LiveServer, ScriptedServerManager, verl_config
from trainer.policies.local import LocalModel
from trainer.selection import Pool, TaskSelection, jeffreys_posterior

runner = CliRunner()
TRAIN_TASKS = ("toybank-refuse-frozen-002", "toybank-analytics-005")


def write_pool(path: Path, tasks: dict[str, str]) -> Path:
    """A pool file as `groundstate select` writes it; `tasks` maps task id to its split."""
    selections = [
        TaskSelection(
            task_id=task_id,
            domain="toybank",
            split="train",
            trials=8,
            successes=3,
            band="hard",
            posterior=jeffreys_posterior(3, 8),
        )
        for task_id in tasks
    ]
    pool = Pool(keep=["hard"], min_trials=4, tasks=selections, histogram={"hard": len(selections)})
    data = json.loads(pool.model_dump_json())
    for entry in data["tasks"]:
        entry["split"] = tasks[entry["task_id"]]  # as a hand-edited file could say
    path.write_text(json.dumps(data))
    return path


def test_dataset_rows_are_what_verl_loads(tmp_path: Path, smollm2: LocalModel) -> None:
    from verl.utils.dataset.rl_dataset import RLHFDataset

    pool = write_pool(tmp_path / "pool.json", dict.fromkeys(TRAIN_TASKS, "train"))
    out = tmp_path / "data" / "train.parquet"
    result = runner.invoke(app, ["train", "dataset", "--pool", str(pool), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "2 rows" in " ".join(result.output.split())  # Rich wraps a long path at narrow widths

    config = verl_config("http://127.0.0.1:1", f"data.train_files={out}")
    dataset = RLHFDataset(str(out), smollm2.tokenizer, config.data)
    assert len(dataset) == 2
    for index, task_id in enumerate(TRAIN_TASKS):
        item = dataset[index]
        assert item["agent_name"] == "groundstate"
        assert item["data_source"] == "groundstate/toybank"
        assert item["extra_info"]["task_id"] == task_id and item["index"] == index
        assert item["reward_model"] == {"style": "groundstate", "ground_truth": task_id}
        assert item["raw_prompt"][0]["content"] == f"groundstate task {task_id}"


def test_a_pool_with_a_test_task_is_refused(tmp_path: Path) -> None:
    pool = write_pool(
        tmp_path / "pool.json", {"toybank-refuse-frozen-002": "train", "toybank-transfer-001": "test"}
    )
    out = tmp_path / "train.parquet"
    result = runner.invoke(app, ["train", "dataset", "--pool", str(pool), "--out", str(out)])
    assert result.exit_code == 1
    assert "test-split tasks can never enter a training pool: toybank-transfer-001" in result.output
    assert not out.exists()


def test_a_task_the_server_lists_as_test_is_refused(tmp_path: Path, live_server: LiveServer) -> None:
    # the file claims `train`, the server knows better: the benchmark never enters training
    pool = write_pool(
        tmp_path / "pool.json", {"toybank-refuse-frozen-002": "train", "toybank-transfer-001": "train"}
    )
    out = tmp_path / "train.parquet"
    args = ["train", "dataset", "--pool", str(pool), "--out", str(out), "--server", live_server.url]
    result = runner.invoke(app, args)
    assert result.exit_code == 1
    assert "test-split tasks never enter training; the pool holds: toybank-transfer-001" in result.output
    assert not out.exists()


class SaysOnce(ScriptedServerManager):
    """Says `text` in each episode's first turn and nothing after (the empty turn ends the episode)."""

    def __init__(self, loaded: LocalModel, text: str) -> None:
        super().__init__(loaded, [])
        self.text, self.episodes, self.generated = text, set[str](), 0

    async def generate(
        self, request_id: str, *, prompt_ids: list[int], sampling_params: dict[str, Any], **kwargs: Any
    ) -> Any:
        self.texts = [] if request_id in self.episodes else [self.text]  # no await before the parent pops it
        self.episodes.add(request_id)
        out = await super().generate(
            request_id, prompt_ids=prompt_ids, sampling_params=sampling_params, **kwargs
        )
        self.generated += len(out.token_ids)
        return out


@pytest.mark.slow
def test_rows_reach_run_as_verl_passes_them(
    tmp_path: Path, smollm2: LocalModel, live_server: LiveServer
) -> None:
    """Parquet -> RLHFDataset -> collate_fn -> DataProto -> Verl's AgentLoopWorker -> our loop -> a batch."""
    from verl.experimental.agent_loop.agent_loop import AgentLoopWorker
    from verl.protocol import DataProto
    from verl.utils.dataset.rl_dataset import RLHFDataset, collate_fn

    model_dir = tmp_path / "smollm2-hf"  # Verl reads tokenizer and config from a model directory
    smollm2.tokenizer.save_pretrained(model_dir)
    hf_config = copy.deepcopy(smollm2.model.config)
    hf_config.architectures = [type(smollm2.model).__name__]  # a GGUF-loaded config names none
    hf_config.save_pretrained(model_dir)
    smollm2.model.generation_config.save_pretrained(model_dir)
    pool = write_pool(tmp_path / "pool.json", dict.fromkeys(TRAIN_TASKS, "train"))
    out = tmp_path / "train.parquet"
    assert runner.invoke(app, ["train", "dataset", "--pool", str(pool), "--out", str(out)]).exit_code == 0

    config = verl_config(
        live_server.url,
        f"data.train_files={out}",
        f"actor_rollout_ref.model.path={model_dir}",
        "actor_rollout_ref.rollout.n=2",
    )
    dataset = RLHFDataset(str(out), smollm2.tokenizer, config.data)
    batch = DataProto.from_single_dict(collate_fn([dataset[0], dataset[1]]))
    batch.non_tensor_batch["uid"] = np.array(["uid-a", "uid-b"], dtype=object)
    batch = batch.repeat(repeat_times=2, interleave=True)  # GRPO: each task's group of n sessions
    generator = SaysOnce(smollm2, "Sorry, that account is frozen, so I cannot move money from it.")
    worker = AgentLoopWorker(config, generator)
    output = asyncio.run(worker.generate_sequences(batch))

    assert len(output) == 4
    info: list[dict[str, Any]] = list(output.non_tensor_batch["groundstate"])
    assert [i["task_id"] for i in info] == [TRAIN_TASKS[0], TRAIN_TASKS[0], TRAIN_TASKS[1], TRAIN_TASKS[1]]
    assert len({i["episode_id"] for i in info}) == 4  # every session is its own episode on the server
    # naming the decisive fact and changing nothing is right for the refusal task, wrong for the analytics one
    assert list(output.non_tensor_batch["gs_reward"]) == [1.0, 1.0, 0.0, 0.0]
    assert output.batch["rm_scores"].sum(dim=1).tolist() == [1.0, 1.0, 0.0, 0.0]
    assert output.batch["responses"].shape[1] == config.actor_rollout_ref.rollout.response_length
    assert output.batch["response_mask"].sum().item() == generator.generated  # exactly the model's tokens
