"""Starter scenario families: the four request shapes of the written tasks, on fresh loans.

They let `POST /v1/tasks/mint` feed an adaptive curriculum on the domain small models train on. Each draw
lends a seeded book to a seeded member under a fresh loan id (`L-7xxxx`/`L-8xxxx`, above the seed's
`L-1000..L-2199`), so no generated task shares a loan with a written one.
"""

from __future__ import annotations

from env_server.domain import ScenarioContext, ScenarioFamily, conversation, patch_rows
from env_server.domains.starter.factories import LoanSpec, loan
from shared.tasks import Task

_THANKS = "Thanks, that's all."
_RENEW = (
    "Hi, could you renew my loan {a}, please?",
    "Please renew loan {a}. I need two more weeks.",
    "I haven't finished my book yet. Can you renew loan {a}?",
)
_RETURN = (
    "Hi, I'm bringing back the book on loan {a}.",
    "Please check in my returned book, loan {a}.",
    "I finished my book and I'm returning it. The loan is {a}.",
)
_RENEW_TWO = ("Please renew both of my loans, {a} and {b}.", "Could you renew loans {a} and {b}? Thanks!")
_RETURN_RENEW = (
    "I'm returning the book on loan {a}, and please renew loan {b}.",
    "Here is the book for loan {a}. Can you also renew {b}?",
)


def _loans(ctx: ScenarioContext, n: int) -> list[LoanSpec]:
    """`n` fresh active loans of one seeded member, on distinct seeded books, due within three weeks."""
    member = ctx.pick("members")["member_id"]
    books = ctx.rng.sample([b["book_id"] for b in ctx.rows("books")], n)
    today = ctx.now.date()
    return [loan(ctx.rng, ctx.new_id("L"), member, book, today) for book in books]


def _request(ctx: ScenarioContext, phrasings: tuple[str, ...], actions: list[str], tag: str) -> Task:
    """A one-request task: the member asks, the desk calls `actions` in order on the fresh loans."""
    loans = _loans(ctx, len(actions))
    ids = [spec.loan_id for spec in loans]
    said = ctx.rng.choice(phrasings).format(a=ids[0], b=ids[-1])
    goal = " and ".join(f"{name.split('_')[0]} loan {i}" for name, i in zip(actions, ids, strict=True))
    return ctx.task(
        kind="action",
        difficulty_tags=[tag],
        description=f"One request: {goal}.",
        user={
            "persona": "a library member at the desk",
            "goal": goal[0].upper() + goal[1:],
            "known_info": {"loan_ids": ids},
            "script": conversation(said, thanks=_THANKS),
        },
        initial_patch=patch_rows(*loans),
        gold_actions=[
            {"name": name, "arguments": {"loan_id": i}} for name, i in zip(actions, ids, strict=True)
        ],
    )


FAMILIES = [
    ScenarioFamily(
        name="renew", covers=("1", "3"), build=lambda ctx: _request(ctx, _RENEW, ["renew_loan"], "renew")
    ),
    ScenarioFamily(
        name="return", covers=("2", "3"), build=lambda ctx: _request(ctx, _RETURN, ["return_loan"], "return")
    ),
    ScenarioFamily(
        name="renew-two",
        covers=("1", "3"),
        build=lambda ctx: _request(ctx, _RENEW_TWO, ["renew_loan", "renew_loan"], "renew-two"),
    ),
    ScenarioFamily(
        name="return-renew",
        covers=("1", "2", "3"),
        build=lambda ctx: _request(ctx, _RETURN_RENEW, ["return_loan", "renew_loan"], "return-renew"),
    ),
]

__all__ = ["FAMILIES"]
