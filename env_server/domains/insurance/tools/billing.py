"""Billing tools: balances, payments, catch-up instalment plans, autopay and reinstatement."""

from __future__ import annotations

from sqlalchemy import select

from env_server.domain import ToolContext, ToolError, tool
from env_server.domains.insurance.models import InstalmentPlan, Payment
from env_server.domains.insurance.tools._common import _get_billing, _get_policy, end_grace, verified_policy
from env_server.domains.insurance.tools._views import BillingView, PolicyView, billing_view, policy_view

#: Instalment counts the plan system accepts.
MIN_INSTALMENTS, MAX_INSTALMENTS = 2, 6


@tool(kind="read")
def get_billing_account(ctx: ToolContext, policy_id: str) -> BillingView:
    """Show a policy's billing: premium, past-due amount, payment method on file, plans and payments.

    Args:
        policy_id: the policy, e.g. "POL-20042".
    """
    return billing_view(ctx, _get_policy(ctx, policy_id))


@tool(kind="write")
def make_payment(ctx: ToolContext, policy_id: str, amount_cents: int) -> BillingView:
    """Charge the payment method on file to pay all or part of a policy's past-due amount.

    When a policy in its grace period has nothing left past due, it returns to active. A lapsed policy
    stays lapsed until it is reinstated.

    Args:
        policy_id: the policy, e.g. "POL-20042".
        amount_cents: the amount to charge in cents, at most the past-due amount, e.g. 18450 for $184.50.
    """
    policy = verified_policy(ctx, policy_id)
    account = _get_billing(ctx, policy)
    if account.past_due_cents == 0:
        raise ToolError(f"Policy {policy_id} has nothing past due")
    if not 0 < amount_cents <= account.past_due_cents:
        raise ToolError(
            f"Amount {amount_cents} must be between 1 and the past-due amount, {account.past_due_cents} cents"
        )
    ctx.session.add(
        Payment(
            payment_id=ctx.new_id("PAY"),
            billing_account_id=account.billing_account_id,
            amount_cents=amount_cents,
            paid_on=ctx.now.date(),
            method=account.payment_method,
        )
    )
    account.past_due_cents -= amount_cents
    if account.past_due_cents == 0:
        end_grace(policy)
    return billing_view(ctx, policy)


@tool(kind="write")
def create_instalment_plan(ctx: ToolContext, policy_id: str, instalment_count: int) -> BillingView:
    """Move a policy's whole past-due amount into a catch-up plan of equal monthly instalments.

    Each instalment is the past-due amount divided by the count, rounded up to the cent; the first is due
    on the account's next due date. A policy in its grace period returns to active.

    Args:
        policy_id: the policy, e.g. "POL-20042".
        instalment_count: the number of monthly instalments, from 2 to 6, as the policy prescribes.
    """
    policy = verified_policy(ctx, policy_id)
    if not MIN_INSTALMENTS <= instalment_count <= MAX_INSTALMENTS:
        raise ToolError(
            f"instalment_count {instalment_count} is not allowed; plans have {MIN_INSTALMENTS} to "
            f"{MAX_INSTALMENTS} instalments"
        )
    account = _get_billing(ctx, policy)
    if account.past_due_cents == 0:
        raise ToolError(f"Policy {policy_id} has nothing past due; there is nothing to spread")
    active = ctx.session.scalars(
        select(InstalmentPlan.plan_id).where(
            InstalmentPlan.billing_account_id == account.billing_account_id, InstalmentPlan.status == "active"
        )
    ).first()
    if active is not None:
        raise ToolError(f"Policy {policy_id} already has an active instalment plan ({active})")
    total = account.past_due_cents
    ctx.session.add(
        InstalmentPlan(
            plan_id=ctx.new_id("IP"),
            billing_account_id=account.billing_account_id,
            total_cents=total,
            instalment_count=instalment_count,
            instalment_cents=-(-total // instalment_count),
            first_due_date=account.next_due_date,
            status="active",
            created_on=ctx.now.date(),
        )
    )
    account.past_due_cents = 0
    end_grace(policy)
    return billing_view(ctx, policy)


@tool(kind="write")
def set_autopay(ctx: ToolContext, policy_id: str, enabled: bool) -> BillingView:
    """Switch automatic monthly payment from the method on file on or off.

    Args:
        policy_id: the policy, e.g. "POL-20042".
        enabled: true to switch autopay on, false to switch it off.
    """
    policy = verified_policy(ctx, policy_id)
    account = _get_billing(ctx, policy)
    if account.autopay == enabled:
        raise ToolError(f"Autopay is already {'on' if enabled else 'off'} for policy {policy_id}")
    account.autopay = enabled
    return billing_view(ctx, policy)


@tool(kind="write")
def reinstate_policy(ctx: ToolContext, policy_id: str) -> PolicyView:
    """Put a lapsed policy back in force from today, once nothing is past due.

    Collect the past-due amount with make_payment first. Whether a lapse may be reinstated at all is set
    by the policy.

    Args:
        policy_id: the lapsed policy, e.g. "POL-20042".
    """
    policy = verified_policy(ctx, policy_id)
    if policy.status != "lapsed":
        raise ToolError(f"Policy {policy_id} is {policy.status}; only a lapsed policy can be reinstated")
    account = _get_billing(ctx, policy)
    if account.past_due_cents > 0:
        raise ToolError(
            f"Policy {policy_id} still has {account.past_due_cents} cents past due; "
            "collect it before reinstating"
        )
    policy.status = "active"
    policy.lapsed_on = None
    return policy_view(ctx, policy)
