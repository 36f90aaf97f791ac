"""A fresh policyholder of a generated insurance task: their rows, what they say, and the calls about them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from env_server.domain import Caller, GoldAction, call, month_day_year
from env_server.domains.insurance.factories import (
    BillingAccountSpec,
    CustomerSpec,
    DriverSpec,
    PolicySpec,
    VehicleSpec,
)
from env_server.domains.insurance.families._common import TODAY
from env_server.domains.insurance.rating import vehicle_premium_cents
from env_server.domains.insurance.tools._common import age_on
from env_server.domains.insurance.tools.claims import _deductible


@dataclass
class Holder(Caller):
    """A fresh policyholder with one policy, what they can tell the agent, and the rows behind them."""

    identity_tool: ClassVar[str] = "verify_customer_identity"

    customer: CustomerSpec
    policy: PolicySpec
    vehicles: list[VehicleSpec]
    drivers: list[DriverSpec]
    account: BillingAccountSpec
    style: str

    @property
    def id(self) -> str:
        """The customer id."""
        return self.customer.customer_id

    @property
    def policy_id(self) -> str:
        """The policy id."""
        return self.policy.policy_id

    @property
    def name(self) -> str:
        """First and last name."""
        return f"{self.customer.first_name} {self.customer.last_name}"

    @property
    def age(self) -> int:
        """The policyholder's age today."""
        return age_on(self.customer.date_of_birth, TODAY)

    @property
    def active_vehicles(self) -> list[VehicleSpec]:
        """The vehicles currently insured."""
        return [v for v in self.vehicles if v.status == "active"]

    def find(self) -> GoldAction:
        """The lookup of the caller's record (rule 1.1)."""
        return call("find_customer", email=self.customer.email)

    def identity_args(self) -> dict[str, Any]:
        """The identity check with the details the caller gives (rule 1.2)."""
        return {
            "customer_id": self.id,
            "date_of_birth": self.customer.date_of_birth.isoformat(),
            "zip_code": self.customer.zip_code,
        }

    def hello(self) -> str:
        """How the caller introduces themselves."""
        return f"Hi, this is {self.name} ({self.customer.email})."

    def identity_line(self) -> str:
        """The identity details, as the caller gives them."""
        return (
            f"My date of birth is {month_day_year(self.customer.date_of_birth)} and my ZIP code is "
            f"{self.customer.zip_code}."
        )

    def identity_facts(self) -> dict[str, Any]:
        """What the caller knows about themselves."""
        return {
            "email": self.customer.email,
            "date_of_birth": self.customer.date_of_birth.isoformat(),
            "zip_code": self.customer.zip_code,
        }

    def persona(self, detail: str = "") -> str:
        """One line for the user simulator."""
        extra = f"; {detail}" if detail else ""
        where = f"{self.customer.city}, {self.customer.state}"
        return f"{self.name}, policyholder in {where}; {self.style}{extra}"

    def premium_with(self, **changes: Any) -> int:
        """The policy's monthly premium if its coverages changed as given (the rating table)."""
        coverages = {
            "liability_limits": self.policy.liability_limits,
            "collision_deductible_cents": self.policy.collision_deductible_cents,
            "comprehensive_deductible_cents": self.policy.comprehensive_deductible_cents,
            "full_glass": self.policy.full_glass,
            **changes,
        }
        return sum(vehicle_premium_cents(v.usage, **coverages) for v in self.active_vehicles)

    def deductible(self, coverage: str) -> int:
        """The deductible a claim under `coverage` carries (rule 7.4, the claims tools' own rule)."""
        return _deductible(self.policy, coverage)

    def has(self, coverage: str) -> bool:
        """Whether the policy carries the coverage a claim under `coverage` needs (rule 7.3)."""
        if coverage == "collision":
            return self.policy.collision_deductible_cents is not None
        return self.policy.comprehensive_deductible_cents is not None


def ticket(
    holder: Holder, category: str, subject: str, description: str, priority: str = "normal"
) -> GoldAction:
    """A support ticket about `holder`'s policy."""
    return call(
        "create_support_ticket",
        customer_id=holder.id,
        policy_id=holder.policy_id,
        category=category,
        priority=priority,
        subject=subject,
        description=description,
    )
