"""The domain API's shared building blocks: row views, lookups that refuse, and the common table parts."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sqlalchemy import ForeignKey
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from env_server.domain import (
    IdentityVerificationTable,
    RowView,
    ScenarioPatch,
    ToolContext,
    ToolError,
    named_metadata,
)
from tests.domain_families import family_context
from tests.domain_sandbox import seeded_session
from tests.toy_domain import domain
from tests.toy_domain.models import Account, Transfer


class AccountView(RowView):
    id: str
    owner: str
    status: str
    note: str = ""


class PortfolioView(RowView):
    owner: str
    accounts: list[AccountView]


@pytest.fixture
def ctx() -> Iterator[ToolContext]:
    with seeded_session(domain) as session:
        yield ToolContext(session=session, now=domain.now)


def test_a_view_reads_the_row_and_given_fields_take_precedence(ctx: ToolContext) -> None:
    first, second = ctx.session.get_one(Account, "AC-0001"), ctx.session.get_one(Account, "AC-0002")
    assert AccountView.of(first) == AccountView(id="AC-0001", owner="owner 1", status="open")
    assert AccountView.of(first, owner="someone", note="vip").model_dump() == {
        "id": "AC-0001",
        "owner": "someone",
        "status": "open",
        "note": "vip",
    }
    portfolio = PortfolioView.of(first, accounts=[first, second])  # nested rows are read into views too
    assert portfolio.owner == "owner 1"
    assert [a.id for a in portfolio.accounts] == ["AC-0001", "AC-0002"]


def test_get_or_refuse_returns_the_row_or_refuses_with_the_message(ctx: ToolContext) -> None:
    assert ctx.get_or_refuse(Account, "AC-0001", "no such account").owner == "owner 1"
    with pytest.raises(ToolError, match=r"^Account AC-9999 not found$"):
        ctx.get_or_refuse(Account, "AC-9999", "Account AC-9999 not found")
    with pytest.raises(ToolError, match="is not frozen"):
        ctx.get_or_refuse(Account, "AC-0001", "AC-0001 is not frozen", where=lambda a: a.status == "frozen")


def test_insert_flushes_the_new_row(ctx: ToolContext) -> None:
    transfer = Transfer(
        id="TR-90001", source_id="AC-0001", target_id="AC-0002", amount_cents=5, created_at=ctx.now
    )
    assert ctx.insert(transfer) is transfer
    assert not ctx.session.new  # flushed, not merely added
    assert ctx.session.get(Transfer, "TR-90001") is transfer


class _Base(DeclarativeBase):
    metadata = named_metadata()


class _Verification(IdentityVerificationTable, _Base):
    person_id: Mapped[str] = mapped_column(ForeignKey("people.person_id"))


def test_the_identity_verification_mixin_keeps_column_order_and_names_constraints() -> None:
    table = _Verification.__table__
    assert table.name == "identity_verifications"
    assert [c.name for c in table.columns] == ["verification_id", "person_id", "verified_at"]
    assert table.primary_key.name == "pk_identity_verifications"
    assert {fk.constraint.name for fk in table.foreign_keys} == {"fk_identity_verifications_person_id"}


def test_a_scenario_patch_collects_rows_per_table_and_draws_from_the_context_rng() -> None:
    ctx = family_context(domain, domain.families[0], seed=3, index=0)
    scene = ScenarioPatch(ctx)
    assert scene.rng is ctx.rng and scene.initial_patch() == {}
    scene.patch["accounts"].append({"id": "AC-70001"})
    assert scene.initial_patch() == {"accounts": [{"id": "AC-70001"}]}
    assert type(scene.initial_patch()) is dict


def test_from_package_takes_every_domain_field_but_the_packaged_ones() -> None:
    import dataclasses

    from env_server.domain import Domain, DomainFields

    fields = {f.name for f in dataclasses.fields(Domain)}
    assert set(DomainFields.__annotations__) == fields - {"policy", "tasks"}
    required = {
        f.name for f in dataclasses.fields(Domain) if f.default is f.default_factory is dataclasses.MISSING
    }
    assert DomainFields.__required_keys__ == required - {"policy"}
