"""Billing families: the catch-up plan's prescribed instalment count, and reinstating a lapsed policy."""

from __future__ import annotations

from datetime import timedelta

from env_server.domain import ScenarioContext, call, dollars_and_cents, month_day_year, refusal, reply
from env_server.domains.insurance.families._common import REINSTATE_WINDOW_DAYS, THANKS, TODAY, ceil_div
from env_server.domains.insurance.families._scene import Scene
from env_server.domains.insurance.tools.billing import MAX_INSTALMENTS, MIN_INSTALMENTS
from shared.tasks import Task


def instalment_plan(ctx: ScenarioContext) -> Task:
    """Rules 10.1-10.4: the count is past due / premium rounded up (at least 2); over 6 or lapsed: refuse."""
    scene, rng = Scene(ctx), ctx.rng
    status = rng.choices(("grace", "active", "lapsed"), weights=(70, 15, 15))[0]
    ratio = rng.uniform(1.5, 4.5) if status == "lapsed" else rng.uniform(0.25, 7.6)
    odd_cents = rng.choice((0, 0, rng.randint(1, 99)))
    holder = scene.holder(status=status, past_due=lambda premium: int(premium * ratio) + odd_cents)
    premium, past_due = holder.policy.monthly_premium_cents, holder.account.past_due_cents
    count = max(MIN_INSTALMENTS, ceil_div(past_due, premium))
    asked = rng.choice([n for n in range(2, 13) if n != count])
    tell_amount = rng.random() < 0.5
    refused = status == "lapsed" or count > MAX_INSTALMENTS
    pid = holder.policy_id
    user = holder.user(
        f"Spread the past-due premium on policy {pid} over {asked} monthly payments",
        [
            f"{holder.hello()} I'm behind on my car insurance, policy {pid}. Could I spread what I owe "
            f"over {asked} monthly payments?",
            holder.identity_line() + ("" if refused or not tell_amount else " How much is each payment?"),
            *(
                ["I see. Thanks for explaining."]
                if refused
                else ["Okay, if that's what the rules allow, yes, go ahead.", THANKS]
            ),
        ],
        detail="behind on premium payments",
        known={"policy_id": pid},
        unknown=["the past-due amount", "how many instalments the rules allow"],
        instructions=f"Ask for {asked} payments. If the agent explains the number is fixed by the rules, "
        "accept the number it gives; if it says you are not eligible, accept that. Do not offer to pay now.",
    )
    reads = [holder.find(), call("get_billing_account", policy_id=pid)]
    plan = call("create_instalment_plan", policy_id=pid, instalment_count=count)
    if refused:
        why = "lapsed" if status == "lapsed" else f"{count} instalments, over {MAX_INSTALMENTS}"
        wrong_count = min(max(count, MIN_INSTALMENTS), MAX_INSTALMENTS)
        return ctx.task(
            difficulty_tags=["billing", "instalment-plan", "refusal", "calculation"],
            description=f"Catch-up plan refused ({why}): {dollars_and_cents(past_due)} past due on a "
            f"{dollars_and_cents(premium)} premium.",
            user=user,
            initial_patch=scene.initial_patch(),
            **refusal(
                "lapsed" if status == "lapsed" else str(count),
                reply(
                    "Your policy has lapsed, and a lapsed policy can't get an instalment plan.",
                    "Since the policy is lapsed, a payment plan isn't possible, I'm sorry.",
                )
                if status == "lapsed"
                else reply(
                    f"What you owe would take {count} monthly instalments at your premium, and a "
                    "plan can have "
                    f"at most {MAX_INSTALMENTS} payments, so I can't set one up.",
                    f"Catching up would need {count} payments, above the maximum of {MAX_INSTALMENTS}, so no "
                    "plan is possible.",
                ),
                reads=reads,
                wrong=[
                    holder.verify(),
                    call("create_instalment_plan", policy_id=pid, instalment_count=wrong_count),
                ],
            ),
            # The decisive fact: the lapse (rule 10.4), else the prescribed count over the maximum (10.3).
        )
    return ctx.task(
        difficulty_tags=["billing", "instalment-plan", "calculation"],
        description=f"{dollars_and_cents(past_due)} past due on a {dollars_and_cents(premium)} premium: the "
        f"plan has {count} instalments, not the {asked} asked for.",
        user=user,
        initial_patch=scene.initial_patch(),
        gold_actions=[*reads[:1], holder.verify(), reads[1], plan],
        communicate=[dollars_and_cents(ceil_div(past_due, count))] if tell_amount else [],
        reference_reply=reply(
            f"The rules set the plan at {count} monthly instalments of "
            f"{dollars_and_cents(ceil_div(past_due, count))} each. Shall I set it up?",
            f"Each of the {count} payments would be {dollars_and_cents(ceil_div(past_due, count))}. Would "
            "you like me to create the plan?",
        )
        if tell_amount
        else None,
    )


def reinstate_lapsed(ctx: ScenarioContext) -> Task:
    """Rules 11.1-11.2 and 9.2: a lapse of 30 days or less is reinstated after paying the whole amount."""
    scene, rng = Scene(ctx), ctx.rng
    if rng.random() < 0.55:  # within the window, its last day included
        days = rng.choice((*range(3, REINSTATE_WINDOW_DAYS + 1), REINSTATE_WINDOW_DAYS))
    else:  # the day after the window, or well past it
        days = rng.choice((REINSTATE_WINDOW_DAYS + 1, *range(REINSTATE_WINDOW_DAYS + 1, 75)))
    lapsed_on = TODAY - timedelta(days=days)
    holder = scene.holder(status="lapsed", status_day=lapsed_on)
    pid, owed = holder.policy_id, holder.account.past_due_cents
    offer = rng.choice((None, owed // 2, holder.policy.monthly_premium_cents))
    offer_line = (
        f" Could I just pay {dollars_and_cents(offer)} today to get it going again?"
        if offer and offer < owed
        else ""
    )
    tell_amount = rng.random() < 0.5
    refused = days > REINSTATE_WINDOW_DAYS
    user = holder.user(
        f"Get lapsed policy {pid} back in force",
        [
            f"{holder.hello()} My policy {pid} lapsed on {month_day_year(lapsed_on)} because I missed "
            f"payments. "
            "I'd like to get it reinstated." + offer_line,
            holder.identity_line() + ("" if refused or not tell_amount else " How much do I need to pay?"),
            *(
                ["Oh no. All right, thanks for checking."]
                if refused
                else [
                    "Yes, charge the full amount to what you have on file and reinstate it, please.",
                    THANKS,
                ]
            ),
        ],
        detail="let the policy lapse after a job change and wants to drive again",
        known={"policy_id": pid, "lapse": "missed payments, coverage stopped"},
        unknown=["the exact past-due amount", "the reinstatement rules"],
        instructions="Ask to reinstate. If the agent says the whole past-due amount must be paid, agree "
        "to pay it in "
        "full from the card or account on file. If it says the policy cannot be reinstated, accept it.",
    )
    reads = [holder.find(), call("get_policy", policy_id=pid), call("get_billing_account", policy_id=pid)]
    pay = [
        call("make_payment", policy_id=pid, amount_cents=owed),
        call("reinstate_policy", policy_id=pid),
    ]
    if refused:
        return ctx.task(
            difficulty_tags=["billing", "reinstatement", "dates", "refusal"],
            description=f"Lapsed {days} days ago: past the 30-day window, the policy cannot be reinstated.",
            user=user,
            initial_patch=scene.initial_patch(),
            gold_actions=reads,
            wrong_actions=[holder.verify(), *pay],
            communicate=[str(REINSTATE_WINDOW_DAYS)],  # rule 11.2: the 30-day window
            reference_reply=reply(
                f"A lapsed policy can only be reinstated within {REINSTATE_WINDOW_DAYS} days of the lapse, "
                f"and yours lapsed {days} days ago, so I can't reinstate it.",
                f"The {REINSTATE_WINDOW_DAYS}-day reinstatement window has closed, I'm sorry.",
            ),
        )
    return ctx.task(
        difficulty_tags=["billing", "reinstatement", "dates", "multi-step"],
        description=f"Lapsed {days} days ago: pay the whole {dollars_and_cents(owed)} past due, then "
        f"reinstate.",
        user=user,
        initial_patch=scene.initial_patch(),
        gold_actions=[reads[0], holder.verify(), *reads[1:], *pay],
        communicate=[dollars_and_cents(owed)] if tell_amount else [],
        reference_reply=reply(
            f"To reinstate the policy you need to pay the whole past-due amount, {dollars_and_cents(owed)}, "
            "and then it is back in force. Shall I charge it to the payment method on file?",
            f"Paying {dollars_and_cents(owed)} in full brings the policy back. Shall I go ahead?",
        )
        if tell_amount
        else None,
    )
