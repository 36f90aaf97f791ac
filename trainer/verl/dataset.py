"""A training pool as the Parquet rows Verl's own dataset class (`RLHFDataset`) loads.

One row per pool task:

    data_source   `groundstate/DOMAIN` (Verl groups validation metrics by it)
    agent_name    `groundstate`: the agent loop that plays the row (`configs/agent_loops.yaml`)
    prompt        a one-message placeholder naming the task; the loop builds the real prompt from the
                  episode the server starts (policy, tools, first user message), so it is never stale
    reward_model  `{style: groundstate, ground_truth: TASK_ID}`: the server scores, not a reward function
    extra_info    `{index, task_id, domain, band, split}`: the loop reads `task_id`

Tasks of the `test` split (the benchmark) never become rows: a pool cannot hold one (`Pool` refuses it on
read), and with `--server` every task is also checked against the server's own catalogue. Needs pyarrow
(the `verl` extra); it is imported when a file is written.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from shared.client import GroundstateClient
from trainer.selection import Pool
from trainer.verl.settings import AGENT_NAME

__all__ = ["MINTED_BAND", "DatasetError", "dataset_rows", "task_row", "write_dataset"]


MINTED_BAND = "minted"
"""The `extra_info.band` of a row a running Verl job appends for a task the server minted."""


class DatasetError(ValueError):
    """The pool cannot become training data (unreadable, empty, or holding a benchmark task)."""


def dataset_rows(pool: Pool, *, test_ids: set[str] | frozenset[str] = frozenset()) -> list[dict[str, Any]]:
    """The Verl rows of a pool's tasks, in the pool's order.

    Args:
        pool: The training pool (train-split tasks only, as `Pool` guarantees).
        test_ids: Task ids the server lists under the `test` split; any of them in the pool is refused.

    Raises:
        DatasetError: The pool is empty or holds a test task.
    """
    leaked = sorted({t.task_id for t in pool.tasks if t.split != "train" or t.task_id in test_ids})
    if leaked:
        raise DatasetError(f"test-split tasks never enter training; the pool holds: {', '.join(leaked)}")
    if not pool.tasks:
        raise DatasetError("the pool holds no task: select some bands (`groundstate select --keep ...`)")
    return [
        task_row(task.task_id, task.domain, index=index, band=task.band, split=task.split)
        for index, task in enumerate(pool.tasks)
    ]


def task_row(task_id: str, domain: str, *, index: int, band: str, split: str = "train") -> dict[str, Any]:
    """One task's row (the module docstring's columns).

    A pool's rows and a running Verl job's minted ones (band `minted`, `trainer.verl.curriculum_sampler`)
    are built by this one function, so Verl reads them alike.
    """
    return {
        "data_source": f"groundstate/{domain}",
        "agent_name": AGENT_NAME,
        "prompt": [{"role": "user", "content": f"groundstate task {task_id}"}],
        "reward_model": {"style": "groundstate", "ground_truth": task_id},
        "extra_info": {"index": index, "task_id": task_id, "domain": domain, "band": band, "split": split},
    }


def read_pool(path: str | os.PathLike[str]) -> Pool:
    """Read a pool file written by `groundstate select`.

    Raises:
        DatasetError: The file is missing or not a valid pool (a test task in it included).
    """
    try:
        return Pool.read(path)
    except FileNotFoundError:
        raise DatasetError(f"no pool file at {path}") from None
    except ValidationError as exc:
        first = exc.errors()[0]
        raise DatasetError(f"{path} is not a valid pool: {first['msg']}") from None


def server_test_ids(server_url: str, api_key: str | None = None) -> set[str]:
    """The ids of the server's `test`-split tasks (the benchmark)."""
    with GroundstateClient(server_url, api_key=api_key) as client:
        return {task.id for task in client.tasks(split="test")}


def write_dataset(pool: Pool, out: str | os.PathLike[str], *, test_ids: set[str] | None = None) -> Path:
    """Write the pool's rows as Parquet and return the file's path (parent directories are created).

    Raises:
        DatasetError: The pool holds no task or a test task, or pyarrow is missing.
    """
    rows = dataset_rows(pool, test_ids=test_ids or set())
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError as exc:
        raise DatasetError(f"writing Parquet needs pyarrow (pip install 'groundstate[verl]'): {exc}") from exc
    target = Path(out)
    target.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows), target)
    return target
