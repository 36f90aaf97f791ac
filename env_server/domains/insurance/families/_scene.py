"""The scene of one generated insurance task: fresh policyholders and their book, as `initial_patch` rows.

A `Scene` collects the `initial_patch` of one generated task. Its rows are built as the domain's entity
specs (`insurance/factories.py`, which the seed builds its rows with too), so premiums come from
`rating.vehicle_premium_cents` and claim deductibles from the claims tools' own rule, exactly as the seed
and the tools compute them. IDs come
from `ctx.new_id` with the domain's real prefixes, so no seed row and no benchmark task shares them; only
reference data (makes and models, lenders) is read from seed rows no benchmark task names (`ctx.rows`).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from env_server.domain import EntitySpec, ScenarioPatch, ScenarioUnavailable, patch_rows
from env_server.domains.insurance.factories import (
    BillingAccountSpec,
    ClaimSpec,
    CustomerSpec,
    DriverSpec,
    PolicySpec,
    VehicleSpec,
    driver,
    license_number,
    payout_cents,
)
from env_server.domains.insurance.families._common import (
    ADULT_AGE,
    COVERAGE_BY_CAUSE,
    FIRST_NAMES,
    GEOGRAPHY,
    INCIDENT,
    LAST_NAMES,
    STATES,
    STREETS,
    STYLES,
    TODAY,
    VIN_CHARS,
    Row,
    full_coverage,
)
from env_server.domains.insurance.families._holder import Holder
from env_server.domains.insurance.models import DEDUCTIBLE_OPTIONS_CENTS
from env_server.domains.insurance.rating import premium_under
from env_server.domains.insurance.tools._common import age_on


def born(years: int, rng: random.Random) -> date:
    """A date of birth of someone exactly `years` old today (a random day within that year of age)."""
    birthday = TODAY.replace(year=TODAY.year - years) - timedelta(days=rng.randint(1, 360))
    assert age_on(birthday, TODAY) == years
    return birthday


@dataclass
class Scene(ScenarioPatch):
    """The rows one generated task adds on top of the seed: holders, policies, vehicles, drivers, claims."""

    _vehicles: list[Row] | None = None

    def add_objects(self, *specs: EntitySpec[Any]) -> None:
        """Append the specs' rows to the patch."""
        self.add(patch_rows(*specs))

    # -- reference data ---------------------------------------------------------------------------------

    def _reference(self) -> list[Row]:
        """Seed vehicles no benchmark task names (`ctx.rows`, read once per scene: it scans the table)."""
        if self._vehicles is None:
            self._vehicles = self.ctx.rows("vehicles", where=lambda r: r["year"] >= 2008)
            if not self._vehicles:
                raise ScenarioUnavailable("no seed vehicle to take a make and model from")
        return self._vehicles

    def model(self) -> tuple[str, str, int]:
        """A make, model and a plausible recent model year, from a seed vehicle no benchmark task names."""
        seen = self.rng.choice(self._reference())
        return seen["make"], seen["model"], self.rng.randint(max(2008, seen["year"] - 3), 2026)

    def lender(self) -> str:
        """A lienholder name used by a seed vehicle no benchmark task names."""
        financed = [r for r in self._reference() if r["lienholder"] is not None]
        if not financed:
            raise ScenarioUnavailable("no financed seed vehicle to take a lender from")
        return str(self.rng.choice(financed)["lienholder"])

    def vin(self) -> str:
        """A fresh 17-character VIN."""
        return self.rng.choice("12345JKLSW") + "".join(self.rng.choice(VIN_CHARS) for _ in range(16))

    def address(self, state: str) -> tuple[str, str, str]:
        """A fresh street, city and ZIP code in `state`."""
        _, cities = GEOGRAPHY[state]
        city, prefix = self.rng.choice(cities)
        street = f"{self.rng.randint(10, 9899)} {self.rng.choice(STREETS)}"
        return street, city, f"{prefix}{self.rng.randint(1, 99):02d}"

    def person_name(self, last: str | None = None) -> tuple[str, str]:
        """A first and last name (the given last name for a relative)."""
        return self.rng.choice(FIRST_NAMES), last or self.rng.choice(LAST_NAMES)

    # -- the book ---------------------------------------------------------------------------------------

    def holder(
        self,
        *,
        status: str = "active",
        state: str | None = None,
        collision: bool | None = None,
        comprehensive: bool | None = None,
        vehicles: int | None = None,
        past_due: int | Callable[[int], int] | None = None,
        status_day: date | None = None,
        term_start: date | None = None,
        household: int = 0,
        age: int | None = None,
    ) -> Holder:
        """A fresh customer with one policy in `status`, its vehicles, drivers and billing account.

        Args:
            status: the policy status.
            state: the rating state (also the state of residence); random when None.
            collision: whether the policy carries collision coverage; random when None.
            comprehensive: whether it carries comprehensive coverage; random when None.
            vehicles: how many active vehicles; 1 to 3 when None.
            past_due: the past-due amount in cents, or a function of the monthly premium giving it (None:
                nothing for active and cancelled policies, one to three premiums for grace and lapsed ones).
            status_day: `lapsed_on` or `cancelled_on` for lapsed and cancelled policies.
            term_start: the first day of the term (random when None).
            household: how many other listed household drivers (spouse first, then a child or parent).
            age: the policyholder's age (random adult when None).
        """
        rng, ctx = self.rng, self.ctx
        state = state or rng.choice(STATES)
        area, _ = GEOGRAPHY[state]
        first, last = self.person_name()
        street, city, zip_code = self.address(state)
        customer_id = ctx.new_id("CU")
        customer = CustomerSpec(
            customer_id=customer_id,
            first_name=first,
            last_name=last,
            email=f"{first}.{last}.{customer_id.split('-')[1]}@example.com".lower(),
            phone=f"{area}-555-{rng.randint(0, 9999):04d}",
            date_of_birth=born(age or rng.randint(26, 78), rng),
            street=street,
            city=city,
            state=state,
            zip_code=zip_code,
            customer_since=TODAY - timedelta(days=rng.randint(400, 4000)),
        )
        has_collision = rng.random() < 0.85 if collision is None else collision
        has_comprehensive = rng.random() < 0.85 if comprehensive is None else comprehensive
        comp = rng.choice(DEDUCTIBLE_OPTIONS_CENTS) if has_comprehensive else None
        if status in ("lapsed", "cancelled"):
            status_day = status_day or TODAY - timedelta(days=rng.randint(3, 90))
            start = term_start or status_day - timedelta(days=rng.randint(40, 300))
        else:
            start = term_start or TODAY - timedelta(days=rng.randint(40, 330))
        policy = PolicySpec(
            policy_id=ctx.new_id("POL"),
            customer_id=customer_id,
            state=state,
            status=status,
            term_start=start,
            term_end=start + timedelta(days=365),
            monthly_premium_cents=0,
            liability_limits=rng.choice(("25/50/25", "50/100/50", "100/300/100", "250/500/250")),
            collision_deductible_cents=rng.choice(DEDUCTIBLE_OPTIONS_CENTS) if has_collision else None,
            comprehensive_deductible_cents=comp,
            full_glass=comp is not None and rng.random() < 0.35,
            grace_ends_on=TODAY + timedelta(days=rng.randint(2, 20)) if status == "grace" else None,
            lapsed_on=status_day if status == "lapsed" else None,
            cancelled_on=status_day if status == "cancelled" else None,
            cancellation_reason=rng.choice(("cost", "switched_carrier", "sold_vehicle"))
            if status == "cancelled"
            else None,
        )
        cars = [self.vehicle(policy) for _ in range(vehicles or rng.choice((1, 1, 2, 2, 3)))]
        policy.monthly_premium_cents = sum(v.monthly_premium_cents for v in cars)
        drivers = [self.driver(policy, first, last, customer.date_of_birth, "named_insured", on=start)]
        holder_age = age_on(customer.date_of_birth, TODAY)
        for i in range(household):
            relationship = "spouse" if i == 0 else "child" if holder_age >= 42 else "other_household"
            given, _ = self.person_name()
            birth = born(self.relative_age(holder_age, relationship), rng)
            drivers.append(self.driver(policy, given, last, birth, relationship, on=start))
        premium = policy.monthly_premium_cents
        if past_due is None:
            past_due = premium * rng.randint(1, 3) if status in ("grace", "lapsed") else 0
        elif callable(past_due):
            past_due = past_due(premium)
        account = BillingAccountSpec(
            billing_account_id=ctx.new_id("BA"),
            policy_id=policy.policy_id,
            payment_method=rng.choice(("card", "bank_account")),
            payment_last4=f"{rng.randint(0, 9999):04d}",
            autopay=status == "active" and rng.random() < 0.5,
            past_due_cents=past_due,
            next_due_date=TODAY + timedelta(days=rng.randint(1, 28)),
        )
        holder = Holder(customer, policy, cars, drivers, account, rng.choice(STYLES))
        self.add_objects(customer, policy, *holder.vehicles, *holder.drivers, holder.account)
        return holder

    def vehicle(self, policy: PolicySpec, *, ownership: str | None = None, new: bool = False) -> VehicleSpec:
        """A fresh active vehicle on `policy` (not yet in the patch), priced by the rating table.

        Args:
            policy: the policy it is (or will be) on.
            ownership: "owned", "financed" or "leased" (random when None; owned without full coverage).
            new: a vehicle the customer just got (a recent model year), rather than one already insured.
        """
        rng = self.rng
        make, model, year = self.model()
        full_cover = full_coverage(policy)
        if ownership is None:
            ownership = rng.choice(("owned", "owned", "financed", "leased")) if full_cover else "owned"
        if new:
            year = max(year, 2023 if ownership == "leased" else 2019)
        usage = rng.choice(("pleasure", "commute", "commute", "business"))
        added = policy.term_start - timedelta(days=rng.randint(0, 500))
        return VehicleSpec(
            vehicle_id=self.ctx.new_id("VEH"),
            policy_id=policy.policy_id,
            vin=self.vin(),
            year=year if new else min(year, added.year + 1),
            make=make,
            model=model,
            usage=usage,
            ownership=ownership,
            lienholder=None if ownership == "owned" else self.lender(),
            monthly_premium_cents=premium_under(policy, usage),
            status="active",
            added_on=added,
            removed_on=None,
        )

    def driver(
        self,
        policy: PolicySpec,
        first: str,
        last: str,
        birth: date,
        relationship: str,
        *,
        on: date,
        status: str = "listed",
    ) -> DriverSpec:
        """A driver row on `policy` (not yet in the patch)."""
        state = policy.state
        return driver(
            self.ctx.new_id("DRV"),
            policy.policy_id,
            state,
            license_number(self.rng, state),
            first=first,
            last=last,
            born=birth,
            relationship=relationship,
            on=on,
            status=status,
        )

    def relative_age(self, holder_age: int, relationship: str) -> int:
        """A plausible age for a household member of a policyholder aged `holder_age`."""
        rng = self.rng
        if relationship == "spouse":
            return max(ADULT_AGE + 1, holder_age + rng.randint(-4, 4))
        if relationship == "child":
            return rng.randint(ADULT_AGE, max(ADULT_AGE, min(30, holder_age - 24)))
        if relationship == "parent":
            return holder_age + rng.randint(20, 32)
        return rng.randint(ADULT_AGE + 1, 65)

    def newcomer(
        self, holder: Holder, *, relationship: str | None = None, young: bool = False
    ) -> dict[str, Any]:
        """`add_driver` arguments for a household member not yet on `holder`'s policy.

        Args:
            holder: the policyholder.
            relationship: to the policyholder (a plausible one for their age when None).
            young: a 16- or 17-year-old (a child, or a younger relative of a young policyholder).
        """
        rng, policy = self.rng, holder.policy
        holder_age = holder.age
        if young:
            relationship = relationship or ("child" if holder_age >= 36 else "other_household")
            age = rng.randint(16, ADULT_AGE - 1)
        else:
            options = ["spouse", "other_household"]
            options += ["child"] if holder_age >= 42 else []
            options += ["parent"] if holder_age <= 60 else []
            relationship = relationship or rng.choice(options)
            age = self.relative_age(holder_age, relationship)
        first, last = self.person_name(
            holder.customer.last_name if relationship != "other_household" else None
        )
        return {
            "policy_id": policy.policy_id,
            "first_name": first,
            "last_name": last,
            "date_of_birth": born(age, rng).isoformat(),
            "license_number": license_number(self.rng, policy.state),
            "license_state": policy.state,
            "relationship": relationship,
        }

    def claim(
        self,
        holder: Holder,
        vehicle: VehicleSpec,
        *,
        cause: str,
        incident: date,
        estimate: int,
        status: str = "open",
        injuries: bool = False,
        reported: date | None = None,
    ) -> ClaimSpec:
        """A claim on `holder`'s policy, its deductible set by the claims tools' rule; added to the patch."""
        coverage = COVERAGE_BY_CAUSE[cause]
        deductible = holder.deductible(coverage)
        claim = ClaimSpec(
            claim_id=self.ctx.new_id("CLM"),
            policy_id=holder.policy_id,
            vehicle_id=vehicle.vehicle_id,
            coverage=coverage,
            cause=cause,
            incident_date=incident,
            reported_on=reported or incident,
            estimated_damage_cents=estimate,
            deductible_cents=deductible,
            injuries=injuries,
            status=status,
            payout_cents=payout_cents(status, estimate, deductible),
            description=f"{INCIDENT[cause].capitalize()}.",
        )
        self.add_objects(claim)
        return claim
