"""The scenario kit of the domain API: typed actions and users, the caller, wording, patches, identity."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date, datetime
from typing import Any

import pytest
from sqlalchemy import ForeignKey, String, create_engine
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column

from env_server.domain import (
    Caller,
    GoldAction,
    IdentityVerificationTable,
    ScenarioPatch,
    ToolContext,
    UserSpec,
    call,
    day_month,
    day_month_year,
    dollars,
    dollars_and_cents,
    is_verified,
    month_day,
    month_day_year,
    named_metadata,
    user_spec,
    whole_dollars,
)
from tests.domain_families import family_context
from tests.toy_domain import domain


def test_call_builds_a_typed_gold_action() -> None:
    action = call("cancel_booking", booking_id="BK-70001", refund_percent=50)
    assert action == GoldAction(
        name="cancel_booking", arguments={"booking_id": "BK-70001", "refund_percent": 50}
    )


def test_user_spec_fills_the_optional_parts_and_validates() -> None:
    spec = user_spec("Ana, brisk", "Cancel BK-1", ["Hi, cancel BK-1."], {"email": "a@x.example"})
    assert spec == UserSpec(
        persona="Ana, brisk",
        goal="Cancel BK-1",
        known_info={"email": "a@x.example"},
        unknown_info=[],
        instructions="",
        script=["Hi, cancel BK-1."],
    )
    with pytest.raises(ValueError, match="script"):
        user_spec("Ana", "Cancel", [])


class _Member(Caller):
    identity_tool = "verify_member"

    def __init__(self, member_id: str, zip_code: str) -> None:
        self.member_id, self.zip_code = member_id, zip_code

    def identity_args(self) -> dict[str, Any]:
        return {"member_id": self.member_id, "zip_code": self.zip_code}

    def identity_facts(self) -> dict[str, Any]:
        return {"zip_code": self.zip_code}

    def identity_line(self) -> str:
        return f"My ZIP is {self.zip_code}."

    def persona(self, detail: str = "") -> str:
        return f"Member {self.member_id}" + (f"; {detail}" if detail else "")


def test_a_caller_verifies_knows_and_becomes_the_user() -> None:
    member = _Member("M-70001", "02139")
    assert member.verify() == call("verify_member", member_id="M-70001", zip_code="02139")
    assert member.known(order="OR-1") == {"zip_code": "02139", "order": "OR-1"}
    spec = member.user(
        "Refund OR-1", ["Hi.", member.identity_line()], detail="polite", known={"order": "OR-1"}
    )
    assert spec.persona == "Member M-70001; polite"
    assert spec.known_info == {"zip_code": "02139", "order": "OR-1"}
    assert spec.script == ["Hi.", "My ZIP is 02139."]


@pytest.mark.parametrize(
    ("cents", "said", "with_cents", "whole"),
    [
        (145_000, "$1,450", "$1,450.00", "$1,450"),
        (29_250, "$292.50", "$292.50", "$292"),
        (5, "$0.05", "$0.05", "$0"),
    ],
)
def test_money_wording(cents: int, said: str, with_cents: str, whole: str) -> None:
    assert (dollars(cents), dollars_and_cents(cents), whole_dollars(cents)) == (said, with_cents, whole)


def test_date_wording() -> None:
    day = date(1988, 5, 4)
    assert (day_month(day), day_month_year(day)) == ("4 May", "4 May 1988")
    assert (month_day(day), month_day_year(day)) == ("May 4", "May 4, 1988")
    assert month_day(datetime(2026, 10, 9, 14, 30)) == "October 9"


class _Base(DeclarativeBase):
    metadata = named_metadata()


class _Person(_Base):
    __tablename__ = "people"
    person_id: Mapped[str] = mapped_column(String(10), primary_key=True)


class _Verification(IdentityVerificationTable, _Base):
    person_id: Mapped[str] = mapped_column(ForeignKey("people.person_id"))


class _OrderedScene(ScenarioPatch):
    table_order = ("people", "a_visits")


def test_a_patch_adds_rows_and_keeps_its_table_order_without_dropping_tables() -> None:
    ctx = family_context(domain, domain.families[0], seed=3, index=0)
    scene = _OrderedScene(ctx).add(
        {"a_visits": [{"visit_id": "V-1"}]}, people=[{"person_id": "P-1"}], notes=[]
    )
    scene.add(extra=[{"id": "X-1"}], a_visits=[{"visit_id": "V-2"}])
    patch = scene.initial_patch()
    assert list(patch) == ["people", "a_visits", "extra"]  # named first, unknown kept, empty left out
    assert patch["a_visits"] == [{"visit_id": "V-1"}, {"visit_id": "V-2"}]
    unordered = ScenarioPatch(ctx).add(a_visits=[{"visit_id": "V-1"}], people=[{"person_id": "P-1"}])
    assert list(unordered.initial_patch()) == ["a_visits", "people"]  # no order: as added


@pytest.fixture
def tool_ctx() -> Iterator[ToolContext]:
    engine = create_engine("sqlite://")
    _Base.metadata.create_all(engine)
    with Session(engine) as session:
        session.add_all([_Person(person_id="P-1"), _Person(person_id="P-2")])
        session.add(_Verification(verification_id="IV-1", person_id="P-1", verified_at=datetime(2026, 1, 1)))
        session.flush()
        yield ToolContext(session=session, now=datetime(2026, 1, 1))


def test_identity_checks_look_up_the_verification_of_any_given_person(tool_ctx: ToolContext) -> None:
    assert is_verified(tool_ctx, _Verification.person_id, "P-1")
    assert is_verified(tool_ctx, _Verification.person_id, "P-2", "P-1")
    assert not is_verified(tool_ctx, _Verification.person_id, "P-2")
    assert not is_verified(tool_ctx, _Verification.person_id)
