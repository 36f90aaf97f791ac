"""`CurriculumSampler`: the adaptive curriculum (`trainer.curriculum`) as Verl's train sampler.

Verl 0.9.1 builds its train sampler in `create_rl_sampler` (random or sequential, nothing else) and calls no
sampler after a step. Later Verl releases add `data.sampler.class_path` and an `AbstractCurriculumSampler`
(a torch `Sampler` built as `cls(data_source, data_config)` whose `update(batch)` the trainer calls after each
step). This class has that interface, so it moves to the upstream hook unchanged once Verl has it; until then
`trainer.verl.main` hands it to Verl's dataloader and calls `update` (see there for where and why).

What it yields. A dataset row is one task (`extra_info.task_id`, `trainer.verl.dataset`). Each step, the
first `slots` indices are the rows of `Curriculum.draw(slots)` (`slots` = `data.train_batch_size`: Verl
fetches one step's prompts first). Whatever Verl fetches after that in the same step replaces a group it
evicted (no variance, or a backend failure): those are the curriculum's refills (band tasks outside the
step's slots, shuffled with a seed of the step), then the other active tasks, stalest first, in a cycle. A
retired task is never yielded. A new step begins when `update` folds in the previous one, so the dataloader
must not prefetch (`data.dataloader_num_workers=0`: a worker process would draw indices before the update).

What it remembers. `state_dict()` is the curriculum's state (the JSON of `curriculum.json`) and how many
indices the current step has handed out: torchdata's `StatefulDataLoader` saves it with the dataloader (Verl
writes that to `data.pt` in every checkpoint) and gives it back to `load_state_dict` on resume, so a resumed
run draws exactly what the uninterrupted one would have. `update` also appends the step's `StepRecord` to
`curriculum.jsonl` and saves `curriculum.json` in the run directory, as `groundstate train local` does.

Test tasks never enter: every row must say `split: train` (the dataset builder refuses test tasks, and this
checks the file it is given), and `update` refuses outcomes of tasks that are not rows of the dataset.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator, Mapping, Sequence, Sized
from pathlib import Path
from typing import TYPE_CHECKING, Any

from torch.utils.data import Sampler

from trainer.curriculum import (
    CURRICULUM_FILE,
    CURRICULUM_LOG,
    Curriculum,
    CurriculumError,
    CurriculumSettings,
    CurriculumState,
    GroupOutcome,
    StepRecord,
)

if TYPE_CHECKING:
    from verl.protocol import DataProto

__all__ = ["CurriculumSampler", "dataset_task_ids", "group_outcomes", "row_task_ids"]

_STATE = "curriculum"
_HANDED = "handed"


def dataset_task_ids(data_source: Sized) -> list[str]:
    """The task id of every row of a groundstate dataset, in row order.

    Reads the `extra_info` column of Verl's `RLHFDataset` (its `dataframe`) without building prompts, or each
    item of any other dataset.

    Raises:
        CurriculumError: A row has no task id, or is not of the train split.
    """
    frame = getattr(data_source, "dataframe", None)
    if frame is not None and "extra_info" in getattr(frame, "column_names", ()):
        infos: list[Any] = list(frame["extra_info"])
    else:
        infos = [data_source[i]["extra_info"] for i in range(len(data_source))]  # type: ignore[index]
    return row_task_ids(infos)


def row_task_ids(infos: Sequence[Any]) -> list[str]:
    """The task ids of dataset rows given their `extra_info` values (see `dataset_task_ids`).

    Raises:
        CurriculumError: A row has no task id, or is not of the train split.
    """
    ids: list[str] = []
    leaked: list[str] = []
    for row, info in enumerate(infos):
        task_id = info.get("task_id") if isinstance(info, Mapping) else None
        if not isinstance(task_id, str) or not task_id:
            raise CurriculumError(
                f"row {row} of the dataset has no extra_info.task_id "
                "(build it with `groundstate train dataset`)"
            )
        if info.get("split") != "train":
            leaked.append(task_id)
        ids.append(task_id)
    if leaked:
        raise CurriculumError(
            f"test-split tasks never enter training; the dataset holds: {', '.join(leaked)}"
        )
    if not ids:
        raise CurriculumError("the dataset has no row: nothing to draw")
    return ids


def group_outcomes(batch: DataProto) -> list[GroupOutcome]:
    """The played groups of a batch laid out as Verl's agent-loop output: one `GroupOutcome` per `uid`.

    Per row, the task id is `non_tensor_batch["groundstate"][i]["task_id"]` (our agent loop's
    `extra_fields.groundstate`), else the dataset row's `extra_info.task_id`; the reward is
    `non_tensor_batch["gs_reward"][i]` (its `reward_extra_info`), else the sum of the row's `rm_scores`.

    Raises:
        CurriculumError: A row names no task, its reward is not 0 or 1, or one uid spans two tasks.
    """
    rows = len(batch)
    extra = batch.non_tensor_batch
    uids = extra.get("uid")
    groups: dict[str, GroupOutcome] = {}
    for i in range(rows):
        task_id = _row_task(extra, i)
        reward = _row_reward(batch, i)
        key = str(uids[i]) if uids is not None else f"row-{i}"
        group = groups.setdefault(key, GroupOutcome(task_id=task_id, rewards=[]))
        if group.task_id != task_id:
            raise CurriculumError(f"group {key} holds episodes of {group.task_id} and {task_id}")
        group.rewards.append(reward)
    return list(groups.values())


def _row_task(extra: Mapping[str, Any], i: int) -> str:
    for column, field in (("groundstate", "task_id"), ("extra_info", "task_id")):
        values = extra.get(column)
        value = values[i] if values is not None else None
        value = getattr(value, "data", value)
        task_id = value.get(field) if isinstance(value, Mapping) else None
        if isinstance(task_id, str) and task_id:
            return task_id
    raise CurriculumError(
        f"row {i} of the batch names no task (no groundstate.task_id, no extra_info.task_id)"
    )


def _row_reward(batch: DataProto, i: int) -> int:
    values = batch.non_tensor_batch.get("gs_reward")
    if values is not None:
        reward = float(values[i])
    elif batch.batch is not None and "rm_scores" in batch.batch:
        reward = float(batch.batch["rm_scores"][i].sum().item())
    else:
        raise CurriculumError(f"row {i} of the batch carries no reward (no gs_reward, no rm_scores)")
    if reward not in (0.0, 1.0):
        raise CurriculumError(f"row {i} of the batch has reward {reward}: the curriculum counts 0/1 outcomes")
    return int(reward)


class CurriculumSampler(Sampler[int]):
    """Dataset indices drawn by `trainer.curriculum.Curriculum`, step by step (see the module docstring).

    Args:
        data_source: The train dataset (Verl's `RLHFDataset` over `groundstate train dataset` rows).
        data_config: Verl's `data` config: `train_batch_size` is the number of slots per step.
        settings: The curriculum's settings (group size = `actor_rollout_ref.rollout.n`); Verl's later
            factory passes only the first two arguments, our trainer passes this too.
        out_dir: Where `curriculum.jsonl` and `curriculum.json` go (`trainer.default_local_dir`);
            None: nowhere.

    Raises:
        CurriculumError: A row is not a train task, or has no task id.
    """

    def __init__(
        self,
        data_source: Sized,
        data_config: Mapping[str, Any],
        *,
        settings: CurriculumSettings,
        out_dir: str | Path | None = None,
    ) -> None:
        self.data_source = data_source
        self.slots = int(data_config["train_batch_size"])
        self.task_ids = dataset_task_ids(data_source)
        self.rows: dict[str, int] = {}
        for row, task_id in enumerate(self.task_ids):
            self.rows.setdefault(task_id, row)
        self.curriculum = Curriculum.start(self.task_ids, settings)
        self.out_dir = Path(out_dir) if out_dir is not None else None
        self.handed = 0
        """Indices handed out at the current step (its slots, then its refills)."""
        self._order: tuple[int, list[str], list[str]] | None = None
        self._log_checked = False

    # ------------------------------------------------------------------ the torch Sampler

    def __len__(self) -> int:
        """One pass over the dataset's rows (the iterator itself never ends: the curriculum decides)."""
        return len(self.task_ids)

    def __iter__(self) -> Iterator[int]:
        """Endless indices; each is chosen when asked for, so it reflects every `update` before it."""
        while True:
            yield self.rows[self.next_task()]

    def next_task(self) -> str:
        """The task of the next index: the step's next slot, or its next refill."""
        _, slots, extra = self._step_order()
        position = self.handed
        self.handed += 1
        if position < len(slots):
            return slots[position]
        if not extra:
            return slots[(position - len(slots)) % len(slots)]
        return extra[(position - len(slots)) % len(extra)]

    def _step_order(self) -> tuple[int, list[str], list[str]]:
        """This step's slots and what refills them, computed once per step (a function of the state)."""
        step = self.curriculum.state.step
        if self._order is None or self._order[0] != step:
            slots = self.curriculum.draw(self.slots)
            refills = self.curriculum.refills(slots)
            random.Random(f"{self.curriculum.settings.seed}:{step}:refills").shuffle(refills)
            taken = set(slots) | set(refills)
            tasks = self.curriculum.state.tasks
            stale = sorted(
                (t for t in self.curriculum.active() if t not in taken),
                key=lambda t: (tasks[t].last_drawn or -1, t),
            )
            self._order = (step, slots, refills + stale)
        return self._order

    # ------------------------------------------------------------------ the curriculum hook

    def update(self, batch: DataProto) -> StepRecord:
        """Fold one step's played groups into the curriculum and start the next step.

        `batch` holds every episode Verl played at the step that the trainer could read back: the trained
        groups and those it evicted (see `trainer.verl.main`), one `uid` per group. The step's record is
        appended to `curriculum.jsonl` and the state saved to `curriculum.json` in `out_dir`.

        Raises:
            CurriculumError: The batch holds a task that is not a row of the dataset, or an unreadable row.
        """
        return self.update_outcomes(group_outcomes(batch))

    def update_outcomes(self, outcomes: Sequence[GroupOutcome]) -> StepRecord:
        """`update` for outcomes already grouped (what `update` does after reading the batch)."""
        before = self.curriculum.state.step
        record = self.curriculum.update(outcomes)
        self.handed = 0
        if self.out_dir is not None:
            self.out_dir.mkdir(parents=True, exist_ok=True)
            log = self.out_dir / CURRICULUM_LOG
            if not self._log_checked:
                _truncate_log(log, before)
                self._log_checked = True
            with log.open("a", encoding="utf-8") as handle:
                handle.write(record.model_dump_json() + "\n")
            self.save(self.out_dir)
        return record

    def save(self, directory: str | Path) -> Path:
        """Write the curriculum's state as `curriculum.json` in `directory` (a run or a checkpoint folder)."""
        return self.curriculum.save(Path(directory) / CURRICULUM_FILE)

    # ------------------------------------------------------------------ torchdata's Stateful protocol

    def state_dict(self) -> dict[str, Any]:
        """The curriculum's state (as JSON text) and the indices handed out at the current step."""
        return {_STATE: self.curriculum.state.model_dump_json(), _HANDED: self.handed}

    def load_state_dict(self, state_dict: Mapping[str, Any]) -> None:
        """Resume from `state_dict()` (tasks added to the dataset since are admitted, fresh).

        Raises:
            CurriculumError: The state is not a curriculum's, or holds tasks the dataset no longer has.
        """
        try:
            curriculum = Curriculum(CurriculumState.model_validate_json(state_dict[_STATE]))
            handed = int(state_dict[_HANDED])
        except (KeyError, TypeError, ValueError) as exc:
            raise CurriculumError(f"not a curriculum sampler's state: {exc}") from exc
        missing = sorted(set(curriculum.state.tasks) - set(self.rows))
        if missing:
            raise CurriculumError(
                f"the curriculum being resumed holds tasks the dataset has no row for: {', '.join(missing)}"
            )
        if curriculum.settings != self.curriculum.settings:
            raise CurriculumError(
                f"the run's curriculum settings ({self.curriculum.settings.model_dump()}) differ from the "
                f"resumed state's ({curriculum.settings.model_dump()})"
            )
        curriculum.add(self.task_ids)
        self.curriculum, self.handed, self._order = curriculum, handed, None


def _truncate_log(log: Path, step: int) -> None:
    """Drop the log's records after `step`: a resumed run replays the steps after its checkpoint.

    A fresh run (step 0) in a directory that held another run does not inherit its lines either.
    """
    if not log.exists():
        return
    kept = [line for line in log.read_text().splitlines() if line and json.loads(line)["step"] <= step]
    log.write_text("".join(f"{line}\n" for line in kept))
