"""Column values from JSON or YAML text: ISO strings for dates and instants become Python values again."""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from sqlalchemy import Date, DateTime
from sqlalchemy.types import TypeEngine


def python_value(column_type: TypeEngine[Any], value: Any, *, date_prefix: bool = False) -> Any:
    """`value` as the column's Python type; other values pass through unchanged.

    `date_prefix` takes the first ten characters of a `Date` value: databases that serialise a date through
    a timestamp (JSON in triggers) add a time part. Task files keep the strict form, so a date column given
    an instant is an error there, not a silent truncation.
    """
    if not isinstance(value, str):
        return value
    if isinstance(column_type, DateTime):
        return datetime.fromisoformat(value)
    if isinstance(column_type, Date):
        return date.fromisoformat(value[:10] if date_prefix else value)
    return value
