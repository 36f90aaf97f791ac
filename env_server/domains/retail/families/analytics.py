"""Analytics families: parameterised staff questions whose gold SQL runs unchanged on SQLite and PostgreSQL.

Dates are compared as ISO literals (`placed_at >= '2026-09-01'`), never with backend date functions.
`shop_report` asks about a date window of the seeded history (checked non-empty against the seed rows);
`account_report` asks about a fresh customer the draw creates, so its answer never depends on the seed.
"""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

from env_server.domain import ScenarioContext, ScenarioUnavailable, analytics_task, month_day
from env_server.domains.retail.families._policy import TODAY
from env_server.domains.retail.families._scene import Scene
from shared.tasks import Task

_HISTORY_START = date(2026, 3, 20)
_PERSONAS = (
    "Dana Whitfield, the returns operations lead",
    "Marcus Bell, a finance analyst",
    "Ines Carvalho, a category manager",
    "Tom Okonkwo, the logistics coordinator",
    "Grace Liu, the loyalty programme manager",
    "Kemi Adeyemi, the support team lead",
)


def _in(value: Any, start: date, end: date) -> bool:
    """A seed date or timestamp (ISO text) falls on a day from `start` to `end` inclusive."""
    return value is not None and start.isoformat() <= str(value)[:10] <= end.isoformat()


def shop_report(ctx: ScenarioContext) -> Task:
    """Counts and sums over a drawn date window of the shop's history, grouped by a drawn dimension."""
    rng = ctx.rng
    length = rng.choice((7, 14, 21, 30, 45, 60))
    start = _HISTORY_START + timedelta(days=rng.randint(0, (TODAY - _HISTORY_START).days - length - 1))
    end = start + timedelta(days=length - 1)
    lo, hi = f"'{start.isoformat()}'", f"'{(end + timedelta(days=1)).isoformat()}'"
    span = f"from {month_day(start)} to {month_day(end)}, 2026 inclusive (both days count)"
    tables = ctx.seed_tables
    kind = rng.choice(("orders", "refunds", "units", "deliveries"))
    if kind == "orders":
        dimension, label = rng.choice(
            (("o.warehouse", "warehouse"), ("o.status", "order status"), ("c.tier", "membership tier"))
        )
        question = (
            f"How many orders were placed {span}, and what was their total value in cents, per {label}? "
            f"One row per {label} with the order count and the sum of order totals."
        )
        sql = (
            f"SELECT {dimension}, COUNT(*), SUM(o.total_cents) FROM orders o "
            f"JOIN customers c ON c.id = o.customer_id "
            f"WHERE o.placed_at >= {lo} AND o.placed_at < {hi} GROUP BY {dimension}"
        )
        hits = sum(_in(o["placed_at"], start, end) for o in tables["orders"])
    elif kind == "refunds":
        question = (
            f"How much did we refund {span}, per refund reason? One row per reason with the number of "
            "refunds and the total in cents, going by the refund's creation time."
        )
        sql = (
            "SELECT reason, COUNT(*), SUM(amount_cents) FROM refunds "
            f"WHERE created_at >= {lo} AND created_at < {hi} GROUP BY reason"
        )
        hits = sum(_in(r["created_at"], start, end) for r in tables["refunds"])
    elif kind == "units":
        question = (
            f"How many units were ordered per product category on orders placed {span}, leaving out "
            "cancelled orders? One row per category with the units."
        )
        sql = (
            "SELECT p.category, SUM(i.quantity) FROM order_items i "
            "JOIN orders o ON o.id = i.order_id JOIN products p ON p.id = i.product_id "
            f"WHERE o.status <> 'cancelled' AND o.placed_at >= {lo} AND o.placed_at < {hi} "
            "GROUP BY p.category"
        )
        live = {
            o["id"]
            for o in tables["orders"]
            if o["status"] != "cancelled" and _in(o["placed_at"], start, end)
        }
        hits = sum(i["order_id"] in live for i in tables["order_items"])
    else:
        question = (
            f"How many parcels did each carrier deliver {span}, going by the delivery date? "
            "One row per carrier with the count."
        )
        sql = (
            "SELECT carrier, COUNT(*) FROM shipments "
            f"WHERE delivered_on >= {lo} AND delivered_on <= '{end.isoformat()}' GROUP BY carrier"
        )
        hits = sum(_in(s["delivered_on"], start, end) for s in tables["shipments"])
    if hits == 0:
        raise ScenarioUnavailable(f"no {kind} in the drawn window")
    persona = rng.choice(_PERSONAS)
    return analytics_task(
        ctx,
        persona=f"{persona}, preparing a report.",
        description=f"{kind.capitalize()} {span}, grouped.",
        goal=question,
        script=[question],
        sql=sql,
        tags=["date-range", kind, "generated"],
        instructions="Amounts in cents; every matching row counts.",
    )


def account_report(ctx: ScenarioContext) -> Task:
    """A fresh customer's order history, and a question about it: totals per status, net paid, units."""
    scene = Scene(ctx)
    rng = ctx.rng
    person = scene.customer(extra_method=True)
    for _ in range(rng.randint(3, 6)):
        lines = [scene.line(scene.product(), rng.choice((1, 1, 2)))]
        placed_on = TODAY - timedelta(days=rng.randint(1, 150))
        status = rng.choices(("delivered", "cancelled", "processing"), weights=(6, 2, 1))[0]
        if status == "processing":
            placed_on = TODAY
        order = scene.order(person, lines, status=status, placed_on=placed_on, method=rng.randrange(2))
        if status == "cancelled":
            scene.refund(order, order.total_cents, "cancellation", placed_on)
        elif status == "delivered":
            scene.ship(order, "delivered", placed_on + timedelta(days=1), placed_on + timedelta(days=3))
            if rng.random() < 0.3:
                scene.refund(
                    order, max(1, order.total_cents // 10), "price_adjustment", placed_on + timedelta(days=5)
                )
    who = f"customer {person.id} ({person.name})"
    kind = rng.choice(("status", "net", "method"))
    if kind == "status":
        question = (
            f"For {who}: how many orders do they have in each status, and what do those orders total in "
            "cents? One row per status with the count and the sum of order totals."
        )
        sql = (
            "SELECT status, COUNT(*), SUM(total_cents) FROM orders "
            f"WHERE customer_id = '{person.id}' GROUP BY status"
        )
    elif kind == "net":
        question = (
            f"For {who}: what has each of their orders cost them after refunds? One row per order ID with "
            "the order total minus everything refunded on it, in cents."
        )
        sql = (
            "SELECT o.id, o.total_cents - COALESCE(SUM(r.amount_cents), 0) FROM orders o "
            "LEFT JOIN refunds r ON r.order_id = o.id "
            f"WHERE o.customer_id = '{person.id}' GROUP BY o.id, o.total_cents"
        )
    else:
        question = (
            f"For {who}: how much was paid with each of their payment methods? One row per payment method "
            "label with the number of payments and the total captured in cents."
        )
        sql = (
            "SELECT m.label, COUNT(*), SUM(pa.amount_cents) FROM payments pa "
            "JOIN payment_methods m ON m.id = pa.payment_method_id "
            f"WHERE m.customer_id = '{person.id}' GROUP BY m.label"
        )
    return analytics_task(
        ctx,
        persona=f"{rng.choice(_PERSONAS)}, reviewing an escalated account.",
        description=f"Account report for one customer: {kind}.",
        goal=question,
        script=[question],
        sql=sql,
        tags=["account", kind, "generated"],
        initial_patch=scene.initial_patch(),
    )
