"""The files of an adaptive curriculum: its state (`curriculum.json`) and its step log (`curriculum.jsonl`).

`groundstate train local --curriculum adaptive` (`trainer.curriculum`) writes both into its output
directory: the state after every step (and into every checkpoint), and one `StepRecord` line per step. The
records and their reader live here, not in the trainer, because two sides read them and neither may import
the other: the trainer resumes from the state, and the environment server's viewer (`/ui/curricula`) charts
the log. `trainer.curriculum` re-exports the models, so its imports keep working; writing stays there.

Rules of the log:
- One line per step, appended after the step's update; the state is saved right after it.
- A line that is not JSON and ends the file without a newline is a write in progress (a run still training)
  and is skipped; any other line that is not a valid `StepRecord` is an error naming the line.
- Steps count up by one. A line whose step is not above the previous line's is a run resumed in place from
  an earlier checkpoint: its history replaces the lines from that step on. A step that jumps ahead means a
  line is missing, and is an error.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from pydantic import Field, ValidationError, model_validator

from shared.strict_model import StrictModel

__all__ = [
    "CURRICULUM_FILE",
    "CURRICULUM_LOG",
    "CurriculumSettings",
    "CurriculumState",
    "StepRecord",
    "TaskEvidence",
    "family_of",
    "read_curriculum_log",
    "read_curriculum_state",
]

CURRICULUM_FILE = "curriculum.json"
"""The curriculum's state file, in a run's output directory and in each checkpoint."""
CURRICULUM_LOG = "curriculum.jsonl"
"""The curriculum's step log (one `StepRecord` per line), in a run's output directory."""


def family_of(task_id: str) -> str | None:
    """The generator family of a generated task (`<domain>-gen-<family>-<index>`), None for a written one."""
    parts = task_id.split("-gen-", 1)
    if len(parts) != 2 or "-" not in parts[1]:
        return None
    family, _, index = parts[1].rpartition("-")
    return f"{parts[0]}/{family}" if index.isdigit() else None


class CurriculumSettings(StrictModel):
    """How the curriculum weighs evidence and draws (defaults argued in `trainer.curriculum`)."""

    group: int = Field(ge=2)
    """Episodes per group (G): what `mixed_chance` is computed for."""
    decay: float = Field(default=0.8, gt=0, le=1)
    """Evidence multiplier per step (1: never forget)."""
    explore: float = Field(default=0.2, ge=0, le=1)
    """Share of a step's slots given to the tasks drawn least recently."""
    min_informative: float = Field(default=0.3, gt=0, lt=1)
    """A task is in the learning band when its chance of a mixed group reaches this."""
    retire_at: float = Field(default=0.9, gt=0, lt=1)
    """Success rate above which a task counts as mastered..."""
    retire_confidence: float = Field(default=0.9, gt=0.5, lt=1)
    """...once the posterior puts this much mass above it."""
    seed: int = 0
    """Seeds the draws with the step number."""


class TaskEvidence(StrictModel):
    """One task's discounted outcomes and history."""

    successes: float = 0.0
    failures: float = 0.0
    drawn: int = 0
    """Groups played (every try, refills included)."""
    last_drawn: int | None = None
    """The last step it was played in."""
    retired: int | None = None
    """The step it was retired at, or null."""

    @property
    def alpha(self) -> float:
        """The posterior's first parameter (successes + 1/2)."""
        return self.successes + 0.5

    @property
    def beta(self) -> float:
        """The posterior's second parameter (failures + 1/2)."""
        return self.failures + 0.5

    @property
    def mean(self) -> float:
        """The posterior mean success rate."""
        return self.alpha / (self.alpha + self.beta)


class StepRecord(StrictModel):
    """What the curriculum saw and did at one step (a line of `curriculum.jsonl`)."""

    step: int
    band: int
    """Tasks in the learning band after the update."""
    active: int
    """Tasks not retired."""
    retired: list[str]
    """Tasks retired at this step."""
    groups: int
    informative_groups: int
    """Played groups (every try) with both outcomes."""
    families: dict[str, float] = Field(default_factory=dict)
    """Mean posterior success per generator family (generated tasks only)."""
    tasks: dict[str, float] = Field(default_factory=dict)
    """Posterior mean of every task played at this step."""
    added: list[str] = Field(default_factory=list)
    """Tasks admitted since the previous step (freshly minted ones, or a resumed run's new pool tasks)."""
    minted: int = 0
    """How many of `added` the server generated and validated for this run (`POST /v1/tasks/mint`)."""


class CurriculumState(StrictModel):
    """Everything a resumed run needs: settings, evidence per task, the step reached."""

    settings: CurriculumSettings
    step: int = 0
    tasks: dict[str, TaskEvidence]
    pending: list[str] = Field(default_factory=list)
    """Tasks admitted since the last update, reported in the next `StepRecord`."""
    pending_minted: int = 0
    """How many of `pending` were minted."""

    @model_validator(mode="after")
    def _has_tasks(self) -> CurriculumState:
        if not self.tasks:
            raise ValueError("a curriculum needs at least one task")
        return self


def read_curriculum_state(run_dir: str | os.PathLike[str]) -> CurriculumState | None:
    """The saved state of a run's curriculum, or None before its first step saved one.

    Raises:
        ValueError: The file is not a valid `CurriculumState`.
        OSError: The file exists but cannot be read.
    """
    path = Path(run_dir) / CURRICULUM_FILE
    if not path.is_file():
        return None
    try:
        return CurriculumState.model_validate_json(path.read_bytes())
    except ValidationError as exc:
        raise ValueError(f"{path}: not a valid CurriculumState: {exc}") from exc


def read_curriculum_log(run_dir: str | os.PathLike[str]) -> list[StepRecord]:
    """A run's step records in step order, by the rules of the module docstring.

    Args:
        run_dir: A training run's output directory, holding `curriculum.jsonl`.

    Returns:
        One record per step; a run resumed in place keeps the resumed history of the steps it replayed.

    Raises:
        FileNotFoundError: There is no `curriculum.jsonl`.
        ValueError: A line is not a valid `StepRecord`, or a step is missing (the message names the line).
    """
    path = Path(run_dir) / CURRICULUM_LOG
    if not path.is_file():
        raise FileNotFoundError(f"no curriculum log at {path}")
    raw = path.read_bytes()
    lines = raw.split(b"\n")
    records: list[StepRecord] = []
    for number, line in enumerate(lines, start=1):
        text = line.strip()
        if not text:
            continue
        try:
            data = json.loads(text)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            if number == len(lines):  # no newline after it yet: the trainer is writing this line
                continue
            raise ValueError(f"{path}:{number}: not JSON ({exc})") from exc
        try:
            record = StepRecord.model_validate(data)
        except ValidationError as exc:
            raise ValueError(f"{path}:{number}: not a valid StepRecord: {exc}") from exc
        while records and record.step <= records[-1].step:  # resumed in place from an earlier checkpoint
            records.pop()
        if records and record.step != records[-1].step + 1:
            raise ValueError(
                f"{path}:{number}: step {record.step} follows step {records[-1].step} "
                f"(the line of step {records[-1].step + 1} is missing)"
            )
        records.append(record)
    return records
