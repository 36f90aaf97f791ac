"""Toy scenario families: a transfer between two fresh accounts, and a balance-count question."""

from env_server.domain import ScenarioContext, ScenarioFamily, ScenarioUnavailable
from shared.tasks import Task


def transfer(ctx: ScenarioContext) -> Task:
    """Move an amount between two fresh accounts; some draws lack the funds (then no change is right)."""
    source, target = ctx.new_id("AC", width=4), ctx.new_id("AC", width=4)
    balance = ctx.rng.randrange(1_000, 50_000)
    amount = ctx.rng.randrange(100, 60_000)
    accounts = [
        {"id": source, "owner": "gen source", "balance_cents": balance, "status": "open"},
        {"id": target, "owner": "gen target", "balance_cents": 0, "status": "open"},
    ]
    user = {
        "persona": "a customer",
        "goal": f"move {amount} cents from {source} to {target}",
        "script": [f"Please move {amount} cents from {source} to {target}.", "Thanks."],
    }
    if amount > balance:
        if ctx.rng.random() < 0.5:
            raise ScenarioUnavailable("insufficient funds draw skipped")
        return ctx.task(
            user=user,
            initial_patch={"accounts": accounts},
            gold_actions=[{"name": "get_account", "arguments": {"account_id": source}}],
            communicate=[str(balance)],  # the decisive fact: the balance falls short of the amount
            wrong_actions=[{"name": "set_balance", "arguments": {"account_id": source, "balance_cents": 0}}],
        )
    return ctx.task(
        user=user,
        initial_patch={"accounts": accounts},
        gold_actions=[
            {
                "name": "transfer",
                "arguments": {"source_id": source, "target_id": target, "amount_cents": amount},
            }
        ],
    )


def count_rich(ctx: ScenarioContext) -> Task:
    """How many accounts hold more than a drawn threshold."""
    threshold = ctx.rng.randrange(100_000, 450_000)
    return ctx.task(
        kind="analytics",
        user={
            "persona": "an analyst",
            "goal": "count rich accounts",
            "script": [f"How many accounts hold more than {threshold} cents?"],
        },
        analytics={"gold_sql": f"SELECT COUNT(*) FROM accounts WHERE balance_cents > {threshold}"},
    )


FAMILIES = [
    ScenarioFamily(name="transfer", covers=("1",), build=transfer),
    ScenarioFamily(name="count-rich", covers=("analytics",), build=count_rich, kind="analytics"),
]
