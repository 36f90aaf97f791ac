"""The deterministic seed: 160 customers with policies, vehicles, drivers, billing, claims and paperwork.

Only `rng` drives the choices, and every date is relative to the domain's frozen clock (`TODAY`), so the same
seed value gives the same rows on every run and every backend. Seeded rows follow the policy (e.g. no
excluded drivers where exclusions are not written, claims filed under the right coverage), so tasks start
from a consistent book of business.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import date, timedelta

from sqlalchemy.orm import Session

from env_server.domains.insurance.factories import (
    BillingAccountSpec,
    ClaimSpec,
    CustomerSpec,
    PaymentSpec,
    PolicySpec,
    VehicleSpec,
    driver,
    license_number,
    payout_cents,
)
from env_server.domains.insurance.models import (
    DEDUCTIBLE_OPTIONS_CENTS,
    NOW,
    Base,
    BillingAccount,
    Claim,
    Customer,
    Document,
    Driver,
    InstalmentPlan,
    Payment,
    Policy,
    SupportTicket,
    Vehicle,
)
from env_server.domains.insurance.rating import premium_under

TODAY = NOW.date()

#: Rating states where the company does not write driver exclusions (policy.md rule 4.1).
NO_EXCLUSION_STATES = frozenset({"KS", "MI", "NY", "VA"})

CUSTOMER_COUNT = 160

#: The seed's ID generator: `next_id("POL")` gives "POL-20001", then "POL-20002"...
_NextId = Callable[[str], str]

#: Area code, then (city, ZIP prefix) per state.
_GEOGRAPHY: dict[str, tuple[str, list[tuple[str, str]]]] = {
    "AZ": ("480", [("Phoenix", "850"), ("Tucson", "857"), ("Mesa", "852")]),
    "CA": ("916", [("Sacramento", "958"), ("Fresno", "937"), ("San Diego", "921")]),
    "CO": ("303", [("Denver", "802"), ("Boulder", "803"), ("Pueblo", "810")]),
    "FL": ("813", [("Tampa", "336"), ("Orlando", "328"), ("Gainesville", "326")]),
    "GA": ("404", [("Atlanta", "303"), ("Savannah", "314"), ("Macon", "312")]),
    "IL": ("312", [("Chicago", "606"), ("Peoria", "616"), ("Springfield", "627")]),
    "KS": ("316", [("Wichita", "672"), ("Topeka", "666"), ("Lawrence", "660")]),
    "MI": ("313", [("Detroit", "482"), ("Lansing", "489"), ("Grand Rapids", "495")]),
    "NC": ("919", [("Raleigh", "276"), ("Durham", "277"), ("Asheville", "288")]),
    "NY": ("518", [("Albany", "122"), ("Buffalo", "142"), ("Rochester", "146")]),
    "OH": ("614", [("Columbus", "432"), ("Dayton", "454"), ("Toledo", "436")]),
    "PA": ("412", [("Pittsburgh", "152"), ("Harrisburg", "171"), ("Erie", "165")]),
    "TX": ("512", [("Austin", "787"), ("Dallas", "752"), ("El Paso", "799")]),
    "VA": ("804", [("Richmond", "232"), ("Norfolk", "235"), ("Roanoke", "240")]),
    "WA": ("206", [("Seattle", "981"), ("Spokane", "992"), ("Tacoma", "984")]),
}
_FIRST_NAMES = [
    "Maria", "James", "Aisha", "Robert", "Mei", "David", "Sofia", "Michael", "Priya", "William", "Elena",
    "Joseph", "Fatima", "Thomas", "Grace", "Daniel", "Olivia", "Carlos", "Hannah", "Kevin", "Nadia",
    "Brian", "Chloe", "Marcus", "Leah", "Andre", "Yuki", "Patrick", "Zoe", "Samuel", "Ingrid", "Luis",
    "Rachel", "Omar", "Tessa", "Victor", "Alice", "Dmitri", "Bianca", "Trevor", "Keiko", "Hector", "Naomi",
    "Gavin",
]  # fmt: skip
_LAST_NAMES = [
    "Lopez", "Okafor", "Chen", "Miller", "Patel", "Johnson", "Nguyen", "Garcia", "Kowalski", "Brown",
    "Haddad", "Schmidt", "Rossi", "Williams", "Tanaka", "Murphy", "Silva", "Anderson", "Dubois", "Khan",
    "Larsen", "Moreno", "Fischer", "Reyes", "Becker", "Ivanova", "Walsh", "Sato", "Bennett", "Castillo",
    "Novak", "Hughes", "Mendes", "Park", "Olsen", "Ramirez", "Foster", "Kim", "Weber", "Adeyemi",
]  # fmt: skip
_STREETS = [
    "Maple Ave", "Oak St", "Cedar Ln", "Elm St", "Lakeview Dr", "Hillcrest Rd", "Pine St",
    "Sunset Blvd", "Walnut St", "Ridge Rd", "Birch Ct", "River Rd", "Park Ave", "Willow Way",
]  # fmt: skip
#: (make, model, first model year).
_VEHICLES = [
    ("Toyota", "Camry", 2006), ("Toyota", "Corolla", 2006), ("Toyota", "RAV4", 2006),
    ("Toyota", "Tacoma", 2006), ("Honda", "Civic", 2006), ("Honda", "Accord", 2006), ("Honda", "CR-V", 2006),
    ("Ford", "F-150", 2006), ("Ford", "Escape", 2006), ("Ford", "Explorer", 2006),
    ("Chevrolet", "Malibu", 2006), ("Chevrolet", "Equinox", 2006), ("Chevrolet", "Silverado", 2006),
    ("Subaru", "Outback", 2006), ("Subaru", "Forester", 2006), ("Nissan", "Altima", 2006),
    ("Nissan", "Rogue", 2008), ("Hyundai", "Elantra", 2006), ("Hyundai", "Tucson", 2006),
    ("Kia", "Sorento", 2006), ("Mazda", "CX-5", 2013), ("Jeep", "Wrangler", 2006), ("Jeep", "Cherokee", 2014),
    ("Tesla", "Model 3", 2017), ("Tesla", "Model Y", 2020), ("Volkswagen", "Jetta", 2006),
]  # fmt: skip
_LENDERS = [
    "Ally Financial", "Capital One Auto", "Chase Auto", "Toyota Financial Services",
    "Honda Financial Services", "Wells Fargo Auto", "Ford Credit",
]  # fmt: skip
_VIN_CHARS = "ABCDEFGHJKLMNPRSTUVWXYZ0123456789"
_COVERAGE_BY_CAUSE = {
    "vehicle_collision": "collision", "object_collision": "collision", "animal": "comprehensive",
    "theft": "comprehensive", "vandalism": "comprehensive", "weather": "comprehensive",
    "fire": "comprehensive", "falling_object": "comprehensive", "glass_breakage": "glass",
}  # fmt: skip
_TICKET_SUBJECTS = {
    "billing": "Question about a premium charge", "claims": "Status of my claim",
    "policy_change": "Change to my policy", "underwriting": "Underwriting review requested",
    "complaint": "Unhappy with service", "cancellation": "Cancellation paperwork",
    "general": "General question",
}  # fmt: skip


def seed(session: Session, rng: random.Random) -> None:
    """Fill an empty insurance database: customers first, then everything that hangs off their policies.

    Args:
        session: a session on a database whose tables exist and are empty.
        rng: the only source of randomness.
    """
    vins: set[str] = set()
    emails: set[str] = set()
    counters = {
        "POL": 20001,
        "VEH": 30001,
        "DRV": 40001,
        "BA": 50001,
        "IP": 60001,
        "PAY": 10001,
        "CLM": 70001,
        "DOC": 80001,
        "TCK": 10001,
    }

    def next_id(prefix: str) -> str:
        value = counters[prefix]
        counters[prefix] = value + 1
        return f"{prefix}-{value}"

    customers: list[Customer] = []
    policies: list[Policy] = []
    vehicles_by_policy: dict[str, list[Vehicle]] = {}
    dependents: list[Base] = []  # vehicles, drivers, billing accounts, documents: they point at policies
    billing_rows: list[Base] = []  # payments and plans: they point at billing accounts
    for n in range(CUSTOMER_COUNT):
        customer = _customer(rng, n, emails)
        customers.append(customer)
        for _ in range(2 if rng.random() < 0.15 else 1):
            policy = _policy(rng, next_id("POL"), customer)
            vehicles = _vehicles(rng, policy, vins, next_id)
            policy.monthly_premium_cents = sum(
                v.monthly_premium_cents for v in vehicles if v.status == "active"
            )
            drivers = _drivers(rng, policy, customer, next_id)
            account = _billing(rng, policy, next_id)
            dependents += [*vehicles, *drivers, account]
            billing_rows += _payments(rng, policy, account, next_id)
            plan = _plan(rng, policy, account, next_id)
            if plan is not None:
                billing_rows.append(plan)
            dependents += _policy_documents(rng, policy, next_id)
            policies.append(policy)
            vehicles_by_policy[policy.policy_id] = vehicles
    claims: list[Claim] = []
    claim_documents: list[Document] = []
    for _ in range(70):
        policy = rng.choice(policies)
        claim = _claim(rng, policy, vehicles_by_policy[policy.policy_id], next_id)
        if claim is not None:
            claims.append(claim)
            claim_documents += _claim_documents(rng, policy, claim, next_id)
    tickets = [_ticket(rng, rng.choice(policies), next_id) for _ in range(60)]
    # Insert parents before children: the sandbox enforces foreign keys, and rows without ORM
    # relationships are not ordered by the unit of work.
    for group in (customers, policies, dependents, billing_rows, claims, claim_documents, tickets):
        session.add_all(group)
        session.flush()


def _customer(rng: random.Random, n: int, emails: set[str]) -> Customer:
    state = rng.choice(sorted(_GEOGRAPHY))
    area_code, cities = _GEOGRAPHY[state]
    city, zip_prefix = rng.choice(cities)
    first, last = rng.choice(_FIRST_NAMES), rng.choice(_LAST_NAMES)
    email = f"{first}.{last}@example.com".lower()
    suffix = 2
    while email in emails:
        email = f"{first}.{last}{suffix}@example.com".lower()
        suffix += 1
    emails.add(email)
    return CustomerSpec(
        customer_id=f"CU-{10001 + n}",
        first_name=first,
        last_name=last,
        email=email,
        phone=f"{area_code}-555-{rng.randint(0, 9999):04d}",
        date_of_birth=TODAY - timedelta(days=rng.randint(20 * 365, 82 * 365)),
        street=f"{rng.randint(10, 9899)} {rng.choice(_STREETS)}",
        city=city,
        state=state,
        zip_code=f"{zip_prefix}{rng.randint(1, 99):02d}",
        customer_since=TODAY - timedelta(days=rng.randint(200, 12 * 365)),
    ).orm()


def _policy(rng: random.Random, policy_id: str, customer: Customer) -> Policy:
    status = rng.choices(["active", "grace", "lapsed", "cancelled"], weights=[76, 9, 8, 7])[0]
    ended = TODAY - timedelta(days=rng.randint(3, 120))  # lapse or cancellation day, if any
    if status in ("lapsed", "cancelled"):
        term_start = ended - timedelta(days=rng.randint(31, 300))
    else:
        term_start = TODAY - timedelta(days=rng.randint(0, 364))
    has_collision = rng.random() < 0.8
    has_comprehensive = rng.random() < (0.9 if has_collision else 0.3)
    comprehensive = rng.choice(DEDUCTIBLE_OPTIONS_CENTS) if has_comprehensive else None
    policy = PolicySpec(
        policy_id=policy_id,
        customer_id=customer.customer_id,
        state=customer.state,
        status=status,
        term_start=term_start,
        term_end=term_start + timedelta(days=365),
        monthly_premium_cents=1,  # replaced by the sum of the vehicle premiums
        liability_limits=rng.choice(["25/50/25", "50/100/50", "100/300/100", "250/500/250"]),
        collision_deductible_cents=rng.choice(DEDUCTIBLE_OPTIONS_CENTS) if has_collision else None,
        comprehensive_deductible_cents=comprehensive,
        full_glass=comprehensive is not None and rng.random() < 0.35,
        grace_ends_on=None,
        lapsed_on=None,
        cancelled_on=None,
        cancellation_reason=None,
    ).orm()
    if status == "grace":
        policy.grace_ends_on = TODAY + timedelta(days=rng.randint(1, 20))
    elif status == "lapsed":
        policy.lapsed_on = ended
    elif status == "cancelled":
        policy.cancelled_on = ended
        policy.cancellation_reason = rng.choice(
            ["sold_vehicle", "switched_carrier", "moved_out_of_state", "cost"]
        )
    return policy


def _vin(rng: random.Random, vins: set[str]) -> str:
    while True:
        vin = rng.choice("12345JKLSW") + "".join(rng.choice(_VIN_CHARS) for _ in range(16))
        if vin not in vins:
            vins.add(vin)
            return vin


def _vehicles(rng: random.Random, policy: Policy, vins: set[str], next_id: _NextId) -> list[Vehicle]:
    count = rng.choices([1, 2, 3], weights=[50, 35, 15])[0]
    removed = 1 if rng.random() < 0.12 else 0
    result = []
    for i in range(count + removed):
        make, model, first_year = rng.choice(_VEHICLES)
        ownership = rng.choices(["owned", "financed", "leased"], weights=[55, 35, 10])[0]
        if policy.collision_deductible_cents is None or policy.comprehensive_deductible_cents is None:
            ownership = "owned"  # financed and leased vehicles need physical-damage coverage (rule 5.3)
        usage = rng.choices(["pleasure", "commute", "business"], weights=[35, 55, 10])[0]
        added_on = policy.term_start - timedelta(days=rng.randint(0, 900))
        is_removed = i >= count
        removed_on = (
            min(TODAY, policy.term_start + timedelta(days=rng.randint(1, 60))) if is_removed else None
        )
        premium = premium_under(policy, usage)
        result.append(
            VehicleSpec(
                vehicle_id=next_id("VEH"),
                policy_id=policy.policy_id,
                vin=_vin(rng, vins),
                year=rng.randint(first_year, max(first_year, min(TODAY.year, added_on.year + 1))),
                make=make,
                model=model,
                usage=usage,
                ownership=ownership,
                lienholder=None if ownership == "owned" else rng.choice(_LENDERS),
                monthly_premium_cents=premium,
                status="removed" if is_removed else "active",
                added_on=added_on,
                removed_on=removed_on,
            ).orm()
        )
    return result


def _drivers(rng: random.Random, policy: Policy, customer: Customer, next_id: _NextId) -> list[Driver]:
    state = policy.state

    def person(first: str, last: str, born: date, relationship: str, status: str = "listed") -> Driver:
        return driver(
            next_id("DRV"),
            policy.policy_id,
            state,
            license_number(rng, state),
            first=first,
            last=last,
            born=born,
            relationship=relationship,
            on=policy.term_start,
            status=status,
        ).orm()

    drivers = [person(customer.first_name, customer.last_name, customer.date_of_birth, "named_insured")]
    insured_age = (TODAY - customer.date_of_birth).days // 365
    if insured_age >= 24 and rng.random() < 0.5:
        born = customer.date_of_birth + timedelta(days=rng.randint(-5 * 365, 5 * 365))
        drivers.append(person(rng.choice(_FIRST_NAMES), customer.last_name, born, "spouse"))
    if insured_age >= 42 and rng.random() < 0.3:
        born = TODAY - timedelta(days=rng.randint(18 * 365, 24 * 365))
        drivers.append(person(rng.choice(_FIRST_NAMES), customer.last_name, born, "child"))
    if state not in NO_EXCLUSION_STATES and rng.random() < 0.1:
        born = TODAY - timedelta(days=rng.randint(19 * 365, 60 * 365))
        drivers.append(
            person(rng.choice(_FIRST_NAMES), rng.choice(_LAST_NAMES), born, "other_household", "excluded")
        )
    return drivers


def _billing(rng: random.Random, policy: Policy, next_id: _NextId) -> BillingAccount:
    premium = policy.monthly_premium_cents
    past_due = 0
    if policy.status == "grace":
        past_due = premium * rng.randint(1, 3) - rng.choice([0, 0, rng.randint(1, premium // 2)])
    elif policy.status == "lapsed":
        past_due = premium * rng.randint(2, 4)
    method = rng.choices(["card", "bank_account"], weights=[60, 40])[0]
    return BillingAccountSpec(
        billing_account_id=next_id("BA"),
        policy_id=policy.policy_id,
        payment_method=method,
        payment_last4=f"{rng.randint(0, 9999):04d}",
        autopay=policy.status == "active" and rng.random() < 0.55,
        past_due_cents=past_due,
        next_due_date=TODAY + timedelta(days=rng.randint(1, 28)),
    ).orm()


def _payments(rng: random.Random, policy: Policy, account: BillingAccount, next_id: _NextId) -> list[Payment]:
    months = rng.randint(1, 2) if policy.status in ("active", "grace") else rng.randint(0, 1)
    return [
        PaymentSpec(
            payment_id=next_id("PAY"),
            billing_account_id=account.billing_account_id,
            amount_cents=policy.monthly_premium_cents,
            paid_on=account.next_due_date - timedelta(days=30 * (k + 1)),
            method=account.payment_method,
        ).orm()
        for k in range(months)
    ]


def _plan(
    rng: random.Random, policy: Policy, account: BillingAccount, next_id: _NextId
) -> InstalmentPlan | None:
    if policy.status != "active" or rng.random() >= 0.07:
        return None
    premium = policy.monthly_premium_cents
    total = premium * rng.randint(1, 3) + rng.randint(0, premium - 1)
    count = max(2, -(-total // premium))
    created = TODAY - timedelta(days=rng.randint(10, 150))
    return InstalmentPlan(
        plan_id=next_id("IP"),
        billing_account_id=account.billing_account_id,
        total_cents=total,
        instalment_count=count,
        instalment_cents=-(-total // count),
        first_due_date=created + timedelta(days=30),
        status="active" if rng.random() < 0.7 else "completed",
        created_on=created,
    )


def _policy_documents(rng: random.Random, policy: Policy, next_id: _NextId) -> list[Document]:
    delivery = rng.choice(["email", "email", "mail"])
    docs = [("declarations", policy.term_start)]
    if policy.status in ("active", "grace"):
        docs.append(("id_card", policy.term_start))
    return [
        Document(
            document_id=next_id("DOC"),
            customer_id=policy.customer_id,
            policy_id=policy.policy_id,
            doc_type=doc_type,
            status="sent",
            delivery=delivery,
            created_on=created_on,
        )
        for doc_type, created_on in docs
    ]


def _claim(rng: random.Random, policy: Policy, vehicles: list[Vehicle], next_id: _NextId) -> Claim | None:
    active = [v for v in vehicles if v.status == "active"]
    cause = rng.choice(sorted(_COVERAGE_BY_CAUSE))
    coverage = _COVERAGE_BY_CAUSE[cause]
    if coverage == "collision":
        deductible = policy.collision_deductible_cents
    elif coverage == "glass" and policy.full_glass:
        deductible = 0
    else:
        deductible = policy.comprehensive_deductible_cents
    if deductible is None or not active:
        return None  # no coverage for this loss: no claim was filed
    covered_until = policy.lapsed_on or policy.cancelled_on or TODAY
    first_day = max(policy.term_start, TODAY - timedelta(days=330))
    last_day = min(TODAY - timedelta(days=5), covered_until - timedelta(days=1))
    if last_day < first_day:
        return None
    incident = first_day + timedelta(days=rng.randint(0, (last_day - first_day).days))
    estimate = rng.randint(deductible // 100 + 150, 9_000) * 100 + rng.choice([0, 50])
    big = estimate >= 500_000 or cause == "theft"
    if (TODAY - incident).days < 40:
        status = "adjuster_review" if big else "open"
    else:
        status = rng.choices(["approved", "denied", "closed"], weights=[60, 10, 30])[0]
    return ClaimSpec(
        claim_id=next_id("CLM"),
        policy_id=policy.policy_id,
        vehicle_id=rng.choice(active).vehicle_id,
        coverage=coverage,
        cause=cause,
        incident_date=incident,
        reported_on=min(TODAY, incident + timedelta(days=rng.randint(0, 10))),
        estimated_damage_cents=estimate,
        deductible_cents=deductible,
        injuries=cause == "vehicle_collision" and rng.random() < 0.15,
        status=status,
        payout_cents=payout_cents(status, estimate, deductible),
        description=f"{cause.replace('_', ' ').capitalize()} damage reported by the policyholder.",
    ).orm()


def _claim_documents(rng: random.Random, policy: Policy, claim: Claim, next_id: _NextId) -> list[Document]:
    kinds = ["damage_photos"] + (["police_report"] if claim.cause == "theft" else [])
    if rng.random() < 0.5:
        kinds.append("repair_estimate")
    return [
        Document(
            document_id=next_id("DOC"),
            customer_id=policy.customer_id,
            policy_id=policy.policy_id,
            claim_id=claim.claim_id,
            doc_type=kind,
            status="received" if claim.status not in ("open", "adjuster_review") else "requested",
            delivery="upload",
            created_on=claim.reported_on,
        )
        for kind in kinds
    ]


def _ticket(rng: random.Random, policy: Policy, next_id: _NextId) -> SupportTicket:
    category = rng.choice(sorted(_TICKET_SUBJECTS))
    created = NOW - timedelta(days=rng.randint(1, 200), minutes=rng.randint(0, 600))
    return SupportTicket(
        ticket_id=next_id("TCK"),
        customer_id=policy.customer_id,
        policy_id=policy.policy_id,
        category=category,
        priority="high" if category == "complaint" else rng.choice(["low", "normal", "normal"]),
        status="resolved" if created < NOW - timedelta(days=14) else rng.choice(["open", "pending"]),
        subject=_TICKET_SUBJECTS[category],
        description="Customer contacted us; see subject.",
        created_at=created,
    )
