"""The base of what tools return: pydantic views read from ORM rows by attribute name."""

from __future__ import annotations

from typing import Any, Self

from pydantic import BaseModel, ConfigDict


class RowView(BaseModel):
    """A view of a table row, shaped for the agent to read.

    Its fields are read from the row's attributes of the same name, so a view lists what the agent sees
    and nothing has to copy the values over one by one. Nested views (a list of payments on a booking)
    are read from rows as well.
    """

    model_config = ConfigDict(from_attributes=True)

    @classmethod
    def of(cls, row: object, **fields: Any) -> Self:
        """The view of `row`; `fields` give the values the row does not hold under the field's name.

        Args:
            row: an ORM row (or any object) whose attributes hold the view's fields.
            **fields: values that take precedence over the row's attributes, e.g. a renamed key
                (`ticket_id=ticket.id`), a computed value or the rows of a nested list.
        """
        return cls.model_validate(_Overlay(row, fields) if fields else row)


class _Overlay:
    """`row` with some attributes replaced: what `RowView.of` validates when it is given `fields`."""

    __slots__ = ("_fields", "_row")

    def __init__(self, row: object, fields: dict[str, Any]) -> None:
        self._row = row
        self._fields = fields

    def __getattr__(self, name: str) -> Any:
        if name in self._fields:
            return self._fields[name]
        return getattr(self._row, name)
