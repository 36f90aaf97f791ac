"""Policy tools: reading a policy, deductibles, cancellation and policy documents."""

from __future__ import annotations

from typing import Literal

from sqlalchemy import select

from env_server.domain import ToolContext, ToolError, tool
from env_server.domains.insurance.models import (
    DEDUCTIBLE_OPTIONS_CENTS,
    Document,
    InstalmentPlan,
)
from env_server.domains.insurance.tools._common import _get_billing, _get_policy, reprice, verified_policy
from env_server.domains.insurance.tools._views import DocumentView, PolicyView, policy_view


@tool(kind="read")
def get_policy(ctx: ToolContext, policy_id: str) -> PolicyView:
    """Show a policy: status, rating state, term, premium, coverages and deductibles, vehicles and drivers.

    Args:
        policy_id: the policy id, e.g. "POL-20042".
    """
    return policy_view(ctx, _get_policy(ctx, policy_id))


@tool(kind="write")
def change_deductible(
    ctx: ToolContext, policy_id: str, coverage: Literal["collision", "comprehensive"], deductible_cents: int
) -> PolicyView:
    """Change the collision or comprehensive deductible of a policy; premiums are recomputed.

    Args:
        policy_id: the policy, e.g. "POL-20042".
        coverage: "collision" or "comprehensive".
        deductible_cents: the new deductible in cents: 25000, 50000, 100000 or 200000.
    """
    policy = verified_policy(ctx, policy_id)
    if deductible_cents not in DEDUCTIBLE_OPTIONS_CENTS:
        options = ", ".join(str(v) for v in DEDUCTIBLE_OPTIONS_CENTS)
        raise ToolError(f"Deductible {deductible_cents} is not offered; choose one of {options} (cents)")
    column = f"{coverage}_deductible_cents"
    current = getattr(policy, column)
    if current is None:
        raise ToolError(f"Policy {policy_id} has no {coverage} coverage, so it has no {coverage} deductible")
    if current == deductible_cents:
        raise ToolError(f"The {coverage} deductible of policy {policy_id} is already {deductible_cents}")
    setattr(policy, column, deductible_cents)
    reprice(ctx, policy)
    return policy_view(ctx, policy)


@tool(kind="write")
def cancel_policy(
    ctx: ToolContext,
    policy_id: str,
    reason: Literal["sold_vehicle", "switched_carrier", "moved_out_of_state", "cost", "other"],
) -> PolicyView:
    """Cancel a policy effective today at the customer's request.

    Autopay is switched off and any active instalment plan is cancelled with it. This cannot be undone.

    Args:
        policy_id: the policy, e.g. "POL-20042".
        reason: why the customer cancels: "sold_vehicle", "switched_carrier", "moved_out_of_state", "cost"
            or "other".
    """
    policy = verified_policy(ctx, policy_id)
    policy.status = "cancelled"
    policy.cancelled_on = ctx.now.date()
    policy.cancellation_reason = reason
    policy.grace_ends_on = None
    account = _get_billing(ctx, policy)
    account.autopay = False
    plans = ctx.session.scalars(
        select(InstalmentPlan).where(
            InstalmentPlan.billing_account_id == account.billing_account_id, InstalmentPlan.status == "active"
        )
    )
    for plan in plans:
        plan.status = "cancelled"
    return policy_view(ctx, policy)


@tool(kind="write")
def send_policy_document(
    ctx: ToolContext,
    policy_id: str,
    doc_type: Literal["id_card", "declarations", "proof_of_insurance"],
    delivery: Literal["email", "mail"],
) -> DocumentView:
    """Send a policy document to the customer's email address or mailing address on file.

    Args:
        policy_id: the policy, e.g. "POL-20042".
        doc_type: "id_card" (insurance ID cards), "declarations" (the declarations page) or
            "proof_of_insurance" (a letter confirming coverage).
        delivery: "email" or "mail".
    """
    policy = verified_policy(ctx, policy_id)
    document = Document(
        document_id=ctx.new_id("DOC"),
        customer_id=policy.customer_id,
        policy_id=policy.policy_id,
        doc_type=doc_type,
        status="sent",
        delivery=delivery,
        created_on=ctx.now.date(),
    )
    return DocumentView.of(ctx.insert(document))


@tool(kind="read")
def list_documents(ctx: ToolContext, policy_id: str) -> list[DocumentView]:
    """List the documents of a policy (sent, requested or received), oldest first.

    Args:
        policy_id: the policy, e.g. "POL-20042".
    """
    policy = _get_policy(ctx, policy_id)
    documents = ctx.session.scalars(
        select(Document).where(Document.policy_id == policy.policy_id).order_by(Document.document_id)
    )
    return [DocumentView.of(d) for d in documents]
