"""Bounded sandboxes: evicted episodes come back by replay and still score as if nothing happened."""

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from env_server.domain.registry import DomainRegistry
from env_server.episodes.live import LiveSandboxes
from env_server.settings import Settings
from tests.factories import call, finish, gold_transfer, make_client, start_episode


@pytest.fixture
def small(tmp_path: Path, sandbox_url: str, toy_registry: DomainRegistry) -> Iterator[TestClient]:
    with make_client(tmp_path, sandbox_url, toy_registry, max_live_sandboxes=2) as client:
        yield client


def test_least_recently_used_sandbox_is_evicted_and_rebuilt_on_use(small: TestClient) -> None:
    service = small.app.state.episodes  # type: ignore[attr-defined]
    first = start_episode(small)
    gold_transfer(small, first)
    others = [start_episode(small) for _ in range(2)]
    assert len(service._live) == 2 and service._live.get(first) is None
    # The evicted episode sees its own earlier write, then scores 1 like an uninterrupted one.
    assert call(small, first, "get_account", account_id="AC-0001")["output"]["balance_cents"] == 5000
    assert finish(small, first)["reward"] == 1
    assert len(service._live) <= 2
    for eid in others:  # the others were not disturbed by the rebuild
        gold_transfer(small, eid)
        assert finish(small, eid)["reward"] == 1
    assert 'groundstate_sandboxes_evicted_total{reason="capacity"}' in small.get("/metrics").text


def test_idle_sandboxes_are_evicted_and_the_episode_goes_on(
    tmp_path: Path, sandbox_url: str, toy_registry: DomainRegistry
) -> None:
    with make_client(tmp_path, sandbox_url, toy_registry, sandbox_idle_s=0.2) as client:
        service = client.app.state.episodes  # type: ignore[attr-defined]
        idle = start_episode(client)
        gold_transfer(client, idle)
        time.sleep(0.3)
        start_episode(client)
        assert len(service._live) == 1 and service._live.get(idle) is None
        assert finish(client, idle)["reward"] == 1


def test_limits_are_validated() -> None:
    with pytest.raises(ValueError, match="max_live_sandboxes"):
        Settings(max_live_sandboxes=0)
    with pytest.raises(ValueError, match="sandbox_idle_s"):
        Settings(sandbox_idle_s=0)


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_candidates_are_oldest_first_and_use_refreshes() -> None:
    clock = FakeClock()
    live = LiveSandboxes(capacity=2, idle_s=10, clock=clock)
    for i, eid in enumerate("abc"):
        clock.now = i
        live.put(eid, object())  # type: ignore[arg-type]
    assert list(live.candidates()) == [("a", "capacity")]
    clock.now = 5
    live.get("a")  # used again: now the most recent
    assert list(live.candidates()) == [("b", "capacity")]
    clock.now = 13.5  # b (t=1) and c (t=2) idle for more than 10 s, a (t=5) not
    assert list(live.candidates()) == [("b", "capacity"), ("c", "idle")]
    live.pop("b")
    assert list(live.candidates()) == [("c", "idle")]


@pytest.mark.postgres
def test_eviction_never_frees_a_postgresql_slot_another_worker_serves(
    tmp_path: Path, pg_url: str, toy_registry: DomainRegistry
) -> None:
    """Two workers on one database: one evicts an episode another is serving; the slot must stay its own."""
    with (
        make_client(tmp_path, pg_url, toy_registry, max_live_sandboxes=1) as one,
        make_client(tmp_path, pg_url, toy_registry, max_live_sandboxes=1) as other,
    ):
        served = start_episode(one)
        gold_transfer(other, served)  # the other worker attaches the episode's slot
        start_episode(one)  # capacity 1: the first worker lets go of `served`
        newcomer = start_episode(one)  # would claim `served`'s slot had the eviction freed it
        assert call(other, served, "get_account", account_id="AC-0001")["output"]["balance_cents"] == 5000
        assert call(one, newcomer, "get_account", account_id="AC-0001")["output"]["balance_cents"] == 10000
        assert finish(other, served)["reward"] == 1
