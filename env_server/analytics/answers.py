"""Execution accuracy (as in BIRD): the submitted rows must equal the gold SQL's rows as sets.

Cells compare after normalisation: strings trimmed and case-folded, dates as ISO strings, and numbers
exactly where the gold value is a whole number (counts, ids, integer amounts: 214 is not 215), within the
task's relative tolerance only where it is not (a computed ratio or average). A single scalar answer is the
one-row, one-column table holding it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

Cell = str | int | float | bool | None
Rows = list[list[Cell]]


def as_rows(answer: Any) -> Rows:
    """Accept `[[...], ...]`, a flat list (one column) or a scalar; return a list of rows."""
    if not isinstance(answer, list):
        return [[answer]]
    return [list(r) if isinstance(r, list | tuple) else [r] for r in answer]


def _cell(value: Any) -> Any:
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int | float):
        return float(value)
    text = str(value).strip()
    try:
        return float(text)
    except ValueError:
        return text.casefold()


def _cells_equal(gold: Any, got: Any, tolerance: float) -> bool:
    """Whether a submitted cell equals a gold cell: whole numbers exactly, other numbers within tolerance."""
    if isinstance(gold, float) and isinstance(got, float):
        if gold.is_integer() or not math.isfinite(gold):
            return got == gold
        return math.isclose(gold, got, rel_tol=tolerance, abs_tol=0.0)
    return bool(gold == got)


def computed(rows: Rows) -> bool:
    """Whether `rows` hold a computed value: a number with more than two decimals (an average, a ratio).

    Amounts in dollars and cents have two decimals at most and compare exactly, like whole numbers.
    """
    return any(
        isinstance(c, float) and abs(c * 100 - round(c * 100)) > 1e-6
        for row in rows
        for c in (_cell(x) for x in row)
    )


def is_exact(rows: Rows) -> bool:
    """Whether every numeric cell of `rows` is a whole number (an answer that admits no tolerance)."""
    return all(float(c).is_integer() for row in rows for c in (_cell(x) for x in row) if isinstance(c, float))


def _rows_equal(a: Sequence[Any], b: Sequence[Any], tolerance: float) -> bool:
    return len(a) == len(b) and all(_cells_equal(x, y, tolerance) for x, y in zip(a, b, strict=True))


def _unique(rows: list[list[Any]], tolerance: float) -> list[list[Any]]:
    out: list[list[Any]] = []
    for row in rows:
        if not any(_rows_equal(row, seen, tolerance) for seen in out):
            out.append(row)
    return out


def answer_matches(submitted: Any, gold: Rows, tolerance: float) -> tuple[bool, str]:
    """Compare as sets of rows; returns (match, a sentence explaining a mismatch)."""
    got = _unique([[_cell(c) for c in r] for r in as_rows(submitted)], tolerance)
    want = _unique([[_cell(c) for c in r] for r in gold], tolerance)
    unmatched = list(got)
    for row in want:
        hit = next((i for i, g in enumerate(unmatched) if _rows_equal(row, g, tolerance)), None)
        if hit is None:
            return (
                False,
                f"expected {len(want)} distinct rows, first missing row {row!r}; submitted {len(got)}",
            )
        unmatched.pop(hit)
    if unmatched:
        return False, f"{len(unmatched)} submitted rows are not in the answer, e.g. {unmatched[0]!r}"
    return True, f"{len(want)} rows match"
