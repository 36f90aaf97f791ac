"""`/v1/tasks`: the task catalogue (gold actions only on request, for evaluators and generators)."""

from typing import Literal

from fastapi import APIRouter, Query

from env_server.api.deps import EpisodesDep, RegistryDep
from env_server.api.responses import BODY, COMMON, error_responses
from env_server.generation.minting import mint
from env_server.store.minted import MintedTasks
from env_server.validation.reference import reference_trajectory
from shared.models import MintRequest, MintResult, ReferenceTrajectory
from shared.tasks import Task, TaskPublic

router = APIRouter(prefix="/v1/tasks", tags=["tasks"])


@router.get("", operation_id="tasks-list", responses=error_responses(*COMMON, 404, 422))
def list_tasks(
    registry: RegistryDep,
    domain: str | None = None,
    split: Literal["train", "test"] | None = None,
) -> list[TaskPublic]:
    """Tasks, filtered by domain and split, without their reference solutions."""
    return [t.public() for t in registry.tasks(domain=domain, split=split)]


@router.get("/{task_id}", operation_id="tasks-get", responses=error_responses(*COMMON, 404, 422))
def get_task(
    task_id: str,
    registry: RegistryDep,
    include_gold: bool = Query(
        default=False, description="Include gold actions (never show them to agents)."
    ),
) -> Task | TaskPublic:
    """One task; the full file with `include_gold=true`."""
    task = registry.task(task_id)
    return task if include_gold else task.public()


@router.get(
    "/{task_id}/reference", operation_id="tasks-reference", responses=error_responses(*COMMON, 404, 422)
)
def get_reference(task_id: str, episodes: EpisodesDep) -> ReferenceTrajectory:
    """The task's reference conversation: what a policy-following agent does and says.

    Never show it to an agent: it holds the gold. Validation requires it to score 1; `replay` plays it.
    """
    task = episodes.registry.task(task_id)
    return reference_trajectory(task, episodes.registry.domain(task.domain), episodes.scorer)


@router.post("/mint", operation_id="tasks-mint", responses=error_responses(*COMMON, *BODY, 404))
def mint_tasks(request: MintRequest, episodes: EpisodesDep) -> MintResult:
    """Generate, validate and store fresh train tasks from a domain's scenario families.

    Every draw passes every check of `tasks validate` (the adversarial suite included) on this server's
    sandbox backend before it is stored; from then on every worker serves it like a built-in task. The
    caller names families, never a task: nothing it sends becomes part of a reward. Takes about a second a
    task (each is replayed and attacked), so ask for a step's worth at a time.
    """
    domain = episodes.registry.domain(request.domain)
    return mint(request, domain, episodes.scorer, MintedTasks(episodes.store))
