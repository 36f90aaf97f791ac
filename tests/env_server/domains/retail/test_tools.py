"""Retail tools run through the server's tool execution on a seeded in-memory sandbox.

Each test builds the customer and orders it needs on top of the seed, calls tools like the server does
(commit on success, roll back on `ToolError`), and checks both the result and the database state.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any, cast

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from env_server.domain import EntitySpec, ToolError, insert
from env_server.domains.retail import domain
from env_server.domains.retail.factories import (
    CustomerSpec,
    OrderItemSpec,
    OrderSpec,
    PaymentMethodSpec,
    ShipmentSpec,
    payment,
)
from env_server.domains.retail.models import (
    ApprovalRequest,
    Customer,
    IdentityVerification,
    InventoryLevel,
    Order,
    OrderItem,
    Refund,
    Return,
    Shipment,
    StoreCredit,
    SupportTicket,
    WarrantyClaim,
)
from env_server.domains.retail.tools.warranty import add_months
from env_server.errors import InvalidArgumentsError
from tests.domain_sandbox import count_rows, sandbox_fixture, tool_caller

sandbox = sandbox_fixture(domain)
call = tool_caller(domain)


def make_customer(sandbox: Session, tier: str = "basic") -> Customer:
    spec = CustomerSpec(
        id="CU-60001",
        first_name="Test",
        last_name="Buyer",
        email="test.buyer@example.test",
        phone="555-000-0000",
        address_line="1 Test St",
        city="Austin",
        state="TX",
        zip_code="78701",
        tier=tier,
        store_credit_cents=0,
        member_since=date(2022, 1, 1),
        status="active",
    )
    customer, *_ = insert(
        sandbox,
        [
            spec,
            PaymentMethodSpec("PM-60001", spec.id, "credit_card", "Visa ending 1111"),
            PaymentMethodSpec("PM-60002", spec.id, "paypal", "PayPal account"),
        ],
    )
    sandbox.commit()
    return cast(Customer, customer)


def make_order(
    sandbox: Session,
    customer: Customer,
    *,
    status: str,
    order_id: str = "OR-60001",
    lines: tuple[tuple[str, int, int], ...] = (("PR-10013", 1, 29900),),
    shipment: str | None = None,
    delivered_on: date | None = None,
    protection_plan: bool = False,
) -> Order:
    """An order paid by PM-60001; `lines` hold (product, quantity, unit price); unshipped ones reserve."""
    subtotal = sum(qty * price for _, qty, price in lines)
    spec = OrderSpec(
        id=order_id,
        customer_id=customer.id,
        status=status,
        placed_at=datetime(2026, 9, 20, 10, 0),
        warehouse="EAST",
        subtotal_cents=subtotal,
        discount_cents=0,
        shipping_cents=0,
        total_cents=subtotal,
        promo_code=None,
        promised_date=date(2026, 9, 25),
        ship_address_line=customer.address_line,
        ship_city=customer.city,
        ship_state=customer.state,
        ship_zip_code=customer.zip_code,
        cancel_reason=None,
    )
    rows: list[EntitySpec[Any]] = [spec, payment(f"PA-{order_id[3:]}", spec, "PM-60001")]
    for n, (product_id, qty, price) in enumerate(lines, start=1):
        rows.append(
            OrderItemSpec(f"OI-{order_id[3:]}{n}", order_id, product_id, qty, price, 0, protection_plan)
        )
        if status in ("pending", "processing"):
            stock(sandbox, product_id).reserved += qty
            stock(sandbox, product_id).on_hand += qty
    if shipment is not None:
        tracking = f"1ZTEST{order_id[3:]}"
        rows.append(
            ShipmentSpec(
                f"SH-{order_id[3:]}", order_id, "UPS", tracking, shipment, date(2026, 9, 21), delivered_on
            )
        )
    order = cast(Order, insert(sandbox, rows)[0])
    sandbox.commit()
    return order


def delivered_order(
    sandbox: Session, customer: Customer, delivered_on: date = date(2026, 9, 24), **order: Any
) -> Order:
    """An order delivered on `delivered_on` (see `make_order` for the rest)."""
    return make_order(
        sandbox, customer, status="delivered", shipment="delivered", delivered_on=delivered_on, **order
    )


def stock(sandbox: Session, product_id: str, warehouse: str = "EAST") -> InventoryLevel:
    return sandbox.scalars(
        select(InventoryLevel).where(
            InventoryLevel.product_id == product_id, InventoryLevel.warehouse == warehouse
        )
    ).one()


def verify(sandbox: Session, customer: Customer) -> None:
    call(sandbox, "verify_customer_identity", email=customer.email, zip_code=customer.zip_code)


# --- identity -------------------------------------------------------------------------------------


def test_verify_identity_records_a_verification_and_returns_the_profile(sandbox: Session) -> None:
    customer = make_customer(sandbox, tier="gold")
    profile = call(sandbox, "verify_customer_identity", email="  TEST.Buyer@example.test", zip_code="78701")
    assert profile["customer_id"] == "CU-60001"
    assert profile["tier"]["return_window_days"] == 45
    assert {m["payment_method_id"] for m in profile["payment_methods"]} == {"PM-60001", "PM-60002"}
    assert count_rows(sandbox, IdentityVerification, customer_id=customer.id) == 1


def test_verify_identity_rejects_a_wrong_zip_code(sandbox: Session) -> None:
    make_customer(sandbox)
    with pytest.raises(ToolError, match="No account matches"):
        call(sandbox, "verify_customer_identity", email="test.buyer@example.test", zip_code="78702")
    assert count_rows(sandbox, IdentityVerification) == 0


def test_write_tools_refuse_an_unverified_customer(sandbox: Session) -> None:
    customer = make_customer(sandbox)
    order = make_order(sandbox, customer, status="processing")
    with pytest.raises(ToolError, match="not verified"):
        call(sandbox, "cancel_order", order_id=order.id, reason="no_longer_needed")
    assert sandbox.get_one(Order, order.id).status == "processing"
    assert count_rows(sandbox, Refund, order_id=order.id) == 0


# --- orders ---------------------------------------------------------------------------------------


def test_cancel_processing_order_refunds_original_method_and_releases_stock(sandbox: Session) -> None:
    customer = make_customer(sandbox)
    order = make_order(sandbox, customer, status="processing", lines=(("PR-10029", 2, 6900),))
    reserved_before = stock(sandbox, "PR-10029").reserved
    verify(sandbox, customer)
    view = call(sandbox, "cancel_order", order_id=order.id, reason="ordered_by_mistake")
    assert (view["status"], view["cancel_reason"]) == ("cancelled", "ordered_by_mistake")
    refund = sandbox.scalars(select(Refund).where(Refund.order_id == order.id)).one()
    assert (refund.amount_cents, refund.payment_method_id, refund.reason) == (
        13800,
        "PM-60001",
        "cancellation",
    )
    assert stock(sandbox, "PR-10029").reserved == reserved_before - 2


def test_cancel_delivered_order_is_refused(sandbox: Session) -> None:
    customer = make_customer(sandbox)
    order = delivered_order(sandbox, customer)
    verify(sandbox, customer)
    with pytest.raises(ToolError, match="delivered; it cannot be cancelled"):
        call(sandbox, "cancel_order", order_id=order.id, reason="no_longer_needed")
    assert sandbox.get_one(Order, order.id).status == "delivered"


def test_update_order_address_is_refused_once_shipped(sandbox: Session) -> None:
    customer = make_customer(sandbox)
    order = make_order(sandbox, customer, status="shipped", shipment="in_transit")
    verify(sandbox, customer)
    with pytest.raises(ToolError, match="only pending or processing"):
        call(
            sandbox,
            "update_order_address",
            order_id=order.id,
            address_line="9 New Rd",
            city="Austin",
            state="TX",
            zip_code="78702",
        )
    assert sandbox.get_one(Order, order.id).ship_address_line == "1 Test St"


def test_apply_promotion_discounts_and_refunds_once_per_order(sandbox: Session) -> None:
    customer = make_customer(sandbox)
    order = make_order(sandbox, customer, status="processing", lines=(("PR-10030", 1, 54900),))
    verify(sandbox, customer)
    view = call(sandbox, "apply_promotion", order_id=order.id, code="fall10")
    assert (view["promo_code"], view["discount_cents"], view["total_cents"]) == ("FALL10", 5490, 49410)
    assert [(r["reason"], r["amount_cents"], r["payment_method_id"]) for r in view["refunds"]] == [
        ("promotion", 5490, "PM-60001")
    ]
    with pytest.raises(ToolError, match="already uses promo code FALL10"):
        call(sandbox, "apply_promotion", order_id=order.id, code="SAVE25")
    assert count_rows(sandbox, Refund, order_id=order.id) == 1


def test_unknown_promo_code_is_refused(sandbox: Session) -> None:
    with pytest.raises(ToolError, match="'NOPE' does not exist"):
        call(sandbox, "get_promotion", code="NOPE")


# --- returns --------------------------------------------------------------------------------------


@pytest.mark.parametrize(("waive", "fee", "refund"), [(True, 0, 29900), (False, 799, 29101)])
def test_create_return_deducts_the_fee_unless_waived(
    sandbox: Session, waive: bool, fee: int, refund: int
) -> None:
    customer = make_customer(sandbox)
    order = delivered_order(sandbox, customer)
    verify(sandbox, customer)
    view = call(
        sandbox,
        "create_return",
        order_id=order.id,
        order_item_id="OI-600011",
        quantity=1,
        reason="changed_mind",
        waive_return_fee=waive,
        refund_payment_method_id="PM-60001",
    )
    assert (view["rma_id"], view["status"], view["fee_cents"], view["refund_cents"]) == (
        "RMA-90001",
        "authorized",
        fee,
        refund,
    )
    assert sandbox.get_one(OrderItem, "OI-600011").returned_quantity == 1


def test_create_return_refuses_more_units_than_are_left(sandbox: Session) -> None:
    customer = make_customer(sandbox)
    order = delivered_order(sandbox, customer, lines=(("PR-10027", 3, 9900),))
    verify(sandbox, customer)
    args = {
        "order_id": order.id,
        "order_item_id": "OI-600011",
        "reason": "changed_mind",
        "waive_return_fee": True,
        "refund_payment_method_id": "PM-60001",
    }
    call(sandbox, "create_return", quantity=2, **args)
    with pytest.raises(ToolError, match="has 1 unit"):
        call(sandbox, "create_return", quantity=2, **args)
    assert sandbox.get_one(OrderItem, "OI-600011").returned_quantity == 2
    assert count_rows(sandbox, Return, order_id=order.id) == 1


def test_create_return_refuses_an_undelivered_order(sandbox: Session) -> None:
    customer = make_customer(sandbox)
    order = make_order(sandbox, customer, status="shipped", shipment="in_transit")
    verify(sandbox, customer)
    with pytest.raises(ToolError, match="only delivered orders"):
        call(
            sandbox,
            "create_return",
            order_id=order.id,
            order_item_id="OI-600011",
            quantity=1,
            reason="defective",
            waive_return_fee=True,
            refund_payment_method_id="PM-60001",
        )
    assert count_rows(sandbox, Return, order_id=order.id) == 0


# --- money ----------------------------------------------------------------------------------------


def test_issue_refund_to_another_customers_payment_method_is_refused(sandbox: Session) -> None:
    customer = make_customer(sandbox)
    order = delivered_order(sandbox, customer)
    verify(sandbox, customer)
    with pytest.raises(ToolError, match="does not belong to customer CU-60001"):
        call(
            sandbox,
            "issue_refund",
            order_id=order.id,
            amount_cents=1000,
            payment_method_id="PM-10001",
            reason="price_adjustment",
        )
    assert count_rows(sandbox, Refund, order_id=order.id) == 0


def test_issue_refund_cannot_exceed_what_is_left_to_refund(sandbox: Session) -> None:
    customer = make_customer(sandbox)
    order = make_order(sandbox, customer, status="shipped", shipment="lost")
    verify(sandbox, customer)
    args = {"order_id": order.id, "payment_method_id": "PM-60001", "reason": "lost_package"}
    first = call(sandbox, "issue_refund", amount_cents=20000, **args)
    assert (first["refund_id"], first["amount_cents"]) == ("RF-90001", 20000)
    with pytest.raises(ToolError, match="has 9900 cents left"):
        call(sandbox, "issue_refund", amount_cents=10000, **args)
    assert count_rows(sandbox, Refund, order_id=order.id) == 1


def test_issue_store_credit_adds_to_the_balance(sandbox: Session) -> None:
    customer = make_customer(sandbox)
    order = delivered_order(sandbox, customer, date(2026, 9, 29))
    verify(sandbox, customer)
    view = call(
        sandbox,
        "issue_store_credit",
        customer_id=customer.id,
        amount_cents=2990,
        reason="delay_compensation",
        order_id=order.id,
    )
    assert (view["amount_cents"], view["balance_cents"]) == (2990, 2990)
    assert sandbox.get_one(Customer, customer.id).store_credit_cents == 2990
    assert count_rows(sandbox, StoreCredit, order_id=order.id, reason="delay_compensation") == 1


def test_delay_compensation_must_name_the_order(sandbox: Session) -> None:
    customer = make_customer(sandbox)
    verify(sandbox, customer)
    with pytest.raises(ToolError, match="must name the delayed order"):
        call(
            sandbox,
            "issue_store_credit",
            customer_id=customer.id,
            amount_cents=500,
            reason="delay_compensation",
        )
    assert sandbox.get_one(Customer, customer.id).store_credit_cents == 0


# --- shipping -------------------------------------------------------------------------------------


def test_reship_lost_order_reserves_stock_and_creates_a_shipment(sandbox: Session) -> None:
    customer = make_customer(sandbox)
    order = make_order(sandbox, customer, status="shipped", shipment="lost")
    level = stock(sandbox, "PR-10013")
    level.on_hand, level.reserved = 5, 0
    sandbox.commit()
    verify(sandbox, customer)
    view = call(sandbox, "reship_order", order_id=order.id)
    assert (view["shipment_id"], view["status"], view["carrier"], view["tracking_number"]) == (
        "SH-90001",
        "label_created",
        "UPS",
        "VL60001R2",
    )
    assert stock(sandbox, "PR-10013").reserved == 1
    assert call(sandbox, "track_shipment", tracking_number="vl60001r2")["order_id"] == order.id


def test_reship_is_refused_when_out_of_stock(sandbox: Session) -> None:
    customer = make_customer(sandbox)
    order = make_order(sandbox, customer, status="shipped", shipment="lost")
    level = stock(sandbox, "PR-10013")
    level.on_hand = level.reserved
    sandbox.commit()
    verify(sandbox, customer)
    with pytest.raises(ToolError, match="out of stock in the EAST warehouse"):
        call(sandbox, "reship_order", order_id=order.id)
    assert count_rows(sandbox, Shipment, order_id=order.id) == 1


def test_reship_is_refused_unless_the_parcel_was_lost(sandbox: Session) -> None:
    customer = make_customer(sandbox)
    order = make_order(sandbox, customer, status="shipped", shipment="in_transit")
    verify(sandbox, customer)
    with pytest.raises(ToolError, match="latest shipment is in_transit"):
        call(sandbox, "reship_order", order_id=order.id)


# --- warranty -------------------------------------------------------------------------------------


def test_check_warranty_adds_the_tier_extension_and_protection_plan(sandbox: Session) -> None:
    customer = make_customer(sandbox, tier="platinum")
    delivered_order(
        sandbox, customer, date(2025, 7, 14), lines=(("PR-10025", 1, 39900),), protection_plan=True
    )
    view = call(sandbox, "check_warranty", order_item_id="OI-600011")
    assert (view["manufacturer_months"], view["tier_extension_months"], view["protection_plan_months"]) == (
        12,
        12,
        24,
    )
    assert view["coverage_ends_on"] == "2029-07-14"
    assert view["covered_today"] and view["accidental_damage_covered"]


def test_check_warranty_reports_an_expired_warranty(sandbox: Session) -> None:
    customer = make_customer(sandbox, tier="gold")
    delivered_order(sandbox, customer, date(2025, 8, 20), lines=(("PR-10038", 1, 9900),))
    view = call(sandbox, "check_warranty", order_item_id="OI-600011")
    assert view["coverage_ends_on"] == "2026-08-20"
    assert not view["covered_today"]


def test_file_warranty_claim_allows_one_open_claim_per_item(sandbox: Session) -> None:
    customer = make_customer(sandbox)
    delivered_order(sandbox, customer, date(2026, 3, 1))
    verify(sandbox, customer)
    args = {"order_item_id": "OI-600011", "issue_type": "defect"}
    claim = call(
        sandbox, "file_warranty_claim", resolution="repair", description="left ear cup cuts out", **args
    )
    assert (claim["claim_id"], claim["status"], claim["resolution"]) == ("WC-90001", "open", "repair")
    with pytest.raises(ToolError, match="WC-90001 is still open"):
        call(sandbox, "file_warranty_claim", resolution="replacement", description="again", **args)
    assert count_rows(sandbox, WarrantyClaim, order_item_id="OI-600011") == 1


def test_warranty_needs_a_delivered_item(sandbox: Session) -> None:
    customer = make_customer(sandbox)
    make_order(sandbox, customer, status="shipped", shipment="in_transit")
    with pytest.raises(ToolError, match="has not been delivered"):
        call(sandbox, "check_warranty", order_item_id="OI-600011")


@pytest.mark.parametrize(
    ("start", "months", "end"),
    [
        (date(2025, 1, 31), 1, date(2025, 2, 28)),
        (date(2024, 1, 31), 1, date(2024, 2, 29)),
        (date(2025, 11, 15), 26, date(2028, 1, 15)),
    ],
)
def test_add_months_clamps_to_the_end_of_the_month(start: date, months: int, end: date) -> None:
    assert add_months(start, months) == end


# --- support --------------------------------------------------------------------------------------


def test_product_ticket_without_an_account_needs_no_verification(sandbox: Session) -> None:
    view = call(
        sandbox,
        "create_support_ticket",
        category="product_question",
        summary="Dolby Vision?",
        product_id="PR-10040",
    )
    assert (view["ticket_id"], view["customer_id"], view["status"]) == ("TK-90001", None, "open")


def test_order_ticket_takes_the_orders_customer_and_needs_verification(sandbox: Session) -> None:
    customer = make_customer(sandbox)
    order = delivered_order(sandbox, customer, date(2026, 9, 29))
    args = {"category": "missing_package", "summary": "never arrived", "order_id": order.id}
    with pytest.raises(ToolError, match="not verified"):
        call(sandbox, "create_support_ticket", **args)
    verify(sandbox, customer)
    view = call(sandbox, "create_support_ticket", **args)
    assert view["customer_id"] == customer.id
    assert count_rows(sandbox, SupportTicket, order_id=order.id) == 1


def test_second_pending_approval_request_is_refused(sandbox: Session) -> None:
    customer = make_customer(sandbox)
    order = delivered_order(sandbox, customer, date(2026, 9, 19), lines=(("PR-10002", 1, 189900),))
    verify(sandbox, customer)
    args = {
        "order_id": order.id,
        "kind": "return",
        "amount_cents": 189900,
        "summary": "laptop return",
        "order_item_id": "OI-600011",
    }
    assert call(sandbox, "create_approval_request", **args)["status"] == "pending"
    with pytest.raises(ToolError, match="already pending"):
        call(sandbox, "create_approval_request", **args)
    assert count_rows(sandbox, ApprovalRequest, order_id=order.id) == 1


# --- catalogue and reads --------------------------------------------------------------------------


def test_search_products_matches_name_words_within_a_category(sandbox: Session) -> None:
    found = call(sandbox, "search_products", query="quietwave", category="headphones")
    assert [p["product_id"] for p in found] == ["PR-10013", "PR-10014"]
    assert all(len(p["stock"]) == 2 for p in found)


def test_list_orders_is_newest_first(sandbox: Session) -> None:
    customer = make_customer(sandbox)
    delivered_order(sandbox, customer)
    older = make_order(sandbox, customer, status="delivered", order_id="OR-60002")
    older.placed_at = datetime(2026, 5, 1, 9, 0)
    sandbox.commit()
    assert [o["order_id"] for o in call(sandbox, "list_orders", customer_id=customer.id)] == [
        "OR-60001",
        "OR-60002",
    ]


def test_unknown_order_names_the_bad_id(sandbox: Session) -> None:
    with pytest.raises(ToolError, match="Order OR-1 not found"):
        call(sandbox, "get_order", order_id="OR-1")


def test_tool_arguments_are_validated_before_the_tool_runs() -> None:
    tool = domain.tools_by_name["cancel_order"]
    with pytest.raises(InvalidArgumentsError, match="reason"):
        tool.validate({"order_id": "OR-10001", "reason": "bored"})


def test_tool_arguments_keep_annotated_constraints() -> None:
    """`Annotated[int, Field(gt=0)]` must reach the argument model (needs `include_extras=True` upstream)."""
    tool = domain.tools_by_name["create_return"]
    with pytest.raises(InvalidArgumentsError, match="quantity"):
        tool.validate(
            {
                "order_id": "OR-10001",
                "order_item_id": "OI-10001",
                "quantity": 0,
                "reason": "defective",
                "waive_return_fee": True,
                "refund_payment_method_id": "PM-10001",
            }
        )
