"""Toy bank tools."""

from typing import Literal

from pydantic import BaseModel, Field
from sqlalchemy import select

from env_server.domain import ToolContext, ToolError, tool
from tests.toy_domain.models import Account, Ticket, Transfer


class AccountView(BaseModel):
    """An account as the agent sees it."""

    id: str
    owner: str
    balance_cents: int
    status: str


def _get_account(ctx: ToolContext, account_id: str) -> Account:
    account = ctx.session.get(Account, account_id)
    if account is None:
        raise ToolError(f"Account {account_id} not found")
    return account


@tool(kind="read")
def get_account(ctx: ToolContext, account_id: str) -> AccountView:
    """Look up an account.

    Args:
        account_id: the account, e.g. "AC-0001".
    """
    a = _get_account(ctx, account_id)
    return AccountView(id=a.id, owner=a.owner, balance_cents=a.balance_cents, status=a.status)


@tool(kind="write")
def set_balance(ctx: ToolContext, account_id: str, balance_cents: int = Field(ge=0)) -> AccountView:
    """Overwrite an account's balance (a correction).

    Args:
        account_id: the account, e.g. "AC-0001".
        balance_cents: the new balance in cents.
    """
    a = _get_account(ctx, account_id)
    a.balance_cents = balance_cents
    return AccountView(id=a.id, owner=a.owner, balance_cents=a.balance_cents, status=a.status)


@tool(kind="write")
def transfer(ctx: ToolContext, source_id: str, target_id: str, amount_cents: int, memo: str = "") -> str:
    """Move money between two open accounts.

    Args:
        source_id: the paying account.
        target_id: the receiving account.
        amount_cents: how much, in cents (positive).
        memo: a note for the statement.
    """
    if amount_cents <= 0:
        raise ToolError("amount_cents must be positive")
    source, target = _get_account(ctx, source_id), _get_account(ctx, target_id)
    if "frozen" in (source.status, target.status):
        raise ToolError("a frozen account cannot take part in a transfer")
    if source.balance_cents < amount_cents:
        raise ToolError(f"insufficient funds in {source_id}")
    source.balance_cents -= amount_cents
    target.balance_cents += amount_cents
    transfer_id = ctx.new_id("TR")
    ctx.session.add(
        Transfer(
            id=transfer_id,
            source_id=source_id,
            target_id=target_id,
            amount_cents=amount_cents,
            memo=memo,
            created_at=ctx.now,
        )
    )
    return transfer_id


@tool(kind="write")
def freeze_account(ctx: ToolContext, account_id: str) -> AccountView:
    """Freeze an account.

    Args:
        account_id: the account to freeze.
    """
    a = _get_account(ctx, account_id)
    a.status = "frozen"
    return AccountView(id=a.id, owner=a.owner, balance_cents=a.balance_cents, status=a.status)


@tool(kind="read")
def count_transfers(ctx: ToolContext) -> int:
    """How many transfers exist."""
    return len(ctx.session.scalars(select(Transfer.id)).all())


@tool(kind="write")
def open_ticket(
    ctx: ToolContext,
    account_id: str,
    topic: Literal["fees", "fraud", "other"],
    priority: Literal["normal", "high"] = "normal",
    note: str = "",
) -> str:
    """Open a support ticket about an account.

    Args:
        account_id: the account the ticket is about.
        topic: what the ticket is about.
        priority: how urgent it is.
        note: what the customer said.
    """
    _get_account(ctx, account_id)
    ticket_id = ctx.new_id("TK")
    ctx.session.add(Ticket(id=ticket_id, account_id=account_id, topic=topic, priority=priority, note=note))
    return ticket_id
