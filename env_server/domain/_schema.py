"""Schema helpers every domain uses when declaring its tables."""

from __future__ import annotations

from typing import Any, get_args

from sqlalchemy import CheckConstraint


def allowed_values(column: str, alias: Any) -> str:
    """The SQL expression `column IN ('a', 'b')` for a `Literal` alias (for use inside larger CHECKs)."""
    values = ", ".join(f"'{v}'" for v in get_args(alias))
    return f"{column} IN ({values})"


def one_of(column: str, alias: Any, *, name: str | None = None) -> CheckConstraint:
    """A CHECK constraint limiting `column` to the values of a `Literal` alias (same on every backend).

    Args:
        column: the column name.
        alias: a `Literal["a", "b"]` alias (the enumeration).
        name: the constraint name; `<column>_valid` by default.
    """
    return CheckConstraint(allowed_values(column, alias), name=name or f"{column}_valid")
