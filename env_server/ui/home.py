"""`/ui`: the viewer's front page — domains and task counts, recent episodes, runs and curricula."""

from __future__ import annotations

from collections import Counter

from fastapi import Request, Response

from env_server.api.deps import EpisodesDep, RegistryDep, SettingsDep
from env_server.ui.pages import page_router, render
from env_server.ui.runs import discover_runs
from env_server.ui.training import discover_training_runs

router = page_router()


@router.get("")
def index(request: Request, registry: RegistryDep, episodes: EpisodesDep, settings: SettingsDep) -> Response:
    """Where to start: the task catalogue per domain, the latest episodes, the known runs and curricula."""
    counts = Counter((t.domain, t.split, t.kind) for t in registry.tasks())
    domains = [
        (
            d.name,
            d.description,
            {(s, k): counts[(d.name, s, k)] for s in ("test", "train") for k in ("action", "analytics")},
        )
        for d in registry.domains
    ]
    recent = episodes.store.list_episodes(limit=10)
    return render(
        request,
        "index.html",
        domains=domains,
        recent=recent,
        runs=list(discover_runs(settings.runs_dirs)),
        curricula=list(discover_training_runs(settings.runs_dirs)),
        dirs=settings.runs_dirs,
    )
