"""Terminal tables that stay readable at any width: wide when there is room, turned or stacked when not.

Rich shrinks a table that is wider than the terminal by cutting cells to "…", which makes a metrics table
with fourteen columns unreadable in an ordinary 80-column terminal. `fit_table` picks the first layout whose
natural width fits the console, so no cell is ever cut:

1. wide: one row per record, one column per field (what a wide terminal shows);
2. turned: one row per field, one column per record (few records, many fields: metrics of a few domains);
3. stacked: one two-column block (field, value) per record, one under another (always fits).

Both the server's and the trainer's commands print through it; `--json` stays the machine-readable form.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console, Group, RenderableType
from rich.measure import Measurement
from rich.table import Table

__all__ = ["fit_table"]


def fit_table(
    console: Console,
    columns: Sequence[str],
    rows: Sequence[Sequence[str]],
    *,
    title: str | None = None,
    sections: Sequence[int] = (),
    wrap: Sequence[str] = (),
) -> RenderableType:
    """The widest layout of `rows` that fits `console` without cutting a cell.

    Args:
        console: The console it will be printed on (its width decides).
        columns: Column headers; the first column names each record (a group, a task, a band).
        rows: One list of cell texts per record, as long as `columns`.
        title: The table's title.
        sections: Indices of rows after which the wide layout draws a separator (e.g. after "overall").
        wrap: Columns of free text (tags, notes) that may wrap onto several lines in the wide layout; every
            other cell is kept on one line.

    Returns:
        A renderable: a `Table`, or a `Group` of tables for the stacked layout.

    Raises:
        ValueError: A row's length differs from the number of columns.
    """
    for row in rows:
        if len(row) != len(columns):
            raise ValueError(f"a row has {len(row)} cells for {len(columns)} columns: {list(row)!r}")
    narrowest = [
        [_longest_word(c) if n in wrap else c for n, c in zip(columns, r, strict=True)] for r in rows
    ]
    if _width(console, _wide(columns, narrowest, title, sections, wrap)) <= console.width:
        return _wide(columns, rows, title, sections, wrap)
    turned = _turned(columns, rows, title)
    if _width(console, turned) <= console.width:
        return turned
    return _stacked(columns, rows, title)


def _width(console: Console, table: Table) -> int:
    """The width the table takes when nothing constrains it."""
    unbounded = console.options.update(max_width=1_000_000)
    return Measurement.get(console, unbounded, table).maximum


def _longest_word(text: str) -> str:
    return max(text.split(), key=len, default="")


def _wide(
    columns: Sequence[str],
    rows: Sequence[Sequence[str]],
    title: str | None,
    sections: Sequence[int],
    wrap: Sequence[str],
) -> Table:
    table = Table(title=title)
    for i, name in enumerate(columns):
        table.add_column(
            name, justify="left" if i == 0 or name in wrap else "right", no_wrap=name not in wrap
        )
    for i, row in enumerate(rows):
        table.add_row(*row, end_section=i in sections)
    return table


def _turned(columns: Sequence[str], rows: Sequence[Sequence[str]], title: str | None) -> Table:
    table = Table(title=title)
    table.add_column(columns[0], justify="left", no_wrap=True)
    for row in rows:
        table.add_column(row[0], justify="right", no_wrap=True)
    for i, name in enumerate(columns[1:], start=1):
        table.add_row(name, *(row[i] for row in rows))
    return table


def _stacked(columns: Sequence[str], rows: Sequence[Sequence[str]], title: str | None) -> Group:
    blocks: list[RenderableType] = []
    for row in rows:
        block = Table(title=f"{title} — {row[0]}" if title else row[0], show_header=False)
        block.add_column("field", justify="left")
        block.add_column("value", justify="left", overflow="fold")
        for name, cell in zip(columns[1:], row[1:], strict=True):
            block.add_row(name, cell)
        blocks.append(block)
    return Group(*blocks)
