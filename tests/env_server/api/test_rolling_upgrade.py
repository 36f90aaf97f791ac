"""A rolling upgrade on PostgreSQL: replicas of two versions of a domain share the sandbox database.

An episode's slot has the tables and rows of the version that started it. A replica of another version must
not run its tools on that slot or score it against its own expected state: it refuses with a retriable
`domain-version-changed` (503), and a replica of the episode's own version goes on as if nothing happened.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from env_server.domain.registry import DomainRegistry
from env_server.sandbox.postgres.naming import REGISTRY
from tests.factories import finish, gold_transfer, make_client, start_episode
from tests.toy_domain import domain as toy

pytestmark = pytest.mark.postgres


def held_by(pg_url: str, episode_id: str) -> int:
    engine = create_engine(pg_url)
    try:
        with engine.connect() as conn:
            return int(
                conn.scalar(text(f"SELECT count(*) FROM {REGISTRY} WHERE episode_id = :e"), {"e": episode_id})
                or 0
            )
    finally:
        engine.dispose()


@pytest.fixture
def upgraded() -> DomainRegistry:
    """The toy domain with other seed data: a new domain version (a new fingerprint)."""
    domain = dataclasses.replace(toy, seed_value=toy.seed_value + 1)
    assert domain.fingerprint != toy.fingerprint
    return DomainRegistry([domain])


def test_another_versions_replica_refuses_the_episode_and_its_own_version_finishes_it(
    tmp_path: Path, pg_url: str, toy_registry: DomainRegistry, upgraded: DomainRegistry
) -> None:
    with make_client(tmp_path, pg_url, toy_registry) as old, make_client(tmp_path, pg_url, upgraded) as new:
        episode = start_episode(old)
        gold_transfer(old, episode)
        refused = new.post(
            f"/v1/episodes/{episode}/tool_calls",
            json={"name": "get_account", "arguments": {"account_id": "AC-0001"}},
        )
        assert refused.status_code == 503, refused.text
        error = refused.json()["error"]
        assert (
            error["code"] == "domain-version-changed"
            and "another version of domain 'toybank'" in error["message"]
        )
        assert finish(old, episode)["reward"] == 1, "the refusal recorded nothing against the episode"
        assert held_by(pg_url, episode) == 0

        started_new = start_episode(new)  # the new version's own episodes run on its own slots
        gold_transfer(new, started_new)
        assert finish(new, started_new)["reward"] == 1


def test_scoring_or_disposing_on_another_version_frees_the_slot_and_is_no_reward(
    tmp_path: Path, pg_url: str, toy_registry: DomainRegistry, upgraded: DomainRegistry
) -> None:
    with make_client(tmp_path, pg_url, toy_registry) as old, make_client(tmp_path, pg_url, upgraded) as new:
        scored, disposed = start_episode(old), start_episode(old)
        gold_transfer(old, scored)
        old.app.state.episodes._live.pop(scored)  # type: ignore[attr-defined]  # as if the old replica had gone
        result = new.post(f"/v1/episodes/{scored}/score").json()
        assert result["status"] == "backend_error" and result["reward"] is None
        assert "another version" in result["error"]
        assert held_by(pg_url, scored) == 0, "the slot went back to its pool"

        assert new.delete(f"/v1/episodes/{disposed}").status_code in (200, 204)
        assert held_by(pg_url, disposed) == 0
