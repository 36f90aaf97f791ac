"""Corporate families: changes to corporate bookings over and under the approval threshold.

The change is asked by the traveler or by the account's coordinator; some bookings already have a request
waiting for (or turned down by) a manager.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from typing import Any

from env_server.domain import (
    GoldAction,
    ScenarioContext,
    ScenarioUnavailable,
    call,
    conversation,
    day_month,
    dollars,
    refusal,
    reply,
    user_spec,
)
from env_server.domains.hotel.families._base import (
    INVENTORY_LAST_NIGHT,
    TODAY,
    Guest,
    Hotel,
    Scene,
    booking,
    complete_inventory,
    future_stay,
    inventory,
    new_account,
    new_guest,
    pick_hotel,
    refund_determined,
    stay,
)
from env_server.domains.hotel.families._rules import (
    APPROVAL_THRESHOLD_CENTS,
    change_fee_applies,
    days_before,
    refund_percent,
)
from env_server.domains.hotel.models import ApprovalRequest, Booking, ChangeType, CorporateAccount
from shared.tasks import Task


@dataclass
class CorporateBooking:
    """A confirmed corporate booking of a fresh account, its traveler and coordinator, and a change."""

    hotel: Hotel
    account: CorporateAccount
    traveler: Guest
    coordinator: Guest
    booking: Booking
    #: The scene's `initial_patch` so far.
    patch: dict[str, list[dict[str, Any]]]
    change_type: ChangeType
    #: The change as `create_approval_request` takes it (new dates or room type).
    details: dict[str, str]
    #: The user's words for the change.
    asked: str


def corporate_booking(ctx: ScenarioContext, *, large: bool) -> CorporateBooking:
    """A corporate booking whose room total is `large` (>= $1,000) or not, and a change asked for it."""
    rng = ctx.rng
    hotel = pick_hotel(ctx, tier=rng.choice(("premium", "luxury")) if large else None)
    account, invoice = new_account(ctx)
    traveler = new_guest(ctx, corporate_account_id=account.account_id, corporate_role="traveler")
    coordinator = new_guest(ctx, corporate_account_id=account.account_id, corporate_role="coordinator")
    room = rng.choice(hotel.room_types)
    days = rng.choice((0, 1, 2, 3, 5, 7, 8, rng.randint(1, 25)))
    for nights in rng.sample(range(1, 6), 5):
        if TODAY + timedelta(days=days + nights + 1) > INVENTORY_LAST_NIGHT:
            continue
        s = future_stay(ctx, hotel, room, days, nights, margin=2)
        if (s.total("flexible", account.discount_pct) >= APPROVAL_THRESHOLD_CENTS) == large:
            break
    else:
        raise ScenarioUnavailable("no stay length on the wanted side of the approval threshold")
    bk, pay = booking(ctx, traveler, s, invoice, account=account)
    rows = inventory(ctx, room, s.rates)
    others = [r for r in hotel.room_types if r is not room and r.max_occupancy >= bk.adults]
    change_type: ChangeType = rng.choice(
        ("change_dates", "cancel", "change_room_type" if others else "change_dates")
    )
    details: dict[str, str] = {}
    if change_type == "change_room_type":
        new_room = rng.choice(others)
        rows += inventory(ctx, new_room, stay(ctx, hotel, new_room, s.check_in, len(s.nights)).rates)
        details = {"new_room_type_id": new_room.room_type_id}
        asked = f"switch it to a {new_room.name}"
    elif change_type == "change_dates":
        shifts = [d for d in (-1, 1, 2) if days + d >= 0]
        shift = rng.choice(shifts)
        moved = stay(ctx, hotel, room, s.check_in + timedelta(days=shift), len(s.nights))
        if moved.check_out - timedelta(days=1) > INVENTORY_LAST_NIGHT:
            raise ScenarioUnavailable("new dates past the loaded inventory")
        rows += inventory(ctx, room, {n: r for n, r in moved.rates.items() if n not in s.rates})
        details = {"new_check_in": moved.check_in.isoformat(), "new_check_out": moved.check_out.isoformat()}
        asked = f"move it to {day_month(moved.check_in)} - {day_month(moved.check_out)}"
    else:
        asked = "cancel it"
    patch = (
        Scene(ctx)
        .put(
            *hotel.fresh,
            account,
            traveler.row,
            coordinator.row,
            invoice,
            bk,
            pay,
            *complete_inventory(ctx, hotel, rows),
        )
        .initial_patch()
    )
    return CorporateBooking(hotel, account, traveler, coordinator, bk, patch, change_type, details, asked)


def approval_request(c: CorporateBooking, requester: Guest) -> GoldAction:
    """The change filed for a manager's approval (rule 9) on behalf of `requester`."""
    return call(
        "create_approval_request",
        booking_id=c.booking.booking_id,
        requested_by_guest_id=requester.id,
        change_type=c.change_type,
        **c.details,
        note=f"{c.asked[0].upper()}{c.asked[1:]}, as requested",
    )


def approval_determined(c: CorporateBooking) -> dict[str, str]:
    """What fixes the filed request: the change the user asked for (rule 9: exactly that change)."""
    said = f"policy 9 (describe exactly the change asked for); user (line 0): asks to {c.asked}"
    return {"approval_requests.change_type": said, **{f"approval_requests.{k}": said for k in c.details}}


def direct_determined(c: CorporateBooking) -> dict[str, str]:
    """What fixes a direct change under the threshold: a cancellation's refund follows rules 4 to 7."""
    return refund_determined() if c.change_type == "cancel" else {}


def direct_change(c: CorporateBooking) -> GoldAction:
    """The change made directly, as rules 5 to 8 set it for the guest who stays."""
    bk, tier = c.booking, c.hotel.tier
    days = days_before(bk.check_in)
    loyalty = c.traveler.tier
    if c.change_type == "cancel":
        percent = refund_percent(tier, days, loyalty, "flexible")
        return call(
            "cancel_booking", booking_id=bk.booking_id, refund_percent=percent, reason="Trip cancelled"
        )
    fee = change_fee_applies(tier, days, loyalty)
    if c.change_type == "change_room_type":
        return call(
            "change_room_type",
            booking_id=bk.booking_id,
            room_type_id=c.details["new_room_type_id"],
            charge_change_fee=fee,
        )
    return call(
        "change_booking_dates",
        booking_id=bk.booking_id,
        check_in=c.details["new_check_in"],
        check_out=c.details["new_check_out"],
        charge_change_fee=fee,
    )


def corporate_change(ctx: ScenarioContext) -> Task:
    """The traveler or the coordinator asks to change a corporate booking.

    At $1,000 or more the change is filed for approval (rule 9) and making it is wrong; under that it is
    made directly, with the fee or refund of rules 5 to 8 for the traveler's loyalty tier.
    """
    rng = ctx.rng
    large = rng.random() < 0.5
    c = corporate_booking(ctx, large=large)
    requester = c.coordinator if rng.random() < 0.5 else c.traveler
    bk = c.booking
    by_coordinator = requester is c.coordinator
    opening = (
        f"Hi, I'm the travel coordinator at {c.account.company_name}. Booking {bk.booking_id} for "
        f"{c.traveler.name} at {c.hotel.row.name}: please {c.asked}."
        if by_coordinator
        else f"Hello, {c.account.company_name} travel here. Please {c.asked}: my booking "
        f"{bk.booking_id} "
        f"at {c.hotel.row.name}."
    )
    spec = user_spec(
        f"{requester.name}, "
        f"{'travel coordinator' if by_coordinator else 'a traveler'} at {c.account.company_name}; busy",
        f"Get booking {bk.booking_id} changed: {c.asked}",
        conversation(opening, identity=requester.identity_line(), yes="Fine, yes, go ahead."),
        requester.known(booking_id=bk.booking_id, company=c.account.company_name),
        unknown=["the approval rules", "the price"],
        instructions="Accept an approval hold if it is explained; otherwise confirm the change.",
    )
    verify = requester.verify()
    total = dollars(bk.room_total_cents)
    role = "coordinator" if by_coordinator else "traveler"
    common = {"user": spec, "initial_patch": c.patch}
    if large:
        return ctx.task(
            difficulty_tags=["corporate", "approval", c.change_type, role],
            description=f"A {c.change_type} on a {total} corporate booking: file it for approval only.",
            gold_actions=[verify, approval_request(c, requester)],
            wrong_actions=[verify, direct_change(c)],
            determined_by=approval_determined(c),
            **common,
        )
    return ctx.task(
        difficulty_tags=["corporate", "under-threshold", c.change_type, role],
        description=f"A {c.change_type} on a {total} corporate booking, under the threshold: make it.",
        gold_actions=[verify, direct_change(c)],
        determined_by=direct_determined(c),
        **common,
    )


def _day(iso: str | None) -> date | None:
    """A date of a change's details (ISO text), or None when the change has none."""
    return date.fromisoformat(iso) if iso else None


def approval_on_file(ctx: ScenarioContext) -> Task:
    """A large corporate booking already has an approval request (rule 9).

    A pending one: file nothing, change nothing, and say it is pending. After a rejected request, a different
    change is filed anew.
    """
    rng = ctx.rng
    c = corporate_booking(ctx, large=True)
    bk, traveler = c.booking, c.traveler
    pending = rng.random() < 0.6
    previous = c.change_type if pending else ("cancel" if c.change_type != "cancel" else "change_dates")
    asked = c.details if pending else {}
    old = ApprovalRequest(
        approval_id=ctx.new_id("APR"),
        booking_id=bk.booking_id,
        requested_by_guest_id=traveler.id,
        change_type=previous,
        new_check_in=_day(asked.get("new_check_in")),
        new_check_out=_day(asked.get("new_check_out")),
        new_room_type_id=asked.get("new_room_type_id"),
        status="pending" if pending else "rejected",
        note="Requested by the traveler",
        created_at=datetime.combine(TODAY - timedelta(days=rng.randint(1, 6)), time(15)),
    )
    if previous == "change_dates" and not pending:
        old.new_check_in = bk.check_in
        old.new_check_out = bk.check_out + timedelta(days=1)
    spec = user_spec(
        f"{traveler.name}, a traveler at {c.account.company_name}; impatient",
        f"Get booking {bk.booking_id} changed: {c.asked}",
        conversation(
            f"Hi, about my booking {bk.booking_id} at {c.hotel.row.name}: "
            + (
                f"I asked days ago to {c.asked}. Can you just do it now?"
                if pending
                else f"my earlier request was turned down, but now I need you to {c.asked}."
            ),
            identity=traveler.identity_line(),
            yes="OK, I'll wait for the manager then."
            if pending
            else "OK, yes, please file it. I'll wait for the manager then.",
        ),
        traveler.known(booking_id=bk.booking_id, company=c.account.company_name),
        unknown=["the status of the approval request"],
        instructions="Push once to have it done right away; accept waiting for a manager if it is explained.",
    )
    patch = Scene(ctx).add(c.patch).put(old).initial_patch()
    verify = traveler.verify()
    if pending:
        return ctx.task(
            difficulty_tags=["corporate", "approval", "refusal", "communicate"],
            description="The same change is already pending approval: file nothing, say it is pending.",
            user=spec,
            initial_patch=patch,
            **refusal(
                "pending",
                reply(
                    f"Your earlier request to {c.asked} is still pending: a manager has to approve "
                    "it before I "
                    "can make the change.",
                    "That change already waits for a manager's decision (it is pending), so I "
                    "can't do it now.",
                ),
                reads=[call("get_booking", booking_id=bk.booking_id)],
                wrong=[verify, direct_change(c)],
            ),
        )
    return ctx.task(
        difficulty_tags=["corporate", "approval", c.change_type],
        description="An earlier request was rejected; a new, different change of a large booking is filed.",
        user=spec,
        initial_patch=patch,
        gold_actions=[verify, approval_request(c, traveler)],
        wrong_actions=[verify, direct_change(c)],
        determined_by=approval_determined(c),
    )
