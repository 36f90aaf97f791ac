"""Telecom tools, the agent's and the customer's, run as the server runs them on a seeded in-memory sandbox.

Each test adds the account it needs on top of the seed with `factories.py`'s builders (`customer`, `line`,
`bills`, `phone`, `router`; ids above the seeded ranges: C-05nn, LN-05nn mobile, LN-15nn internet), calls
tools as the server does (commit on success, roll back on `ToolError`), and checks the result and the
database, refusals included: a refused call changes nothing.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from env_server.domain import ToolError, insert
from env_server.domains.telecom import domain
from env_server.domains.telecom.factories import OutageSpec, bills, customer, line, phone, puk_of, router
from env_server.domains.telecom.models import (
    CARRIER_APN,
    CURRENT_FIRMWARE,
    ROAMING_DAY_CENTS,
    Bill,
    Credit,
    Device,
    IdentityVerification,
    Line,
    Router,
    Ticket,
)
from env_server.domains.telecom.seed import PLANS
from env_server.errors import InvalidArgumentsError, UnknownToolError
from tests.domain_sandbox import count_rows, sandbox_fixture, tool_caller, user_tool_caller

TODAY = domain.now.date()
PRICE = {p.plan_id: p.monthly_cents for p in PLANS}
AIRPLANE = "no radio contact with the phone: it is in airplane mode"
DATA_OFF = "the phone is registered but requests no data session: mobile data is off"
ROUTER_OFF = "no signal from the router: it is off or unplugged"
OLD_FIRMWARE = "the router runs firmware {}; the network requires " + CURRENT_FIRMWARE

sandbox = sandbox_fixture(domain)
call = tool_caller(domain)
act = user_tool_caller(domain)


@dataclass
class Account:
    """The ids of a test account: its holder, mobile line and phone, home internet and router if any."""

    customer_id: str
    full_name: str
    pin: str
    area: str
    number: str
    mobile: str
    device: str
    internet: str | None
    router: str | None

    def due_bill(self, line_id: str | None = None) -> str:
        """The November (due) bill of a line, the mobile line by default."""
        return _bill_no(line_id or self.mobile, 1)


def _bill_no(line_id: str, k: int) -> str:
    """Bills are numbered from the line: LN-0503 has BL-09030 (October) and BL-09031 (November)."""
    n = int(line_id.rsplit("-", 1)[1])
    return f"BL-{9000 + 10 * (n % 100) + 5 * (n >= 1000) + k:05d}"


def account(
    sandbox: Session,
    n: int = 1,
    *,
    plan: str = "PL-M10",
    internet: str | None = None,
    area: str = "Old Town",
    router_settings: dict[str, Any] | None = None,
    **phone_settings: Any,
) -> Account:
    """Add customer C-05nn with a mobile line on `plan` and its phone, and home internet if `internet`."""
    holder = customer(random.Random(n), f"C-05{n:02d}")
    holder.area = area
    mobile = line(f"LN-05{n:02d}", holder.customer_id, plan, f"0499{n:06d}")
    specs: list[Any] = [
        holder,
        mobile,
        *bills(mobile.line_id, PRICE[plan], int(_bill_no(mobile.line_id, 0)[3:])),
    ]
    net = None
    if internet is not None:
        net = line(f"LN-15{n:02d}", holder.customer_id, internet, "home")
        specs += [net, *bills(net.line_id, PRICE[internet], int(_bill_no(net.line_id, 0)[3:]))]
    specs.append(phone(f"DV-05{n:02d}", mobile.line_id, "Pixel 8", **phone_settings))
    if net is not None:
        specs.append(router(f"RT-05{n:02d}", net.line_id, "Nexa R7", **(router_settings or {})))
    insert(sandbox, specs)
    return Account(
        holder.customer_id, holder.full_name, holder.pin, area, mobile.number, mobile.line_id,
        f"DV-05{n:02d}", net.line_id if net else None, f"RT-05{n:02d}" if net else None,
    )  # fmt: skip


def verify(sandbox: Session, acc: Account) -> None:
    """The holder passes the identity check."""
    call(sandbox, "verify_customer", customer_id=acc.customer_id, full_name=acc.full_name, pin=acc.pin)


def outage(sandbox: Session, outage_id: str, area: str, kind: str, status: str, days: int = 2) -> str:
    """Add an outage: a resolved one of `days` days in November, or an active one since yesterday."""
    if status == "resolved":
        start, end, fix = date(2026, 11, 10), date(2026, 11, 10) + timedelta(days=days - 1), None
    else:
        start, end, fix = TODAY - timedelta(days=1), None, TODAY + timedelta(days=2)
    insert(sandbox, [OutageSpec(outage_id, area, kind, status, start, end, fix)])
    return outage_id


def amount(sandbox: Session, bill_id: str) -> int:
    bill = sandbox.get(Bill, bill_id)
    assert bill is not None
    return bill.amount_cents


# --- the agent's account tools -------------------------------------------------------------------------


def test_find_customer_by_the_number_as_said_shows_lines_plans_and_bills_but_no_pin(sandbox: Session) -> None:
    acc = account(sandbox, internet="PL-I500")
    spoken = f"{acc.number[:4]} {acc.number[4:7]} {acc.number[7:]}"
    found = call(sandbox, "find_customer", number=spoken)
    assert found["customer_id"] == acc.customer_id and found["area"] == "Old Town"
    assert "pin" not in found and acc.pin not in str(found)
    assert [(ln["line_id"], ln["plan"]["plan_id"]) for ln in found["lines"]] == [
        (acc.mobile, "PL-M10"),
        (acc.internet, "PL-I500"),
    ]
    assert [b["period"] for b in found["lines"][0]["bills"]] == ["2026-11", "2026-10"]  # newest first
    assert found["lines"][1]["bills"][0] == {
        "bill_id": acc.due_bill(acc.internet), "period": "2026-11", "amount_cents": 5000, "status": "due"
    }  # fmt: skip
    with pytest.raises(ToolError, match="No line has the number 0400 000 000"):
        call(sandbox, "find_customer", number="0400 000 000")


def test_verify_customer_records_a_check_only_for_the_holders_own_name_and_pin(sandbox: Session) -> None:
    acc = account(sandbox)
    wrong_pin = f"{(int(acc.pin) + 1) % 10000:04d}"
    with pytest.raises(ToolError, match="do not match"):
        call(sandbox, "verify_customer", customer_id=acc.customer_id, full_name=acc.full_name, pin=wrong_pin)
    with pytest.raises(ToolError, match="do not match"):
        call(sandbox, "verify_customer", customer_id=acc.customer_id, full_name="Someone Else", pin=acc.pin)
    with pytest.raises(ToolError, match="No customer C-0999"):
        call(sandbox, "verify_customer", customer_id="C-0999", full_name=acc.full_name, pin=acc.pin)
    assert count_rows(sandbox, IdentityVerification, customer_id=acc.customer_id) == 0
    said = f"  {acc.full_name.upper().replace(' ', '   ')} "  # case and spacing as the caller typed them
    out = call(sandbox, "verify_customer", customer_id=acc.customer_id, full_name=said, pin=f" {acc.pin} ")
    assert out == {"customer_id": acc.customer_id, "verified": True}
    assert count_rows(sandbox, IdentityVerification, customer_id=acc.customer_id) == 1


def test_list_plans_gives_one_kind_cheapest_first(sandbox: Session) -> None:
    mobile = call(sandbox, "list_plans", kind="mobile")
    assert [p["plan_id"] for p in mobile] == ["PL-M10", "PL-M30", "PL-MW"]
    assert [p["roaming_included"] for p in mobile] == [False, False, True]
    assert [p["plan_id"] for p in call(sandbox, "list_plans", kind="internet")] == [
        "PL-I100",
        "PL-I500",
        "PL-I1G",
    ]
    with pytest.raises(InvalidArgumentsError):
        call(sandbox, "list_plans", kind="satellite")


def test_change_plan_moves_a_verified_holders_line_to_a_plan_of_its_kind(sandbox: Session) -> None:
    acc = account(sandbox, internet="PL-I100")
    with pytest.raises(ToolError, match=f"Not verified: verify customer {acc.customer_id}"):
        call(sandbox, "change_plan", line_id=acc.mobile, plan_id="PL-M30")
    verify(sandbox, acc)
    with pytest.raises(ToolError, match="is a mobile line; plan PL-I500 is a internet plan"):
        call(sandbox, "change_plan", line_id=acc.mobile, plan_id="PL-I500")
    with pytest.raises(ToolError, match="is a internet line; plan PL-MW is a mobile plan"):
        call(sandbox, "change_plan", line_id=acc.internet, plan_id="PL-MW")
    with pytest.raises(ToolError, match="already on plan PL-M10"):
        call(sandbox, "change_plan", line_id=acc.mobile, plan_id="PL-M10")
    with pytest.raises(ToolError, match="No plan PL-M99"):
        call(sandbox, "change_plan", line_id=acc.mobile, plan_id="PL-M99")
    with pytest.raises(ToolError, match="No line LN-0999"):
        call(sandbox, "change_plan", line_id="LN-0999", plan_id="PL-M30")
    assert sandbox.get(Line, acc.mobile).plan_id == "PL-M10"  # type: ignore[union-attr]
    out = call(sandbox, "change_plan", line_id=acc.mobile, plan_id="PL-M30")
    assert out["plan"]["plan_id"] == "PL-M30" and out["plan"]["monthly_cents"] == 2500
    assert sandbox.get(Line, acc.mobile).plan_id == "PL-M30"  # type: ignore[union-attr]
    assert sandbox.get(Line, acc.internet).plan_id == "PL-I100"  # type: ignore[union-attr]


def test_a_verification_holds_only_for_its_own_customer(sandbox: Session) -> None:
    mine, theirs = account(sandbox, 1), account(sandbox, 2)
    verify(sandbox, mine)
    with pytest.raises(ToolError, match=f"verify customer {theirs.customer_id}"):
        call(sandbox, "suspend_line", line_id=theirs.mobile)
    call(sandbox, "suspend_line", line_id=mine.mobile)


def test_enable_roaming_charges_ten_dollars_a_day_from_today_to_the_last_day(sandbox: Session) -> None:
    acc = account(sandbox)
    verify(sandbox, acc)
    before = amount(sandbox, acc.due_bill())
    out = call(sandbox, "enable_roaming", line_id=acc.mobile, until="2026-12-13")
    assert out["roaming_enabled"] is True and out["roaming_until"] == "2026-12-13"
    assert amount(sandbox, acc.due_bill()) == before + 6 * ROAMING_DAY_CENTS  # 8 to 13 December, both in
    assert amount(sandbox, _bill_no(acc.mobile, 0)) == PRICE["PL-M10"]  # the paid bill is left alone


def test_enable_roaming_for_today_only_is_one_day_and_a_plan_with_roaming_costs_nothing(
    sandbox: Session,
) -> None:
    today_only, world = account(sandbox, 1), account(sandbox, 2, plan="PL-MW")
    verify(sandbox, today_only)
    verify(sandbox, world)
    call(sandbox, "enable_roaming", line_id=today_only.mobile, until=TODAY.isoformat())
    assert amount(sandbox, today_only.due_bill()) == PRICE["PL-M10"] + ROAMING_DAY_CENTS
    call(sandbox, "enable_roaming", line_id=world.mobile, until=(TODAY + timedelta(days=90)).isoformat())
    assert amount(sandbox, world.due_bill()) == PRICE["PL-MW"]
    assert sandbox.get(Line, world.mobile).roaming_until == TODAY + timedelta(days=90)  # type: ignore[union-attr]


def test_enable_roaming_refusals_change_nothing(sandbox: Session) -> None:
    acc = account(sandbox, internet="PL-I100")
    with pytest.raises(ToolError, match="Not verified"):
        call(sandbox, "enable_roaming", line_id=acc.mobile, until="2026-12-13")
    verify(sandbox, acc)
    with pytest.raises(ToolError, match="at most 90 days ahead"):
        call(sandbox, "enable_roaming", line_id=acc.mobile, until=(TODAY + timedelta(days=91)).isoformat())
    with pytest.raises(ToolError, match="2026-12-07 is in the past"):
        call(sandbox, "enable_roaming", line_id=acc.mobile, until="2026-12-07")
    with pytest.raises(ToolError, match="is not a mobile line"):
        call(sandbox, "enable_roaming", line_id=acc.internet, until="2026-12-13")
    sandbox.get(Bill, acc.due_bill()).status = "paid"  # type: ignore[union-attr]
    with pytest.raises(ToolError, match="no open bill to charge roaming to"):
        call(sandbox, "enable_roaming", line_id=acc.mobile, until="2026-12-13")
    mobile = sandbox.get(Line, acc.mobile)
    assert mobile is not None and not mobile.roaming_enabled and mobile.roaming_until is None
    assert amount(sandbox, acc.due_bill()) == PRICE["PL-M10"]


def test_get_sim_puk_tells_a_verified_holder_their_lines_puk(sandbox: Session) -> None:
    acc = account(sandbox, internet="PL-I100", sim_state="pin_locked")
    with pytest.raises(ToolError, match="Not verified"):
        call(sandbox, "get_sim_puk", line_id=acc.mobile)
    verify(sandbox, acc)
    assert call(sandbox, "get_sim_puk", line_id=acc.mobile) == {
        "line_id": acc.mobile,
        "puk": puk_of(acc.mobile),
    }
    assert len(puk_of(acc.mobile)) == 8 and puk_of(acc.mobile) != puk_of("LN-0502")
    with pytest.raises(ToolError, match=f"Line {acc.internet} has no SIM"):
        call(sandbox, "get_sim_puk", line_id=acc.internet)


def test_suspend_and_resume_a_verified_holders_line(sandbox: Session) -> None:
    acc = account(sandbox, internet="PL-I100")
    with pytest.raises(ToolError, match="Not verified"):
        call(sandbox, "suspend_line", line_id=acc.mobile)
    verify(sandbox, acc)
    with pytest.raises(ToolError, match=f"Line {acc.mobile} is already active"):
        call(sandbox, "resume_line", line_id=acc.mobile)
    assert call(sandbox, "suspend_line", line_id=acc.mobile)["status"] == "suspended"
    with pytest.raises(ToolError, match=f"Line {acc.mobile} is already suspended"):
        call(sandbox, "suspend_line", line_id=acc.mobile)
    assert sandbox.get(Line, acc.internet).status == "active"  # type: ignore[union-attr]
    found = call(sandbox, "run_diagnostics", line_id=acc.mobile)
    assert found["working"] is False and found["findings"] == ["the line is suspended"]
    assert call(sandbox, "resume_line", line_id=acc.mobile)["status"] == "active"
    assert call(sandbox, "run_diagnostics", line_id=acc.mobile)["working"] is True


# --- the agent's service tools -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("settings", "findings"),
    [
        ({}, []),
        ({"airplane_mode": True, "mobile_data": False}, [AIRPLANE]),
        ({"mobile_data": False}, [DATA_OFF]),
        ({"apn": "internet"}, [f"the phone's APN is 'internet', not '{CARRIER_APN}': data will be refused"]),
        ({"sim_state": "pin_locked", "apn": "internet"}, ["the SIM reports pin_locked"]),
    ],
)  # fmt: skip
def test_diagnostics_of_a_mobile_line_see_the_phone_from_the_network(
    sandbox: Session, settings: dict[str, Any], findings: list[str]
) -> None:
    acc = account(sandbox, **settings)
    out = call(sandbox, "run_diagnostics", line_id=acc.mobile)
    assert out == {"line_id": acc.mobile, "kind": "mobile", "working": not findings, "findings": findings}


@pytest.mark.parametrize(
    ("settings", "findings"),
    [
        ({}, []),
        ({"firmware": "5.0"}, [OLD_FIRMWARE.format("5.0")]),
        ({"power": "off"}, [ROUTER_OFF]),
        ({"power": "off", "firmware": "4.8"}, [ROUTER_OFF, OLD_FIRMWARE.format("4.8")]),
    ],
)  # fmt: skip
def test_diagnostics_of_an_internet_line_see_the_router(
    sandbox: Session, settings: dict[str, Any], findings: list[str]
) -> None:
    acc = account(sandbox, internet="PL-I1G", router_settings=settings)
    assert acc.internet is not None
    out = call(sandbox, "run_diagnostics", line_id=acc.internet)
    assert out == {"line_id": acc.internet, "kind": "internet", "working": not findings, "findings": findings}


def test_diagnostics_without_the_equipment_and_of_no_line(sandbox: Session) -> None:
    acc = account(sandbox, internet="PL-I100")
    sandbox.delete(sandbox.get(Device, acc.device))
    sandbox.delete(sandbox.get(Router, acc.router))
    assert call(sandbox, "run_diagnostics", line_id=acc.mobile)["findings"] == [
        "no phone has registered this SIM"
    ]
    assert call(sandbox, "run_diagnostics", line_id=acc.internet)["findings"] == [
        "no router is registered on this line"
    ]
    with pytest.raises(ToolError, match="No line LN-0999"):
        call(sandbox, "run_diagnostics", line_id="LN-0999")


def test_check_outages_lists_an_areas_outages_newest_first(sandbox: Session) -> None:
    outage(sandbox, "OU-0050", "Old Town", "mobile", "resolved")
    outage(sandbox, "OU-0051", "Old Town", "internet", "active")
    out = call(sandbox, "check_outages", area=" Old Town ")
    assert [(o["outage_id"], o["status"]) for o in out] == [("OU-0051", "active"), ("OU-0050", "resolved")]
    assert out[0]["expected_fix"] == (TODAY + timedelta(days=2)).isoformat() and out[0]["ended"] is None
    assert [o["outage_id"] for o in call(sandbox, "check_outages", area="Riverside")] == ["OU-0001"]
    assert call(sandbox, "check_outages", area="Atlantis") == []


def test_add_outage_credit_credits_a_verified_holders_bill_once_per_outage(sandbox: Session) -> None:
    acc = account(sandbox)
    resolved = outage(sandbox, "OU-0050", "Old Town", "mobile", "resolved", days=3)
    args = {"bill_id": acc.due_bill(), "outage_id": resolved, "amount_cents": 150}
    with pytest.raises(ToolError, match="Not verified"):
        call(sandbox, "add_outage_credit", **args)
    verify(sandbox, acc)
    out = call(sandbox, "add_outage_credit", **args)
    assert out["bill_id"] == acc.due_bill() and out["amount_cents"] == 150 and out["outage_id"] == resolved
    assert out["credit_id"].startswith("CR-")
    with pytest.raises(ToolError, match=f"already credited for outage {resolved}"):
        call(sandbox, "add_outage_credit", **args)
    credits = sandbox.scalars(select(Credit).where(Credit.bill_id == acc.due_bill())).all()
    assert [(c.amount_cents, c.outage_id) for c in credits] == [(150, resolved)]


def test_add_outage_credit_refusals_change_nothing(sandbox: Session) -> None:
    acc = account(sandbox)
    verify(sandbox, acc)
    active = outage(sandbox, "OU-0051", "Old Town", "mobile", "active")
    resolved = outage(sandbox, "OU-0050", "Old Town", "mobile", "resolved")
    with pytest.raises(ToolError, match=f"Outage {active} is still active"):
        call(sandbox, "add_outage_credit", bill_id=acc.due_bill(), outage_id=active, amount_cents=100)
    for cents in (0, -100):
        with pytest.raises(ToolError, match="must be a positive amount"):
            call(sandbox, "add_outage_credit", bill_id=acc.due_bill(), outage_id=resolved, amount_cents=cents)
    with pytest.raises(ToolError, match="No bill BL-99999"):
        call(sandbox, "add_outage_credit", bill_id="BL-99999", outage_id=resolved, amount_cents=100)
    with pytest.raises(ToolError, match="No outage OU-0999"):
        call(sandbox, "add_outage_credit", bill_id=acc.due_bill(), outage_id="OU-0999", amount_cents=100)
    assert count_rows(sandbox, Credit) == 0


def test_open_ticket_needs_no_verification_and_refuses_no_line_or_category(sandbox: Session) -> None:
    acc = account(sandbox)
    out = call(
        sandbox, "open_ticket", line_id=acc.mobile, category="outage", summary="No signal in the outage"
    )
    assert out["line_id"] == acc.mobile and out["category"] == "outage" and out["ticket_id"].startswith("TK-")
    assert count_rows(sandbox, Ticket, line_id=acc.mobile, category="outage") == 1
    with pytest.raises(ToolError, match="No line LN-0999"):
        call(sandbox, "open_ticket", line_id="LN-0999", category="outage", summary="x")
    with pytest.raises(InvalidArgumentsError):
        call(sandbox, "open_ticket", line_id=acc.mobile, category="refund", summary="x")
    assert count_rows(sandbox, Ticket, line_id=acc.mobile) == 1


# --- the customer's own tools ---------------------------------------------------------------------------


def test_the_agent_has_no_customer_tool_and_the_customer_none_of_the_agents(sandbox: Session) -> None:
    acc = account(sandbox, airplane_mode=True)
    assert not set(domain.tools_by_name) & set(domain.user_tools_by_name)
    with pytest.raises(UnknownToolError):
        call(sandbox, "set_airplane_mode", device_id=acc.device, on=False)
    with pytest.raises(UnknownToolError):
        act(sandbox, "suspend_line", line_id=acc.mobile)
    assert sandbox.get(Device, acc.device).airplane_mode is True  # type: ignore[union-attr]


def test_the_phones_switches_change_only_their_own_setting(sandbox: Session) -> None:
    acc = account(sandbox, airplane_mode=True, mobile_data=False)
    screen = act(sandbox, "check_phone", device_id=acc.device)
    assert screen == {
        "device_id": acc.device, "model": "Pixel 8", "airplane_mode": True, "mobile_data": False,
        "data_roaming": False, "apn": CARRIER_APN, "sim_state": "ready",
    }  # fmt: skip
    assert act(sandbox, "set_airplane_mode", device_id=acc.device, on=False)["airplane_mode"] is False
    assert act(sandbox, "set_mobile_data", device_id=acc.device, on=True)["mobile_data"] is True
    assert act(sandbox, "set_data_roaming", device_id=acc.device, on=True)["data_roaming"] is True
    device = sandbox.get(Device, acc.device)
    assert device is not None
    assert (device.airplane_mode, device.mobile_data, device.data_roaming, device.apn, device.sim_state) == (
        False, True, True, CARRIER_APN, "ready",
    )  # fmt: skip
    assert call(sandbox, "run_diagnostics", line_id=acc.mobile)["working"] is True
    with pytest.raises(ToolError, match="No phone DV-0999"):
        act(sandbox, "check_phone", device_id="DV-0999")
    with pytest.raises(ToolError, match="No phone DV-0999"):
        act(sandbox, "set_airplane_mode", device_id="DV-0999", on=False)


def test_set_apn_types_the_name_trimmed_and_refuses_an_empty_field(sandbox: Session) -> None:
    acc = account(sandbox, apn="internet")
    for empty in ("", "   "):
        with pytest.raises(ToolError, match="The APN field cannot be empty"):
            act(sandbox, "set_apn", device_id=acc.device, apn=empty)
    assert sandbox.get(Device, acc.device).apn == "internet"  # type: ignore[union-attr]
    assert act(sandbox, "set_apn", device_id=acc.device, apn=f"  {CARRIER_APN} ")["apn"] == CARRIER_APN
    assert call(sandbox, "run_diagnostics", line_id=acc.mobile)["working"] is True


def test_enter_puk_unblocks_the_sim_with_its_own_puk_only(sandbox: Session) -> None:
    acc = account(sandbox, sim_state="pin_locked")
    other = account(sandbox, 2)
    with pytest.raises(ToolError, match="Wrong PUK: the SIM stays blocked"):
        act(sandbox, "enter_puk", device_id=acc.device, puk=puk_of(other.mobile))
    with pytest.raises(ToolError, match="Wrong PUK"):
        act(sandbox, "enter_puk", device_id=acc.device, puk="")
    assert sandbox.get(Device, acc.device).sim_state == "pin_locked"  # type: ignore[union-attr]
    puk = puk_of(acc.mobile)
    assert act(sandbox, "enter_puk", device_id=acc.device, puk=f"{puk[:4]} {puk[4:]}")["sim_state"] == "ready"
    with pytest.raises(ToolError, match="does not ask for a PUK: its SIM is not blocked"):
        act(sandbox, "enter_puk", device_id=acc.device, puk=puk)
    with pytest.raises(ToolError, match="its SIM is not blocked"):
        act(sandbox, "enter_puk", device_id=other.device, puk=puk_of(other.mobile))


def test_restart_router_turns_it_on_and_counts_the_restart(sandbox: Session) -> None:
    acc = account(sandbox, internet="PL-I100", router_settings={"power": "off"})
    assert act(sandbox, "check_router", router_id=acc.router) == {
        "router_id": acc.router, "model": "Nexa R7", "power": "off", "firmware": CURRENT_FIRMWARE
    }  # fmt: skip
    assert act(sandbox, "restart_router", router_id=acc.router)["power"] == "on"
    act(sandbox, "restart_router", router_id=acc.router)
    box = sandbox.get(Router, acc.router)
    assert box is not None and box.power == "on" and box.restarts == 2
    with pytest.raises(ToolError, match="No router RT-0999"):
        act(sandbox, "restart_router", router_id="RT-0999")


def test_update_router_firmware_needs_the_router_on(sandbox: Session) -> None:
    acc = account(sandbox, internet="PL-I100", router_settings={"power": "off", "firmware": "4.8"})
    with pytest.raises(ToolError, match="The router is off: its status page does not load"):
        act(sandbox, "update_router_firmware", router_id=acc.router)
    assert sandbox.get(Router, acc.router).firmware == "4.8"  # type: ignore[union-attr]
    act(sandbox, "restart_router", router_id=acc.router)
    assert act(sandbox, "update_router_firmware", router_id=acc.router)["firmware"] == CURRENT_FIRMWARE
    assert acc.internet is not None
    assert call(sandbox, "run_diagnostics", line_id=acc.internet)["working"] is True
