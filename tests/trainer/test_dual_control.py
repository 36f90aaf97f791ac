"""A dual-control telecom task through TRL's `rollout_func` (`groundstate train local`): the customer's
tool calls are environment events, their words environment tokens, and the model is trained on its own.

The generator is `tests.trainer.scripted_model`: SmolLM2's tokenizer emitting the task's reference agent
turns, so the group holds one episode that scores 1 and one silent episode that scores 0.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("transformers")

from shared.client import GroundstateClient
from tests.trainer.conftest import DUAL_TASK, USER_TOOLS
from tests.trainer.scripted_model import reference_texts, scripted_model
from trainer.train_local import LocalTrainConfig, _Rollouts

pytestmark = pytest.mark.slow  # SmolLM2's tokenizer is read from its GGUF (~15 s)


def test_trls_rollout_func_sees_the_customer_only_as_environment(telecom_server: str, tmp_path: Path) -> None:
    texts = reference_texts(telecom_server, DUAL_TASK)
    loaded = scripted_model([*texts, "Glad it works again. Goodbye!"])
    config = LocalTrainConfig(
        pool=tmp_path / "pool.json", out=tmp_path, steps=1, server=telecom_server, tasks_per_step=1,
        episodes_per_task=2, concurrency=1, replacements=0, max_new_tokens=128,
    )  # fmt: skip
    rollouts = _Rollouts(config, loaded, [DUAL_TASK], api_key=None)
    batch = rollouts([DUAL_TASK, DUAL_TASK], trainer=None)  # TRL passes each task id G times
    assert rollouts.last is not None
    [group] = rollouts.last.groups
    won, lost = group.rollouts  # one at a time: the first plays the reference, the second gets silence
    assert (won.reward, lost.reward) == (1, 0) and group.informative

    # the customer acted on its side, as an event of the episode the agent never called
    with GroundstateClient(telecom_server) as client:
        info = client.episode(str(won.episode_id))
    acted = [(e.payload["name"], e.payload["arguments"]) for e in info.events if e.kind == "user_tool_call"]
    assert acted == [("restart_router", {"router_id": "RT-0169"})]
    assert not [e for e in info.events if e.kind == "tool_call" and e.payload["name"] in USER_TOOLS]

    # the batch TRL trains on: the customer's words are environment tokens (mask 0), no user tool anywhere
    tokenizer = loaded.tokenizer
    prompt, completion, mask = batch["prompt_ids"][0], batch["completion_ids"][0], batch["env_mask"][0]
    assert batch["episode_reward"] == [1.0, 0.0] and len(mask) == len(completion)
    own = tokenizer.decode([t for t, m in zip(completion, mask, strict=True) if m == 1])
    env = tokenizer.decode([t for t, m in zip(completion, mask, strict=True) if m == 0])
    rendered = tokenizer.decode(prompt) + own + env
    assert "run_diagnostics" in tokenizer.decode(prompt)  # the agent's tools are in its prompt
    assert not [name for name in USER_TOOLS if name in rendered]  # the customer's never are
    assert "I restarted it and the lights are green again." in env
    assert "Please restart it" in own  # the agent's request is the model's own text
    assert [t for t, m in zip(completion, mask, strict=True) if m == 1] == [
        t for turn in won.turns for t in turn.token_ids or []
    ]  # exactly the generated tokens are trained on
