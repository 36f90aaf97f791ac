"""Telecom scenario families, on fresh customers: troubleshooting, outages and credits, account changes.

Nine families: a phone setting, a router, a blocked SIM (`sim-unblock`), an active outage (`outage-ticket`),
a resolved one's credit (`outage-credit`), a credit the policy refuses (`credit-elsewhere`), roaming for a
trip, a plan change and a lost phone. Each draw adds a fresh customer (`C-7xxxx`/`C-8xxxx`, above the seed's
`C-0001..C-0400`) with a fresh mobile number, lines, bills, phone and router (and, for the outage families,
a fresh outage in their area), so no generated task shares an entity with a written one. The dual control
families (phone setting, router, SIM, roaming) are shaped like the written `telecom-airplane-001` and
`telecom-router-004`: the agent diagnoses and asks, and the customer's script line makes the `actor: user`
change once the agent's message says the setting, the PUK or "data roaming" (`when_told`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from env_server.domain import (
    THANKS,
    EntitySpec,
    ScenarioContext,
    ScenarioFamily,
    call,
    conversation,
    patch_rows,
    refusal,
    reply,
    user_call,
    user_spec,
)
from env_server.domains.telecom.factories import (
    AREAS,
    BILL_PERIODS,
    PHONES,
    ROUTERS,
    BillSpec,
    CustomerSpec,
    DeviceSpec,
    OutageSpec,
    RouterSpec,
    customer,
    line,
    phone,
    puk_of,
    router,
)
from env_server.domains.telecom.models import CARRIER_APN, ROAMING_DAY_CENTS
from shared.tasks import GoldAction, ScriptLine, Task

_MOODS = ("a little flustered", "calm", "brief", "chatty", "in a hurry")
_TOLD = (
    "When the agent asks you to change a setting on your phone or router, do exactly that with your tools "
    "and tell the agent what you did."
)


@dataclass
class _Line:
    """One of a fresh customer's lines: its id, its (seeded) plan row and its due bill."""

    line_id: str
    plan: dict[str, Any]
    due_bill: str


@dataclass
class _Account:
    """A fresh customer's rows: the mobile line with its phone, and home internet with a router if asked."""

    holder: CustomerSpec
    number: str
    lines: dict[str, _Line]
    device: DeviceSpec
    router: RouterSpec | None
    rows: list[EntitySpec[Any]]

    @property
    def mobile_line(self) -> str:
        return self.lines["mobile"].line_id

    @property
    def due_bill(self) -> str:
        return self.lines["mobile"].due_bill

    def verify(self) -> GoldAction:
        """The identity check with the holder's own name and PIN."""
        h = self.holder
        return call("verify_customer", customer_id=h.customer_id, full_name=h.full_name, pin=h.pin)

    def identity_line(self) -> str:
        """The customer's answer when the agent asks who they are."""
        return f"{self.holder.full_name}, PIN {self.holder.pin}."

    def known(self, **more: str) -> dict[str, str]:
        n = self.number
        said = f"{n[:4]} {n[4:7]} {n[7:]}"
        return {"mobile_number": said, **more, "full_name": self.holder.full_name, "pin": self.holder.pin}


def _account(ctx: ScenarioContext, areas: set[str], internet: bool, **phone_settings: Any) -> _Account:
    """A fresh customer in one of `areas` (drawn again until it is), with a phone set as given."""
    holder = customer(ctx.rng, ctx.new_id("C"))
    holder.area = ctx.rng.choice(sorted(areas))
    taken = {r["number"] for r in ctx.seed_tables["lines"]}
    number = next(n for n in (f"04{ctx.rng.randrange(10**7, 10**8)}" for _ in range(99)) if n not in taken)
    rows: list[EntitySpec[Any]] = [holder]
    lines: dict[str, _Line] = {}
    bills: list[BillSpec] = []
    for kind, said in [("mobile", number)] + ([("internet", "home")] if internet else []):
        plan = ctx.rng.choice([p for p in ctx.rows("plans") if p["kind"] == kind])
        line_id = ctx.new_id("LN")
        rows.append(line(line_id, holder.customer_id, plan["plan_id"], said))
        made = [BillSpec(ctx.new_id("BL"), line_id, p, plan["monthly_cents"], s) for p, s in BILL_PERIODS]
        lines[kind] = _Line(line_id, plan, made[1].bill_id)
        bills += made
    device = phone(ctx.new_id("DV"), lines["mobile"].line_id, ctx.rng.choice(PHONES), **phone_settings)
    box = router(ctx.new_id("RT"), lines["internet"].line_id, ctx.rng.choice(ROUTERS)) if internet else None
    rows += [*bills, device, *([box] if box else [])]
    return _Account(holder, number, lines, device, box, rows)


def _areas_without(ctx: ScenarioContext, kind: str, status: str) -> set[str]:
    """The service areas with no `status` outage of `kind` (policy rules 3 and 5 turn on the area)."""
    hit = {o["area"] for o in ctx.seed_tables["outages"] if o["kind"] == kind and o["status"] == status}
    return set(AREAS) - hit


#: A phone fault: the setting that breaks it, the customer's fix, the term the agent must say, the reply.
_PHONE_FAULTS: dict[str, tuple[dict[str, Any], str, dict[str, Any], str, str]] = {
    "airplane": (
        {"airplane_mode": True}, "set_airplane_mode", {"on": False}, "airplane",
        "Our network has no radio contact with your phone: it is in airplane mode. "
        "Please switch airplane mode off.",
    ),
    "data": (
        {"mobile_data": False}, "set_mobile_data", {"on": True}, "data",
        "Your phone is on the network but asks for no data: mobile data is switched off. "
        "Please switch mobile data on.",
    ),
    "apn": (
        {"apn": "internet"}, "set_apn", {"apn": CARRIER_APN}, CARRIER_APN,
        "Your phone's APN is set to internet, which our network refuses. "
        f"Please change the APN to {CARRIER_APN}.",
    ),
}  # fmt: skip
_PHONE_ASKS = (
    "Hi, my phone {n} has had no service since this morning.",
    "Hello, the internet on my phone {n} stopped working. Can you help?",
    "My phone {n} isn't connecting to anything. What's wrong?",
)


def phone_setting(ctx: ScenarioContext) -> Task:
    """No mobile service or data (rule 2): a setting on the customer's phone; they fix it when told."""
    fault = ctx.rng.choice(sorted(_PHONE_FAULTS))
    settings, tool_name, fix, term, said = _PHONE_FAULTS[fault]
    acc = _account(ctx, _areas_without(ctx, "mobile", "active"), False, **settings)
    dv = acc.device.device_id
    fixed = ScriptLine.model_validate(
        {"say": "Done, I changed it as you said and it works again.",
         "actions": [{"name": tool_name, "arguments": {"device_id": dv, **fix}}], "when_told": [term]}
    )  # fmt: skip
    known = acc.known(device_id=dv)
    return ctx.task(
        kind="action",
        difficulty_tags=["dual-control", "troubleshooting", "mobile", fault],
        description=f"No mobile service: the phone's {fault} setting is wrong; the customer fixes it.",
        user=user_spec(
            f"{acc.holder.full_name}, a customer with a {acc.device.model}; {ctx.rng.choice(_MOODS)}",
            "Get mobile service back on your phone",
            [ctx.rng.choice(_PHONE_ASKS).format(n=known["mobile_number"]), fixed, "Thanks, that's all."],
            known,
            instructions=_TOLD,
        ),
        initial_patch=patch_rows(*acc.rows),
        gold_actions=[
            call("find_customer", number=acc.number),
            call("run_diagnostics", line_id=acc.mobile_line),
            user_call(tool_name, device_id=dv, **fix),
        ],
        communicate=[term],
        reference_reply=reply(said, f"The fix is on your phone: {said.split('. ')[-1]}"),
    )


def router_fix(ctx: ScenarioContext) -> Task:
    """No home internet and no outage in the area (rule 3): the router is off, out of date, or both."""
    fault = ctx.rng.choice(["off", "firmware", "both"])
    old = ctx.rng.choice(["4.8", "5.0", "5.1"])
    acc = _account(ctx, _areas_without(ctx, "internet", "active"), True)
    assert acc.router is not None
    box, internet_line = acc.router, acc.router.line_id
    box.power = "on" if fault == "firmware" else "off"
    box.firmware = "5.2" if fault == "off" else old
    fixes = (["restart_router"] if fault != "firmware" else []) + (
        ["update_router_firmware"] if fault != "off" else []
    )
    term = "restart" if fault == "off" else "5.2"
    said = {
        "off": "There is no outage in your area, but your router is off. Please restart it.",
        "firmware": f"There is no outage in your area; your router runs firmware {old}. Update it to 5.2.",
        "both": f"No outage in your area. Your router is off, on firmware {old}: restart it, update to 5.2.",
    }[fault]
    fixed = ScriptLine.model_validate(
        {"say": "OK, done. The router lights are green again and the internet works.",
         "actions": [{"name": f, "arguments": {"router_id": box.router_id}} for f in fixes],
         "when_told": [term]}
    )  # fmt: skip
    known = acc.known(router_id=box.router_id)
    return ctx.task(
        kind="action",
        difficulty_tags=["dual-control", "troubleshooting", "internet", f"router-{fault}"],
        description=f"Home internet down in {acc.holder.area} (no internet outage there): router {fault}.",
        user=user_spec(
            f"{acc.holder.full_name}, a customer with a {box.model} router; {ctx.rng.choice(_MOODS)}",
            "Get your home internet back",
            [
                f"Hi, no internet at home since last night. My mobile is {known['mobile_number']}.",
                fixed,
                "Thanks!",
            ],
            known,
            instructions=_TOLD,
        ),
        initial_patch=patch_rows(*acc.rows),
        gold_actions=[
            call("find_customer", number=acc.number),
            call("check_outages", area=acc.holder.area),
            call("run_diagnostics", line_id=internet_line),
            *(user_call(f, router_id=box.router_id) for f in fixes),
        ],
        communicate=[term],
        reference_reply=reply(
            said, "No outage where you live; the fix is on your router: " + said.split(". ", 1)[1]
        ),
    )


def credit_elsewhere(ctx: ScenarioContext) -> Task:
    """A credit asked for an outage outside the customer's service area (rule 5): none is due."""
    hit = {o["area"] for o in ctx.seed_tables["outages"] if o["kind"] == "mobile"}
    there = ctx.rng.choice(sorted(set(AREAS) - hit))
    start = date(2026, 11, ctx.rng.randrange(1, 25))
    outage = OutageSpec(ctx.new_id("OU"), there, "mobile", "resolved", start, start + timedelta(days=2), None)
    acc = _account(ctx, {a for a in set(AREAS) - hit - {there} if " " not in a}, False)  # one word: atomic
    area = acc.holder.area
    cents = ctx.rng.choice([100, 150, 250])
    known = acc.known()
    ask = (
        f"Hi, my mobile {known['mobile_number']} had no signal for days in November, during your outage in "
        f"{there}, where I work. I'd like a credit on my bill."
    )
    return ctx.task(
        kind="action",
        difficulty_tags=["billing", "outage", "refusal"],
        description=f"A credit for the {there} mobile outage, asked by a customer in {area}: none is due.",
        user=user_spec(
            f"{acc.holder.full_name}, a customer; {ctx.rng.choice(_MOODS)}",
            f"Get a credit for the {there} outage in November",
            conversation(ask, identity=acc.identity_line(), yes="I see. Fine then."),
            known,
            instructions="Accept the agent's answer if it explains why no credit is due.",
        ),
        initial_patch=patch_rows(outage, *acc.rows),
        **refusal(
            area,
            reply(
                f"Your account's service area is {area}, and the {there} outage did not hit {area}, so no "
                "outage credit is due.",
                f"Credits cover outages in your own service area, {area}; none there, so no credit.",
            ),
            reads=[call("find_customer", number=acc.number), call("check_outages", area=area)],
            wrong=[
                acc.verify(),
                call(
                    "add_outage_credit",
                    bill_id=acc.due_bill,
                    outage_id=outage.outage_id,
                    amount_cents=cents,
                ),
            ],
        ),
    )


def _day(d: date) -> str:
    """A date as the customer and the reply say it: "13 December"."""
    return f"{d.day} {d:%B}"


def _dollars(cents: int) -> str:
    """An amount as the agent tells it: "$60", "$2.50"."""
    return f"${cents // 100}" if cents % 100 == 0 else f"${cents / 100:.2f}"


def roaming(ctx: ScenarioContext) -> Task:
    """A trip abroad (rule 4): roaming to its last day, $10 a day unless the plan includes it.

    The customer switches data roaming on when the agent's report tells them to (`when_told`).
    """
    acc = _account(ctx, set(AREAS), ctx.rng.random() < 0.3)
    ln, dv = acc.lines["mobile"], acc.device.device_id
    today = ctx.now.date()
    back = today + timedelta(days=ctx.rng.randrange(1, 30))
    days = (back - today).days + 1
    price = "included" if ln.plan["roaming_included"] else _dollars(days * ROAMING_DAY_CENTS)
    cost = (
        f"roaming is included in your {ln.plan['name']} plan, so there is no charge"
        if price == "included"
        else f"{days} days at $10 a day comes to {price} on your due bill"
    )
    switched = ScriptLine.model_validate(
        {"say": "Done, data roaming is on now. Thanks!",
         "actions": [{"name": "set_data_roaming", "arguments": {"device_id": dv, "on": True}}],
         "when_told": ["data roaming"]}
    )  # fmt: skip
    trip = f"on {back:%A} {_day(back)} {back.year}"
    known = acc.known(device_id=dv, trip_last_day=back.isoformat())
    land = ctx.rng.choice(["Lisbon", "Tokyo", "Nairobi", "Toronto", "Oslo", "Lima"])
    return ctx.task(
        kind="action",
        difficulty_tags=["dual-control", "roaming", "fee" if price != "included" else "included"],
        description=f"Roaming until {back.isoformat()} on {ln.plan['name']}: {price}; the customer turns on "
        "data roaming when told.",
        user=user_spec(
            f"{acc.holder.full_name}, a customer with a {acc.device.model}; {ctx.rng.choice(_MOODS)}",
            f"Get your phone working abroad for your trip (your last day abroad is {back.isoformat()})",
            [
                f"Hi, I'm off to {land} and I come back {trip}. I need my phone {known['mobile_number']} "
                "to work there.",
                f"I'm {acc.holder.full_name}, PIN {acc.holder.pin}.",
                "Yes, please go ahead.",
                switched,
                "Bye.",
            ],
            known,
            instructions=_TOLD + " Accept the roaming charge.",
        ),
        initial_patch=patch_rows(*acc.rows),
        gold_actions=[
            call("find_customer", number=acc.number),
            acc.verify(),
            call("enable_roaming", line_id=ln.line_id, until=back.isoformat()),
            user_call("set_data_roaming", device_id=dv, on=True),
        ],
        communicate=[price],
        determined_by={
            "lines.roaming_until": "user: the last day of the trip",
            "bills.amount_cents": "policy 4: $10 a day from today to the last day",
        },
        reference_reply=reply(
            f"Roaming is enabled until {_day(back)}: {cost}. Please switch on data roaming on your phone.",
            f"Done, your line can roam through {_day(back)} ({cost}). Now turn data roaming on in your "
            "phone's settings.",
            after_writes=True,
        ),
    )


def plan_change(ctx: ScenarioContext) -> Task:
    """A line moved to another plan of its own kind (rule 6), its monthly price quoted before the yes."""
    kind = ctx.rng.choice(["mobile", "internet"])
    acc = _account(ctx, set(AREAS), kind == "internet" or ctx.rng.random() < 0.5)
    ln = acc.lines[kind]
    to = ctx.rng.choice(
        [p for p in ctx.rows("plans") if p["kind"] == kind and p["plan_id"] != ln.plan["plan_id"]]
    )
    price, what = _dollars(to["monthly_cents"]), "mobile" if kind == "mobile" else "home internet"
    known = acc.known()
    return ctx.task(
        kind="action",
        difficulty_tags=["plan-change", kind],
        description=f"Move {'a mobile' if kind == 'mobile' else 'an internet'} line from "
        f"{ln.plan['name']} to {to['name']} ({price} a month).",
        user=user_spec(
            f"{acc.holder.full_name}, a customer; {ctx.rng.choice(_MOODS)}",
            f"Move your {what} to the {to['name']} plan",
            conversation(
                f"Hi, I'd like to switch my {what} from {ln.plan['name']} to {to['name']}. "
                f"My mobile number is {known['mobile_number']}.",
                identity=acc.identity_line(),
                yes="Yes, switch me.",
                then=["Great, thanks."],
                thanks="Bye.",
            ),
            known,
            instructions=f"Accept the price of {to['name']}.",
        ),
        initial_patch=patch_rows(*acc.rows),
        gold_actions=[
            call("find_customer", number=acc.number),
            call("list_plans", kind=kind),
            acc.verify(),
            call("change_plan", line_id=ln.line_id, plan_id=to["plan_id"]),
        ],
        communicate=[price],
        reference_reply=reply(
            f"{to['name']} costs {price} a month, from today. Shall I switch your {what} line?",
            f"The {to['name']} plan is {price} monthly and starts today. Do you want me to go ahead?",
        ),
    )


_DOWN = {
    "mobile": "My phone {n} has had no signal since {when}. What's going on?",
    "internet": "Hello, our home internet has been down since {when}. My mobile number is {n}.",
}


def outage_ticket(ctx: ScenarioContext) -> Task:
    """Service down in an active outage of the customer's area (rule 3): fix date, ticket, no fixing."""
    kind = ctx.rng.choice(["mobile", "internet"])
    area = ctx.rng.choice(sorted(_areas_without(ctx, kind, "active")))
    today = ctx.now.date()
    start, fix = (
        today - timedelta(days=ctx.rng.randrange(0, 3)),
        today + timedelta(days=ctx.rng.randrange(1, 6)),
    )
    outage = OutageSpec(ctx.new_id("OU"), area, kind, "active", start, None, fix)
    acc = _account(ctx, {area}, kind == "internet")
    ln = acc.lines[kind]
    known = acc.known(**({"device_id": acc.device.device_id} if kind == "mobile" else
                         {"router_id": acc.router.router_id if acc.router else ""}))  # fmt: skip
    when = "this morning" if start == today else "yesterday" if (today - start).days == 1 else "two days ago"
    return ctx.task(
        kind="action",
        difficulty_tags=["outage", kind, "ticket"],
        description=f"{kind.capitalize()} service down in {area} during an active {kind} outage: tell the "
        "fix date, open an outage ticket, no troubleshooting.",
        user=user_spec(
            f"{acc.holder.full_name}, a customer; {ctx.rng.choice(_MOODS)}",
            f"Find out why your {'phone has no service' if kind == 'mobile' else 'home internet is down'}",
            [
                _DOWN[kind].format(n=known["mobile_number"], when=when),
                "OK, thanks for letting me know.",
                "Bye.",
            ],
            known,
            instructions=_TOLD,
        ),
        initial_patch=patch_rows(outage, *acc.rows),
        gold_actions=[
            call("find_customer", number=acc.number),
            call("check_outages", area=area),
            call(
                "open_ticket",
                line_id=ln.line_id,
                category="outage",
                summary=f"{kind.capitalize()} service down during the {area} outage",
            ),
        ],
        communicate=[_day(fix)],
        determined_by={
            "tickets.category": "policy 3: an active outage gets an outage ticket",
            "tickets.*": "policy 3: an active outage in the area gets a ticket for the line",
        },
        reference_reply=reply(
            f"There is a {kind} outage in {area}; engineers expect it fixed on {_day(fix)}. I have opened an "
            "outage ticket for your line.",
            f"An outage is hitting {area} right now, with a fix expected on {fix:%B} {fix.day}; your line "
            "now has an outage ticket.",
        ),
    )


def outage_credit(ctx: ScenarioContext) -> Task:
    """A resolved outage of the customer's area and service (rule 5): price x days / 30 on the due bill."""
    kind = ctx.rng.choice(["mobile", "internet"])
    area = ctx.rng.choice(sorted(_areas_without(ctx, kind, "resolved")))
    days = ctx.rng.randrange(1, 6)
    start = date(2026, 11, ctx.rng.randrange(1, 26))
    end = start + timedelta(days=days - 1)
    outage = OutageSpec(ctx.new_id("OU"), area, kind, "resolved", start, end, None)
    acc = _account(ctx, {area}, kind == "internet")
    ln = acc.lines[kind]
    cents = ln.plan["monthly_cents"] * days // 30
    amount, what = _dollars(cents), "mobile" if kind == "mobile" else "home internet"
    known = acc.known()
    return ctx.task(
        kind="action",
        difficulty_tags=["billing", "outage", "credit", kind],
        description=f"Credit for the resolved {days}-day {area} {kind} outage on {ln.plan['name']}: "
        f"{amount}.",
        user=user_spec(
            f"{acc.holder.full_name}, a customer; {ctx.rng.choice(_MOODS)}",
            f"Get a credit for the days your {what} did not work in November",
            conversation(
                f"Hi, my {what} didn't work in November during your outage. I'd like a credit. My mobile "
                f"number is {known['mobile_number']}.",
                identity=acc.identity_line(),
                yes="Yes, please.",
                then=["Thank you."],
                thanks="Bye.",
            ),
            known,
            instructions="Accept the credit the agent offers.",
        ),
        initial_patch=patch_rows(outage, *acc.rows),
        gold_actions=[
            call("find_customer", number=acc.number),
            call("check_outages", area=area),
            acc.verify(),
            call("add_outage_credit", bill_id=ln.due_bill, outage_id=outage.outage_id, amount_cents=cents),
        ],
        communicate=[amount],
        determined_by={
            "credits.amount_cents": "policy 5: monthly price times outage days over 30, rounded down",
            "credits.bill_id": "policy 5: the due bill of the line hit",
        },
        reference_reply=reply(
            f"The {area} {kind} outage lasted {days} day(s); on {ln.plan['name']} that is a credit of "
            f"{amount} on your due bill. Shall I add it?",
            f"I can credit {amount} to your current bill for the outage days. Go ahead?",
        ),
    )


def sim_unblock(ctx: ScenarioContext) -> Task:
    """A SIM blocked after three wrong PINs (rule 2): verify, read the PUK, the customer types it in."""
    acc = _account(ctx, _areas_without(ctx, "mobile", "active"), False, sim_state="pin_locked")
    ln, dv = acc.lines["mobile"], acc.device.device_id
    puk = puk_of(ln.line_id)
    typed = ScriptLine.model_validate(
        {"say": "I typed it in and the phone works again, thanks.",
         "actions": [{"name": "enter_puk", "arguments": {"device_id": dv, "puk": puk}}], "when_told": [puk]}
    )  # fmt: skip
    known = acc.known(device_id=dv)
    return ctx.task(
        kind="action",
        difficulty_tags=["dual-control", "troubleshooting", "mobile", "sim-puk"],
        description="A SIM blocked after three wrong PINs: verify the holder, read the PUK, the customer "
        "types it in.",
        user=user_spec(
            f"{acc.holder.full_name}, a customer with a {acc.device.model}; {ctx.rng.choice(_MOODS)}",
            "Unblock the SIM of your phone",
            [
                f"Hi, I typed my SIM PIN wrong three times and my phone {known['mobile_number']} now asks "
                "for a PUK. Can you help?",
                acc.identity_line(),
                typed,
                THANKS,
            ],
            known,
            instructions=_TOLD,
        ),
        initial_patch=patch_rows(*acc.rows),
        gold_actions=[
            call("find_customer", number=acc.number),
            call("run_diagnostics", line_id=ln.line_id),
            acc.verify(),
            call("get_sim_puk", line_id=ln.line_id),
            user_call("enter_puk", device_id=dv, puk=puk),
        ],
        communicate=[puk],
        reference_reply=reply(
            f"Your SIM is blocked after three wrong PINs. Its PUK is {puk}: type it into your phone.",
            f"Please enter the PUK {puk} on your phone's SIM blocked screen to unblock it.",
        ),
    )


def lost_phone(ctx: ScenarioContext) -> Task:
    """A lost or stolen phone (rule 7): the verified holder's mobile line suspended, no other line."""
    acc = _account(ctx, set(AREAS), ctx.rng.random() < 0.5)
    ln = acc.lines["mobile"]
    known = acc.known()
    how, what = ctx.rng.choice(
        [("lost", "lost my phone on the bus"), ("had stolen", "had my phone stolen last night"),
         ("lost", "can't find my phone anywhere")]
    )  # fmt: skip
    return ctx.task(
        kind="action",
        difficulty_tags=["lost-phone", "suspend", "mobile"],
        description=f"The holder {how} their phone: suspend its mobile line"
        + (" (not the home internet)." if acc.router else "."),
        user=user_spec(
            f"{acc.holder.full_name}, a customer; {ctx.rng.choice(_MOODS)}",
            "Stop anyone else using your phone's number",
            conversation(
                f"Hi, I {what}. The number is {known['mobile_number']}. Please block it so nobody can use "
                "it.",
                identity=acc.identity_line(),
                yes="Yes, please suspend it.",
                then=["Thanks."],
                thanks="Bye.",
            ),
            known,
            instructions="Agree to suspending the mobile line.",
        ),
        initial_patch=patch_rows(*acc.rows),
        gold_actions=[
            call("find_customer", number=acc.number),
            acc.verify(),
            call("suspend_line", line_id=ln.line_id),
        ],
    )


FAMILIES = [
    ScenarioFamily(name="phone-setting", covers=("2",), build=phone_setting),
    ScenarioFamily(name="router-fix", covers=("3",), build=router_fix),
    ScenarioFamily(name="credit-elsewhere", covers=("1", "5"), build=credit_elsewhere),
    ScenarioFamily(name="roaming", covers=("1", "4"), build=roaming),
    ScenarioFamily(name="plan-change", covers=("1", "6"), build=plan_change),
    ScenarioFamily(name="outage-ticket", covers=("3",), build=outage_ticket),
    ScenarioFamily(name="outage-credit", covers=("1", "5"), build=outage_credit),
    ScenarioFamily(name="sim-unblock", covers=("1", "2"), build=sim_unblock),
    ScenarioFamily(name="lost-phone", covers=("1", "7"), build=lost_phone),
]

__all__ = ["FAMILIES"]
