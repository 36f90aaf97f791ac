"""A dual-control telecom task through `GroundstateAgentLoop.run()`: the customer is environment, never model.

Generation is `ScriptedServerManager` (Verl's `generate` signature, token ids of the task's reference agent
turns) over SmolLM2's tokenizer, against a live server with the telecom domain.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from shared.client import GroundstateClient
from tests.trainer.conftest import DUAL_TASK, USER_TOOLS
from tests.trainer.scripted_model import reference_texts, scripted_model
from tests.trainer.verl.conftest import SAMPLING, ScriptedServerManager, make_loop, verl_config

pytestmark = pytest.mark.slow  # SmolLM2's tokenizer is read from its GGUF (~15 s)


def _row(task_id: str) -> dict[str, Any]:
    return {
        "raw_prompt": [{"role": "user", "content": f"groundstate task {task_id}"}],
        "extra_info": {"index": 0, "task_id": task_id, "domain": "telecom", "split": "train"},
        "data_source": "groundstate/telecom",
    }


def test_verls_agent_loop_sees_the_customer_only_as_environment(telecom_server: str) -> None:
    loaded = scripted_model([])
    # the telecom policy and tools take ~3,200 tokens
    config = verl_config(telecom_server, "data.max_prompt_length=4096")
    gold = ScriptedServerManager(
        loaded, [*reference_texts(telecom_server, DUAL_TASK), "Glad it works again. Goodbye!"]
    )
    silent = ScriptedServerManager(loaded, [])
    won_loop = make_loop(config, gold, loaded.tokenizer)
    lost_loop = make_loop(config, silent, loaded.tokenizer)

    async def both() -> tuple[Any, Any]:
        return await asyncio.gather(
            won_loop.run(dict(SAMPLING), **_row(DUAL_TASK)), lost_loop.run(dict(SAMPLING), **_row(DUAL_TASK))
        )

    won, lost = asyncio.run(both())
    assert (won.reward_score, lost.reward_score) == (1.0, 0.0)

    with GroundstateClient(telecom_server) as client:
        info = client.episode(won.extra_fields["groundstate"]["episode_id"])
    acted = [(e.payload["name"], e.payload["arguments"]) for e in info.events if e.kind == "user_tool_call"]
    assert acted == [("restart_router", {"router_id": "RT-0169"})]
    assert info.score is not None and info.score.reward == 1

    decode = loaded.tokenizer.decode
    own = decode([t for t, m in zip(won.response_ids, won.response_mask, strict=True) if m == 1])
    env = decode([t for t, m in zip(won.response_ids, won.response_mask, strict=True) if m == 0])
    prompt = decode(won.prompt_ids)
    assert "run_diagnostics" in prompt and "Please restart it" in own
    assert "I restarted it and the lights are green again." in env  # the customer's words: environment
    assert not [name for name in USER_TOOLS if name in prompt + own + env]
    assert won.extra_fields["reward_extra_info"]["gs_tool_calls"] == 3  # the agent's calls alone
