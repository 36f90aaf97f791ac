"""The agent's service tools: network diagnostics, outages, outage credits and tickets."""

from __future__ import annotations

from sqlalchemy import select

from env_server.domain import ToolContext, ToolError, tool
from env_server.domains.telecom.models import (
    CARRIER_APN,
    CURRENT_FIRMWARE,
    Bill,
    Credit,
    Device,
    Outage,
    Plan,
    Router,
    Ticket,
    TicketCategory,
)
from env_server.domains.telecom.tools._views import CreditView, DiagnosticsView, OutageView, TicketView
from env_server.domains.telecom.tools.account import get_line, require_verified


@tool(kind="read")
def run_diagnostics(ctx: ToolContext, line_id: str) -> DiagnosticsView:
    """What the network sees of a line right now: whether it works, and each problem found.

    The network sees the customer's phone or router only from outside: it cannot change their settings.

    Args:
        line_id: the line, e.g. "LN-0042".
    """
    line = get_line(ctx, line_id)
    plan = ctx.session.get(Plan, line.plan_id)
    kind = plan.kind if plan is not None else "mobile"
    findings: list[str] = []
    if line.status != "active":
        findings.append(f"the line is {line.status}")
    if kind == "mobile":
        device = ctx.session.scalars(select(Device).where(Device.line_id == line_id)).first()
        if device is None:
            findings.append("no phone has registered this SIM")
        elif device.sim_state != "ready":
            findings.append(f"the SIM reports {device.sim_state}")
        elif device.airplane_mode:
            findings.append("no radio contact with the phone: it is in airplane mode")
        else:  # registered: the network sees its data settings (the APN from its last profile update)
            if not device.mobile_data:
                findings.append("the phone is registered but requests no data session: mobile data is off")
            if device.apn != CARRIER_APN:
                findings.append(
                    f"the phone's APN is '{device.apn}', not '{CARRIER_APN}': data will be refused"
                )
    else:
        router = ctx.session.scalars(select(Router).where(Router.line_id == line_id)).first()
        if router is None:
            findings.append("no router is registered on this line")
        else:  # the firmware is the one the router last reported, even while it is off
            if router.power != "on":
                findings.append("no signal from the router: it is off or unplugged")
            if router.firmware != CURRENT_FIRMWARE:
                findings.append(
                    f"the router runs firmware {router.firmware}; the network requires {CURRENT_FIRMWARE}"
                )
    return DiagnosticsView(line_id=line_id, kind=kind, working=not findings, findings=findings)


@tool(kind="read")
def check_outages(ctx: ToolContext, area: str) -> list[OutageView]:
    """The outages of a service area, active and resolved, newest first.

    Args:
        area: the service area, e.g. "Riverside".
    """
    rows = ctx.session.scalars(
        select(Outage).where(Outage.area == area.strip()).order_by(Outage.started.desc())
    ).all()
    return [OutageView.of(o) for o in rows]


@tool(kind="write")
def add_outage_credit(ctx: ToolContext, bill_id: str, outage_id: str, amount_cents: int) -> CreditView:
    """Credit a bill for a resolved outage that hit the line's service.

    Args:
        bill_id: the bill to credit, e.g. "BL-00042".
        outage_id: the outage refunded, e.g. "OU-0002".
        amount_cents: the credit in cents (policy rule 5), e.g. 250.
    """
    bill = ctx.get_or_refuse(Bill, bill_id, f"No bill {bill_id}")
    require_verified(ctx, get_line(ctx, bill.line_id))
    outage = ctx.get_or_refuse(Outage, outage_id, f"No outage {outage_id}")
    if outage.status != "resolved":
        raise ToolError(f"Outage {outage_id} is still active; credit it once resolved")
    if amount_cents <= 0:
        raise ToolError("The credit must be a positive amount")
    taken = ctx.session.scalars(
        select(Credit).where(Credit.outage_id == outage_id, Credit.bill_id == bill_id)
    ).first()
    if taken is not None:
        raise ToolError(f"Bill {bill_id} was already credited for outage {outage_id}")
    credit = ctx.insert(
        Credit(
            credit_id=ctx.new_id("CR"),
            bill_id=bill_id,
            amount_cents=amount_cents,
            outage_id=outage_id,
            reason=f"Outage {outage_id}",
        )
    )
    return CreditView.of(credit)


@tool(kind="write")
def open_ticket(ctx: ToolContext, line_id: str, category: TicketCategory, summary: str) -> TicketView:
    """Open a case for another team: an outage report, a technician visit or a billing review.

    Args:
        line_id: the line concerned, e.g. "LN-0042".
        category: "outage", "technician", "billing" or "other".
        summary: what happened, in a sentence.
    """
    get_line(ctx, line_id)  # a ticket is a record for another team: no identity needed (policy rule 1)
    ticket = ctx.insert(
        Ticket(
            ticket_id=ctx.new_id("TK"),
            line_id=line_id,
            category=category,
            summary=summary,
            created_at=ctx.now,
        )
    )
    return TicketView.of(ticket)
