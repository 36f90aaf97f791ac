"""Household families: who and what a policy may cover, by policy status and by rating state."""

from __future__ import annotations

from datetime import date

from env_server.domain import ScenarioContext, call, month_day_year, refusal, reply
from env_server.domains.insurance.factories import PolicySpec
from env_server.domains.insurance.families._common import (
    ID_CARDS_SETTLED,
    KIN,
    MAX_VEHICLES,
    STATES,
    STATES_WITHOUT_EXCLUSIONS,
    THANKS,
    UNDERWRITING_MAX_YEAR,
    add_vehicle,
    car,
    car_settled,
    describe_car,
    driver_settled,
    full_coverage,
    id_cards,
    underwriting_settled,
)
from env_server.domains.insurance.families._holder import ticket
from env_server.domains.insurance.families._scene import Scene
from shared.tasks import Task

_STATE_NAMES = {"KS": "Kansas", "MI": "Michigan", "VA": "Virginia"}


def _no_exclusions_told(state: str) -> dict[str, object]:
    """What the agent must say when rule 4.1 refuses an exclusion: the state's name.

    "New York" is two words and agents also write "NY", so that state gets a judged question instead.
    """
    if state in _STATE_NAMES:
        name = _STATE_NAMES[state]
        return {
            "communicate": [name],
            "reference_reply": reply(
                f"I'm sorry, your policy is written in {name}, and {name} policies can't exclude a driver.",
                f"Driver exclusions aren't allowed on {name} policies, so that driver stays listed.",
            ),
        }
    assert state == "NY", state
    return {"rubric": ["Did the agent say that driver exclusions are not written on New York policies?"]}


def _missing_coverage(policy: PolicySpec) -> str:
    """The coverage rule 5.3 requires and the policy lacks."""
    return "collision" if policy.collision_deductible_cents is None else "comprehensive"


def change_by_status(ctx: ScenarioContext) -> Task:
    """Rules 2.2, 3.3, 5.5, 12.1: vehicle and driver changes only on active or grace policies.

    Active: the change (plus ID cards after a vehicle); grace: the change without ID cards; lapsed:
    refuse (the wrong trajectory makes the change); cancelled: refuse (the wrong one hands it to a team).
    A new driver under 18 on an active or grace policy goes to underwriting instead.
    """
    scene, rng = Scene(ctx), ctx.rng
    status = rng.choices(("active", "grace", "lapsed", "cancelled"), weights=(35, 25, 25, 15))[0]
    holder = scene.holder(status=status, vehicles=rng.randint(1, 3))
    pid = holder.policy_id
    in_force = status in ("active", "grace")
    young = False
    if rng.random() < 0.5:
        vehicle = scene.vehicle(holder.policy, new=True)
        change = add_vehicle(vehicle)
        wish = f"add my new car to policy {pid}"
        details = describe_car(vehicle)
        what = "vehicle"
        settled = car_settled(vehicle)
    else:
        young = in_force and rng.random() < 0.3
        args = scene.newcomer(holder, young=young)
        relationship = args["relationship"]
        change = call("add_driver", **args)
        wish = f"add {KIN[relationship]} {args['first_name']} as a driver on policy {pid}"
        settled = driver_settled(args, f"{KIN[relationship]} {args['first_name']}")
        details = (
            f"{args['first_name']} {args['last_name']}, born "
            f"{month_day_year(date.fromisoformat(args['date_of_birth']))}, "
            f"{args['license_state']} licence {args['license_number']}; lives with me."
        )
        what = "driver"
    user = holder.user(
        wish[0].upper() + wish[1:],
        [
            f"{holder.hello()} I'd like to {wish}.",
            f"{holder.identity_line()} {details}",
            *(
                ["Okay, understood. Thank you."]
                if not in_force
                else ["Yes, that's right, please go ahead.", THANKS]
            ),
        ],
        detail=f"wants to add a {what}",
        known={"policy_id": pid, "details": details},
        unknown=["the policy's current status rules"],
        instructions="Give the details when asked and confirm the change. If the agent refuses or "
        "proposes a review instead, accept that; do not ask for anything else.",
    )
    reads = [holder.find(), call("get_policy", policy_id=pid)]
    fields = {"user": user, "initial_patch": scene.initial_patch()}
    if status == "lapsed":
        assert holder.policy.lapsed_on is not None  # a lapsed policy records its day
        return ctx.task(
            difficulty_tags=["policy-status", what, "refusal"],
            description=f"The policy lapsed on {holder.policy.lapsed_on}: no {what} change until reinstated.",
            **refusal(
                "lapsed",
                reply(
                    f"Your policy lapsed on {month_day_year(holder.policy.lapsed_on)}, and a lapsed policy "
                    "can't be changed until it is reinstated.",
                    f"Because the policy is lapsed, I can't add a {what} to it.",
                ),
                reads=reads,
                wrong=[holder.verify(), change],
            ),
            **fields,
        )
    if status == "cancelled":
        return ctx.task(
            difficulty_tags=["policy-status", what, "refusal"],
            description=f"The policy is cancelled: a {what} change is refused, with no hand-off ticket.",
            **refusal(
                "cancelled",
                reply(
                    f"Your policy is cancelled, so I can't add a {what} to it.",
                    "A cancelled policy can't be changed any more, I'm sorry.",
                ),
                reads=reads,
                wrong=[ticket(holder, "policy_change", f"Add a {what}", f"Customer asked to {wish}.")],
            ),
            **fields,
        )
    if young:
        args = change.arguments
        return ctx.task(
            difficulty_tags=["drivers", "underwriting", "hold", "dates"],
            description="A new driver under 18 is not added by chat: an underwriting ticket instead.",
            gold_actions=[
                *reads,
                ticket(
                    holder,
                    "underwriting",
                    f"Add driver {args['first_name']} {args['last_name']}, under 18",
                    f"Policyholder asks to add {args['first_name']} (born {args['date_of_birth']}).",
                ),
            ],
            determined_by=underwriting_settled("3.3", "a new driver younger than 18"),
            **fields,
        )
    after = [id_cards(pid)] if what == "vehicle" and status == "active" else []
    return ctx.task(
        difficulty_tags=["policy-status", what, *(["documents"] if after else [])],
        description=f"Add a {what} to {'an' if status == 'active' else 'a'} {status} policy"
        + (" and email new ID cards." if after else " (no ID cards in grace)." if what == "vehicle" else "."),
        gold_actions=[reads[0], holder.verify(), reads[1], change, *after],
        determined_by=settled | (ID_CARDS_SETTLED if after else {}),
        **fields,
    )


def exclude_by_state(ctx: ScenarioContext) -> Task:
    """Rules 3.2, 4.1, 4.2: exclusions are not written in KS, MI, NY and VA; someone who moved out is removed.

    The member is already listed (`exclude_driver`) or not on the policy yet (`add_driver(excluded=true)`);
    in a no-exclusion state both are refused. A member who moved out is taken off in any state.
    """
    scene, rng = Scene(ctx), ctx.rng
    no_exclusions = rng.random() < 0.45
    others = [s for s in STATES if s not in STATES_WITHOUT_EXCLUSIONS]
    state = rng.choice(STATES_WITHOUT_EXCLUSIONS if no_exclusions else others)
    variant = rng.choices(("listed", "new", "moved-out"), weights=(45, 35, 20))[0]
    holder = scene.holder(status=rng.choice(("active", "active", "grace")), state=state, household=2)
    pid = holder.policy_id
    spouse, child = holder.drivers[1], holder.drivers[2]
    if variant == "new":
        args = scene.newcomer(holder, relationship="other_household")
        who = f"{args['first_name']} {args['last_name']}"
        change = call("add_driver", **args, excluded=True)
        ask = (
            f"my roommate {who} just moved in. They have their own car and I don't want them covered on "
            "mine, so please add them as an excluded driver"
        )
        details = (
            f"{who}, born {month_day_year(date.fromisoformat(args['date_of_birth']))}, "
            f"{args['license_state']} licence {args['license_number']}."
        )
        settled = driver_settled(change.arguments, f"my roommate {who} just moved in")
    else:
        person = rng.choice((spouse, child)) if variant == "listed" else child
        who = f"{person.first_name} {person.last_name}"
        if variant == "listed":
            change = call("exclude_driver", policy_id=pid, driver_id=person.driver_id)
            ask = (
                f"I don't want {who} covered to drive my cars any more; they still live with me. "
                "Please exclude them"
            )
        else:
            change = call("remove_driver", policy_id=pid, driver_id=person.driver_id)
            kin = "kid" if person.relationship == "child" else "cousin"
            ask = (
                f"my {kin} {who} moved out to their own apartment last month and has their own insurance "
                "now. Please take them off my policy"
            )
        details = f"It's {who} on policy {pid}."
        settled = {}
    refused = variant != "moved-out" and no_exclusions
    user = holder.user(
        f"Change whether {who} is covered on policy {pid}",
        [
            f"{holder.hello()} On policy {pid}: {ask}.",
            f"{holder.identity_line()} {details}",
            *(["I see, then leave it as it is. Thanks."] if refused else ["Yes, please go ahead.", THANKS]),
        ],
        detail=f"rating state {state}",
        known={"policy_id": pid, "person": who},
        unknown=["the state rules on driver exclusions"],
        instructions="Confirm the change when asked. If the agent says it cannot be done in your state, "
        "accept that and do not ask for a removal or anything else instead.",
    )
    reads = [holder.find(), call("get_policy", policy_id=pid)]
    tags = ["drivers", "exclusion" if variant != "moved-out" else "removal", "state-rules"]
    if refused:
        return ctx.task(
            difficulty_tags=[*tags, "refusal"],
            description=f"A policy rated in {state} cannot carry a driver exclusion; the request is refused.",
            user=user,
            initial_patch=scene.initial_patch(),
            gold_actions=reads,
            wrong_actions=[holder.verify(), change],
            **_no_exclusions_told(state),
        )
    return ctx.task(
        difficulty_tags=tags,
        description={
            "listed": f"Exclude a listed household driver on a policy rated in {state}.",
            "new": f"Add a new household member as an excluded driver on a policy rated in {state}.",
            "moved-out": f"A driver who moved out is removed (not excluded) from a policy rated in {state}.",
        }[variant],
        user=user,
        initial_patch=scene.initial_patch(),
        gold_actions=[reads[0], holder.verify(), reads[1], change],
        determined_by=settled,
    )


def vehicle_rules(ctx: ScenarioContext) -> Task:
    """Rules 5.1, 5.2, 5.3, 5.5: at most 4 vehicles; 2001 or older to underwriting; financing needs cover."""
    scene, rng = Scene(ctx), ctx.rng
    variant = rng.choices(("ok", "fifth", "old", "uncovered"), weights=(35, 20, 20, 25))[0]
    if variant == "uncovered":
        collision = rng.random() < 0.5
        holder = scene.holder(collision=collision, comprehensive=not collision, vehicles=rng.randint(1, 2))
    else:
        holder = scene.holder(
            status="grace" if variant == "ok" and rng.random() < 0.25 else "active",
            vehicles=MAX_VEHICLES if variant == "fifth" else rng.randint(1, MAX_VEHICLES - 1),
        )
    pid = holder.policy_id
    ownership = {"uncovered": rng.choice(("financed", "leased")), "old": "owned"}.get(variant)
    vehicle = scene.vehicle(holder.policy, ownership=ownership, new=True)
    if variant == "old":
        vehicle.year = rng.randint(1978, UNDERWRITING_MAX_YEAR)
    change = add_vehicle(vehicle)
    refused = variant in ("fifth", "uncovered")
    user = holder.user(
        f"Add a {car(vehicle)} to policy {pid}",
        [
            f"{holder.hello()} I need to add a vehicle to my policy {pid}.",
            f"{holder.identity_line()} {describe_car(vehicle)}",
            *(["Okay, I understand. Thank you."] if refused else ["Yes, please go ahead.", THANKS]),
        ],
        detail="just got another vehicle",
        known={"policy_id": pid, "vehicle": describe_car(vehicle)},
        unknown=["the vehicle rules"],
        instructions="Give the vehicle details and confirm. If the agent refuses or proposes a review by "
        "another team, accept that.",
    )
    reads = [holder.find(), call("get_policy", policy_id=pid)]
    patch = scene.initial_patch()
    if variant == "old":
        return ctx.task(
            difficulty_tags=["vehicles", "underwriting", "hold"],
            description=f"A {vehicle.year} vehicle is rated by underwriting: a ticket instead of adding it.",
            user=user,
            initial_patch=patch,
            gold_actions=[
                *reads,
                ticket(holder, "underwriting", f"Add a {car(vehicle)}", f"Asks to add a {car(vehicle)}."),
            ],
            determined_by=underwriting_settled("5.2", "a vehicle of model year 2001 or older"),
        )
    if variant in ("fifth", "uncovered"):
        return ctx.task(
            difficulty_tags=["vehicles", "refusal", "coverage" if variant == "uncovered" else "limits"],
            description="A fifth vehicle is refused."
            if variant == "fifth"
            else f"A {vehicle.ownership} vehicle needs collision and comprehensive; the add is refused.",
            user=user,
            initial_patch=patch,
            **refusal(
                str(MAX_VEHICLES) if variant == "fifth" else _missing_coverage(holder.policy),
                reply(
                    f"Your policy already covers {MAX_VEHICLES} vehicles, which is the most one "
                    "policy can hold, "
                    "so I can't add another.",
                    f"One policy holds at most {MAX_VEHICLES} vehicles and yours is full.",
                )
                if variant == "fifth"
                else reply(
                    f"A {vehicle.ownership} vehicle needs {_missing_coverage(holder.policy)} coverage on the "
                    "policy, and yours doesn't have it, so I can't add the car.",
                    f"Since the car is {vehicle.ownership}, the policy would need "
                    f"{_missing_coverage(holder.policy)} coverage, which it lacks.",
                ),
                reads=reads,
                wrong=[holder.verify(), change, id_cards(pid)],
            ),
            # Rule 5.1's limit, else the coverage the financed or leased vehicle lacks (5.3).
        )
    assert full_coverage(holder.policy) or vehicle.ownership == "owned"
    after = [id_cards(pid)] if holder.policy.status == "active" else []
    return ctx.task(
        difficulty_tags=["vehicles", *(["documents"] if after else ["grace"])],
        description=f"Add {'an' if vehicle.ownership == 'owned' else 'a'} {vehicle.ownership} vehicle to "
        f"{'an' if holder.policy.status == 'active' else 'a'} {holder.policy.status} policy"
        + (", then email ID cards." if after else "; no ID cards in grace."),
        user=user,
        initial_patch=patch,
        gold_actions=[reads[0], holder.verify(), reads[1], change, *after],
        determined_by=car_settled(vehicle) | (ID_CARDS_SETTLED if after else {}),
    )
