"""Table building blocks every domain's `models.py` starts from: its own `MetaData`, and shared columns.

A domain whose models are the spec of its rows (hotel) declares them as dataclasses on its own base,
`class Base(MappedAsDataclass, DeclarativeBase, kw_only=True, eq=False)`: each column is written once and the
class gets a typed keyword constructor, so the seed, the families and the tool tests build ORM objects
directly. `Entity` puts each table's "not found" refusal on the model, and `IdentityVerificationRecord` is
the shared verification table for such a base (`IdentityVerificationTable` for a plain one).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any, ClassVar, Self

from sqlalchemy import DateTime, MetaData, String
from sqlalchemy.orm import Mapped, Session, mapped_column, unmapped_dataclass

from env_server.domain._context import ToolError

#: Constraint names derived from the table (`ck_bookings_stay_not_empty`), so a `CheckConstraint` names only
#: its rule and every backend reports the same name when a row breaks it.
NAMING_CONVENTION = {
    "pk": "pk_%(table_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
}


def _verification_id() -> Any:
    return mapped_column(String(10), primary_key=True, sort_order=-1, comment='e.g. "IV-90001"')


def _verified_at() -> Any:
    return mapped_column(DateTime, sort_order=1, comment="When the check passed.")


def named_metadata() -> MetaData:
    """A new `MetaData` for one domain's tables, naming constraints by `NAMING_CONVENTION`.

    Use it as the `metadata` of the domain's declarative base:

        class Base(DeclarativeBase):
            metadata = named_metadata()
    """
    return MetaData(naming_convention=NAMING_CONVENTION)


class IdentityVerificationTable:
    """Mixin of the `identity_verifications` table: one row per successful identity check in a conversation.

    Write tools look a verification up before acting for a person; the table is per-conversation
    bookkeeping, so a domain lists it in `volatile_columns` as a whole (`identity_verifications=["*"]`).
    The domain adds the foreign key to the person checked (`guest_id`, `passenger_id`...), which the table
    places between the two columns declared here.
    """

    __tablename__ = "identity_verifications"

    verification_id: Mapped[str] = _verification_id()
    verified_at: Mapped[datetime] = _verified_at()


@unmapped_dataclass(kw_only=True)
class IdentityVerificationRecord:
    """`IdentityVerificationTable` for a domain whose models are dataclasses (`MappedAsDataclass`).

    SQLAlchemy requires every superclass that declares columns of a mapped dataclass to be a dataclass
    too; the columns are the same (declared once, in `_verification_id` and `_verified_at`).
    """

    __tablename__ = "identity_verifications"

    verification_id: Mapped[str] = _verification_id()
    verified_at: Mapped[datetime] = _verified_at()


class Entity:
    """Mixin of a table whose rows the agent names by ID: the "not found" refusal, written once on the model.

    Set `not_found` to the agent-facing message, with `{key}` where the asked ID goes
    (`"Guest {key} not found (guest IDs look like G-1042)"`); tools then call
    `Guest.get_or_refuse(ctx.session, guest_id)` and never repeat the message.
    """

    #: The refusal when no row has the asked key; `{key}` is replaced by the key.
    not_found: ClassVar[str] = "{key} not found"

    @classmethod
    def get_or_refuse(
        cls, session: Session, key: Any, *, where: Callable[[Self], bool] | None = None
    ) -> Self:
        """The row with primary key `key`, or a `ToolError` with the table's `not_found` message.

        Args:
            session: the tool's session.
            key: the primary key (a tuple for a composite key).
            where: a further condition the row must meet (e.g. that it belongs to a given guest); a row
                that fails it is refused like a missing one.
        """
        row = session.get(cls, key)
        if row is None or (where is not None and not where(row)):
            raise ToolError(cls.not_found.format(key=key))
        return row
