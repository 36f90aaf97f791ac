"""The agent's account tools: find and verify the caller, read lines and plans, change plans and roaming."""

from __future__ import annotations

from datetime import date

from sqlalchemy import select

from env_server.domain import ToolContext, ToolError, is_verified, tool
from env_server.domains.telecom.models import (
    ROAMING_DAY_CENTS,
    Bill,
    Customer,
    IdentityVerification,
    Line,
    LineStatus,
    Plan,
    PlanKind,
)
from env_server.domains.telecom.tools._views import (
    CustomerView,
    LineView,
    PlanView,
    PukView,
    VerificationView,
    customer_view,
    line_view,
)


def get_line(ctx: ToolContext, line_id: str) -> Line:
    """The line `line_id`, or the refusal the agent reads."""
    return ctx.get_or_refuse(Line, line_id, f"No line {line_id}")


def require_verified(ctx: ToolContext, line: Line) -> None:
    """Refuse a change to `line` unless its holder passed the identity check in this conversation."""
    if not is_verified(ctx, IdentityVerification.customer_id, line.customer_id):
        raise ToolError(f"Not verified: verify customer {line.customer_id} with verify_customer first")


@tool(kind="read")
def find_customer(ctx: ToolContext, number: str) -> CustomerView:
    """Find the account holding a phone number, with all its lines, plans and bills.

    Args:
        number: the customer's mobile number as they say it, e.g. "0412 555 018" or "0412555018".
    """
    digits = "".join(c for c in number if c.isdigit())
    line = ctx.session.scalars(select(Line).where(Line.number == digits)).first()
    if line is None:
        raise ToolError(f"No line has the number {number}")
    return customer_view(
        ctx, ctx.get_or_refuse(Customer, line.customer_id, f"No customer {line.customer_id}")
    )


@tool(kind="write")
def verify_customer(ctx: ToolContext, customer_id: str, full_name: str, pin: str) -> VerificationView:
    """Verify that the caller holds this account, before changing anything on it.

    Ask the caller for their full name and four-digit account PIN and pass exactly what they say.

    Args:
        customer_id: the account the caller claims, e.g. "C-0042".
        full_name: the full name the caller gave, e.g. "Maya Lindqvist".
        pin: the PIN the caller gave, e.g. "4821".
    """
    customer = ctx.get_or_refuse(Customer, customer_id, f"No customer {customer_id}")
    if customer.full_name.casefold() != " ".join(full_name.split()).casefold() or customer.pin != pin.strip():
        raise ToolError(f"The details do not match customer {customer_id}; the caller is not verified")
    ctx.insert(
        IdentityVerification(verification_id=ctx.new_id("IV"), customer_id=customer_id, verified_at=ctx.now)
    )
    return VerificationView(customer_id=customer_id, verified=True)


@tool(kind="read")
def list_plans(ctx: ToolContext, kind: PlanKind) -> list[PlanView]:
    """The plans on sale of one kind, cheapest first.

    Args:
        kind: "mobile" or "internet".
    """
    plans = ctx.session.scalars(select(Plan).where(Plan.kind == kind).order_by(Plan.monthly_cents)).all()
    return [PlanView.of(p) for p in plans]


@tool(kind="write")
def change_plan(ctx: ToolContext, line_id: str, plan_id: str) -> LineView:
    """Move a line to another plan of the same kind, from today.

    Args:
        line_id: the line, e.g. "LN-0042".
        plan_id: the new plan, e.g. "PL-M30".
    """
    line = get_line(ctx, line_id)
    require_verified(ctx, line)
    plan = ctx.get_or_refuse(Plan, plan_id, f"No plan {plan_id}")
    current = ctx.session.get(Plan, line.plan_id)
    if current is not None and plan.kind != current.kind:
        raise ToolError(f"Line {line_id} is a {current.kind} line; plan {plan_id} is a {plan.kind} plan")
    if plan_id == line.plan_id:
        raise ToolError(f"Line {line_id} is already on plan {plan_id}")
    line.plan_id = plan_id
    return line_view(ctx, line)


@tool(kind="write")
def enable_roaming(ctx: ToolContext, line_id: str, until: date) -> LineView:
    """Allow a mobile line to roam abroad from today to `until`, and charge the roaming days.

    Each day from today to `until` (both included) costs $10 on the line's due bill, unless the plan
    includes roaming.

    Args:
        line_id: the mobile line, e.g. "LN-0042".
        until: the last day abroad, e.g. "2026-12-13".
    """
    line = get_line(ctx, line_id)
    require_verified(ctx, line)
    plan = ctx.session.get(Plan, line.plan_id)
    if plan is None or plan.kind != "mobile":
        raise ToolError(f"Line {line_id} is not a mobile line")
    today = ctx.now.date()
    if until < today:
        raise ToolError(f"{until.isoformat()} is in the past")
    if (until - today).days > 90:
        raise ToolError("Roaming can be booked at most 90 days ahead")
    line.roaming_enabled = True
    line.roaming_until = until
    if not plan.roaming_included:
        bill = ctx.session.scalars(
            select(Bill).where(Bill.line_id == line_id, Bill.status == "due").order_by(Bill.period.desc())
        ).first()
        if bill is None:
            raise ToolError(f"Line {line_id} has no open bill to charge roaming to")
        bill.amount_cents += ((until - today).days + 1) * ROAMING_DAY_CENTS
    return line_view(ctx, line)


@tool(kind="read")
def get_sim_puk(ctx: ToolContext, line_id: str) -> PukView:
    """Read the PUK that unblocks a mobile line's SIM, for its verified holder to type into their phone.

    Args:
        line_id: the mobile line, e.g. "LN-0042".
    """
    line = get_line(ctx, line_id)
    require_verified(ctx, line)  # a PUK unlocks the SIM of whoever holds the phone (policy rule 2)
    if line.puk is None:
        raise ToolError(f"Line {line_id} has no SIM")
    return PukView(line_id=line_id, puk=line.puk)


@tool(kind="write")
def suspend_line(ctx: ToolContext, line_id: str) -> LineView:
    """Suspend a line whose phone was lost or stolen: no calls, texts or data until it is resumed.

    Args:
        line_id: the line, e.g. "LN-0042".
    """
    return _set_status(ctx, line_id, "suspended")


@tool(kind="write")
def resume_line(ctx: ToolContext, line_id: str) -> LineView:
    """Resume a suspended line, once its holder has the phone back.

    Args:
        line_id: the line, e.g. "LN-0042".
    """
    return _set_status(ctx, line_id, "active")


def _set_status(ctx: ToolContext, line_id: str, status: LineStatus) -> LineView:
    """Move a verified holder's line to `status`, refusing a line already there."""
    line = get_line(ctx, line_id)
    require_verified(ctx, line)
    if line.status == status:
        raise ToolError(f"Line {line_id} is already {status}")
    line.status = status
    return line_view(ctx, line)
