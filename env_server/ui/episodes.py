"""`/ui/episodes`: live and finished episodes, and one episode as a chat with its scored state diff.

An episode page reads what `GET /v1/episodes/{id}` reads (the episode service's `info`: events, the diff
so far or the scored one, the score). That call only reads the sandbox; on a worker that does not hold a
live SQLite sandbox it rebuilds it from the recorded calls, exactly as the REST API would. A disposed
episode reads `disposed` here as over REST: its events (and score, if any) stay in the store.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from fastapi import Query, Request, Response

from env_server.api.deps import EpisodesDep, RegistryDep, SettingsDep
from env_server.episodes.service import EpisodeService
from env_server.errors import BackendError, UnknownEpisodeError
from env_server.store import EpisodeRecord
from env_server.ui.diffs import KINDS, group_diff
from env_server.ui.pages import form_choice, page_router, render
from env_server.ui.runs import trial_of
from shared.models import DiffEntry, EpisodeEvent, ScoreResult, StateChange

router = page_router("/ui/episodes")
PAGE = 50
STATES = ("active", "finished", "disposed")


@router.get("")
def episode_list(
    request: Request,
    episodes: EpisodesDep,
    registry: RegistryDep,
    state: str | None = None,
    domain: str | None = None,
    task: str | None = None,
    page: int = Query(default=0, ge=0, le=100_000),
) -> Response:
    """Episodes newest first, filtered by state, domain and task, fifty to a page."""
    domain, task = domain or None, task or None
    state = form_choice(state, STATES, "state")
    if domain is not None:
        registry.domain(domain)  # an unknown domain is a 404 naming the known ones
    rows = episodes.store.list_episodes(
        task_id=task, domain=domain, state=state, limit=PAGE + 1, offset=page * PAGE
    )
    return render(
        request,
        "episodes.html",
        rows=rows[:PAGE],
        more=len(rows) > PAGE,
        page=page,
        domains=[d.name for d in registry.domains],
        chosen={"state": state, "domain": domain, "task": task},
    )


@dataclass
class EpisodeView:
    """What an episode page shows: its record, events, diff (or why there is none) and score."""

    record: EpisodeRecord
    events: Sequence[EpisodeEvent]
    diff: list[DiffEntry] | None
    score: ScoreResult | None
    diff_problem: str | None = None
    changes: Sequence[StateChange] = ()


@router.get("/{episode_id}")
def episode_page(
    request: Request,
    episode_id: str,
    episodes: EpisodesDep,
    settings: SettingsDep,
    run: str | None = Query(default=None, max_length=200, description="The campaign that played it."),
) -> Response:
    """One episode: the conversation, tool calls, the state diff, the checks and any backend error.

    Opened from a campaign (`?run=NAME`), it also shows how the campaign recorded the trial: a trial whose
    policy endpoint failed is named here, since the server saw only an episode disposed of unscored.
    """
    view = _episode_view(episodes, episode_id)
    trial = trial_of(settings.runs_dirs, run, episode_id) if run else None
    checks = view.score.checks if view.score else []
    credit = view.score.credit if view.score else None
    calls = [e.seq for e in view.events if e.kind == "tool_call"]
    # the i-th tool call event is the i-th call of the credit (both count every call, refused ones too)
    credit_by_seq = dict(zip(calls, credit.calls, strict=False)) if credit else {}
    deviation = credit.first_deviation if credit else None
    return render(
        request,
        "episode.html",
        **vars(view),
        groups=group_diff(view.diff or []),
        kinds=KINDS,
        state_checks=[c for c in checks if not c.name.startswith("rubric:")],
        verdicts=[c for c in checks if c.name.startswith("rubric:")],
        errors=[e for e in view.events if e.kind == "backend_error"],
        credit=credit_by_seq,
        trial=trial,
        run_name=run,
        deviation=deviation,
        deviation_seq=calls[deviation.call_index]
        if deviation is not None and deviation.call_index is not None and deviation.call_index < len(calls)
        else None,
    )


def _episode_view(service: EpisodeService, episode_id: str) -> EpisodeView:
    record = service.store.episode(episode_id, include_disposed=True)
    if record is None:
        raise UnknownEpisodeError(f"unknown episode '{episode_id}'", field="episode_id")
    problem = None
    if not record.disposed:
        try:
            info = service.info(episode_id)
            return EpisodeView(record, info.events, info.diff, info.score, changes=info.changes)
        except UnknownEpisodeError:  # disposed between the two reads: show it as disposed
            record = service.store.episode(episode_id, include_disposed=True) or record
        except BackendError as exc:
            problem = f"the state diff could not be computed: {exc.message}"
    saved = service.store.score(episode_id)
    score = None if saved is None else ScoreResult.model_validate(saved)
    if score is None and record.disposed:
        problem = "disposed of before it was scored: its sandbox, and so its final state, is gone"
    events = [e.wire() for e in service.store.events(episode_id)]
    return EpisodeView(
        record, events, score.diff if score else None, score, problem, changes=score.changes if score else ()
    )
