"""`/ui/tasks`: the task catalogue by domain, split and kind, and one task's scenario, rules and gold."""

from __future__ import annotations

from typing import get_args

from fastapi import Request, Response

from env_server.api.deps import EpisodesDep, RegistryDep
from env_server.errors import GroundstateError
from env_server.execution import episode_tools
from env_server.ui.diffs import expected_tables
from env_server.ui.pages import form_choice, page_router, render
from env_server.ui.policy_rules import rules_for_tools
from shared.tasks import Split, TaskKind

router = page_router("/ui/tasks")
SPLITS: tuple[str, ...] = get_args(Split)
KINDS: tuple[str, ...] = get_args(TaskKind)


@router.get("")
def task_list(
    request: Request,
    registry: RegistryDep,
    domain: str | None = None,
    split: str | None = None,
    kind: str | None = None,
) -> Response:
    """Tasks filtered by domain, split and kind (an unknown domain is a 404 naming the known ones)."""
    domain = domain or None
    split, kind = form_choice(split, SPLITS, "split"), form_choice(kind, KINDS, "kind")
    tasks = [t for t in registry.tasks(domain=domain, split=split) if kind is None or t.kind == kind]
    return render(
        request,
        "tasks.html",
        tasks=tasks,
        domains=[d.name for d in registry.domains],
        chosen={"domain": domain, "split": split, "kind": kind},
    )


@router.get("/{task_id}")
def task_page(request: Request, task_id: str, registry: RegistryDep, episodes: EpisodesDep) -> Response:
    """One task: user scenario, the policy rules its gold tools fall under, gold actions, expected changes.

    The expected changes are what scoring compares against (the scorer replays the gold actions once on a
    fresh sandbox of its own and caches the result); a task whose gold actions fail shows why instead.
    """
    task = registry.task(task_id)
    domain = registry.domain(task.domain)
    expected, gold_rows, problem = None, None, None
    try:
        expected = expected_tables(episodes.scorer.expected(task, domain))
        if task.kind == "analytics":
            gold_rows = episodes.scorer.gold_rows(task, domain)
    except GroundstateError as exc:
        problem = exc.message
    tools = episode_tools(task, domain)
    return render(
        request,
        "task.html",
        task=task,
        gold=[(a, tools[a.name].kind if a.name in tools else "?") for a in task.gold_actions],
        rules=rules_for_tools(domain.policy, (a.name for a in task.gold_actions)),
        policy=domain.policy,
        expected=expected,
        gold_rows=gold_rows,
        problem=problem,
        recent=episodes.store.list_episodes(task_id=task.id, limit=20),
    )
