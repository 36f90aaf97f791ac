"""Several workers on SQLite sandboxes: each holds its own copy of an episode, and no copy serves stale state.

Two apps on one store act as two workers. A request may land on either; a copy that missed calls the other
worker served catches up from the event log before it is used.
"""

from __future__ import annotations

from pathlib import Path

from env_server.domain.registry import DomainRegistry
from tests.factories import call, finish, gold_transfer, make_client, start_episode


def test_a_worker_sees_the_calls_another_worker_served(tmp_path: Path, toy_registry: DomainRegistry) -> None:
    with (
        make_client(tmp_path, "sqlite://", toy_registry) as one,
        make_client(tmp_path, "sqlite://", toy_registry) as two,
    ):
        episode = start_episode(one)  # `one` holds a copy from the start
        assert call(one, episode, "get_account", account_id="AC-0001")["output"]["balance_cents"] == 10000
        gold_transfer(two, episode)  # `two` rebuilds its own copy and writes there
        assert call(one, episode, "get_account", account_id="AC-0001")["output"]["balance_cents"] == 5000
        assert call(two, episode, "get_account", account_id="AC-0001")["output"]["balance_cents"] == 5000
        assert finish(one, episode)["reward"] == 1


def test_a_copy_that_caught_up_keeps_up(tmp_path: Path, toy_registry: DomainRegistry) -> None:
    with (
        make_client(tmp_path, "sqlite://", toy_registry) as one,
        make_client(tmp_path, "sqlite://", toy_registry) as two,
    ):
        episode = start_episode(one)
        before = call(two, episode, "get_account", account_id="AC-0002")["output"]["balance_cents"]  # a copy
        gold_transfer(one, episode)
        after = call(two, episode, "get_account", account_id="AC-0002")["output"]["balance_cents"]
        assert after == before + 5000
        result = two.post(f"/v1/episodes/{episode}/messages", json={"content": "The transfer complete."})
        assert result.status_code == 200
        assert two.post(f"/v1/episodes/{episode}/score").json()["reward"] == 1
