"""Inline calls (`GROUNDSTATE_INLINE_CALLS`): compute-only calls run on the event loop, nothing else does."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import ValidationError

from env_server.app import create_app
from env_server.domain.registry import DomainRegistry
from env_server.episodes.service import EpisodeService
from env_server.settings import Settings
from tests.factories import call, finish, gold_transfer, make_client, start_episode

TRANSFER = {"source_id": "AC-0001", "target_id": "AC-0002", "amount_cents": 5000}


def test_auto_inlines_exactly_when_sandboxes_and_store_are_sqlite(tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path}/s.db"
    pg = "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
    assert Settings(store_url=store, sandbox_url="sqlite://").runs_inline
    assert not Settings(store_url=store, sandbox_url=pg).runs_inline
    assert not Settings(store_url=pg, sandbox_url="sqlite://").runs_inline
    assert Settings(store_url=pg, sandbox_url=pg, inline_calls="on").runs_inline
    assert not Settings(store_url=store, sandbox_url="sqlite://", inline_calls="off").runs_inline
    with pytest.raises(ValidationError, match="inline_calls"):
        Settings(inline_calls="sometimes")  # type: ignore[arg-type]


@pytest.mark.parametrize("mode", ["on", "off"])
def test_where_calls_run_and_that_the_outcome_is_the_same(
    tmp_path: Path, toy_registry: DomainRegistry, mode: str
) -> None:
    with make_client(tmp_path, "sqlite://", toy_registry, inline_calls=mode) as client:
        service: EpisodeService = client.app.state.episodes  # type: ignore[attr-defined]
        threads: list[str] = []
        original = service.call_tool

        def recording(*args: Any) -> Any:
            threads.append(threading.current_thread().name)
            return original(*args)

        service.call_tool = recording  # type: ignore[method-assign]
        eid = start_episode(client)
        gold_transfer(client, eid)
        assert call(client, eid, "get_account", account_id="AC-0001")["output"]["balance_cents"] == 5000
        assert finish(client, eid)["reward"] == 1
    in_pool = [name.startswith("AnyIO worker thread") for name in threads]
    assert in_pool == [mode == "off"] * 2


def test_a_busy_episode_is_never_waited_for_on_the_event_loop(
    tmp_path: Path, toy_registry: DomainRegistry
) -> None:
    """While a call of one episode runs in a thread (a slow LLM reply, say), other episodes go on."""
    settings = Settings(store_url=f"sqlite:///{tmp_path}/s.db", sandbox_url="sqlite://", inline_calls="on")
    app = create_app(settings, registry=toy_registry)
    service: EpisodeService = app.state.episodes

    async def scenario() -> tuple[float, float]:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            busy, other = [
                (await client.post("/v1/episodes", json={"task_id": "toybank-transfer-001"})).json()[
                    "episode_id"
                ]
                for _ in range(2)
            ]
            lock = service._lock(busy)
            held = threading.Event()

            def hold() -> None:  # another thread holds the episode for half a second
                with lock:
                    held.set()
                    time.sleep(0.5)

            threading.Thread(target=hold).start()
            held.wait()
            start = time.perf_counter()

            async def tool_call(eid: str) -> float:
                body = {"name": "transfer", "arguments": TRANSFER}
                response = await client.post(f"/v1/episodes/{eid}/tool_calls", json=body)
                assert response.status_code == 200 and "output" in response.json(), response.text
                return time.perf_counter() - start

            waited_busy, waited_other = await asyncio.gather(tool_call(busy), tool_call(other))
            return waited_busy, waited_other

    waited_busy, waited_other = asyncio.run(scenario())
    assert waited_busy >= 0.45  # it waited for the lock, in a worker thread
    assert waited_other < 0.3  # ... while the loop went on serving the other episode


def test_calls_that_wait_on_a_network_or_a_replay_go_to_a_thread(
    tmp_path: Path, toy_registry: DomainRegistry
) -> None:
    # an LLM user and a judge configured (never reached here): their calls must not run on the loop
    url = "http://127.0.0.1:9/v1"
    llm = {"user_base_url": url, "user_model": "m", "judge_base_url": url, "judge_model": "m"}
    with make_client(tmp_path, "sqlite://", toy_registry, inline_calls="on", **llm) as client:
        service: EpisodeService = client.app.state.episodes  # type: ignore[attr-defined]
        eid = start_episode(client)
        with service.claim(eid) as here:
            assert here  # a tool call only computes
        with service.claim(eid, talks=True) as here:
            assert not here  # a message may wait on the LLM user
        with service.claim(eid, scores=True) as here:
            assert not here  # a score may wait on the judge
        service._live.pop(eid).evict()  # type: ignore[union-attr]
        with service.claim(eid) as here:
            assert not here  # the sandbox must be rebuilt by replay first
        assert call(client, eid, "get_account", account_id="AC-0001")["output"]["balance_cents"] == 10000
        with service.claim(eid) as here:
            assert here  # held again
