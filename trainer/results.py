"""Writing the results file of a run (`RUN_DIR/results.jsonl`); its format and reader are `shared.results`.

The models and the reader moved to `shared/` so the environment server's viewer can show runs without
importing the trainer; they are re-exported here, so `from trainer.results import TrialResult` keeps working.
Appends are durable and safe for concurrent writers on one machine (see `append_result`).
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from shared.results import (
    RESULTS_FILE,
    CheckOutcome,
    DiffEntry,
    DiffKind,
    TrialResult,
    TrialStatus,
    grading_conflicts,
    latest_per_key,
    read_results,
    results_path,
)

__all__ = [
    "RESULTS_FILE",
    "CheckOutcome",
    "DiffEntry",
    "DiffKind",
    "TrialResult",
    "TrialStatus",
    "append_jsonl",
    "append_result",
    "grading_conflicts",
    "latest_per_key",
    "read_results",
    "results_path",
]


def append_result(path: str | os.PathLike[str], result: TrialResult) -> None:
    """Append one result as a line and make it durable (flush + fsync) before returning.

    The line is written with one `write` under an exclusive `flock`, so concurrent writers on one machine
    never interleave. If the file ends in a torn line (a writer killed mid-line), a newline is written first
    so the new record stays intact.

    Args:
        path: The results file (or its run directory); parent directories are created.
        result: The record to append.
    """
    append_jsonl(results_path(path), result.model_dump_json())


def append_jsonl(path: Path, text: str) -> None:
    """Append `text` as one line under an exclusive `flock`, fsynced; a torn last line is closed first."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        size = os.fstat(fd).st_size
        prefix = b"\n" if size and os.pread(fd, 1, size - 1) != b"\n" else b""
        os.write(fd, prefix + text.encode() + b"\n")
        os.fsync(fd)
    finally:
        os.close(fd)
