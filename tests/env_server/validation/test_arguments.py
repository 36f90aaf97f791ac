"""Argument sensitivity: which variants a gold write has, and how determined_by settles what they change."""

from __future__ import annotations

from typing import Literal

from pydantic import create_model

from env_server.validation.arguments import changed_columns, enum_values, settle, variants
from shared.models import DiffEntry


def test_variants_remove_optional_arguments_and_swap_enumerated_values() -> None:
    model = create_model(
        "Args",
        account_id=(str, ...),
        topic=(Literal["fees", "fraud"], ...),
        priority=(Literal["normal", "high"] | None, None),
        note=(str, ""),
    )
    found = dict(variants(model, {"account_id": "AC-1", "topic": "fees", "note": "x"}))
    assert set(found) == {"without note", "with topic=fraud", "with priority=normal", "with priority=high"}
    assert found["without note"] == {"account_id": "AC-1", "topic": "fees"}
    assert found["with topic=fraud"]["topic"] == "fraud"
    assert enum_values(Literal["a", "b"] | None) == ["a", "b"] and enum_values(int) == []


def test_changed_columns_pair_rows_added_on_one_side() -> None:
    entries = [
        DiffEntry(kind="wrong", table="claims", key="CLM-1", column="cause", expected="a", actual="b"),
        DiffEntry(kind="missing", table="payments", key="(new row)", expected={"amt": 5, "kind": "r"}),
        DiffEntry(kind="extra", table="payments", key="(new row)", actual={"amt": 2, "kind": "r"}),
        DiffEntry(kind="missing", table="documents", key="(new row)", expected={"doc": "x"}),
    ]
    assert changed_columns(entries) == {"claims.cause", "payments.amt", "documents.*"}


def test_the_argument_namesake_settles_what_follows_from_it() -> None:
    cols = ["claims.cause", "claims.payout_cents"]
    s = settle({"claims.cause": "policy 7.3"}, 3, "file_claim", "with cause=theft", cols)
    assert s.unsettled == () and s.settled == (("claims.cause", "policy 7.3"),)
    s = settle({"claims.coverage": "policy 7.3"}, 3, "file_claim", "with cause=theft", cols)
    assert s.unsettled == ("claims.cause", "claims.payout_cents")


def test_a_row_on_one_side_is_settled_by_its_table() -> None:
    cols = ["payments.*"]
    assert settle({}, 1, "cancel", "with refund_percent=0", cols).unsettled == ("payments.*",)
    assert (
        settle({"payments.amount_cents": "policy 5"}, 1, "cancel", "with refund_percent=0", cols).unsettled
        == ()
    )
    assert settle({"payments.*": "policy 5"}, 1, "cancel", "with refund_percent=0", cols).unsettled == ()
