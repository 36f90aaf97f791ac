"""Telecom seed: 6 plans, 400 customers with their lines, phones, routers and bills, and four outages.

Each customer has a mobile line and a phone; every second one also home internet with a router; every line
two months of bills. Everything is drawn from the given RNG. Ids: customers C-0001..C-0400, mobile lines
LN-0001..LN-0400 with phones DV-0001..DV-0400; internet lines LN-1001..LN-1399 (odd customers) with routers
RT-0001..RT-0399; bills BL-00001..; outages OU-0001..OU-0004. Every phone and router starts healthy; a task
breaks the ones it needs in its `initial_patch`. Every row comes from the entity specs of `factories.py`.
"""

from __future__ import annotations

import random
from datetime import date

from sqlalchemy.orm import Session

from env_server.domains.telecom.factories import (
    PHONES,
    ROUTERS,
    OutageSpec,
    PlanSpec,
    bills,
    customer,
    line,
    phone,
    router,
)

PLANS = [
    PlanSpec("PL-M10", "Mobile 10", "mobile", monthly_cents=1500, data_gb=10, roaming_included=False),
    PlanSpec("PL-M30", "Mobile 30", "mobile", monthly_cents=2500, data_gb=30, roaming_included=False),
    PlanSpec("PL-MW", "Mobile World", "mobile", monthly_cents=4500, data_gb=100, roaming_included=True),
    PlanSpec("PL-I100", "Fibre 100", "internet", monthly_cents=3500, data_gb=100, roaming_included=False),
    PlanSpec("PL-I500", "Fibre 500", "internet", monthly_cents=5000, data_gb=500, roaming_included=False),
    PlanSpec("PL-I1G", "Fibre 1000", "internet", monthly_cents=6500, data_gb=1000, roaming_included=False),
]
OUTAGES = [
    OutageSpec("OU-0001", "Riverside", "internet", "active", date(2026, 12, 7), None, date(2026, 12, 9)),
    OutageSpec("OU-0002", "Hillcrest", "mobile", "resolved", date(2026, 11, 10), date(2026, 11, 12), None),
    OutageSpec("OU-0003", "Eastfield", "internet", "resolved", date(2026, 11, 3), date(2026, 11, 3), None),
    OutageSpec("OU-0004", "Northgate", "mobile", "active", date(2026, 12, 8), None, date(2026, 12, 10)),
]


def seed(session: Session, rng: random.Random) -> None:
    """Plans, customers with their lines, phones, routers and bills, and the outages."""
    session.add_all(p.orm() for p in PLANS)
    session.add_all(o.orm() for o in OUTAGES)
    session.flush()
    mobile = [p for p in PLANS if p.kind == "mobile"]
    internet = [p for p in PLANS if p.kind == "internet"]
    bill_no = 0
    for i in range(1, 401):
        customer_id = f"C-{i:04d}"
        session.add(customer(rng, customer_id).orm())
        plans = [(f"LN-{i:04d}", rng.choice(mobile), f"04{rng.randrange(10**7, 10**8)}")]
        if i % 2:
            plans.append((f"LN-{1000 + i}", rng.choice(internet), "home"))
        session.flush()  # the customer before its lines, the lines before their bills (no ORM relationships)
        session.add_all(
            line(line_id, customer_id, plan.plan_id, number).orm() for line_id, plan, number in plans
        )
        session.flush()
        for line_id, plan, _ in plans:
            session.add_all(b.orm() for b in bills(line_id, plan.monthly_cents, bill_no + 1))
            bill_no += 2
        session.flush()
        session.add(phone(f"DV-{i:04d}", f"LN-{i:04d}", rng.choice(PHONES)).orm())
        if i % 2:
            session.add(router(f"RT-{i:04d}", f"LN-{1000 + i}", rng.choice(ROUTERS)).orm())
    session.flush()
