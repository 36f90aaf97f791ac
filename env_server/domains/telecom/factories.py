"""Telecom entities, written once: plans, outages, customers, lines, bills, phones and routers.

The seed turns them into ORM rows (`.orm()`), the scenario families into `initial_patch` rows (`.row()`).
`customer` draws the name, the PIN and the service area from the caller's RNG, in that order, as the seed
did before it shared it; the other builders draw nothing, so the seed's rows are the same as they were.
A phone and a router start healthy; a family breaks the setting its scenario needs (`airplane_mode=True`).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import date

from env_server.domain import EntitySpec
from env_server.domains.telecom.models import (
    CARRIER_APN,
    CURRENT_FIRMWARE,
    Bill,
    Customer,
    Device,
    Line,
    Outage,
    Plan,
    Router,
)

AREAS = ["Northgate", "Riverside", "Old Town", "Hillcrest", "Harbourside", "Eastfield"]
FIRST_NAMES = [
    "Maya",
    "Tomas",
    "Aiko",
    "Ravi",
    "Lena",
    "Omar",
    "Priya",
    "Jonas",
    "Elif",
    "Marco",
    "Sade",
    "Noor",
]
LAST_NAMES = [
    "Lindqvist",
    "Okoro",
    "Brennan",
    "Tanaka",
    "Moreau",
    "Haddad",
    "Kowalski",
    "Silva",
    "Novak",
    "Byrne",
]
PHONES = ["Pixel 8", "Galaxy S23", "iPhone 14", "Moto G54", "Nokia G42", "iPhone 15"]
ROUTERS = ["Nexa R5", "Nexa R7", "Fritz 7590"]
#: The two bills every line has: October paid, November due.
BILL_PERIODS = (("2026-10", "paid"), ("2026-11", "due"))


@dataclass
class PlanSpec(EntitySpec[Plan], model=Plan):
    """A tariff: a mobile plan or a home internet plan."""

    plan_id: str
    name: str
    kind: str
    monthly_cents: int
    data_gb: int
    roaming_included: bool


@dataclass
class OutageSpec(EntitySpec[Outage], model=Outage):
    """A network outage in one service area."""

    outage_id: str
    area: str
    kind: str
    status: str
    started: date
    ended: date | None
    expected_fix: date | None


@dataclass
class CustomerSpec(EntitySpec[Customer], model=Customer):
    """An account holder."""

    customer_id: str
    full_name: str
    pin: str
    area: str
    email: str


@dataclass
class LineSpec(EntitySpec[Line], model=Line):
    """A mobile number (digits only) or a home internet connection ("home")."""

    line_id: str
    customer_id: str
    plan_id: str
    number: str
    status: str
    roaming_enabled: bool
    roaming_until: date | None
    puk: str | None


@dataclass
class BillSpec(EntitySpec[Bill], model=Bill):
    """A monthly bill of one line."""

    bill_id: str
    line_id: str
    period: str
    amount_cents: int
    status: str


@dataclass
class DeviceSpec(EntitySpec[Device], model=Device):
    """The customer's phone on a mobile line, healthy unless a setting is given."""

    device_id: str
    line_id: str
    model: str
    airplane_mode: bool
    mobile_data: bool
    data_roaming: bool
    apn: str
    sim_state: str
    restarts: int


@dataclass
class RouterSpec(EntitySpec[Router], model=Router):
    """The customer's home router on an internet line."""

    router_id: str
    line_id: str
    model: str
    power: str
    firmware: str
    restarts: int


def customer(rng: random.Random, customer_id: str) -> CustomerSpec:
    """A customer with a drawn name, PIN and service area (drawn in that order); the email from the id."""
    first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
    pin, area = f"{rng.randrange(1000, 10000)}", rng.choice(AREAS)
    number = int(customer_id.rsplit("-", 1)[1])
    return CustomerSpec(
        customer_id, f"{first} {last}", pin, area, f"{first}.{last}{number}@example.com".lower()
    )


def puk_of(line_id: str) -> str:
    """The SIM unblocking key of a line: eight digits fixed by the line id, so the seed draws nothing more."""
    return f"{(int(line_id.rsplit('-', 1)[1]) * 7_919_141 + 24_681_357) % 10**8:08d}"


def line(line_id: str, customer_id: str, plan_id: str, number: str) -> LineSpec:
    """An active line, not roaming; a mobile line has its SIM's PUK."""
    puk = None if number == "home" else puk_of(line_id)
    return LineSpec(line_id, customer_id, plan_id, number, "active", False, None, puk)


def bills(line_id: str, monthly_cents: int, first_no: int) -> list[BillSpec]:
    """The line's October (paid) and November (due) bills at the plan's price, numbered from `first_no`."""
    return [
        BillSpec(f"BL-{first_no + k:05d}", line_id, period, monthly_cents, status)
        for k, (period, status) in enumerate(BILL_PERIODS)
    ]


def phone(
    device_id: str,
    line_id: str,
    model: str,
    *,
    airplane_mode: bool = False,
    mobile_data: bool = True,
    data_roaming: bool = False,
    apn: str = CARRIER_APN,
    sim_state: str = "ready",
) -> DeviceSpec:
    """A phone, never restarted; healthy (its SIM ready) unless a setting is given."""
    return DeviceSpec(device_id, line_id, model, airplane_mode, mobile_data, data_roaming, apn, sim_state, 0)


def router(
    router_id: str, line_id: str, model: str, *, power: str = "on", firmware: str = CURRENT_FIRMWARE
) -> RouterSpec:
    """A home router, never restarted; on and up to date unless told."""
    return RouterSpec(router_id, line_id, model, power, firmware, 0)
