"""Catalogue tools: the chain's hotels, their room types, and prices and availability for a stay."""

from __future__ import annotations

from datetime import date

from sqlalchemy import func, select

from env_server.domain import ToolContext, ToolError, tool
from env_server.domains.hotel.models import CorporateAccount, Hotel, RatePlan, RoomNight, RoomType
from env_server.domains.hotel.pricing import stay_nights, stay_price_cents
from env_server.domains.hotel.tools._common import validate_stay
from env_server.domains.hotel.tools._views import HotelView, RoomOffer, hotel_view


@tool(kind="read")
def search_hotels(ctx: ToolContext, city: str) -> list[HotelView]:
    """List the chain's hotels in a city, with their tier and room types.

    Args:
        city: the city name, e.g. "Berlin".
    """
    hotels = list(
        ctx.session.scalars(
            select(Hotel).where(func.lower(Hotel.city) == city.strip().lower()).order_by(Hotel.hotel_id)
        )
    )
    if not hotels:
        cities = ", ".join(ctx.session.scalars(select(Hotel.city).distinct().order_by(Hotel.city)))
        raise ToolError(f"No hotels in {city}; the chain has hotels in {cities}")
    return [hotel_view(ctx, h) for h in hotels]


@tool(kind="read")
def get_hotel(ctx: ToolContext, hotel_id: str) -> HotelView:
    """Show a hotel: its city, tier (which sets its cancellation rules) and room types.

    Args:
        hotel_id: the hotel's ID, e.g. "H-03".
    """
    return hotel_view(ctx, Hotel.get_or_refuse(ctx.session, hotel_id))


@tool(kind="read")
def search_availability(
    ctx: ToolContext,
    hotel_id: str,
    check_in: date,
    check_out: date,
    rate_plan: RatePlan = "flexible",
    corporate_account_id: str | None = None,
) -> list[RoomOffer]:
    """Price every room type of a hotel for a new stay, with how many rooms are free on all its nights.

    Args:
        hotel_id: the hotel's ID, e.g. "H-03".
        check_in: arrival date, e.g. "2026-10-14".
        check_out: departure date, e.g. "2026-10-16".
        rate_plan: "flexible" (changeable, refundable under the policy) or "non_refundable" (10% cheaper).
        corporate_account_id: price with this corporate account's negotiated discount, e.g. "CA-02".
    """
    Hotel.get_or_refuse(ctx.session, hotel_id)
    validate_stay(ctx, check_in, check_out)
    discount = (
        CorporateAccount.get_or_refuse(ctx.session, corporate_account_id).discount_pct
        if corporate_account_id
        else 0
    )
    nights = stay_nights(check_in, check_out)
    offers = []
    for room_type in ctx.session.scalars(
        select(RoomType).where(RoomType.hotel_id == hotel_id).order_by(RoomType.room_type_id)
    ):
        rows = list(
            ctx.session.scalars(
                select(RoomNight)
                .where(
                    RoomNight.room_type_id == room_type.room_type_id,
                    RoomNight.night >= check_in,
                    RoomNight.night < check_out,
                )
                .order_by(RoomNight.night)
            )
        )
        if len(rows) < len(nights):
            raise ToolError(f"Rates are not loaded for every night from {check_in} to {check_out}")
        rates = [r.rate_cents for r in rows]
        offers.append(
            RoomOffer(
                room_type_id=room_type.room_type_id,
                name=room_type.name,
                max_occupancy=room_type.max_occupancy,
                rooms_available=min(r.rooms_available for r in rows),
                nightly_rates_cents=rates,
                total_cents=stay_price_cents(rates, rate_plan=rate_plan, discount_pct=discount),
            )
        )
    return offers
