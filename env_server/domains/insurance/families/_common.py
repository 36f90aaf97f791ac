"""Policy figures, reference lists and phrasing shared by the insurance scenario families.

Figures the domain already defines (deductible options, the states without exclusions, instalment limits)
are imported from it; the ones `policy.md` states only in prose are named here once, with their rule.
"""

from __future__ import annotations

from typing import Any

from env_server.domain import GoldAction, call
from env_server.domains.insurance.factories import PolicySpec, VehicleSpec
from env_server.domains.insurance.models import NOW
from env_server.domains.insurance.seed import NO_EXCLUSION_STATES

TODAY = NOW.date()
#: Rule 7.1: a claim is filed within this many days of the incident.
FILING_WINDOW_DAYS = 30
#: Rule 8.1: an estimate of at least this goes to an adjuster.
ADJUSTER_THRESHOLD_CENTS = 500_000
#: Rule 11.1: a lapse may be reinstated up to this many days after `lapsed_on`.
REINSTATE_WINDOW_DAYS = 30
#: Rule 5.1: at most this many active vehicles per policy.
MAX_VEHICLES = 4
#: Rule 5.2: a vehicle of this model year or older is rated by underwriting.
UNDERWRITING_MAX_YEAR = 2001
#: Rule 3.3: a new driver younger than this is referred to underwriting.
ADULT_AGE = 18
#: Rule 7.3: the coverage that responds to each cause of loss.
COVERAGE_BY_CAUSE = {
    "vehicle_collision": "collision",
    "object_collision": "collision",
    "animal": "comprehensive",
    "theft": "comprehensive",
    "vandalism": "comprehensive",
    "weather": "comprehensive",
    "fire": "comprehensive",
    "falling_object": "comprehensive",
    "glass_breakage": "glass",
}
#: How a customer describes each cause.
INCIDENT = {
    "vehicle_collision": "another car hit me at an intersection",
    "object_collision": "I backed into a concrete pillar in a parking garage",
    "animal": "I hit a deer on a country road",
    "theft": "my car was broken into and the stereo and wheels were stolen",
    "vandalism": "someone keyed the whole side of the car and slashed a tyre",
    "weather": "a hail storm dented the roof and hood",
    "fire": "a fire in the carport damaged the rear of the car",
    "falling_object": "a tree branch fell on the car during the night",
    "glass_breakage": "a stone cracked the windshield on the highway",
}
STATES_WITHOUT_EXCLUSIONS = tuple(sorted(NO_EXCLUSION_STATES))

Row = dict[str, Any]

# fmt: off
FIRST_NAMES = (
    "Abigail", "Bernard", "Celeste", "Desmond", "Esther", "Felix", "Georgia", "Harlan", "Isla", "Jerome",
    "Katrina", "Leon", "Marisol", "Nolan", "Octavia", "Preston", "Rosalind", "Silas", "Thea", "Ulrich",
    "Valeria", "Warren", "Xenia", "Yvette", "Zachary", "Beatrix", "Cormac", "Delphine",
)
LAST_NAMES = (
    "Ashford", "Brennan", "Calloway", "Delgado", "Ellison", "Ferreira", "Gunderson", "Holloway", "Ingram",
    "Jablonski", "Kessler", "Lindqvist", "Montague", "Nakashima", "Oduya", "Pemberton", "Quintero",
    "Rasmussen", "Stavros", "Thornbury", "Underwood", "Vasquez", "Whitaker", "Yamamoto", "Zielinski",
)
STREETS = (
    "Aspen Ct", "Bayview Ave", "Chestnut St", "Dogwood Ln", "Evergreen Ter", "Foxglove Dr", "Granite Rd",
    "Heron Way", "Ironwood Pl", "Juniper St", "Kingfisher Rd", "Larkspur Ave",
)
#: State -> area code and (city, ZIP prefix) pairs.
GEOGRAPHY: dict[str, tuple[str, tuple[tuple[str, str], ...]]] = {
    "AZ": ("602", (("Phoenix", "850"), ("Flagstaff", "860"))),
    "CA": ("559", (("Fresno", "937"), ("Oakland", "946"))),
    "CO": ("719", (("Colorado Springs", "809"), ("Fort Collins", "805"))),
    "FL": ("904", (("Jacksonville", "322"), ("Tallahassee", "323"))),
    "GA": ("706", (("Athens", "306"), ("Augusta", "309"))),
    "IL": ("217", (("Champaign", "618"), ("Rockford", "611"))),
    "KS": ("785", (("Manhattan", "665"), ("Salina", "674"))),
    "MI": ("616", (("Kalamazoo", "490"), ("Ann Arbor", "481"))),
    "NC": ("704", (("Charlotte", "282"), ("Wilmington", "284"))),
    "NY": ("315", (("Syracuse", "132"), ("Ithaca", "148"))),
    "OH": ("513", (("Cincinnati", "452"), ("Akron", "443"))),
    "PA": ("215", (("Philadelphia", "191"), ("Scranton", "185"))),
    "TX": ("713", (("Houston", "770"), ("San Antonio", "782"))),
    "VA": ("757", (("Virginia Beach", "234"), ("Charlottesville", "229"))),
    "WA": ("360", (("Olympia", "985"), ("Bellingham", "982"))),
}
STYLES = (
    "polite and brief", "chatty, gives more detail than needed", "in a hurry, short messages",
    "a little stressed but reasonable", "careful, double-checks every number", "friendly and relaxed",
)
# fmt: on
VIN_CHARS = "ABCDEFGHJKLMNPRSTUVWXYZ0123456789"
STATES = tuple(GEOGRAPHY)


def ceil_div(a: int, b: int) -> int:
    """`a / b` rounded up, in integers."""
    return -(-a // b)


def add_vehicle(vehicle: VehicleSpec) -> GoldAction:
    """The `add_vehicle` call that puts `vehicle` (a row not in the patch) on its policy."""
    args: dict[str, Any] = {
        "policy_id": vehicle.policy_id,
        "vin": vehicle.vin,
        "year": vehicle.year,
        "make": vehicle.make,
        "model": vehicle.model,
        "usage": vehicle.usage,
        "ownership": vehicle.ownership,
    }
    if vehicle.lienholder is not None:
        args["lienholder"] = vehicle.lienholder
    return call("add_vehicle", **args)


def car(vehicle: VehicleSpec) -> str:
    """How people name a vehicle: "2021 Honda CR-V"."""
    return f"{vehicle.year} {vehicle.make} {vehicle.model}"


#: How a customer says what a vehicle is used for (each phrase fixes one `usage`).
USE_PHRASES = {
    "pleasure": "for errands and weekends",
    "commute": "to drive to work",
    "business": "for my business",
}


def _owned_phrase(vehicle: VehicleSpec) -> str:
    if vehicle.ownership == "owned":
        return "I own it outright"
    return f"it's {vehicle.ownership} through {vehicle.lienholder}"


def describe_car(vehicle: VehicleSpec) -> str:
    """A new vehicle's details as the customer reads them off the paperwork."""
    return (
        f"It's a {car(vehicle)}, VIN {vehicle.vin}; {_owned_phrase(vehicle)}, and I'll use it "
        f"{USE_PHRASES[vehicle.usage]}."
    )


def car_settled(vehicle: VehicleSpec) -> dict[str, str]:
    """`determined_by` of an added vehicle: `describe_car` states its usage and ownership."""
    return {
        "vehicles.usage": f"user: will use it {USE_PHRASES[vehicle.usage]} ({vehicle.usage})",
        "vehicles.ownership": f"user: {_owned_phrase(vehicle)} ({vehicle.ownership})",
    }


#: `determined_by` of the ID cards rule 5.5 sends after a vehicle change.
ID_CARDS_SETTLED = {
    "documents.doc_type": "policy 5.5: new ID cards (id_card) after a vehicle change on an active policy",
    "documents.delivery": "policy 5.5: the ID cards go by email",
}

#: How a customer names each relationship (`relationship` of `add_driver`).
KIN = {"child": "my kid", "spouse": "my partner", "parent": "my mother", "other_household": "my cousin"}


def driver_settled(args: dict[str, Any], said: str) -> dict[str, str]:
    """`determined_by` of `add_driver(**args)`: the customer called the person `said` and gave the state."""
    settled = {
        "drivers.license_state": f"user: gives a {args['license_state']} licence",
        "drivers.relationship": f"user: {said} ({args['relationship']})",
    }
    if args.get("excluded"):
        why = "user: asks to add them as an excluded driver (policy 4.2)"
        settled |= {"drivers.status": why, "drivers.excluded_on": why}
    return settled


def underwriting_settled(rule: str, why: str) -> dict[str, str]:
    """`determined_by` of an underwriting ticket: rules 3.3 and 5.2 fix category, priority and the policy."""
    return {
        "support_tickets.category": f"policy {rule}: {why} goes to an underwriting ticket",
        "support_tickets.priority": f"policy {rule}: the underwriting ticket has priority normal",
        "support_tickets.policy_id": f"policy {rule}: the underwriting ticket is opened for the policy",
    }


#: The user's last line after the yes: the agent's report of what it did still gets an answer.
THANKS = "Thank you, that's all I needed."


def id_cards(policy_id: str) -> GoldAction:
    """Rule 5.5: new ID cards by email after a vehicle change on an active policy."""
    return call("send_policy_document", policy_id=policy_id, doc_type="id_card", delivery="email")


def full_coverage(policy: PolicySpec) -> bool:
    """Whether the policy carries both collision and comprehensive (rule 5.3)."""
    return policy.collision_deductible_cents is not None and policy.comprehensive_deductible_cents is not None
