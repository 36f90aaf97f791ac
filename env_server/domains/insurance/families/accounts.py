"""Account families: identity verification before a change, and who may ask for it (rules 1 and 14)."""

from __future__ import annotations

from datetime import timedelta

from env_server.domain import ScenarioContext, call, month_day_year, reply, user_spec
from env_server.domains.insurance.families._common import GEOGRAPHY, STATES, THANKS
from env_server.domains.insurance.families._holder import ticket
from env_server.domains.insurance.families._scene import Scene
from shared.tasks import Task

_MAIL_DOMAINS = ("fastmail.com", "proton.me", "outlook.com", "icloud.com")


def identity_then_change(ctx: ScenarioContext) -> Task:
    """Rules 1.2, 1.3, 1.4, 14.1, 14.2: verify, then change contact details or a same-state address.

    Variants: the policyholder (change after verification); a caller whose details do not match (no change
    and no ticket: the wrong trajectory opens one); the policyholder's spouse, who knows the policyholder's
    details (no change: the wrong trajectory verifies as the policyholder and changes); a move to another
    state while a policy is in force (a policy_change ticket instead of the address change).
    """
    scene, rng = Scene(ctx), ctx.rng
    variant = rng.choices(
        ("policyholder", "mismatch", "not-policyholder", "other-state"), weights=(45, 20, 20, 15)
    )[0]
    holder = scene.holder(status=rng.choice(("active", "active", "grace")), household=1)
    customer, cid, pid = holder.customer, holder.id, holder.policy_id
    what = rng.choice(("email", "phone", "address"))
    if variant == "other-state":
        what = "address"
    new_email = (
        f"{customer.first_name[0]}{customer.last_name}{rng.randint(10, 99)}@{rng.choice(_MAIL_DOMAINS)}"
    )
    new_email = new_email.lower()
    area, _ = GEOGRAPHY[customer.state]
    new_phone = f"{area}-555-{rng.randint(0, 9999):04d}"
    state = customer.state
    if variant == "other-state":
        state = rng.choice([s for s in STATES if s != customer.state])
    street, city, zip_code = scene.address(state)
    if what == "email":
        change = call("update_contact_details", customer_id=cid, email=new_email)
        ask, detail = "update my email address", f"The new one is {new_email}."
    elif what == "phone":
        change = call("update_contact_details", customer_id=cid, phone=new_phone)
        ask, detail = "change my phone number", f"The new number is ({area}) {new_phone[4:]}."
    else:
        change = call(
            "update_mailing_address",
            customer_id=cid,
            street=street,
            city=city,
            state=state,
            zip_code=zip_code,
        )
        ask, detail = "update my mailing address", f"I've moved to {street}, {city}, {state} {zip_code}."
    spouse = holder.drivers[1]
    reads = [holder.find()]
    if variant == "not-policyholder":
        caller = f"{spouse.first_name} {spouse.last_name}"
        script = [
            f"Hello, I'm {caller}, calling for my spouse {holder.name} ({customer.email}), who's at work. "
            f"We need to {ask.replace('my', 'our')}.",
            f"I have the details: born {month_day_year(customer.date_of_birth)}, ZIP "
            f"{customer.zip_code}. I'm a listed "
            f"driver on policy {pid}. {detail}",
            f"Oh, I see. I'll ask {customer.first_name} to call.",
        ]
        persona = (
            f"{caller}, spouse of policyholder {holder.name} and a listed driver; helpful, open about it"
        )
        known = {
            "policyholder_email": customer.email,
            "policyholder_date_of_birth": str(customer.date_of_birth),
        }
        wrong = [holder.verify(), change]
        description = "The policyholder's spouse knows the identity details but may not change the account."
        # Rule 1.4's own word: only the policyholder may change the account.
        told: dict[str, object] = {
            "communicate": ["policyholder"],
            "reference_reply": reply(
                f"I'm sorry, only the policyholder can make changes to the account, so {customer.first_name} "
                "needs to call us.",
                "Changes have to come from the policyholder in person, even with their details.",
            ),
        }
    elif variant == "mismatch":
        wrong_birth = customer.date_of_birth + timedelta(days=rng.choice((-366, -31, 1, 30, 365)))
        script = [
            f"{holder.hello()} I'd like to {ask}. {detail}",
            f"My date of birth is {month_day_year(wrong_birth)} and my ZIP is {customer.zip_code}.",
            f"I'm sure it's {month_day_year(wrong_birth)}. Can't you just open a request for it?",
            "Fine, I'll find my documents and call back.",
        ]
        persona = holder.persona("misremembers the date of birth on file")
        known = {
            "email": customer.email,
            "date_of_birth_as_they_say": str(wrong_birth),
            "zip": customer.zip_code,
        }
        request = ask.replace("my", "their")
        wrong = [ticket(holder, "general", f"Please {ask}", f"Caller asked to {request}. {detail}")]
        description = (
            "Identity cannot be verified (the date of birth given does not match): no change, no ticket."
        )
        # The agent may not reveal the details on file, so no single figure proves the refusal was explained.
        told = {
            "rubric": [
                "Did the agent tell the caller that their identity could not be verified, so nothing "
                "could be changed?"
            ]
        }
    else:
        script = [
            f"{holder.hello()} I'd like to {ask}."
            + (" I'm moving out of state." if variant == "other-state" else ""),
            f"{holder.identity_line()} {detail}",
            "Okay, yes, please open that request." if variant == "other-state" else "Yes, please update it.",
            THANKS,
        ]
        persona = holder.persona()
        known = holder.known(new=detail)
        wrong, description = (
            [],
            f"Verify the policyholder, then {ask} ({'same state' if what == 'address' else what}).",
        )
    user = user_spec(
        persona=persona,
        goal=f"{ask[0].upper()}{ask[1:]} for {holder.name}",
        known=known,
        unknown=["the verification rules"],
        instructions="Give only the details in your script; do not invent others. Accept the agent's "
        "answer if it refuses or proposes another route.",
        script=script,
    )
    common = {"user": user, "initial_patch": scene.initial_patch()}
    if variant == "other-state":
        return ctx.task(
            difficulty_tags=["address", "state-rules", "ticket"],
            description=f"A move from {customer.state} to {state} with a policy in force: a policy_change "
            "ticket, not an address change.",
            gold_actions=[
                *reads,
                ticket(holder, "policy_change", f"Move to {state}", f"Customer moves to {city}, {state}."),
            ],
            determined_by={
                "support_tickets.category": "policy 14.2: a move to another state with a policy in force "
                "is a policy_change ticket",
                "support_tickets.priority": "policy 14.2: the policy_change ticket has priority normal",
            },
            # No rule says whether the ticket names the policy: an agent may leave policy_id out.
            ignore_columns=["support_tickets.policy_id"],
            **common,
        )
    if wrong:
        return ctx.task(
            difficulty_tags=["identity", "refusal", variant],
            description=description,
            gold_actions=reads,
            wrong_actions=wrong,
            **told,
            **common,
        )
    return ctx.task(
        difficulty_tags=["identity", "contact-details"],
        description=description,
        gold_actions=[*reads, holder.verify(), change],
        determined_by={"customers.state": f"user: the new address is in {state}"}
        if what == "address"
        else {},
        **common,
    )
