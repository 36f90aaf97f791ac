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

Fresh tasks (`groundstate.mint_per_step` N > 0). Before a step's slots are drawn (right after `update`
folds in the previous step, and before the first step) the sampler tops the curriculum up by the rule of
`groundstate train local --mint-per-step` (`trainer.minting.Minter`: when the band holds fewer tasks than
the step's slots, at most N tasks from the families whose posterior is in the band, `POST /v1/tasks/mint`).
Each admitted task becomes a row of the dataset the dataloader reads: the row `trainer.verl.dataset.task_row`
builds (band `minted`) is appended to the `RLHFDataset`'s `dataframe` in this process (the dataloader has no
worker process, so its fetcher indexes this very object), after Verl's own length filter when it is on. A
row the filter drops is retired at once. The state saved with a checkpoint is taken after the top-up, so it
holds the minted tasks; a resumed run, whose dataset is read again from Parquet, asks the server for its
train tasks and appends the rows of those it still serves (in the order they were minted) before drawing,
and retires the others (as `train local` does), so it draws what the uninterrupted run would have. A mint
request the server fails is logged and skipped (the next step asks again): it costs fresh tasks, not the run.

Test tasks never enter: every row must say `split: train` (the dataset builder refuses test tasks, and this
checks the file it is given), `update` refuses outcomes of tasks that are not rows of the dataset, and a
minted task becomes a row only if the server says it is a train task (`Minter` refuses any other; on resume
only the server's train tasks are re-appended).
"""

from __future__ import annotations

import json
import logging
import random
from collections.abc import Iterator, Mapping, Sequence, Sized
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from torch.utils.data import Sampler

from shared.client import GroundstateClient
from shared.errors import ClientError
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
from trainer.minting import Minter, MintOutcome, families_of
from trainer.verl.dataset import MINTED_BAND, task_row

if TYPE_CHECKING:
    from verl.protocol import DataProto

__all__ = ["CurriculumSampler", "Server", "dataset_task_ids", "group_outcomes", "row_task_ids"]

logger = logging.getLogger(__name__)

_STATE = "curriculum"
_HANDED = "handed"


@dataclass(frozen=True)
class Server:
    """The groundstate server the run's episodes play on (the `groundstate:` section's), for minting."""

    url: str
    api_key: str | None = None
    timeout_s: float = 120.0

    def client(self) -> GroundstateClient:
        """A synchronous client (the sampler runs in Verl's trainer process, between steps)."""
        return GroundstateClient(self.url, api_key=self.api_key, timeout=self.timeout_s)


def _row_infos(data_source: Sized) -> list[Any]:
    frame = getattr(data_source, "dataframe", None)
    if frame is not None and "extra_info" in getattr(frame, "column_names", ()):
        return list(frame["extra_info"])
    return [data_source[i]["extra_info"] for i in range(len(data_source))]  # type: ignore[index]


def dataset_task_ids(data_source: Sized) -> list[str]:
    """The task id of every row of a groundstate dataset, in row order.

    Reads the `extra_info` column of Verl's `RLHFDataset` (its `dataframe`) without building prompts, or each
    item of any other dataset.

    Raises:
        CurriculumError: A row has no task id, or is not of the train split.
    """
    return row_task_ids(_row_infos(data_source))


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
        server: The groundstate server: minting asks it for tasks, and a resumed state holding tasks the
            dataset has no row for (minted ones) asks it which it still serves. None: neither can happen.
        mint_per_step: The most tasks minted before a step (0: never; needs `server` and an `RLHFDataset`).

    Raises:
        CurriculumError: A row is not a train task, or has no task id; minting without a server or a
            dataset whose rows can grow.
        MintingError: Minting is asked for and no domain of the dataset has a scenario family.
        ClientError: Minting is asked for and the server's families cannot be read.
    """

    def __init__(
        self,
        data_source: Sized,
        data_config: Mapping[str, Any],
        *,
        settings: CurriculumSettings,
        out_dir: str | Path | None = None,
        server: Server | None = None,
        mint_per_step: int = 0,
    ) -> None:
        self.data_source = data_source
        self.slots = int(data_config["train_batch_size"])
        self.task_ids = dataset_task_ids(data_source)
        self.rows: dict[str, int] = {}
        for row, task_id in enumerate(self.task_ids):
            self.rows.setdefault(task_id, row)
        self.curriculum = Curriculum.start(self.task_ids, settings)
        self.out_dir = Path(out_dir) if out_dir is not None else None
        self.server = server
        self.minter = self._minter(mint_per_step) if mint_per_step else None
        self.handed = 0
        """Indices handed out at the current step (its slots, then its refills)."""
        self._order: tuple[int, list[str], list[str]] | None = None
        self._topped_up: int | None = None
        """The step whose top-up is done (it happens once per step, before its slots are drawn)."""
        self._log_checked = False

    def _minter(self, per_step: int) -> Minter:
        """The minter over every family the server offers for the dataset's domains."""
        if self.server is None:
            raise CurriculumError("minting (groundstate.mint_per_step) needs the groundstate server's URL")
        if getattr(self.data_source, "dataframe", None) is None:
            raise CurriculumError(
                f"minting appends rows to Verl's RLHFDataset, not to a {type(self.data_source).__name__}"
            )
        domains = sorted({str(info["domain"]) for info in _row_infos(self.data_source)})
        with self.server.client() as client:
            details = [client.domain(domain) for domain in domains]
        return Minter(per_step=per_step, families=families_of(details), seed=self.curriculum.settings.seed)

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
            self.top_up()
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
        self.top_up()  # before the save: the checkpoint's state holds what the next step may draw
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

    # ------------------------------------------------------------------ fresh tasks

    def top_up(self) -> MintOutcome | None:
        """Mint what the band lacks for the coming step (once per step) and make the new tasks rows.

        None when this sampler does not mint or the step was topped up already. A failed mint request is
        logged and skipped; what the requests before it admitted still becomes rows.

        Raises:
            CurriculumError: The server minted a task that is not a train task.
        """
        step = self.curriculum.state.step
        if self.minter is None or self.server is None or self._topped_up == step:
            return None
        self._topped_up = step
        outcome = MintOutcome()
        try:
            with self.server.client() as client:
                self.minter.top_up_sync(self.curriculum, self.slots, client, outcome)
        except ClientError as exc:
            logger.warning("minting before step %d failed (the next step asks again): %s", step + 1, exc)
        self.append_rows([(task.id, task.domain) for task in outcome.tasks])
        return outcome

    def append_rows(self, tasks: Sequence[tuple[str, str]]) -> list[str]:
        """Append a row per `(task_id, domain)` to the dataset the dataloader reads; the ids now drawable.

        The rows are `trainer.verl.dataset.task_row`'s (band `minted`, split `train`: only train tasks get
        here), put through the dataset's own length filter (`maybe_filter_out_long_prompts`, a no-op unless
        `data.filter_overlong_prompts`); a task whose row the filter drops is retired, never drawn.

        Raises:
            CurriculumError: The dataset is not one whose rows can grow (no `dataframe`).
        """
        new = [(t, d) for t, d in dict(tasks).items() if t not in self.rows]
        if not new:
            return []
        import datasets

        frame = getattr(self.data_source, "dataframe", None)
        if not isinstance(frame, datasets.Dataset):
            raise CurriculumError(
                f"minted tasks become rows of Verl's RLHFDataset; {type(self.data_source).__name__} has none"
            )
        rows = [
            task_row(task_id, domain, index=len(frame) + i, band=MINTED_BAND)
            for i, (task_id, domain) in enumerate(new)
        ]
        added = datasets.Dataset.from_list(rows, features=frame.features)
        length_filter = getattr(self.data_source, "maybe_filter_out_long_prompts", None)
        if callable(length_filter):
            added = length_filter(added)
        kept = row_task_ids(list(added["extra_info"])) if len(added) else []
        self.data_source.dataframe = datasets.concatenate_datasets([frame, added])  # type: ignore[attr-defined]
        for task_id in kept:
            self.rows[task_id] = len(self.task_ids)
            self.task_ids.append(task_id)
        dropped = [t for t, _ in new if t not in self.rows]
        if dropped:
            logger.warning("minted tasks longer than data.max_prompt_length are retired: %s", dropped)
            self.curriculum.retire(t for t in dropped if t in self.curriculum.state.tasks)
        return kept

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
        if curriculum.settings != self.curriculum.settings:
            raise CurriculumError(
                f"the run's curriculum settings ({self.curriculum.settings.model_dump()}) differ from the "
                f"resumed state's ({curriculum.settings.model_dump()})"
            )
        # a retired task is never drawn again, so only the active ones need a row
        missing = [t for t, e in curriculum.state.tasks.items() if t not in self.rows and e.retired is None]
        if missing:
            self._restore_minted(curriculum, missing)
        curriculum.add(self.task_ids)
        self.curriculum, self.handed, self._order = curriculum, handed, None
        self._topped_up = curriculum.state.step  # the saved state was taken after that step's top-up

    def _restore_minted(self, curriculum: Curriculum, missing: list[str]) -> None:
        """Rows again for the resumed state's tasks the Parquet lacks (minted ones), in the order minted.

        The server says which it still serves as train tasks: those become rows, the others are retired
        with their history kept (a server on another store no longer has them), as `train local` does.

        Raises:
            CurriculumError: No server to ask, or it cannot be asked (the run could not draw what it would).
        """
        if self.server is None:
            raise CurriculumError(
                f"the curriculum being resumed holds tasks the dataset has no row for: {', '.join(missing)}"
            )
        try:
            with self.server.client() as client:
                served = {task.id: task.domain for task in client.tasks(split="train")}
        except ClientError as exc:
            raise CurriculumError(
                f"the curriculum being resumed holds tasks the dataset has no row for ({', '.join(missing)}) "
                f"and the server at {self.server.url} cannot say which it serves: {exc}"
            ) from exc
        self.append_rows([(t, served[t]) for t in missing if t in served])
        gone = [t for t in missing if t not in self.rows]
        if gone:
            logger.warning("resumed minted tasks the server no longer serves are retired: %s", gone)
            curriculum.retire(gone)


def _truncate_log(log: Path, step: int) -> None:
    """Drop the log's records after `step`: a resumed run replays the steps after its checkpoint.

    A fresh run (step 0) in a directory that held another run does not inherit its lines either.
    """
    if not log.exists():
        return
    kept = [line for line in log.read_text().splitlines() if line and json.loads(line)["step"] <= step]
    log.write_text("".join(f"{line}\n" for line in kept))
