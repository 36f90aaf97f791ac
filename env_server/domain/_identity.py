"""The identity rule every domain's write tools share: act for a person only once they are verified.

A successful identity check adds a row to the domain's `identity_verifications` table (see
`IdentityVerificationTable`); `is_verified` looks that row up, so no domain writes the query again. The
domain's own `require_verified` raises its refusal, worded for its agents, when it is missing.
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import InstrumentedAttribute

from env_server.domain._context import ToolContext


def is_verified(ctx: ToolContext, person: InstrumentedAttribute[str], *person_ids: str) -> bool:
    """Whether any of `person_ids` passed the identity check in this conversation.

    Args:
        ctx: the tool's context.
        person: the verification table's column naming the person checked, e.g.
            `IdentityVerification.guest_id`.
        person_ids: the people any one of whom may act.
    """
    found = ctx.session.scalars(select(person).where(person.in_(person_ids)).limit(1)).first()
    return found is not None
