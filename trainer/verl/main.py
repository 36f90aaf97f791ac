"""`python -m trainer.verl.main`: Verl's `main_ppo` with the adaptive curriculum drawing the tasks.

Run with the same Hydra arguments as `verl.trainer.main_ppo` (`groundstate train verl --curriculum adaptive`
launches it). With `groundstate.curriculum: static` it runs exactly what `main_ppo` runs (`run_ppo` with
Verl's `TaskRunnerV1`); with `adaptive`, Verl's V1 sync trainer with three overrides, through the extension
points Verl 0.9.1 has (it has no `data.sampler.class_path`, and nothing calls a sampler after a step):

- `run_ppo(config, task_runner_class)` takes the TaskRunner ("for recipe to change TaskRunner"):
  `CurriculumTaskRunner` is Verl's `TaskRunnerV1` building `CurriculumTrainer` instead of the trainer its
  registry names for `trainer.v1.trainer_mode` (`sync`, which the registry cannot map to a second class).
- `CurriculumTrainer._init_dataloader` lets Verl build its train dataloader, then builds the same
  `StatefulDataLoader` (dataset, fetch size, workers, collate function) around `CurriculumSampler`.
- `CurriculumTrainer._init_dataloader` also hands the sampler the `groundstate:` section's server (URL, the
  key from `api_key_env`, `request_timeout_s`) and `mint_per_step`: the sampler mints fresh tasks between
  steps and appends their rows to `train_dataset` (see `trainer.verl.curriculum_sampler`).
- `CurriculumTrainer.step` calls `sampler.update(batch)` after Verl's own `step` (sample the replay buffer,
  advantages, actor update) returns. That is the narrowest point of `fit()`: the only method that holds the
  step's trained groups (still in TransferQueue until `fit` clears them) and that runs before
  `_save_checkpoint`, so the checkpoint's `data.pt` holds the curriculum *after* the step it trained on.
  `on_step_end` comes after the checkpoint and has no batch.

The batch given to `update` is every group the step played, not only the trained ones: Verl's sync replay
buffer evicts groups whose rewards are all equal (`filter_groups`) and discards the surplus, clearing them
from TransferQueue before `step` returns. Those are exactly the all-solved groups that retire a task, so
`RecordingReplayBuffer` (Verl's `ReplayBuffer` with `_clear_groups` reading the groups before they are
cleared) hands them to the trainer too. Failed groups have no trajectory and no reward: they count nothing.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from pathlib import Path
from pprint import pprint
from typing import Any

import hydra
import numpy as np
import ray
from omegaconf import DictConfig, OmegaConf
from torchdata.stateful_dataloader import StatefulDataLoader
from verl.protocol import DataProto
from verl.trainer.main_ppo import TaskRunnerV1, run_ppo
from verl.trainer.ppo.utils import need_critic, need_reference_policy
from verl.trainer.ppo.v1 import PPOTrainerSync
from verl.trainer.ppo.v1.replay_buffer import ReplayBuffer
from verl.utils.config import validate_config
from verl.utils.device import auto_set_device

from trainer.curriculum import StepRecord
from trainer.verl.curriculum_sampler import CurriculumSampler, Server
from trainer.verl.launch import CONFIG_DIR, LaunchError, adaptive_settings, section_settings

__all__ = [
    "CurriculumTaskRunner",
    "CurriculumTrainer",
    "RecordingReplayBuffer",
    "curriculum_dataloader",
    "main",
    "played_batch",
]

logger = logging.getLogger(__name__)

PLAYED_FIELDS = ["uid", "extra_fields"]
"""What is read back from TransferQueue per trajectory: its group and our agent loop's `extra_fields`."""


def played_batch(fields: Any) -> DataProto:
    """Trajectories read from TransferQueue, laid out as Verl's agent-loop output (for `update`).

    `fields` is the TensorDict `tq.kv_batch_get` returns for `PLAYED_FIELDS`: per row the `uid` and the
    `extra_fields` our agent loop returned (`reward_extra_info` with `gs_reward`, `groundstate` with the task
    id). The result has the non-tensor columns Verl's `AgentLoopWorker` makes of them: `uid`, `groundstate`,
    `gs_reward`.
    """
    uids = [str(getattr(u, "data", u)) for u in fields["uid"]]
    extras = [getattr(e, "data", e) for e in fields["extra_fields"]]
    states = [e.get("groundstate", {}) if isinstance(e, dict) else {} for e in extras]
    rewards = [
        float(e.get("reward_extra_info", {}).get("gs_reward", np.nan)) if isinstance(e, dict) else np.nan
        for e in extras
    ]
    return DataProto.from_dict(
        non_tensors={
            "uid": np.array(uids, dtype=object),
            "groundstate": np.array(states, dtype=object),
            "gs_reward": np.array(rewards, dtype=np.float64),
        }
    )


def _read_played(keys: list[str], partition_id: str) -> DataProto | None:
    """The played trajectories of `keys` from TransferQueue (None for no key)."""
    import transfer_queue as tq

    if not keys:
        return None
    return played_batch(tq.kv_batch_get(keys=keys, partition_id=partition_id, select_fields=PLAYED_FIELDS))


class RecordingReplayBuffer(ReplayBuffer):
    """Verl's sync `ReplayBuffer` that reports every training group it clears before clearing it.

    Verl clears a group in `_clear_groups` when it evicts it (no signal, a failed group) and when it discards
    the surplus of a sync step; the groups it trains on are read by the trainer after the step.
    """

    record: Callable[[DataProto], None]
    """Receives the cleared groups' trajectories (set by `adopt`)."""

    @classmethod
    def adopt(cls, buffer: ReplayBuffer, record: Callable[[DataProto], None]) -> RecordingReplayBuffer:
        """This class over the state of a buffer Verl built (its constructor arguments are Verl's to choose).

        Raises:
            LaunchError: The buffer is not Verl's sync `ReplayBuffer` (async modes, a custom sampler).
        """
        if type(buffer) is not ReplayBuffer:
            raise LaunchError(
                f"the adaptive curriculum needs Verl's sync ReplayBuffer, not {type(buffer).__name__} "
                "(trainer.v1.trainer_mode=sync, no trainer.v1.sampler.custom_sampler)"
            )
        adopted = cls.__new__(cls)
        adopted.__dict__.update(buffer.__dict__)
        adopted.record = record
        return adopted

    def _clear_groups(self, partition_id: str, uids: set[str]) -> None:
        if partition_id == "train" and uids:
            keys = sorted(k for k in self.partitions[partition_id] if k.split("_")[0] in uids)
            played = _read_played(keys, partition_id)
            if played is not None:
                self.record(played)
        super()._clear_groups(partition_id, uids)


def curriculum_dataloader(loader: StatefulDataLoader, sampler: CurriculumSampler) -> StatefulDataLoader:
    """Verl's train dataloader with `sampler` in place of Verl's (same dataset, fetch size, collation).

    Raises:
        LaunchError: The loader uses worker processes (they would prefetch indices drawn before an update).
    """
    if loader.num_workers != 0:
        raise LaunchError(
            f"data.dataloader_num_workers={loader.num_workers}: the adaptive curriculum needs 0 (workers "
            "prefetch indices drawn before the previous step's outcomes are in)"
        )
    return StatefulDataLoader(
        dataset=loader.dataset,
        batch_size=loader.batch_size,
        num_workers=0,
        drop_last=loader.drop_last,
        collate_fn=loader.collate_fn,
        sampler=sampler,
    )


def curriculum_metrics(record: StepRecord) -> dict[str, float]:
    """The step's curriculum figures for Verl's logger (`curriculum/...`)."""
    return {
        "curriculum/band": float(record.band),
        "curriculum/active": float(record.active),
        "curriculum/retired": float(len(record.retired)),
        "curriculum/groups": float(record.groups),
        "curriculum/informative_groups": float(record.informative_groups),
    }


class CurriculumTrainer(PPOTrainerSync):
    """Verl's V1 sync trainer whose train dataloader draws through `CurriculumSampler` (module docstring)."""

    def __init__(self, config: DictConfig) -> None:
        self.cleared: list[DataProto] = []
        self.sampler: CurriculumSampler | None = None
        super().__init__(config)

    def _build_replay_buffer(self) -> ReplayBuffer:
        return RecordingReplayBuffer.adopt(super()._build_replay_buffer(), self.cleared.append)

    def _init_dataloader(self) -> None:
        super()._init_dataloader()
        section = section_settings(self.config)
        self.sampler = CurriculumSampler(
            self.train_dataset,
            self.config.data,
            settings=adaptive_settings(self.config, section),
            out_dir=_run_dir(self.config),
            server=Server(
                url=section.server_url,
                api_key=os.environ.get(section.api_key_env) or None,
                timeout_s=section.request_timeout_s,
            ),
            mint_per_step=section.mint_per_step,
        )
        self.train_dataloader = curriculum_dataloader(self.train_dataloader, self.sampler)
        self.train_dataloader_it = None

    def step(self, metrics: dict[str, Any], timing_raw: dict[str, Any]) -> Any:
        """Verl's step, then the curriculum folds in every group the step played (and logs `curriculum/*`)."""
        batch = super().step(metrics, timing_raw)
        metrics.update(curriculum_metrics(self.fold_in(batch)))
        return batch

    def fold_in(self, batch: Any) -> StepRecord:
        """`sampler.update` with the step's trained groups (`batch`, a `KVBatchMeta`) and those cleared.

        Padding rows (copies Verl adds to divide the batch among data-parallel ranks) are not episodes.
        """
        assert self.sampler is not None
        keys = [k for k, tag in zip(batch.keys, batch.tags, strict=True) if not tag.get("is_padding", False)]
        trained = _read_played(keys, batch.partition_id)
        played = [*self.cleared, *([trained] if trained is not None else [])]
        self.cleared.clear()
        return self.sampler.update(DataProto.concat(played)) if played else self.sampler.update_outcomes([])

    def _save_checkpoint(self) -> None:
        super()._save_checkpoint()
        assert self.sampler is not None
        self.sampler.save(Path(self.config.trainer.default_local_dir) / f"global_step_{self.global_steps}")


def _run_dir(config: Any) -> Path:
    """`trainer.default_local_dir`, made absolute as Verl's checkpoint loader does."""
    directory = Path(str(config.trainer.default_local_dir))
    return directory if directory.is_absolute() else Path(os.getcwd()) / directory


class _CurriculumTaskRunner(TaskRunnerV1.__ray_metadata__.modified_class):  # type: ignore[name-defined,misc]
    """Verl's `TaskRunnerV1` with `CurriculumTrainer` as the trainer; `run` is Verl's with that one change."""

    def run(self, config: DictConfig) -> None:
        import transfer_queue as tq
        from verl.utils.logging_utils import configure_verl_logging

        configure_verl_logging()
        config.transfer_queue.enable = True
        pprint(OmegaConf.to_container(config, resolve=True))
        OmegaConf.resolve(config)
        self.config = config
        tq.init(config.transfer_queue)
        succeeded = False
        try:
            self.trainer = CurriculumTrainer(config=config)
            self.trainer.init()
            self.init_agent_loop_manager()
            self.trainer.fit(self.agent_loop_manager)
            succeeded = True
        finally:
            try:
                tracking = getattr(self.trainer, "logger", None)
                if tracking is not None:
                    tracking.finish(exit_code=0 if succeeded else 1)
            finally:
                tq.close()


CurriculumTaskRunner = ray.remote(_CurriculumTaskRunner)
"""The Ray actor `run_ppo` starts for an adaptive run."""


@hydra.main(config_path=str(CONFIG_DIR), config_name="groundstate_grpo", version_base=None)
def main(config: DictConfig) -> None:
    """`main_ppo.main` with the TaskRunner chosen by `groundstate.curriculum`."""
    auto_set_device(config)
    validate_config(
        config=config,
        use_reference_policy=need_reference_policy(config),
        use_critic=need_critic(config),
    )
    settings = section_settings(config)
    problem = settings.minting_problem()
    if problem:
        raise LaunchError(problem)
    if settings.curriculum == "static":  # exactly what main_ppo.main runs
        if config.trainer.use_v1:
            run_ppo(config, task_runner_class=TaskRunnerV1)
        else:
            from verl.trainer.main_ppo_v0 import TaskRunner

            run_ppo(config, task_runner_class=TaskRunner)
        return
    adaptive_settings(config, settings)  # refuse before Ray starts
    run_ppo(config, task_runner_class=CurriculumTaskRunner)


if __name__ == "__main__":
    main()
