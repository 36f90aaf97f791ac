"""`groundstate tasks generate`: draw tasks from a domain's families, validate each, keep the valid ones.

Draw i of a run uses an RNG seeded from (seed, i) and family i mod len(families), so a run is reproducible
whatever the number of worker processes. A draw is discarded, with its reason, when its family cannot build
it, when it mentions a benchmark entity, or when it fails the validation hand-written tasks pass.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from env_server.domain import Domain
from env_server.domain._family import ScenarioContext, ScenarioUnavailable, benchmark_entity_ids, entity_ids
from env_server.domain.registry import DomainRegistry
from env_server.sandbox.sqlite import SQLiteSandboxEngine
from env_server.sandbox.template import Template
from env_server.scoring.scorer import Scorer
from env_server.validation import validate_task
from shared.tasks import Task


@dataclass(frozen=True)
class Draw:
    """The outcome of one draw: a valid task, or why there is none."""

    index: int
    family: str
    task: Task | None
    discarded: str | None = None


@dataclass
class _Worker:
    """Per-process state: the domain, a scorer on in-memory SQLite, and the benchmark's entity IDs."""

    domain: Domain
    scorer: Scorer
    benchmark_ids: frozenset[str]
    seed_ids: frozenset[str]
    seed_tables: dict[str, list[dict[str, Any]]]


#: Domains handed to `generate`, so draws use that exact object (forked workers inherit this table).
_DOMAINS: dict[str, Domain] = {}


@cache
def _worker(domain_name: str) -> _Worker:
    given = _DOMAINS.get(domain_name)
    registry = DomainRegistry([given]) if given else DomainRegistry.discover(only=[domain_name])
    domain = registry.domain(domain_name)
    sandboxes = SQLiteSandboxEngine(max_templates=64)
    snapshot = sandboxes.initial_snapshot(Template(domain))
    seed_tables = {name: list(rows.values()) for name, rows in snapshot.tables.items()}
    seed_ids = frozenset(str(k[0]) for rows in snapshot.tables.values() for k in rows if len(k) == 1)
    return _Worker(
        domain,
        Scorer(sandboxes),
        benchmark_entity_ids(registry.tasks(domain=domain_name)),
        seed_ids,
        seed_tables,
    )


def draw(
    domain_name: str, seed: int, index: int, family_name: str | None = None, scorer: Scorer | None = None
) -> Draw:
    """Build and validate draw `index` of a run (in a worker process, or in the server when minting).

    Args:
        family_name: the family to draw from; by default family `index` mod the number of families.
        scorer: validates the draw; by default the worker's own (in-memory SQLite). The server passes its
            own, so a minted task is validated on the backend that will serve it.
    """
    w = _worker(domain_name)
    family = (
        w.domain.families[index % len(w.domain.families)]
        if family_name is None
        else next(f for f in w.domain.families if f.name == family_name)
    )
    ctx = ScenarioContext(
        domain_name=domain_name,
        family=family.name,
        index=index,
        rng=random.Random(f"{seed}:{index}"),
        now=w.domain.now,
        benchmark_ids=w.benchmark_ids,
        seed_ids=w.seed_ids,
        seed_tables=w.seed_tables,
    )
    try:
        task = family.build(ctx)
    except ScenarioUnavailable as exc:
        return Draw(index, family.name, None, f"unavailable: {exc}")
    if task.split != "train":  # a family's bug must never put a task into the benchmark or take one from it
        return Draw(index, family.name, None, f"family built a {task.split} task, not a train task")
    leaked = sorted(set(entity_ids(task.model_dump(mode="json"))) & w.benchmark_ids)
    if leaked:
        return Draw(index, family.name, None, f"uses benchmark entities {leaked[:3]}")
    report = validate_task(task, w.domain, scorer or w.scorer)
    if not report.passed:
        failed = next(c for c in report.checks if not c.passed)
        return Draw(index, family.name, None, f"validation {failed.name}: {failed.detail[:160]}")
    return Draw(index, family.name, task)


def _draw_batch(args: tuple[str, int, list[int]]) -> list[Draw]:
    domain_name, seed, indices = args
    return [draw(domain_name, seed, i) for i in indices]


def use_domain(domain: Domain) -> None:
    """Draw from this exact domain object (a server's, a test's) rather than the installed one."""
    if _DOMAINS.get(domain.name) is not domain:
        _DOMAINS[domain.name] = domain
        _worker.cache_clear()


def generate(
    domain: Domain, n: int, seed: int, workers: int = 1, max_draws: int | None = None
) -> Iterator[Draw]:
    """Yield draws in index order until `n` are valid (or `max_draws`, default 3n, are spent)."""
    if not domain.families:
        raise ValueError(f"domain {domain.name} declares no scenario families")
    use_domain(domain)
    limit = max_draws or 3 * n + 10
    batch = max(8, min(64, n // max(1, workers * 4) or 8))
    kept, start = 0, 0
    with ProcessPoolExecutor(workers) if workers > 1 else _Inline() as pool:
        while kept < n and start < limit:
            chunks = [
                (domain.name, seed, list(range(s, min(s + batch, limit))))
                for s in range(start, min(limit, start + batch * max(1, workers)), batch)
            ]
            start = chunks[-1][2][-1] + 1
            for draws in pool.map(_draw_batch, chunks):
                for d in draws:
                    if kept >= n:
                        return
                    kept += d.task is not None
                    yield d


class _Inline:
    """The `map` of a process pool, run in this process (workers=1)."""

    def __enter__(self) -> _Inline:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def map(self, fn: Any, items: list[Any]) -> Iterator[Any]:
        return map(fn, items)


def write_task(task: Task, out: Path) -> Path:
    """Write one task as `<id>.yaml`."""
    path = out / f"{task.id}.yaml"
    data = task.model_dump(mode="json", exclude_defaults=True)
    data.setdefault("split", task.split)
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return path
