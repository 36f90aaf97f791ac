"""Table building blocks every domain's `models.py` starts from: its own `MetaData`, and shared columns."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import DateTime, MetaData, String
from sqlalchemy.orm import Mapped, mapped_column

#: Constraint names derived from the table (`ck_bookings_stay_not_empty`), so a `CheckConstraint` names only
#: its rule and every backend reports the same name when a row breaks it.
NAMING_CONVENTION = {
    "pk": "pk_%(table_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
}


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

    verification_id: Mapped[str] = mapped_column(
        String(10), primary_key=True, sort_order=-1, comment='e.g. "IV-90001"'
    )
    verified_at: Mapped[datetime] = mapped_column(DateTime, sort_order=1, comment="When the check passed.")
