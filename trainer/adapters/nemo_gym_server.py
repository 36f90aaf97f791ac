"""groundstate as a NeMo Gym resources server (`nemo-gym` 0.7): session seeding, tools, verify.

The mapping, per NeMo Gym session (its session cookie):

    POST /seed_session   starts the episode of `task_id` through the one rollout state machine
                         (`EpisodeBridge`) and answers with the episode's system prompt, first user message,
                         tools and `env_id` (`domain@version`)
    POST /{tool}         one of the episode's tools: the call is played as a model turn, the answer is the
                         text the model reads back (a tool's refusal included, as `Error: ...`)
    POST /verify         the response's final assistant text goes to the simulated user with the stop mark,
                         the rollout scores the episode; `reward` is the server's reward, `reward_components`
                         its checks (1.0 passed, 0.0 failed); a `backend_error` is `mask_sample: true` with
                         `failure_kind: groundstate:backend_error` and never a reward to train on

`dataset_rows` writes the JSONL rows (`responses_create_params` plus `task_id`) that NeMo Gym's agents read.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import PlainTextResponse
from nemo_gym.base_resources_server import (
    BaseMultiRewardVerifyResponse,
    BaseResourcesServerConfig,
    BaseSeedSessionRequest,
    BaseSeedSessionResponse,
    BaseVerifyRequest,
    SimpleResourcesServer,
)
from nemo_gym.server_utils import SESSION_ID_KEY
from pydantic import Field

from shared.client import DEFAULT_SERVER_URL, AsyncGroundstateClient
from shared.models import UserKind
from trainer.adapters._bridge import BridgeStep, EpisodeBridge
from trainer.adapters._pin import EnvironmentPin, parse_env_id, resolve_pin
from trainer.policies.base import ToolCall, Turn, new_call_id, openai_tools
from trainer.rollout_models import RolloutConfig, RolloutResult

__all__ = [
    "BACKEND_ERROR_KIND",
    "GroundstateResourcesServer",
    "GroundstateResourcesServerConfig",
    "GroundstateSeedSessionRequest",
    "GroundstateSeedSessionResponse",
    "GroundstateVerifyResponse",
    "dataset_rows",
]

BACKEND_ERROR_KIND = "groundstate:backend_error"
"""The `failure_kind` of a masked sample: an infrastructure failure, never the agent's."""


class GroundstateResourcesServerConfig(BaseResourcesServerConfig):
    """The resources server's settings (NeMo Gym config YAML)."""

    groundstate_url: str = DEFAULT_SERVER_URL
    """The groundstate server."""
    groundstate_api_key: str | None = None
    """The groundstate server's API key, if it requires one."""
    env: str = "starter"
    """`domain` or `domain@version` (a pinned domain fingerprint)."""
    user: UserKind | None = None
    """The simulated user; the server's default if null."""
    max_turns: int = 60
    """Tool calls and messages per episode (each tool call is one turn here)."""
    timeout_s: float = 900.0
    """Wall-clock budget of an episode (past it: backend_error)."""


class GroundstateSeedSessionRequest(BaseSeedSessionRequest):
    """Start the episode of one task."""

    task_id: str


class GroundstateSeedSessionResponse(BaseSeedSessionResponse):
    """The started episode: what the agent needs to begin, and what it is scored against."""

    env_id: str
    episode_id: str | None
    system_prompt: str
    first_message: str
    tools: list[dict[str, Any]] = Field(default_factory=list)


class GroundstateVerifyResponse(BaseMultiRewardVerifyResponse):
    """The verdict: the server's reward, its checks, and the pin."""

    env_id: str = ""
    episode_id: str | None = None
    status: str = ""


@dataclass
class _Session:
    bridge: EpisodeBridge
    client: AsyncGroundstateClient
    pin: EnvironmentPin
    step: BridgeStep
    lock: asyncio.Lock


class GroundstateResourcesServer(SimpleResourcesServer):
    """One groundstate episode per NeMo Gym session."""

    config: GroundstateResourcesServerConfig
    sessions: dict[str, Any] = Field(default_factory=dict)

    def setup_webserver(self) -> FastAPI:
        """NeMo Gym's routes, then the episode's tools as one route per name."""
        app = super().setup_webserver()
        app.post("/{tool_name}", response_class=PlainTextResponse)(self.call_tool)
        return app

    async def seed_session(  # type: ignore[override]
        self, request: Request, body: GroundstateSeedSessionRequest
    ) -> GroundstateSeedSessionResponse:
        """Start the task's episode for this session."""
        domain, version = parse_env_id(self.config.env)
        client = AsyncGroundstateClient(self.config.groundstate_url, api_key=self.config.groundstate_api_key)
        pin = await resolve_pin(client, domain, body.task_id, version)
        rollout = RolloutConfig(
            max_turns=self.config.max_turns, timeout_s=self.config.timeout_s, user=self.config.user
        )
        bridge = EpisodeBridge(client, body.task_id, rollout, name="nemo-gym")
        step = await bridge.begin()
        self.sessions[request.session[SESSION_ID_KEY]] = _Session(bridge, client, pin, step, asyncio.Lock())
        messages = bridge.messages or step.messages
        return GroundstateSeedSessionResponse(
            env_id=pin.env_id,
            episode_id=bridge.episode_id,
            system_prompt=str(messages[0]["content"]) if messages else "",
            first_message=str(messages[1]["content"]) if len(messages) > 1 else "",
            tools=openai_tools(step.tools),
        )

    async def call_tool(self, request: Request, tool_name: str) -> str:
        """Run one of the episode's tools; the text the model reads back."""
        session = self._session(request)
        arguments = await request.json() if await request.body() else {}
        if not isinstance(arguments, dict):
            return "Error: the arguments must be a JSON object"
        async with session.lock:
            if session.step.done:
                return "Error: the episode has ended"
            turn = Turn(tool_calls=[ToolCall(id=new_call_id(), name=tool_name, arguments=arguments)])
            session.step = await session.bridge.push(turn)
        results = [m for m in session.step.messages if m["role"] == "tool"]
        if results:
            return str(results[-1]["content"])
        return "Error: the episode has ended"

    async def verify(self, request: Request, body: BaseVerifyRequest) -> GroundstateVerifyResponse:  # type: ignore[override]
        """End the conversation with the response's final text, score it, and report the verdict."""
        session = self._session(request)
        async with session.lock:
            if not session.step.done:
                text = _final_text(body.response.model_dump())
                session.step = await session.bridge.push(Turn(content=text, stop=True))
            await session.client.aclose()
        self.sessions.pop(request.session[SESSION_ID_KEY], None)
        assert session.step.result is not None
        return _verdict(body, session.step.result, session.pin)

    def _session(self, request: Request) -> _Session:
        session = self.sessions.get(request.session[SESSION_ID_KEY])
        if session is None:
            raise LookupError(
                "no groundstate episode in this session: POST /seed_session with a task_id first"
            )
        return session  # type: ignore[no-any-return]


def _final_text(response: dict[str, Any]) -> str:
    """The last assistant message's text in a Responses API response."""
    for item in reversed(response.get("output") or []):
        if item.get("type") == "message":
            parts = [p.get("text", "") for p in item.get("content") or [] if p.get("type") == "output_text"]
            return "".join(parts).strip()
    return ""


def _verdict(
    body: BaseVerifyRequest, result: RolloutResult, pin: EnvironmentPin
) -> GroundstateVerifyResponse:
    """The verify response: the reward and checks, or a masked sample for a backend error."""
    base = {
        **body.model_dump(),
        "env_id": pin.env_id,
        "episode_id": result.episode_id,
        "status": result.status,
    }
    if result.status == "backend_error" or result.score is None or result.reward is None:
        return GroundstateVerifyResponse(
            **base,
            reward=0.0,  # required by the schema; masked, so never trained on or averaged
            reward_components={},
            mask_sample=True,
            failure_kind=BACKEND_ERROR_KIND,
            failure_reason=result.error,
        )
    pin.check(result.score)
    components = {check.name: 1.0 if check.passed else 0.0 for check in result.score.checks}
    return GroundstateVerifyResponse(**base, reward=float(result.reward), reward_components=components)


async def dataset_rows(
    client: AsyncGroundstateClient, domain: str, split: str | None = None
) -> list[dict[str, Any]]:
    """NeMo Gym dataset rows for the domain's tasks: the prompt an agent sends to its model, plus `task_id`.

    Each task's opening is read from a started (then disposed) episode, so the row holds exactly what the
    episode will say with the scripted user; with the LLM user the first message may vary between episodes,
    and `seed_session` returns the episode's own.
    """
    detail = await client.domain(domain)
    rows = []
    for task in await client.tasks(domain=domain, split=split):
        started = await client.start_episode(task.id)
        await client.dispose(started.episode_id)
        rows.append(
            {
                "task_id": task.id,
                "responses_create_params": {
                    "input": [
                        {"role": "system", "content": started.system_prompt},
                        {"role": "user", "content": started.first_message},
                    ],
                    "tools": [
                        {"type": "function", **t["function"], "strict": False}
                        for t in openai_tools(detail.tools)
                    ],
                },
            }
        )
    return rows
