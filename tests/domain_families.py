"""Scenario-family draws made as the generator makes them, and the checks every domain's tasks share."""

from __future__ import annotations

import random
from collections.abc import Collection

import sqlglot
from sqlglot import exp

from env_server.domain import Domain, ScenarioContext, ScenarioFamily, ScenarioUnavailable
from env_server.execution import check_select
from env_server.generation import Draw, entity_ids, generate
from env_server.generation.generator import _Worker, _worker
from env_server.scoring.scorer import Scorer
from env_server.validation import validate_task
from shared.tasks import Task

#: Functions that exist on SQLite only (or mean something else on PostgreSQL).
SQLITE_ONLY = {"strftime", "julianday", "date", "datetime", "time", "ifnull", "printf", "instr", "unixepoch"}


def generator_state(domain: Domain) -> _Worker:
    """The generator's per-process state for this very `domain` object: scorer, seed rows, benchmark IDs."""
    list(generate(domain, n=0, seed=0))  # hands `domain` to the generator without drawing anything
    return _worker(domain.name)


def family_context(domain: Domain, family: ScenarioFamily, seed: int, index: int) -> ScenarioContext:
    """The context of draw `index` of a run seeded with `seed`, as `groundstate tasks generate` builds it."""
    state = generator_state(domain)
    return ScenarioContext(
        domain_name=domain.name,
        family=family.name,
        index=index,
        rng=random.Random(f"{seed}:{index}"),
        now=domain.now,
        benchmark_ids=state.benchmark_ids,
        seed_ids=state.seed_ids,
        seed_tables=state.seed_tables,
    )


def family_builds(domain: Domain, family: ScenarioFamily, seed: int, n: int) -> list[Task]:
    """`n` unvalidated builds of one family (unavailable draws skipped)."""
    tasks = []
    for i in range(n):
        try:
            tasks.append(family.build(family_context(domain, family, seed, i)))
        except ScenarioUnavailable:
            continue
    return tasks


def kept_tasks(draws: list[Draw], domain: Domain) -> list[Task]:
    """The tasks of a generator run's draws, after checking what every run must give.

    At most a quarter of the families' worth of draws is discarded; the tasks are `train` tasks of `domain`,
    both action and analytics, with distinct ids.
    """
    discarded = [d for d in draws if d.task is None]
    assert len(discarded) <= len(domain.families) // 4, [d.discarded for d in discarded]
    tasks = [d.task for d in draws if d.task is not None]
    assert {t.split for t in tasks} == {"train"} and {t.domain for t in tasks} == {domain.name}
    assert {t.kind for t in tasks} == {"action", "analytics"}
    assert len({t.id for t in tasks}) == len(tasks)
    return tasks


def assert_valid(task: Task, domain: Domain, scorer: Scorer) -> None:
    """`task` passes every check of `groundstate tasks validate`."""
    report = validate_task(task, domain, scorer)
    assert report.passed, (task.id, [(c.name, c.detail) for c in report.checks if not c.passed])


def assert_portable_analytics(task: Task, tables: Collection[str]) -> None:
    """An analytics task whose gold SQL reads only `tables` the same way on SQLite and PostgreSQL.

    It names no entity (generation withholds the IDs of benchmark tasks) and has a question to ask.
    """
    assert task.analytics is not None, task.id
    sql = task.analytics.gold_sql
    for dialect in ("sqlite", "postgres"):
        check_select(sql, tables, dialect)
    functions = {
        (f.name if isinstance(f, exp.Anonymous) else f.sql_name()).lower()
        for f in sqlglot.parse_one(sql, read="postgres").find_all(exp.Func)
    }
    assert not functions & SQLITE_ONLY, (task.id, functions & SQLITE_ONLY)
    assert not set(entity_ids(task.model_dump(mode="json"))), task.id
    assert task.user.script and task.description and task.difficulty_tags
