"""Telecom scenario families: a phone setting, a router, and a credit the policy refuses, on fresh customers.

Each draw adds a fresh customer (`C-7xxxx`/`C-8xxxx`, above the seed's `C-0001..C-0400`) with a fresh mobile
number, lines, bills, phone and router, so no generated task shares an entity with a written one. The two
troubleshooting families are dual control, shaped like the written `telecom-airplane-001` and
`telecom-router-004`: the agent diagnoses and asks, and the customer's script line makes the `actor: user`
change once the agent's message says the setting (`when_told`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from env_server.domain import (
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
    router,
)
from env_server.domains.telecom.models import CARRIER_APN
from shared.tasks import ScriptLine, Task

_MOODS = ("a little flustered", "calm", "brief", "chatty", "in a hurry")
_TOLD = (
    "When the agent asks you to change a setting on your phone or router, do exactly that with your tools "
    "and tell the agent what you did."
)


@dataclass
class _Account:
    """A fresh customer's rows: the mobile line with its phone, and home internet with a router if asked."""

    holder: CustomerSpec
    number: str
    mobile_line: str
    due_bill: str
    device: DeviceSpec
    router: RouterSpec | None
    rows: list[EntitySpec[Any]]

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
    lines = [("mobile", number)] + ([("internet", "home")] if internet else [])
    ids: list[str] = []
    bills: list[BillSpec] = []
    for kind, said in lines:
        plan = ctx.rng.choice([p for p in ctx.rows("plans") if p["kind"] == kind])
        ids.append(ctx.new_id("LN"))
        rows.append(line(ids[-1], holder.customer_id, plan["plan_id"], said))
        bills += [BillSpec(ctx.new_id("BL"), ids[-1], p, plan["monthly_cents"], s) for p, s in BILL_PERIODS]
    device = phone(ctx.new_id("DV"), ids[0], ctx.rng.choice(PHONES), **phone_settings)
    box = router(ctx.new_id("RT"), ids[1], ctx.rng.choice(ROUTERS)) if internet else None
    rows += [*bills, device, *([box] if box else [])]
    return _Account(holder, number, ids[0], bills[1].bill_id, device, box, rows)


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
            conversation(
                ask, identity=f"{acc.holder.full_name}, PIN {acc.holder.pin}.", yes="I see. Fine then."
            ),
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
                call(
                    "verify_customer",
                    customer_id=acc.holder.customer_id,
                    full_name=acc.holder.full_name,
                    pin=acc.holder.pin,
                ),
                call(
                    "add_outage_credit",
                    bill_id=acc.due_bill,
                    outage_id=outage.outage_id,
                    amount_cents=cents,
                ),
            ],
        ),
    )


FAMILIES = [
    ScenarioFamily(name="phone-setting", covers=("2",), build=phone_setting),
    ScenarioFamily(name="router-fix", covers=("3",), build=router_fix),
    ScenarioFamily(name="credit-elsewhere", covers=("1", "5"), build=credit_elsewhere),
]

__all__ = ["FAMILIES"]
