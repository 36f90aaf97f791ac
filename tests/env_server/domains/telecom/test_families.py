"""Telecom scenario families: generated tasks validate, stay off the written tasks' entities, and the dual
control families leave the fix to the customer (`actor: user` gold, made by the script's own line)."""

from __future__ import annotations

import pytest

from env_server.domains.telecom import domain
from env_server.generation import Draw, entity_ids, generate
from tests.domain_families import generator_state

PER_FAMILY = 4
DUAL_CONTROL = {"phone-setting", "router-fix"}


@pytest.fixture(scope="module")
def draws() -> list[Draw]:
    return list(generate(domain, n=PER_FAMILY * len(domain.families), seed=7, workers=1))


def test_every_draw_is_a_valid_train_task_and_each_family_is_drawn(draws: list[Draw]) -> None:
    assert [d.discarded for d in draws if d.task is None] == []
    assert {d.family for d in draws} == {"phone-setting", "router-fix", "credit-elsewhere"}
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
