"""The adaptive curriculum on Verl's path: Verl's trainer builds the dataloader, Verl's fetch draws from it.

`CurriculumTrainer` is built by Verl's `PPOTrainer.__init__` (the replay buffer Verl configures, adopted) and
its dataloader by Verl's `_init_dataloader` over the Parquet `groundstate train dataset` writes; prompts are
fetched with Verl's `_next_train_batch` (what `prepare_step` and the replay buffer's refills call). Outcomes
reach `update` as the agent loop stores them in TransferQueue (`AgentLoopOutput.as_dict()` plus the prompt's
fields, stacked by Verl's `list_of_dict_to_tensordict`), read back by `played_batch`. Checkpoints go through
the dataloader's `state_dict()` and `torch.save`/`torch.load` exactly as Verl's `_save_checkpoint` and
`_load_checkpoint` do. The slow test starts TransferQueue (on a local Ray instance) and runs Verl's own
`prepare_step` and sync replay-buffer sampling, evictions and refills included; only the GPU part of Verl's
`step` (log-probs, advantages, the actor update) is left out.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from typer.testing import CliRunner

from groundstate.cli import app
from tests.trainer.verl.conftest import verl_config
from trainer.curriculum import Curriculum, CurriculumError, CurriculumSettings, GroupOutcome
from trainer.selection import Pool, TaskSelection, jeffreys_posterior
from trainer.verl.dataset import dataset_rows, write_dataset

runner = CliRunner()
SERVER = "http://10.0.0.7:8000"  # never contacted
GROUP = 4
SLOTS = 3
EASY, HARD = "toybank-easy-001", "toybank-hard-002"
MIXED = [f"toybank-mixed-{i:03d}" for i in range(3, 8)]
TASKS = [EASY, HARD, *MIXED]


def pool_of(task_ids: list[str]) -> Pool:
    selections = [
        TaskSelection(
            task_id=t,
            domain="toybank",
            split="train",
            trials=8,
            successes=4,
            band="medium",
            posterior=jeffreys_posterior(4, 8),
        )
        for t in task_ids
    ]
    return Pool(keep=["medium"], min_trials=4, tasks=selections, histogram={"medium": len(selections)})


@pytest.fixture
def train_file(tmp_path: Path) -> Path:
    return write_dataset(pool_of(TASKS), tmp_path / "train.parquet")


@pytest.fixture
def recipe_file(tmp_path: Path) -> Path:
    """As many tasks as the published recipe's 18 slots."""
    return write_dataset(pool_of([f"toybank-task-{i:03d}" for i in range(18)]), tmp_path / "recipe.parquet")


def adaptive_config(data: Path, run: Path, *overrides: str) -> Any:
    return verl_config(
        SERVER,
        f"data.train_files={data}",
        f"trainer.default_local_dir={run}",
        "groundstate.curriculum=adaptive",
        "data.dataloader_num_workers=0",
        f"data.train_batch_size={SLOTS}",
        "actor_rollout_ref.actor.ppo_mini_batch_size=3",
        f"actor_rollout_ref.rollout.n={GROUP}",
        *overrides,
    )


def make_trainer(data: Path, run: Path, *overrides: str) -> Any:
    """Verl's `__init__` and `_init_dataloader` for real (no model: the dataset needs no tokenizer)."""
    from trainer.verl.main import CurriculumTrainer

    trainer = CurriculumTrainer(adaptive_config(data, run, *overrides))
    trainer.tokenizer, trainer.processor = None, None  # `_init_tokenizer` would read a model directory
    trainer._init_dataloader()
    trainer.global_steps = 1
    return trainer


def fetch(trainer: Any, prompts: int) -> Any:
    """Prompts as Verl fetches them (`_next_train_batch`: one dataloader fetch of gen_batch_size=1 each)."""
    return trainer._next_train_batch(prompts)


def task_ids(batch: Any) -> list[str]:
    return [info["task_id"] for info in batch["extra_info"]]


def stored_episodes(batch: Any, reward: Callable[[str, int], int]) -> Any:
    """What `AgentLoopWorkerTQ` stores for each prompt's GROUP sessions: the output, the prompt's fields."""
    from verl.experimental.agent_loop.agent_loop import AgentLoopMetrics, AgentLoopOutput
    from verl.utils.tensordict_utils import list_of_dict_to_tensordict

    rows = []
    for uid, info in zip(batch["uid"], batch["extra_info"], strict=True):
        for session in range(GROUP):
            score = float(reward(info["task_id"], session))
            output = AgentLoopOutput(
                prompt_ids=[1, 2, 3],
                response_ids=[4, 5],
                response_mask=[1, 1],
                reward_score=score,
                num_turns=2,
                metrics=AgentLoopMetrics(),
                extra_fields={
                    "reward_extra_info": {"gs_reward": score, "gs_turns": 1.0},
                    "groundstate": {"task_id": info["task_id"], "episode_id": f"ep-{uid}-{session}"},
                },
            )
            rows.append({**output.as_dict(), "uid": uid, "extra_info": info, "session_id": session})
    return list_of_dict_to_tensordict(rows)


def outcome(task_id: str, session: int) -> int:
    """EASY is always solved, HARD never, the others half the time."""
    if task_id == EASY:
        return 1
    if task_id == HARD:
        return 0
    return session % 2


def play_step(trainer: Any, refills: int = 1) -> tuple[list[str], list[str]]:
    """One step: the slots, `refills` replacement fetches, and every group folded in through `update`."""
    from verl.protocol import DataProto

    from trainer.verl.main import played_batch

    slots = fetch(trainer, SLOTS)
    extra = [fetch(trainer, 1) for _ in range(refills)]
    played = [played_batch(stored_episodes(b, outcome)) for b in [slots, *extra]]
    trainer.sampler.update(DataProto.concat(played))
    trainer.global_steps += 1
    return task_ids(slots), [t for b in extra for t in task_ids(b)]


def test_draws_follow_the_curriculum(train_file: Path, tmp_path: Path) -> None:
    # evidence never decays here, so the always-solved task retires within the run (at step 10)
    trainer = make_trainer(train_file, tmp_path / "run", "+groundstate.curriculum_options.decay=1.0")
    # an independent curriculum fed the same outcomes draws what Verl fetched
    twin = Curriculum.start(TASKS, CurriculumSettings(group=GROUP, decay=1.0))
    retired_at: int | None = None
    for step in range(1, 16):
        expected = twin.draw(SLOTS)
        band = set(twin.band())
        slots, refills = play_step(trainer, refills=2)
        assert slots == expected
        for task in refills:  # the refills are band tasks outside the slots while the band has any
            assert task not in slots
            assert task in band or not (band - set(slots))
        twin.update(
            [GroupOutcome(task_id=t, rewards=[outcome(t, s) for s in range(GROUP)]) for t in slots + refills]
        )
        if retired_at is None and EASY in {t for t, e in twin.state.tasks.items() if e.retired is not None}:
            retired_at = step
        elif retired_at is not None:
            assert EASY not in slots + refills  # a retired task is never fetched again
    assert retired_at is not None, "the always-solved task was never retired"
    assert trainer.sampler.curriculum.state == twin.state
    drawn = {t: e.drawn for t, e in twin.state.tasks.items()}
    assert all(drawn[t] > 0 for t in MIXED)  # the band is drawn


def test_the_run_logs_every_step_and_saves_the_state(train_file: Path, tmp_path: Path) -> None:
    run = tmp_path / "run"
    trainer = make_trainer(train_file, run)
    for _ in range(3):
        play_step(trainer)
    records = [json.loads(line) for line in (run / "curriculum.jsonl").read_text().splitlines()]
    assert [r["step"] for r in records] == [1, 2, 3]
    assert all(r["groups"] == SLOTS + 1 for r in records)
    saved = json.loads((run / "curriculum.json").read_text())
    assert saved == json.loads(trainer.sampler.curriculum.state.model_dump_json())
    # the viewer reads a Verl run's directory as it reads a `train local` run's
    from shared.curriculum import read_curriculum_log, read_curriculum_state

    assert [r.step for r in read_curriculum_log(run)] == [1, 2, 3]
    assert read_curriculum_state(run) == trainer.sampler.curriculum.state


@pytest.mark.parametrize("mid_step", [False, True])
def test_a_resumed_run_draws_what_an_uninterrupted_one_would(
    train_file: Path, tmp_path: Path, mid_step: bool
) -> None:
    uninterrupted = make_trainer(train_file, tmp_path / "a")
    interrupted = make_trainer(train_file, tmp_path / "b")
    for _ in range(4):
        assert play_step(uninterrupted) == play_step(interrupted)
    if mid_step:  # a checkpoint never falls mid-step in Verl, but the state must still say where it was
        assert task_ids(fetch(uninterrupted, 1)) == task_ids(fetch(interrupted, 1))
    # Verl's _save_checkpoint: torch.save(self.train_dataloader.state_dict(), <step folder>/data.pt)
    folder = tmp_path / "b" / "global_step_4"
    folder.mkdir(parents=True)
    torch.save(interrupted.train_dataloader.state_dict(), folder / "data.pt")
    interrupted.sampler.save(folder)  # what CurriculumTrainer._save_checkpoint adds to Verl's
    del interrupted

    # Verl's _load_checkpoint: train_dataloader.load_state_dict(torch.load(<folder>/data.pt, ...))
    resumed = make_trainer(train_file, tmp_path / "b")
    resumed.train_dataloader.load_state_dict(torch.load(folder / "data.pt", weights_only=False))
    resumed.global_steps = 5
    if mid_step:
        assert task_ids(fetch(uninterrupted, 1)) == task_ids(fetch(resumed, 1))
    for _ in range(4):
        assert play_step(uninterrupted) == play_step(resumed)
    assert resumed.sampler.curriculum.state == uninterrupted.sampler.curriculum.state
    # the checkpoint folder holds the curriculum as JSON too, and the log restarts after the checkpoint
    assert json.loads((folder / "curriculum.json").read_text())["step"] == 4
    steps = [
        json.loads(line)["step"] for line in (tmp_path / "b" / "curriculum.jsonl").read_text().splitlines()
    ]
    assert steps == list(range(1, 9))


def test_a_test_split_row_is_refused(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = dataset_rows(pool_of([MIXED[0], "toybank-transfer-001"]))
    rows[1]["extra_info"]["split"] = "test"  # as a hand-edited file could say
    data = tmp_path / "train.parquet"
    pq.write_table(pa.Table.from_pylist(rows), data)
    with pytest.raises(CurriculumError, match=r"test-split tasks never enter training.*toybank-transfer-001"):
        make_trainer(data, tmp_path / "run")
    result = runner.invoke(
        app,
        [
            "train",
            "verl",
            "--server",
            SERVER,
            "--dry-run",
            "--curriculum",
            "adaptive",
            f"data.train_files={data}",
            "data.train_batch_size=2",  # one step's worth of these two rows, so only the split is wrong
            "actor_rollout_ref.actor.ppo_mini_batch_size=2",
        ],
    )
    assert result.exit_code == 1
    assert "test-split tasks never enter training; the dataset holds: toybank-transfer-001" in result.output


def test_outcomes_of_unknown_tasks_and_non_binary_rewards_are_refused(
    train_file: Path, tmp_path: Path
) -> None:
    from verl.protocol import DataProto

    from trainer.verl.main import played_batch

    trainer = make_trainer(train_file, tmp_path / "run")
    batch = fetch(trainer, SLOTS)
    batch["extra_info"][0]["task_id"] = "toybank-stranger-099"
    episodes = stored_episodes(batch, outcome)
    with pytest.raises(
        CurriculumError, match="outcomes of tasks outside the curriculum: toybank-stranger-099"
    ):
        trainer.sampler.update(played_batch(episodes))
    scored = DataProto.from_single_dict(
        {
            "uid": np.array(["u1", "u1"], dtype=object),
            "groundstate": np.array([{"task_id": MIXED[0]}] * 2, dtype=object),
            "gs_reward": np.array([1.0, 0.5]),
        }
    )
    with pytest.raises(CurriculumError, match=r"reward 0\.5"):
        trainer.sampler.update(scored)
    assert trainer.sampler.curriculum.state.step == 0  # nothing was folded in


def test_the_batch_layout_of_verls_v0_agent_loop_output_is_read_too(train_file: Path, tmp_path: Path) -> None:
    """`AgentLoopWorker.generate_sequences` (V0) flattens reward_extra_info and extra_fields into columns."""
    from verl.protocol import DataProto

    from trainer.verl.curriculum_sampler import group_outcomes

    batch = DataProto.from_single_dict(
        {
            "rm_scores": torch.tensor([[0.0, 1.0], [0.0, 0.0], [0.0, 1.0], [0.0, 1.0]]),
            "uid": np.array(["u1", "u1", "u2", "u2"], dtype=object),
            "groundstate": np.array([{"task_id": t} for t in (HARD, HARD, EASY, EASY)], dtype=object),
        }
    )
    assert group_outcomes(batch) == [
        GroupOutcome(task_id=HARD, rewards=[1, 0]),
        GroupOutcome(task_id=EASY, rewards=[1, 1]),
    ]


def test_verls_replay_buffer_is_kept_and_only_reports_what_it_clears(
    train_file: Path, tmp_path: Path
) -> None:
    from verl.trainer.ppo.v1.replay_buffer import ReplayBuffer, ReplayBufferAsync

    from trainer.verl.launch import LaunchError
    from trainer.verl.main import RecordingReplayBuffer

    trainer = make_trainer(train_file, tmp_path / "run")
    buffer = trainer.replay_buffer
    assert isinstance(buffer, RecordingReplayBuffer) and isinstance(buffer, ReplayBuffer)
    # the settings Verl gave its own buffer: filter_groups on gs_reward, failed groups refilled one at a time
    assert buffer.filter_groups_metric == "gs_reward" and buffer.sync_refill_failed_groups
    assert buffer.gen_batch_size == 1 and buffer.train_batch_size == SLOTS
    assert buffer.refill_fn == trainer._add_prompts_to_generate
    async_buffer = ReplayBufferAsync(
        trainer_mode="async",
        trainer_config={},
        max_off_policy_threshold=None,
        max_off_policy_strategy="drop",
        sampler_kwargs={},
    )
    with pytest.raises(LaunchError, match="sync ReplayBuffer"):
        RecordingReplayBuffer.adopt(async_buffer, lambda _: None)


def dry_run(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, ["train", "verl", "--server", SERVER, "--dry-run", *args])
    return result.exit_code, result.output


def test_dry_run_of_the_adaptive_recipe_runs_our_entry(recipe_file: Path) -> None:
    from trainer.verl.launch import compose, plan

    code, output = dry_run("--curriculum", "adaptive", f"data.train_files={recipe_file}")
    assert code == 0, output
    command = output.splitlines()[0]
    assert "-m trainer.verl.main --config-path" in command
    assert "groundstate.curriculum=adaptive data.dataloader_num_workers=0" in command
    assert "curriculum adaptive" in output
    config = compose(plan("grpo", SERVER, [f"data.train_files={recipe_file}"], curriculum="adaptive"))
    assert config.groundstate.curriculum == "adaptive" and config.data.dataloader_num_workers == 0
    # the config decides, not the flag: a recipe saying adaptive never reaches Verl's main_ppo
    code, output = dry_run(
        f"data.train_files={recipe_file}", "groundstate.curriculum=adaptive", "data.dataloader_num_workers=0"
    )
    assert code == 0, output
    assert "-m trainer.verl.main " in output.splitlines()[0]
    code, output = dry_run(f"data.train_files={recipe_file}")
    assert code == 0 and "-m verl.trainer.main_ppo " in output.splitlines()[0]
    assert "curriculum static" in output


def test_our_entry_composes_the_launch_as_main_ppo_does(recipe_file: Path) -> None:
    """`python -m trainer.verl.main <launch arguments> --cfg job`: Hydra composes, prints, runs nothing."""
    import subprocess

    from trainer.verl.launch import plan

    launch = plan("grpo", SERVER, [f"data.train_files={recipe_file}"], curriculum="adaptive")
    assert launch.command()[1:3] == ["-m", "trainer.verl.main"]
    root = Path(__file__).resolve().parents[3]
    done = subprocess.run(
        [*launch.command(), "--cfg", "job"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "curriculum: adaptive" in done.stdout and "dataloader_num_workers: 0" in done.stdout
    assert f"train_files: {recipe_file}" in done.stdout


@pytest.mark.parametrize(
    ("override", "fragment"),
    [
        ("data.dataloader_num_workers=2", "needs data.dataloader_num_workers=0"),
        ("actor_rollout_ref.rollout.n=1", "actor_rollout_ref.rollout.n of at least 2"),
        ("+groundstate.curriculum_options.decay=2", "groundstate.curriculum_options.decay"),
        ("+groundstate.curriculum_options.group=3", "the group size is actor_rollout_ref.rollout.n"),
        ("groundstate.curriculum=sometimes", "groundstate.curriculum"),
        ("data.train_batch_size=24", "18 rows, fewer than data.train_batch_size=24"),
    ],
)
def test_dry_run_refuses_what_the_curriculum_cannot_run(
    recipe_file: Path, override: str, fragment: str
) -> None:
    code, output = dry_run("--curriculum", "adaptive", f"data.train_files={recipe_file}", override)
    assert code == 1, output
    assert fragment in output


def test_the_curriculum_settings_follow_the_config(train_file: Path, tmp_path: Path) -> None:
    trainer = make_trainer(
        train_file, tmp_path / "run", "+groundstate.curriculum_options.decay=0.5", "data.seed=7"
    )
    assert trainer.sampler.curriculum.settings == CurriculumSettings(group=GROUP, decay=0.5, seed=7)


class TransferQueueRollout:
    """Plays prompts as Verl's `AgentLoopWorkerTQ` reports them: the same TransferQueue puts, tags and fields.

    It stands in for the agent-loop workers and vLLM (no model here); every episode's reward is `outcome`.
    """

    def __init__(self) -> None:
        self.played: list[tuple[str, list[int]]] = []

    def generate_sequences(self, batch: Any) -> None:
        import transfer_queue as tq
        from verl.experimental.agent_loop.agent_loop import AgentLoopMetrics, AgentLoopOutput
        from verl.utils.tensordict_utils import list_of_dict_to_tensordict

        for i in range(len(batch)):
            uid, info = batch["uid"][i], batch["extra_info"][i]
            steps = batch["global_steps"]
            steps = int(getattr(steps, "data", steps))
            tq.kv_put(key=uid, partition_id="train", tag={"status": "running"})
            rewards = [outcome(info["task_id"], s) for s in range(GROUP)]
            rows, tags = [], []
            for session, reward in enumerate(rewards):
                output = AgentLoopOutput(
                    prompt_ids=[1, 2, 3],
                    response_ids=[4, 5],
                    response_mask=[1, 1],
                    reward_score=float(reward),
                    metrics=AgentLoopMetrics(),
                    extra_fields={
                        "reward_extra_info": {"gs_reward": float(reward)},
                        "groundstate": {"task_id": info["task_id"]},
                    },
                )
                rows.append({**output.as_dict(), "uid": uid, "extra_info": info, "session_id": session})
                tags.append({"status": "success", "seq_len": 5, "global_steps": steps})
            keys = [f"{uid}_{s}_0" for s in range(GROUP)]
            tq.kv_batch_put(
                keys=keys, partition_id="train", fields=list_of_dict_to_tensordict(rows), tags=tags
            )
            tq.kv_put(key=uid, partition_id="train", tag={"status": "finished"})
            self.played.append((info["task_id"], rewards))


@pytest.fixture(scope="module")
def transfer_queue() -> Any:
    """TransferQueue on a local Ray instance (~20 s): where Verl's V1 trainer keeps prompts and episodes."""
    ray = pytest.importorskip("ray")
    import transfer_queue as tq
    from omegaconf import OmegaConf

    ray.init(num_cpus=4, include_dashboard=False, log_to_driver=False)
    tq.init(OmegaConf.create({"backend": {"SimpleStorage": {"num_data_storage_units": 1}}}))
    yield tq
    tq.close()
    ray.shutdown()


@pytest.mark.slow
def test_every_group_verls_replay_buffer_plays_reaches_the_curriculum(
    train_file: Path, tmp_path: Path, transfer_queue: Any
) -> None:
    """Verl's sync step with filter_groups: prompts, evictions, refills, trained batch, in TransferQueue."""
    from trainer.verl.curriculum_sampler import group_outcomes
    from trainer.verl.main import PLAYED_FIELDS, played_batch

    trainer = make_trainer(train_file, tmp_path / "run")
    trainer.replay_buffer.poll_interval = 0.05  # Verl polls every 2 s; the rollout here finishes at once
    rollout = TransferQueueRollout()
    trainer.agent_loop_manager = rollout
    twin = Curriculum.start(TASKS, CurriculumSettings(group=GROUP))
    evicted_total = 0
    for _ in range(4):
        expected = twin.draw(SLOTS)
        rollout.played.clear()
        trainer.prepare_step()  # Verl: submit the step's train_batch_size prompts
        assert [task for task, _ in rollout.played] == expected
        # Verl's sampling: groups without variance are evicted and refilled (from the curriculum's refills)
        batch, metrics = trainer.replay_buffer.sample(
            global_steps=trainer.global_steps, partition_id="train", batch_size=SLOTS
        )
        stored = transfer_queue.kv_batch_get(
            keys=batch.keys, partition_id="train", select_fields=PLAYED_FIELDS
        )
        trained = group_outcomes(played_batch(stored))
        record = trainer.fold_in(batch)
        transfer_queue.kv_clear(keys=batch.keys, partition_id="train")  # what fit() does after the step
        trainer.global_steps += 1

        assert len(trained) == SLOTS and all(set(g.rewards) == {0, 1} for g in trained)
        twin.update([GroupOutcome(task_id=t, rewards=r) for t, r in rollout.played])
        evicted = metrics.get("training/filter_groups/evicted_samples", 0)
        surplus = metrics.get("training/filter_groups/discarded_surplus_samples", 0)
        evicted_total += evicted
        # every group played reached the curriculum: trained, evicted for no signal, or discarded as surplus
        assert record.groups == len(rollout.played) == len(trained) + evicted + surplus
        assert trainer.sampler.curriculum.state == twin.state
        assert not trainer.cleared
    assert evicted_total > 0  # the all-solved and all-failed groups were among them
