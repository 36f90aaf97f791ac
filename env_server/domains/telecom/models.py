"""Telecom tables: a carrier's accounts, mobile lines and home internet, and the customer's own equipment.

The carrier's side (the agent's): customers, plans, lines, outages, bills, credits and tickets. The
customer's side (`USER_TABLES`, changed only by the customer's user tools): their phones' settings and their
home routers. A line works only when both sides are right: the carrier's line active (and roaming enabled
abroad), and the phone out of airplane mode, with mobile data on and the plan's APN.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Literal

from sqlalchemy import Boolean, CheckConstraint, Date, DateTime, ForeignKey, Integer, String
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from env_server.domain import IdentityVerificationTable, named_metadata, one_of

#: The domain's frozen clock: Tuesday 8 December 2026, 09:30 at the support desk.
NOW = datetime(2026, 12, 8, 9, 30)

PlanKind = Literal["mobile", "internet"]
LineStatus = Literal["active", "suspended"]
OutageStatus = Literal["active", "resolved"]
BillStatus = Literal["due", "paid"]
TicketCategory = Literal["outage", "technician", "billing", "other"]
SimState = Literal["ready", "pin_locked", "missing"]
RouterPower = Literal["on", "off"]

#: The access point name every mobile plan uses: a phone with another APN gets no mobile data.
CARRIER_APN = "gsnet4g"
#: The router firmware the carrier supports; an older router drops its connection (policy rule 5).
CURRENT_FIRMWARE = "5.2"
#: What a day of roaming costs on a plan without roaming included (policy rule 4).
ROAMING_DAY_CENTS = 1000

#: The tables on the customer's side: only the customer's own tools change them.
USER_TABLES = frozenset({"devices", "routers"})


class Base(DeclarativeBase):
    """Declarative base on the telecom domain's own MetaData."""

    metadata = named_metadata()


class Customer(Base):
    """An account holder."""

    __tablename__ = "customers"

    customer_id: Mapped[str] = mapped_column(String(8), primary_key=True, comment='e.g. "C-0042"')
    full_name: Mapped[str] = mapped_column(String(60), comment="As on the contract.")
    pin: Mapped[str] = mapped_column(String(4), comment="The four-digit account PIN (identity check).")
    area: Mapped[str] = mapped_column(String(30), comment="The service area of the customer's address.")
    email: Mapped[str] = mapped_column(String(80), comment="Contact email.")


class IdentityVerification(IdentityVerificationTable, Base):
    """A successful identity check of a customer in this conversation."""

    customer_id: Mapped[str] = mapped_column(ForeignKey("customers.customer_id"), comment="Who was checked.")


class Plan(Base):
    """A tariff: a mobile plan or a home internet plan."""

    __tablename__ = "plans"
    __table_args__ = (
        one_of("kind", PlanKind),
        CheckConstraint("monthly_cents > 0", name="price_positive"),
        CheckConstraint("data_gb > 0", name="data_positive"),
    )

    plan_id: Mapped[str] = mapped_column(String(8), primary_key=True, comment='e.g. "PL-M20"')
    name: Mapped[str] = mapped_column(String(40), comment="Marketing name.")
    kind: Mapped[str] = mapped_column(String(10), comment="mobile or internet.")
    monthly_cents: Mapped[int] = mapped_column(Integer, comment="Monthly price in cents.")
    data_gb: Mapped[int] = mapped_column(
        Integer, comment="Monthly data allowance (internet: speed in Mbit/s)."
    )
    roaming_included: Mapped[bool] = mapped_column(Boolean, comment="Whether roaming days are free.")


class Line(Base):
    """A subscription: a mobile number or a home internet connection, on one plan."""

    __tablename__ = "lines"
    __table_args__ = (one_of("status", LineStatus),)

    line_id: Mapped[str] = mapped_column(String(8), primary_key=True, comment='e.g. "LN-0042"')
    customer_id: Mapped[str] = mapped_column(ForeignKey("customers.customer_id"), comment="The holder.")
    plan_id: Mapped[str] = mapped_column(ForeignKey("plans.plan_id"), comment="The current plan.")
    number: Mapped[str] = mapped_column(String(12), comment='The phone number, or "home" for internet.')
    status: Mapped[str] = mapped_column(String(10), comment="active or suspended.")
    roaming_enabled: Mapped[bool] = mapped_column(Boolean, comment="Roaming allowed on the network side.")
    roaming_until: Mapped[date | None] = mapped_column(Date, comment="Last day of booked roaming.")
    puk: Mapped[str | None] = mapped_column(String(8), comment="The SIM unblocking key (mobile only).")


class Outage(Base):
    """A network outage in one service area."""

    __tablename__ = "outages"
    __table_args__ = (one_of("status", OutageStatus), one_of("kind", PlanKind))

    outage_id: Mapped[str] = mapped_column(String(8), primary_key=True, comment='e.g. "OU-0007"')
    area: Mapped[str] = mapped_column(String(30), comment="The service area hit.")
    kind: Mapped[str] = mapped_column(String(10), comment="mobile or internet.")
    status: Mapped[str] = mapped_column(String(10), comment="active or resolved.")
    started: Mapped[date] = mapped_column(Date, comment="First day of the outage.")
    ended: Mapped[date | None] = mapped_column(Date, comment="Last day (resolved outages).")
    expected_fix: Mapped[date | None] = mapped_column(Date, comment="When engineers expect it fixed.")


class Bill(Base):
    """A monthly bill of one line."""

    __tablename__ = "bills"
    __table_args__ = (
        one_of("status", BillStatus),
        CheckConstraint("amount_cents >= 0", name="amount_not_negative"),
    )

    bill_id: Mapped[str] = mapped_column(String(8), primary_key=True, comment='e.g. "BL-0042"')
    line_id: Mapped[str] = mapped_column(ForeignKey("lines.line_id"), comment="The line billed.")
    period: Mapped[str] = mapped_column(String(7), comment='The month billed, e.g. "2026-11".')
    amount_cents: Mapped[int] = mapped_column(Integer, comment="Total due for the month.")
    status: Mapped[str] = mapped_column(String(10), comment="due or paid.")


class Credit(Base):
    """A credit on a bill: an outage refund or a corrected charge."""

    __tablename__ = "credits"
    __table_args__ = (CheckConstraint("amount_cents > 0", name="amount_positive"),)

    credit_id: Mapped[str] = mapped_column(String(8), primary_key=True, comment='e.g. "CR-90001"')
    bill_id: Mapped[str] = mapped_column(ForeignKey("bills.bill_id"), comment="The bill credited.")
    amount_cents: Mapped[int] = mapped_column(Integer, comment="The credit in cents.")
    outage_id: Mapped[str | None] = mapped_column(ForeignKey("outages.outage_id"), comment="Outage refunded.")
    reason: Mapped[str] = mapped_column(String(200), comment="Free text.")


class Ticket(Base):
    """A case for another team: an outage report, a technician visit, a billing review."""

    __tablename__ = "tickets"
    __table_args__ = (one_of("category", TicketCategory),)

    ticket_id: Mapped[str] = mapped_column(String(8), primary_key=True, comment='e.g. "TK-90001"')
    line_id: Mapped[str] = mapped_column(ForeignKey("lines.line_id"), comment="The line concerned.")
    category: Mapped[str] = mapped_column(String(12), comment="outage, technician, billing or other.")
    summary: Mapped[str] = mapped_column(String(300), comment="Free text.")
    created_at: Mapped[datetime] = mapped_column(DateTime, comment="When it was opened.")


class Device(Base):
    """The customer's phone on a mobile line (customer side: only the customer changes its settings)."""

    __tablename__ = "devices"
    __table_args__ = (one_of("sim_state", SimState),)

    device_id: Mapped[str] = mapped_column(String(8), primary_key=True, comment='e.g. "DV-0042"')
    line_id: Mapped[str] = mapped_column(ForeignKey("lines.line_id"), comment="The line in its SIM.")
    model: Mapped[str] = mapped_column(String(40), comment="Make and model.")
    airplane_mode: Mapped[bool] = mapped_column(Boolean, comment="Airplane mode on: no network at all.")
    mobile_data: Mapped[bool] = mapped_column(Boolean, comment="Mobile data switched on.")
    data_roaming: Mapped[bool] = mapped_column(Boolean, comment="The phone's own data roaming switch.")
    apn: Mapped[str] = mapped_column(String(40), comment="The access point name set on the phone.")
    sim_state: Mapped[str] = mapped_column(String(12), comment="ready, pin_locked or missing.")
    restarts: Mapped[int] = mapped_column(Integer, default=0, comment="Restarts the customer made.")


class Router(Base):
    """The customer's home router on an internet line (customer side)."""

    __tablename__ = "routers"
    __table_args__ = (one_of("power", RouterPower), CheckConstraint("restarts >= 0", name="restarts_valid"))

    router_id: Mapped[str] = mapped_column(String(8), primary_key=True, comment='e.g. "RT-0042"')
    line_id: Mapped[str] = mapped_column(ForeignKey("lines.line_id"), comment="The internet line it serves.")
    model: Mapped[str] = mapped_column(String(40), comment="Make and model.")
    power: Mapped[str] = mapped_column(String(4), comment="on or off.")
    firmware: Mapped[str] = mapped_column(String(8), comment='Installed firmware, e.g. "5.2".')
    restarts: Mapped[int] = mapped_column(Integer, default=0, comment="Restarts the customer made.")
