"""Account tools: proving who the customer is, reading their profile and listing their orders."""

from __future__ import annotations

from sqlalchemy import func, select

from env_server.domain import ToolContext, ToolError, tool
from env_server.domains.retail.models import Customer, IdentityVerification, Order, OrderItem, Product
from env_server.domains.retail.tools._common import _get_customer
from env_server.domains.retail.tools._views import CustomerView, OrderSummary, customer_view


@tool(kind="write")
def verify_customer_identity(ctx: ToolContext, email: str, zip_code: str) -> CustomerView:
    """Verify the customer's identity from their account email and billing zip code, and open their account.

    Call this first in every conversation about an account or order, with the details the customer gives you
    (never details you looked up). Until it succeeds, every change to the account is refused.

    Args:
        email: the account's email address as the customer spells it, e.g. "maya.okafor@example.org".
        zip_code: the five-digit zip code of the billing address, e.g. "60614".
    """
    customer = ctx.session.scalars(
        select(Customer).where(func.lower(Customer.email) == email.strip().lower())
    ).one_or_none()
    if customer is None or customer.zip_code != zip_code.strip():
        raise ToolError("No account matches that email address and zip code; the identity is not verified")
    if customer.status != "active":
        raise ToolError(f"Account {customer.id} is {customer.status}; it cannot be served")
    ctx.session.add(IdentityVerification(id=ctx.new_id("IV"), customer_id=customer.id, verified_at=ctx.now))
    return customer_view(ctx, customer)


@tool(kind="read")
def get_customer(ctx: ToolContext, customer_id: str) -> CustomerView:
    """Read a customer's profile: tier and its benefits, store credit, payment methods and order IDs.

    Args:
        customer_id: the customer's ID, e.g. "CU-10042".
    """
    return customer_view(ctx, _get_customer(ctx, customer_id))


@tool(kind="read")
def list_orders(ctx: ToolContext, customer_id: str) -> list[OrderSummary]:
    """List a customer's orders, newest first, with status, total and product names.

    Args:
        customer_id: the customer's ID, e.g. "CU-10042".
    """
    _get_customer(ctx, customer_id)
    orders = ctx.session.scalars(
        select(Order).where(Order.customer_id == customer_id).order_by(Order.placed_at.desc())
    ).all()
    names: dict[str, list[str]] = {o.id: [] for o in orders}
    rows = ctx.session.execute(
        select(OrderItem.order_id, Product.name)
        .join(Product, Product.id == OrderItem.product_id)
        .where(OrderItem.order_id.in_(names))
        .order_by(OrderItem.id)
    )
    for order_id, name in rows:
        names[order_id].append(name)
    return [
        OrderSummary(
            order_id=o.id,
            status=o.status,
            placed_at=o.placed_at,
            total_cents=o.total_cents,
            products=names[o.id],
        )
        for o in orders
    ]
