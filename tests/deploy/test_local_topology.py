"""The production topology without containers, for real: `deploy/run-local.sh` brings up a migrated store,
three `groundstate serve` replicas on PostgreSQL sandboxes and HAProxy (Debian package) round-robin in front.

Every domain's gold trajectory goes through the load balancer with one keep-alive client; the requests of
each episode land on several replicas (the `x-groundstate-replica` header says which), and the tool results
and scores equal those of a single server.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import httpx
import pytest

from benchmarks.topology import REPLICAS, local_topology
from env_server.app import create_app
from env_server.settings import Settings
from shared.client import GroundstateClient
from shared.errors import ApiError
from shared.tasks import Task
from tests.deploy.conftest import required_executable
from tests.live_server import serve

pytestmark = [pytest.mark.slow, pytest.mark.postgres]
API_KEY = "lb-test-key"


class ReplicaRecorder(httpx.HTTPTransport):
    """Remembers which replica answered each request, per episode id in the path."""

    def __init__(self) -> None:
        super().__init__()
        self.by_episode: dict[str, list[str]] = defaultdict(list)
        self.all: list[str] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = super().handle_request(request)
        replica = response.headers["x-groundstate-replica"]
        self.all.append(replica)
        parts = request.url.path.split("/")
        if len(parts) > 3 and parts[2] == "episodes":
            self.by_episode[parts[3]].append(replica)
        return response


def gold_task_per_domain(client: GroundstateClient) -> list[Task]:
    """Each domain's test action task with the most gold actions (and no rubric: no judge here)."""
    chosen = []
    for domain in client.domains():
        tasks = [t for t in client.tasks(domain=domain.name, split="test") if t.kind == "action"]
        full = [client.task(t.id, include_gold=True) for t in tasks if not t.has_rubric]
        golds = [t for t in full if isinstance(t, Task)]
        chosen.append(max(golds, key=lambda t: (len(t.gold_actions), t.id)))
    return chosen


def play_gold(client: GroundstateClient, task: Task) -> tuple[str, dict[str, Any]]:
    """Start, replay the gold actions, tell the user every fact to communicate, score; results to compare."""
    started = client.start_episode(task.id)
    outputs = [
        client.call_tool(started.episode_id, a.name, a.arguments).model_dump(exclude={"call_id"})
        for a in task.gold_actions
    ]
    if task.communicate:
        client.send_message(started.episode_id, "To sum up: " + "; ".join(task.communicate))
    score = client.score(started.episode_id).model_dump()
    client.dispose(started.episode_id)
    return started.episode_id, {"first_message": started.first_message, "tools": outputs, "score": score}


def test_gold_trajectories_through_haproxy_spread_over_replicas_and_score_as_one_server(
    pg_databases: tuple[str, str], tmp_path: Path
) -> None:
    required_executable("haproxy", "haproxy")
    required_executable("curl", "curl")
    store_url, sandbox_url = pg_databases
    env = {"GROUNDSTATE_API_KEY": API_KEY}
    with local_topology(store_url, sandbox_url, tmp_path / "run", env=env) as topology:
        recorder = ReplicaRecorder()
        with GroundstateClient(topology.lb_url, api_key=API_KEY, transport=recorder) as lb:
            tasks = gold_task_per_domain(lb)
            through_lb = {task.id: play_gold(lb, task) for task in tasks}
            with pytest.raises(ApiError) as refused, GroundstateClient(topology.lb_url) as keyless:
                keyless.tasks()  # the key is checked behind the balancer
        haproxy_metrics = httpx.get(f"{topology.stats_url}/metrics").text

    assert refused.value.code == "unauthorized"
    assert {t.domain for t in tasks} >= {"hotel", "retail", "travel", "insurance"}  # and any other installed
    assert set(recorder.all) == {f"gs{i}" for i in range(1, REPLICAS + 1)}
    for task in tasks:
        episode_id, result = through_lb[task.id]
        assert result["score"]["reward"] == 1, (task.id, result["score"])
        assert len(set(recorder.by_episode[episode_id])) >= 2, (task.id, recorder.by_episode[episode_id])
    assert 'haproxy_server_status{proxy="replicas",server="gs1",state="UP"} 1' in haproxy_metrics

    single = Settings(store_url=f"sqlite:///{tmp_path}/single.db", sandbox_url=sandbox_url)
    with serve(create_app(single)) as url, GroundstateClient(url) as one:
        for task in tasks:
            _, alone = play_gold(one, task)
            assert alone == through_lb[task.id][1], task.id
