"""Starter scenario families: generated tasks validate, stay off the written tasks' loans, and each asks for
exactly what its gold does."""

from __future__ import annotations

import re

import pytest

from env_server.domains.starter import domain
from env_server.generation import Draw, entity_ids, generate
from tests.domain_families import generator_state

PER_FAMILY = 5


@pytest.fixture(scope="module")
def draws() -> list[Draw]:
    return list(generate(domain, n=PER_FAMILY * len(domain.families), seed=11, workers=1))


def test_every_draw_is_a_valid_train_task_and_each_family_is_drawn(draws: list[Draw]) -> None:
    assert [d.discarded for d in draws if d.task is None] == []
    families = {d.family for d in draws}
    assert families == {"renew", "return", "renew-two", "return-renew"}
    assert {d.task.split for d in draws if d.task} == {"train"}


def test_generated_loans_are_fresh_and_the_request_names_what_the_gold_changes(draws: list[Draw]) -> None:
    written = {i for t in domain.tasks for i in entity_ids(t.model_dump(mode="json"))}
    seed_ids = generator_state(domain).seed_ids
    expected_tools = {
        "renew": ["renew_loan"],
        "return": ["return_loan"],
        "renew-two": ["renew_loan", "renew_loan"],
        "return-renew": ["return_loan", "renew_loan"],
    }
    for d in draws:
        assert d.task is not None
        loans = [row["loan_id"] for row in d.task.initial_patch["loans"]]
        assert not set(loans) & (written | seed_ids)
        assert [a.name for a in d.task.gold_actions] == expected_tools[d.family]
        assert [a.arguments["loan_id"] for a in d.task.gold_actions] == loans
        assert re.findall(r"L-\d+", d.task.user.script[0]) == loans  # asked for in the order the gold acts
