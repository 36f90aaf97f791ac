"""The lending desk's two tools: renew a loan, check a copy back in.

Two write tools and no reads keep the tool schemas (part of every prompt) to about 150 tokens: the starter
curriculum is for models small enough to train on a CPU.
"""

from __future__ import annotations

from datetime import date, timedelta

from env_server.domain import RowView, ToolContext, ToolError, tool
from env_server.domains.starter.models import RENEWAL_DAYS, Loan


class LoanView(RowView):
    """A loan as the desk sees it."""

    loan_id: str
    member_id: str
    book_id: str
    due_date: date
    status: str
    renewals: int


def _active_loan(ctx: ToolContext, loan_id: str) -> Loan:
    loan = ctx.get_or_refuse(Loan, loan_id, f"No loan {loan_id}")
    if loan.status != "active":
        raise ToolError(f"Loan {loan_id} was already returned")
    return loan


@tool(kind="write")
def renew_loan(ctx: ToolContext, loan_id: str) -> LoanView:
    """Renew a loan: the book is due 14 days later.

    Args:
        loan_id: the loan, e.g. "L-1234".
    """
    loan = _active_loan(ctx, loan_id)
    loan.due_date += timedelta(days=RENEWAL_DAYS)
    loan.renewals += 1
    return LoanView.of(loan)


@tool(kind="write")
def return_loan(ctx: ToolContext, loan_id: str) -> LoanView:
    """Check a returned book in and close its loan.

    Args:
        loan_id: the loan, e.g. "L-1234".
    """
    loan = _active_loan(ctx, loan_id)
    loan.status = "returned"
    return LoanView.of(loan)
