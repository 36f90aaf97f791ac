"""Claim tools: filing a loss, the payout decision (approve or adjuster review) and claim evidence."""

from __future__ import annotations

from datetime import date
from typing import Literal

from sqlalchemy import select

from env_server.domain import ToolContext, ToolError, tool
from env_server.domains.insurance.factories import PolicySpec
from env_server.domains.insurance.models import Claim, ClaimCause, ClaimCoverage, Document, Policy
from env_server.domains.insurance.tools._common import (
    _get_claim,
    _get_policy,
    _get_vehicle,
    require_verified,
    verified_policy,
)
from env_server.domains.insurance.tools._views import ClaimView, DocumentView


def _deductible(policy: Policy | PolicySpec, coverage: str) -> int:
    """The deductible of a claim under `coverage`; a `ToolError` when the policy lacks that coverage.

    The families price a fresh policy's claims with it too (a `PolicySpec`), so both follow one rule.
    """
    if coverage == "liability":
        return 0
    if coverage == "glass" and policy.full_glass:
        return 0
    column = "collision" if coverage == "collision" else "comprehensive"
    deductible = getattr(policy, f"{column}_deductible_cents")
    if deductible is None:
        raise ToolError(
            f"Policy {policy.policy_id} has no {column} coverage; a {coverage} claim cannot be filed"
        )
    return deductible


def _open_claim(ctx: ToolContext, claim_id: str) -> Claim:
    """The claim `claim_id`, once its policyholder is verified and it still awaits a decision."""
    claim = _get_claim(ctx, claim_id)
    require_verified(ctx, _get_policy(ctx, claim.policy_id).customer_id)
    if claim.status != "open":
        raise ToolError(f"Claim {claim_id} is {claim.status}; only an open claim can be decided")
    return claim


@tool(kind="read")
def list_claims(ctx: ToolContext, policy_id: str) -> list[ClaimView]:
    """List the claims of a policy, oldest first.

    Args:
        policy_id: the policy, e.g. "POL-20042".
    """
    policy = _get_policy(ctx, policy_id)
    claims = ctx.session.scalars(
        select(Claim).where(Claim.policy_id == policy.policy_id).order_by(Claim.claim_id)
    )
    return [ClaimView.of(c) for c in claims]


@tool(kind="read")
def get_claim(ctx: ToolContext, claim_id: str) -> ClaimView:
    """Show one claim: coverage, dates, estimate, deductible, status and payout.

    Args:
        claim_id: the claim id, e.g. "CLM-70012".
    """
    return ClaimView.of(_get_claim(ctx, claim_id))


@tool(kind="write")
def file_claim(
    ctx: ToolContext,
    policy_id: str,
    vehicle_id: str,
    incident_date: date,
    cause: ClaimCause,
    coverage: ClaimCoverage,
    estimated_damage_cents: int,
    injuries: bool,
    description: str,
) -> ClaimView:
    """File a new claim (first notice of loss); it starts open, awaiting the payout decision.

    The deductible is set from the coverage chosen: collision and comprehensive use the policy's
    deductibles, glass uses none with the full-glass option (else the comprehensive one), liability none.

    Args:
        policy_id: the policy, e.g. "POL-20042".
        vehicle_id: the insured vehicle involved, e.g. "VEH-30117".
        incident_date: the day of the loss, e.g. "2026-09-28".
        cause: what happened: "vehicle_collision", "object_collision", "animal", "theft", "vandalism",
            "weather", "fire", "falling_object" or "glass_breakage".
        coverage: the part of the policy that responds, chosen by the policy's rules: "collision",
            "comprehensive", "glass" or "liability".
        estimated_damage_cents: the repair estimate in cents, e.g. 185000 for $1,850.00.
        injuries: whether anyone was injured.
        description: the customer's account of the incident, in a sentence or two.
    """
    policy = verified_policy(ctx, policy_id, allow_cancelled=True)
    vehicle = _get_vehicle(ctx, policy, vehicle_id)
    if incident_date > ctx.now.date():
        raise ToolError(f"Incident date {incident_date} is in the future")
    if vehicle.added_on > incident_date or (
        vehicle.removed_on is not None and vehicle.removed_on <= incident_date
    ):
        raise ToolError(f"Vehicle {vehicle_id} was not on the policy on {incident_date}")
    if estimated_damage_cents <= 0:
        raise ToolError("estimated_damage_cents must be positive")
    claim = Claim(
        claim_id=ctx.new_id("CLM"),
        policy_id=policy.policy_id,
        vehicle_id=vehicle.vehicle_id,
        coverage=coverage,
        cause=cause,
        incident_date=incident_date,
        reported_on=ctx.now.date(),
        estimated_damage_cents=estimated_damage_cents,
        deductible_cents=_deductible(policy, coverage),
        injuries=injuries,
        status="open",
        description=description.strip(),
    )
    return ClaimView.of(ctx.insert(claim))


@tool(kind="write")
def approve_claim_payout(ctx: ToolContext, claim_id: str) -> ClaimView:
    """Approve an open claim for payment: the payout is the estimate minus the claim's deductible.

    Only for claims the policy lets an agent approve; others go to refer_claim_to_adjuster.

    Args:
        claim_id: the open claim, e.g. "CLM-90001".
    """
    claim = _open_claim(ctx, claim_id)
    claim.status = "approved"
    claim.payout_cents = max(0, claim.estimated_damage_cents - claim.deductible_cents)
    return ClaimView.of(claim)


@tool(kind="write")
def refer_claim_to_adjuster(ctx: ToolContext, claim_id: str) -> ClaimView:
    """Send an open claim to a field adjuster for review instead of approving it; no payout is set.

    Args:
        claim_id: the open claim, e.g. "CLM-90001".
    """
    claim = _open_claim(ctx, claim_id)
    claim.status = "adjuster_review"
    return ClaimView.of(claim)


@tool(kind="write")
def request_claim_document(
    ctx: ToolContext, claim_id: str, doc_type: Literal["police_report", "damage_photos", "repair_estimate"]
) -> DocumentView:
    """Ask the customer to upload evidence for a claim that is open or under adjuster review.

    Args:
        claim_id: the claim, e.g. "CLM-90001".
        doc_type: "police_report", "damage_photos" or "repair_estimate".
    """
    claim = _get_claim(ctx, claim_id)
    policy = _get_policy(ctx, claim.policy_id)
    require_verified(ctx, policy.customer_id)
    if claim.status not in ("open", "adjuster_review"):
        raise ToolError(
            f"Claim {claim_id} is {claim.status}; evidence is requested only while it is being decided"
        )
    existing = ctx.session.scalars(
        select(Document.document_id).where(Document.claim_id == claim_id, Document.doc_type == doc_type)
    ).first()
    if existing is not None:
        raise ToolError(f"A {doc_type} for claim {claim_id} is already on file ({existing})")
    document = Document(
        document_id=ctx.new_id("DOC"),
        customer_id=policy.customer_id,
        policy_id=policy.policy_id,
        claim_id=claim.claim_id,
        doc_type=doc_type,
        status="requested",
        delivery="upload",
        created_on=ctx.now.date(),
    )
    return DocumentView.of(ctx.insert(document))
