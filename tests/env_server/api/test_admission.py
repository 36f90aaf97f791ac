"""Admission control and idle reclamation over HTTP: 503 + Retry-After past capacity, 410 once reclaimed."""

import asyncio
import re
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from env_server.app import create_app
from env_server.domain.registry import DomainRegistry
from env_server.episodes.admission import Admission
from env_server.errors import OverCapacityError
from env_server.settings import Settings
from shared.client import AsyncGroundstateClient, GroundstateClient, OverCapacityRetry
from shared.errors import ApiError
from tests.factories import call, finish, gold_transfer, make_client, start_episode
from tests.live_server import serve

TASK = "toybank-transfer-001"
FAST = OverCapacityRetry(max_jitter_s=0.2)


def metric(client: TestClient | GroundstateClient, name: str) -> float:
    """A metric's value in `/metrics` (summed over its labels), 0 if absent."""
    http = client if isinstance(client, TestClient) else client._http
    text = http.get("/metrics").text
    return sum(float(v) for v in re.findall(rf"^{name}(?:\{{[^}}]*\}})? ([0-9.e+-]+)$", text, re.M))


@pytest.fixture
def one_slot(tmp_path: Path, sandbox_url: str, toy_registry: DomainRegistry) -> Iterator[TestClient]:
    with make_client(tmp_path, sandbox_url, toy_registry, max_live_episodes=1, retry_after_s=1.5) as client:
        yield client


def test_a_start_past_capacity_is_refused_with_503_and_retry_after(one_slot: TestClient) -> None:
    refused_before = metric(one_slot, "groundstate_admissions_refused_total")  # counters are per process
    first = start_episode(one_slot)
    refused = one_slot.post("/v1/episodes", json={"task_id": TASK})
    assert refused.status_code == 503
    assert refused.headers["retry-after"] == "2"  # whole seconds, rounded up
    assert refused.json()["error"]["code"] == "over-capacity"
    assert "GROUNDSTATE_MAX_LIVE_EPISODES" in refused.json()["error"]["message"]
    # the admitted episode goes on undisturbed, and once scored its place is free
    gold_transfer(one_slot, first)
    assert finish(one_slot, first)["reward"] == 1
    start_episode(one_slot)
    assert metric(one_slot, "groundstate_admissions_refused_total") == refused_before + 1
    assert metric(one_slot, "groundstate_live_episodes") == 1


def test_a_disposed_episode_frees_its_place(one_slot: TestClient) -> None:
    first = start_episode(one_slot)
    assert one_slot.delete(f"/v1/episodes/{first}").status_code == 204
    start_episode(one_slot)


def test_the_client_waits_out_a_refusal_and_succeeds_once_capacity_frees(
    tmp_path: Path, toy_registry: DomainRegistry
) -> None:
    settings = Settings(store_url=f"sqlite:///{tmp_path}/s.db", max_live_episodes=1, retry_after_s=0.2)
    with (
        serve(create_app(settings, registry=toy_registry)) as url,
        GroundstateClient(url, over_capacity=FAST) as c,
    ):
        first = c.start_episode(TASK).episode_id
        threading.Timer(0.5, c.dispose, args=(first,)).start()
        t0 = time.monotonic()
        second = c.start_episode(TASK)  # refused until the first is disposed of, then admitted
        assert time.monotonic() - t0 >= 0.4
        assert second.episode_id != first
        assert metric(c, "groundstate_admissions_refused_total") >= 1  # (this test's, or earlier ones' too)

        async def refused_once_then_gives_up() -> ApiError:
            async with AsyncGroundstateClient(url, over_capacity=OverCapacityRetry(attempts=1)) as ac:
                with pytest.raises(ApiError) as caught:
                    await ac.start_episode(TASK)
                return caught.value

        error = asyncio.run(refused_once_then_gives_up())
        assert (error.status, error.code, error.retry_after, error.retriable) == (
            503,
            "over-capacity",
            1.0,
            True,
        )


def test_an_idle_episode_is_reclaimed_and_later_calls_are_410(
    tmp_path: Path, sandbox_url: str, toy_registry: DomainRegistry
) -> None:
    with make_client(tmp_path, sandbox_url, toy_registry, episode_idle_timeout_s=1.5) as client:
        service = client.app.state.episodes  # type: ignore[attr-defined]
        reclaimed_before = metric(client, "groundstate_episodes_reclaimed_total")
        idle, busy = start_episode(client), start_episode(client)
        gold_transfer(client, idle)
        deadline = time.monotonic() + 10
        while client.get(f"/v1/episodes/{idle}").json()["status"] != "reclaimed":
            assert time.monotonic() < deadline, "not reclaimed in 10 s"
            call(client, busy, "get_account", account_id="AC-0001")  # kept busy: never idle
            time.sleep(0.05)
        info = client.get(f"/v1/episodes/{idle}").json()
        assert [e["kind"] for e in info["events"]][:2] == ["user_message", "tool_call"]  # the record is kept
        refused = client.post(
            f"/v1/episodes/{idle}/tool_calls", json={"name": "get_account", "arguments": {}}
        )
        assert refused.status_code == 410
        assert refused.json()["error"]["code"] == "episode-reclaimed"
        assert service._live.peek(idle) is None  # its sandbox is freed
        assert client.get(f"/v1/episodes/{busy}").json()["status"] == "active"
        assert metric(client, "groundstate_episodes_reclaimed_total") == reclaimed_before + 1
        assert metric(client, "groundstate_live_episodes") == 1


def test_requests_past_the_in_flight_maximum_are_refused_before_any_work() -> None:
    admission = Admission(max_in_flight=2, retry_after_s=3)
    admission.enter()
    admission.enter()
    with pytest.raises(OverCapacityError) as caught:
        admission.enter()
    assert caught.value.retry_after_s == 3
    admission.exit()
    admission.enter()  # room again


def test_idle_episodes_are_found_least_recently_used_first() -> None:
    now = [0.0]
    admission = Admission(idle_timeout_s=10, clock=lambda: now[0])
    for eid in ("a", "b", "c"):
        admission.touch(eid)
        now[0] += 4
    admission.touch("a")  # a used again at t=12
    now[0] = 17
    assert admission.idle() == ["b"]  # b last used at 4, c at 8 (< 10 s ago)
    admission.end("b")
    assert admission.idle() == [] and admission.live == 2


@pytest.mark.slow
def test_soak_abandoned_episodes_and_half_open_connections_keep_live_episodes_flat(
    tmp_path: Path, toy_registry: DomainRegistry
) -> None:
    """40 s of rounds: each starts 6 episodes, scores 3 and abandons 3, and leaves a half-open connection."""
    settings = Settings(store_url=f"sqlite:///{tmp_path}/s.db", episode_idle_timeout_s=2.0)
    app = create_app(settings, registry=toy_registry)
    service = app.state.episodes
    live: list[tuple[float, int, int]] = []  # (t, live episodes, held sandboxes)
    half_open: list[socket.socket] = []
    with serve(app) as url, GroundstateClient(url) as client:
        port = int(url.rsplit(":", 1)[1])
        t0 = time.monotonic()
        while time.monotonic() - t0 < 40:
            for n in range(6):
                eid = client.start_episode(TASK).episode_id
                client.call_tool(eid, "get_account", {"account_id": "AC-0001"})
                if n % 2 == 0:
                    client.score(eid)
            s = socket.create_connection(("127.0.0.1", port))
            s.sendall(b"POST /v1/episodes HTTP/1.1\r\nhost: x\r\ncontent-length: 100\r\n\r\n{")  # never ends
            half_open.append(s)
            if len(half_open) > 5:
                half_open.pop(0).close()
            live.append((time.monotonic() - t0, service.admission.live, len(service._live)))
            time.sleep(0.5)
        for s in half_open:
            s.close()
    # abandoned episodes pile up for the idle timeout (2 s) plus a sweep, then stay flat: 3 abandoned per
    # 0.5 s round is 6 a second, so about 6 x (2 s + 0.5 s sweep + a round) at most, however long it runs
    late = [(n, held) for t, n, held in live if t > 10]
    assert late and max(n for n, _ in late) <= 30, live
    assert max(held for _, held in late) <= 30, live
