"""`fit_table`: the widest layout that fits the console, never a cut cell."""

import io

import pytest
from rich.console import Console

from shared.tables import fit_table

COLUMNS = ["group", "tasks", "pass@1", "95% CI", "pass@4", "pass^4", "4/4 tasks", "tokens in"]


def render(width: int, rows: list[list[str]]) -> str:
    console = Console(file=io.StringIO(), width=width)
    console.print(fit_table(console, COLUMNS, rows, title="run"))
    return console.file.getvalue()  # type: ignore[attr-defined]


def rows(n: int) -> list[list[str]]:
    return [
        [f"domain-{i}", "30", "51.70%", "44.1–58.9%", "89.35%", "7.50%", "6 (20.00%)", "12,345"]
        for i in range(n)
    ]


def test_a_wide_console_gets_one_row_per_record() -> None:
    text = render(200, rows(3))
    assert any("pass@1" in line and "tokens in" in line for line in text.splitlines())
    assert sum("domain-" in line for line in text.splitlines()) == 3


def test_a_narrow_console_gets_one_row_per_field() -> None:
    text = render(80, rows(3))
    assert any(line.count("domain-") == 3 for line in text.splitlines())  # records became columns
    assert "…" not in text and max(map(len, text.splitlines())) <= 80


def test_too_many_records_for_a_turned_table_are_stacked() -> None:
    text = render(60, rows(6))
    assert "…" not in text and max(map(len, text.splitlines())) <= 60
    for i in range(6):
        assert f"domain-{i}" in text
    assert text.count("51.70%") == 6


def test_a_row_of_the_wrong_length_is_refused() -> None:
    with pytest.raises(ValueError, match="2 cells for 8 columns"):
        fit_table(Console(), COLUMNS, [["a", "b"]])


def test_free_text_columns_wrap_instead_of_turning_the_table() -> None:
    console = Console(file=io.StringIO(), width=60)
    tags = "refusal, non-refundable, cancellation, loyalty, approval"
    console.print(
        fit_table(console, ["task", "split", "tags"], [["hotel-cancel-001", "test", tags]], wrap=["tags"])
    )
    text = console.file.getvalue()  # type: ignore[attr-defined]
    assert "hotel-cancel-001" in text and "…" not in text
    assert max(map(len, text.splitlines())) <= 60
    assert sum("hotel-cancel-001" in line for line in text.splitlines()) == 1
