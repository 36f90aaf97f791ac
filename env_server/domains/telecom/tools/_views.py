"""What the tools return: the carrier's view of accounts and lines, and the customer's view of equipment."""

from __future__ import annotations

from datetime import date

from sqlalchemy import select

from env_server.domain import RowView, ToolContext
from env_server.domains.telecom.models import Bill, Customer, Line, Plan


class PlanView(RowView):
    """A tariff."""

    plan_id: str
    name: str
    kind: str
    monthly_cents: int
    data_gb: int
    roaming_included: bool


class BillView(RowView):
    """A monthly bill."""

    bill_id: str
    period: str
    amount_cents: int
    status: str


class LineView(RowView):
    """A subscription with its plan and bills."""

    line_id: str
    number: str
    status: str
    roaming_enabled: bool
    roaming_until: date | None
    plan: PlanView
    bills: list[BillView]


class CustomerView(RowView):
    """An account holder and their lines (no PIN: the agent asks the caller for it)."""

    customer_id: str
    full_name: str
    area: str
    lines: list[LineView]


class VerificationView(RowView):
    """The outcome of an identity check."""

    customer_id: str
    verified: bool


class PukView(RowView):
    """The unblocking key of a line's SIM."""

    line_id: str
    puk: str


class OutageView(RowView):
    """A network outage."""

    outage_id: str
    area: str
    kind: str
    status: str
    started: date
    ended: date | None
    expected_fix: date | None


class DiagnosticsView(RowView):
    """What the network sees of a line: whether it works, and each problem it can detect."""

    line_id: str
    kind: str
    working: bool
    findings: list[str]


class PhoneView(RowView):
    """The phone's settings screen, as the customer reads it."""

    device_id: str
    model: str
    airplane_mode: bool
    mobile_data: bool
    data_roaming: bool
    apn: str
    sim_state: str


class RouterView(RowView):
    """The router's status page, as the customer reads it."""

    router_id: str
    model: str
    power: str
    firmware: str


class CreditView(RowView):
    """A credit on a bill."""

    credit_id: str
    bill_id: str
    amount_cents: int
    outage_id: str | None


class TicketView(RowView):
    """A case opened for another team."""

    ticket_id: str
    line_id: str
    category: str


def line_view(ctx: ToolContext, line: Line) -> LineView:
    """A line with its plan and its bills, newest first."""
    plan = ctx.session.get(Plan, line.plan_id)
    bills = ctx.session.scalars(
        select(Bill).where(Bill.line_id == line.line_id).order_by(Bill.period.desc())
    ).all()
    return LineView.of(line, plan=PlanView.of(plan), bills=[BillView.of(b) for b in bills])


def customer_view(ctx: ToolContext, customer: Customer) -> CustomerView:
    """A customer with every line they hold."""
    lines = ctx.session.scalars(
        select(Line).where(Line.customer_id == customer.customer_id).order_by(Line.line_id)
    ).all()
    return CustomerView.of(customer, lines=[line_view(ctx, line) for line in lines])
