"""Telecom seed: 6 plans, 400 customers with their lines, phones, routers and bills, and four outages.

Each customer has a mobile line and a phone; every second one also home internet with a router; every line
two months of bills. Everything is drawn from the given RNG. Ids: customers C-0001..C-0400, mobile lines
LN-0001..LN-0400 with phones DV-0001..DV-0400; internet lines LN-1001..LN-1399 (odd customers) with routers
RT-0001..RT-0399; bills BL-00001..; outages OU-0001..OU-0004. Every phone and router starts healthy; a task
breaks the ones it needs in its `initial_patch`.
"""

from __future__ import annotations

import random
from datetime import date

from sqlalchemy.orm import Session

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
_FIRST = ["Maya", "Tomas", "Aiko", "Ravi", "Lena", "Omar", "Priya", "Jonas", "Elif", "Marco", "Sade", "Noor"]
_LAST = ["Lindqvist", "Okoro", "Brennan", "Tanaka", "Moreau", "Haddad", "Kowalski", "Silva", "Novak", "Byrne"]
_PHONES = ["Pixel 8", "Galaxy S23", "iPhone 14", "Moto G54", "Nokia G42", "iPhone 15"]
_ROUTERS = ["Nexa R5", "Nexa R7", "Fritz 7590"]

PLANS = [
    Plan(
        plan_id="PL-M10",
        name="Mobile 10",
        kind="mobile",
        monthly_cents=1500,
        data_gb=10,
        roaming_included=False,
    ),
    Plan(
        plan_id="PL-M30",
        name="Mobile 30",
        kind="mobile",
        monthly_cents=2500,
        data_gb=30,
        roaming_included=False,
    ),
    Plan(
        plan_id="PL-MW",
        name="Mobile World",
        kind="mobile",
        monthly_cents=4500,
        data_gb=100,
        roaming_included=True,
    ),
    Plan(
        plan_id="PL-I100",
        name="Fibre 100",
        kind="internet",
        monthly_cents=3500,
        data_gb=100,
        roaming_included=False,
    ),
    Plan(
        plan_id="PL-I500",
        name="Fibre 500",
        kind="internet",
        monthly_cents=5000,
        data_gb=500,
        roaming_included=False,
    ),
    Plan(
        plan_id="PL-I1G",
        name="Fibre 1000",
        kind="internet",
        monthly_cents=6500,
        data_gb=1000,
        roaming_included=False,
    ),
]
OUTAGES = [
    Outage(
        outage_id="OU-0001", area="Riverside", kind="internet", status="active",
        started=date(2026, 12, 7), ended=None, expected_fix=date(2026, 12, 9),
    ),
    Outage(
        outage_id="OU-0002", area="Hillcrest", kind="mobile", status="resolved",
        started=date(2026, 11, 10), ended=date(2026, 11, 12), expected_fix=None,
    ),
    Outage(
        outage_id="OU-0003", area="Eastfield", kind="internet", status="resolved",
        started=date(2026, 11, 3), ended=date(2026, 11, 3), expected_fix=None,
    ),
    Outage(
        outage_id="OU-0004", area="Northgate", kind="mobile", status="active",
        started=date(2026, 12, 8), ended=None, expected_fix=date(2026, 12, 10),
    ),
]  # fmt: skip


def seed(session: Session, rng: random.Random) -> None:
    """Plans, customers with their lines, phones, routers and bills, and the outages."""
    session.add_all(_copy(p) for p in PLANS)
    session.add_all(_copy(o) for o in OUTAGES)
    session.flush()
    mobile = [p for p in PLANS if p.kind == "mobile"]
    internet = [p for p in PLANS if p.kind == "internet"]
    bill_no = 0
    for i in range(1, 401):
        first, last = rng.choice(_FIRST), rng.choice(_LAST)
        session.add(
            Customer(
                customer_id=f"C-{i:04d}",
                full_name=f"{first} {last}",
                pin=f"{rng.randrange(1000, 10000)}",
                area=rng.choice(AREAS),
                email=f"{first}.{last}{i}@example.com".lower(),
            )
        )
        lines = [(f"LN-{i:04d}", rng.choice(mobile), f"04{rng.randrange(10**7, 10**8)}")]
        if i % 2:
            lines.append((f"LN-{1000 + i}", rng.choice(internet), "home"))
        session.flush()  # the customer before its lines, the lines before their bills (no ORM relationships)
        session.add_all(
            Line(
                line_id=line_id,
                customer_id=f"C-{i:04d}",
                plan_id=plan.plan_id,
                number=number,
                status="active",
                roaming_enabled=False,
                roaming_until=None,
            )
            for line_id, plan, number in lines
        )
        session.flush()
        for line_id, plan, _ in lines:
            for period, status in (("2026-10", "paid"), ("2026-11", "due")):
                bill_no += 1
                session.add(
                    Bill(
                        bill_id=f"BL-{bill_no:05d}",
                        line_id=line_id,
                        period=period,
                        amount_cents=plan.monthly_cents,
                        status=status,
                    )
                )
        session.flush()
        session.add(
            Device(
                device_id=f"DV-{i:04d}",
                line_id=f"LN-{i:04d}",
                model=rng.choice(_PHONES),
                airplane_mode=False,
                mobile_data=True,
                data_roaming=False,
                apn=CARRIER_APN,
                sim_state="ready",
                restarts=0,
            )
        )
        if i % 2:
            session.add(
                Router(
                    router_id=f"RT-{i:04d}",
                    line_id=f"LN-{1000 + i}",
                    model=rng.choice(_ROUTERS),
                    power="on",
                    firmware=CURRENT_FIRMWARE,
                    restarts=0,
                )
            )
    session.flush()


def _copy(row: Plan | Outage) -> Plan | Outage:
    """A fresh instance of a module-level row (an instance belongs to one session only)."""
    table = type(row).__table__
    return type(row)(**{c.name: getattr(row, c.name) for c in table.columns})
