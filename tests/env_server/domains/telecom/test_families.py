"""Telecom scenario families: generated tasks validate, stay off the written tasks' entities, and the dual
control families leave the fix to the customer (`actor: user` gold, made by the script's own line).

Each family's draws differ, and the gold of every draw changes what the policy says it should, computed
here again from the draw's own rows (`initial_patch`) and the policy's rules, not read off the gold.
"""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest

from env_server.domains.telecom import domain
from env_server.domains.telecom.factories import puk_of
from env_server.domains.telecom.models import ROAMING_DAY_CENTS
from env_server.domains.telecom.seed import PLANS
from env_server.generation import Draw, entity_ids, generate
from env_server.scoring.diff import StateChanges
from env_server.validation import validate_task
from shared.tasks import Task
from tests.domain_families import family_builds, generator_state

PER_FAMILY = 4
FAMILIES = {
    "phone-setting", "router-fix", "credit-elsewhere", "roaming", "plan-change", "outage-ticket",
    "outage-credit", "sim-unblock", "lost-phone",
}  # fmt: skip
DUAL_CONTROL = {"phone-setting", "router-fix", "roaming", "sim-unblock"}
PLAN = {p.plan_id: p for p in PLANS}
TODAY = domain.now.date()


@pytest.fixture(scope="module")
def draws() -> list[Draw]:
    return list(generate(domain, n=PER_FAMILY * len(domain.families), seed=7, workers=1))


def test_every_draw_is_a_valid_train_task_and_each_family_is_drawn(draws: list[Draw]) -> None:
    assert [d.discarded for d in draws if d.task is None] == []
    assert {f.name for f in domain.families} == FAMILIES
    assert {d.family for d in draws} == FAMILIES
    assert {d.task.split for d in draws if d.task} == {"train"}


def test_generated_entities_are_fresh(draws: list[Draw]) -> None:
    written = {i for t in domain.tasks for i in entity_ids(t.model_dump(mode="json"))}
    seed_ids = generator_state(domain).seed_ids
    for d in draws:
        assert d.task is not None
        patched = {i for rows in d.task.initial_patch.values() for row in rows for i in entity_ids(row)}
        fresh = {row["customer_id"] for row in d.task.initial_patch["customers"]}
        assert fresh and not fresh & (written | seed_ids)
        # Every entity the task mentions is one of its own fresh rows or a seeded plan.
        mentioned = set(entity_ids(d.task.model_dump(mode="json")))
        assert not (mentioned - patched) & written, d.task.id


def test_dual_control_gold_ends_with_the_customers_fix_made_by_their_script(draws: list[Draw]) -> None:
    for d in draws:
        assert d.task is not None
        user_gold = [(a.name, a.arguments) for a in d.task.gold_actions if a.actor == "user"]
        if d.family not in DUAL_CONTROL:
            assert user_gold == []
            continue
        assert user_gold and d.task.gold_actions[-len(user_gold) :] == [
            a for a in d.task.gold_actions if a.actor == "user"
        ]
        scripted = [(a.name, a.arguments) for line in d.task.user.script if not isinstance(line, str)
                    for a in line.actions]  # fmt: skip
        assert scripted == user_gold
        assert all(
            a.actor != "user" or a.name in {t.name for t in domain.user_tools} for a in d.task.gold_actions
        )


def test_the_refusal_changes_nothing_and_its_wrong_trajectory_credits(draws: list[Draw]) -> None:
    for d in draws:
        if d.family == "credit-elsewhere":
            assert d.task is not None
            assert [a.name for a in d.task.gold_actions] == ["find_customer", "check_outages"]
            assert [a.name for a in d.task.wrong_actions] == ["verify_customer", "add_outage_credit"]
            assert d.task.communicate == [d.task.initial_patch["customers"][0]["area"]]


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_the_draws_of_a_family_differ(family: str) -> None:
    """Twelve draws give at least three scenarios (what they are about, what the agent must tell)."""
    (fam,) = [f for f in domain.families if f.name == family]
    builds = family_builds(domain, fam, seed=5, n=12)
    assert len(builds) == 12
    assert len({(t.description, tuple(t.communicate)) for t in builds}) >= 3
    assert len({t.initial_patch["customers"][0]["customer_id"] for t in builds}) == 12


def _line(task: Task, kind: str) -> dict[str, Any]:
    (row,) = [r for r in task.initial_patch["lines"] if PLAN[r["plan_id"]].kind == kind]
    return row


def _due_bill(task: Task, line_id: str) -> dict[str, Any]:
    (row,) = [b for b in task.initial_patch["bills"] if b["line_id"] == line_id and b["status"] == "due"]
    return row


def _should(family: str, task: Task) -> dict[str, Any]:
    """What the gold must change, worked out from the draw's rows and the policy (rules 2 to 7)."""
    patch = task.initial_patch
    mobile = _line(task, "mobile")
    if family == "roaming":  # rule 4: roaming to the trip's last day, $10 a day from today unless included
        until = date.fromisoformat(task.user.known_info["trip_last_day"])
        assert 0 <= (until - TODAY).days <= 90
        should: dict[str, Any] = {
            "lines": {mobile["line_id"]: {"roaming_enabled": True, "roaming_until": until.isoformat()}},
            "devices": {patch["devices"][0]["device_id"]: {"data_roaming": True}},
        }
        if not PLAN[mobile["plan_id"]].roaming_included:
            bill = _due_bill(task, mobile["line_id"])
            days = (until - TODAY).days + 1
            should["bills"] = {
                bill["bill_id"]: {"amount_cents": bill["amount_cents"] + days * ROAMING_DAY_CENTS}
            }
            assert task.communicate == [f"${days * ROAMING_DAY_CENTS // 100}"]
        return should
    if family == "plan-change":  # rule 6: the plan the customer names, of the line's own kind
        (target,) = [p for p in PLANS if f" to {p.name}." in str(task.user.script[0])]
        line = _line(task, target.kind)
        assert line["plan_id"] != target.plan_id
        assert task.communicate == [f"${target.monthly_cents // 100}"]
        return {"lines": {line["line_id"]: {"plan_id": target.plan_id}}}
    (outage,) = patch.get("outages", [{}])
    if family == "outage-ticket":  # rule 3: an outage ticket on the line the active outage hits
        assert outage["status"] == "active" and outage["area"] == patch["customers"][0]["area"]
        fix = date.fromisoformat(outage["expected_fix"])
        assert task.communicate == [f"{fix.day} {fix:%B}"]
        return {"tickets": [{"line_id": _line(task, outage["kind"])["line_id"], "category": "outage"}]}
    if family == "outage-credit":  # rule 5: price x days (both ends included) / 30, rounded down
        assert outage["status"] == "resolved" and outage["area"] == patch["customers"][0]["area"]
        line = _line(task, outage["kind"])
        days = (date.fromisoformat(outage["ended"]) - date.fromisoformat(outage["started"])).days + 1
        cents = PLAN[line["plan_id"]].monthly_cents * days // 30
        bill = _due_bill(task, line["line_id"])["bill_id"]
        return {"credits": [{"bill_id": bill, "amount_cents": cents, "outage_id": outage["outage_id"]}]}
    if family == "sim-unblock":  # rule 2: the PUK told, the customer types it, the SIM is ready again
        device = patch["devices"][0]
        assert device["sim_state"] == "pin_locked"
        assert task.communicate == [puk_of(mobile["line_id"])]
        assert puk_of(mobile["line_id"]) not in str(task.user.known_info) + str(task.user.script[:2])
        return {"devices": {device["device_id"]: {"sim_state": "ready"}}}
    assert family == "lost-phone"  # rule 7: the mobile line suspended, the home internet left alone
    return {"lines": {mobile["line_id"]: {"status": "suspended"}}}


def _changed(changes: StateChanges) -> dict[str, Any]:
    """The gold's changes as `_should` writes them: new values of updated rows, added rows without ids."""
    out: dict[str, Any] = {}
    for table, change in changes.items():
        assert not change.removed
        if change.added:
            out[table] = [
                {k: v for k, v in r.items() if not str(v).startswith("<new:")} for r in change.added
            ]
        if change.updated:
            out[table] = {
                key[0]: {c: after for c, (_, after) in cols.items()} for key, cols in change.updated.items()
            }
    return out


@pytest.mark.parametrize(
    "family", ["roaming", "plan-change", "outage-ticket", "outage-credit", "sim-unblock", "lost-phone"]
)
def test_the_gold_changes_what_the_policy_says(family: str) -> None:
    (fam,) = [f for f in domain.families if f.name == family]
    scorer = generator_state(domain).scorer
    for task in family_builds(domain, fam, seed=9, n=8):
        assert _changed(scorer.expected(task, domain)) == _should(family, task), task.id


def test_an_identity_check_that_gates_the_puk_read_is_needed_and_one_that_gates_nothing_is_not() -> None:
    """`minus-one-write`: the PUK read leaves no state, so its identity check counts as needed only because
    the read is refused without it; drop the read and the same check is flagged as needless."""
    (fam,) = [f for f in domain.families if f.name == "sim-unblock"]
    task = family_builds(domain, fam, seed=3, n=1)[0]
    scorer = generator_state(domain).scorer
    checks = {c.name: c for c in validate_task(task, domain, scorer).checks}
    assert checks["minus-one-write"].passed, checks["minus-one-write"].detail
    unread = [a for a in task.gold_actions if a.name != "get_sim_puk"]
    assert [a.name for a in unread] == ["find_customer", "run_diagnostics", "verify_customer", "enter_puk"]
    bare = task.model_copy(update={"id": "telecom-gen-sim-unblock-999999", "gold_actions": unread})
    checks = {c.name: c for c in validate_task(bare, domain, scorer).checks}
    assert not checks["minus-one-write"].passed
    assert checks["minus-one-write"].detail == "state passes without #2 verify_customer"
