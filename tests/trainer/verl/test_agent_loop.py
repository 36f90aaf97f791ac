"""`GroundstateAgentLoop.run()` for real: a live server, generation by SmolLM2 or by scripted token ids."""

from __future__ import annotations

import asyncio
import gc
import threading
import time
import warnings
from typing import Any

import pytest

from shared.client import AsyncGroundstateClient
from tests.trainer.verl.conftest import (
    GOLD_TRANSFER,
    SAMPLING,
    LiveServer,
    ScriptedServerManager,
    TransformersServerManager,
    make_loop,
    row,
    verl_config,
)
from trainer.policies import load_policy
from trainer.policies.local import LocalModel
from trainer.rollout import run_rollout
from trainer.rollout_models import RolloutConfig, RolloutResult
from trainer.verl import agent_loop as agent_loop_module
from trainer.verl.agent_loop import REWARD_INFO_KEYS, EpisodeFailedError, GroupDroppedError, failure_counts

pytestmark = pytest.mark.slow  # SmolLM2 is loaded once per session (~30 s)

TASK = "toybank-transfer-001"


def server_score(url: str, episode_id: str) -> Any:
    async def go() -> Any:
        async with AsyncGroundstateClient(url) as client:
            return (await client.episode(episode_id)).score

    return asyncio.run(go())


def spans(mask: list[int]) -> list[tuple[int, int, int]]:
    """Maximal runs of equal mask values: (value, start, end)."""
    runs: list[tuple[int, int, int]] = []
    start = 0
    for i in range(1, len(mask) + 1):
        if i == len(mask) or mask[i] != mask[start]:
            runs.append((mask[start], start, i))
            start = i
    return runs


def local_rollout(url: str, task_id: str) -> RolloutResult:
    """The same episode through the `local:` evaluation policy (same model, greedy, no cache)."""
    policy = load_policy("local:smollm2?max_new_tokens=48&kv_cache=false")

    async def go() -> RolloutResult:
        async with AsyncGroundstateClient(url) as client:
            return await run_rollout(client, policy, task_id, RolloutConfig(max_turns=4))

    return asyncio.run(go())


def test_loop_with_smollm2_sees_what_local_evaluation_sees(
    live_server: LiveServer, smollm2: LocalModel
) -> None:
    generator = TransformersServerManager(smollm2)
    loop = make_loop(
        verl_config(live_server.url, "groundstate.max_new_tokens=48", "groundstate.max_turns=4"),
        generator,
        smollm2.tokenizer,
    )
    output = asyncio.run(loop.run(dict(SAMPLING), **row(TASK)))
    info = output.extra_fields["groundstate"]

    # training renders what evaluation renders: the prompt and, greedy, the whole token sequence
    local = local_rollout(live_server.url, TASK)
    assert output.prompt_ids == local.turns[0].context_ids
    assert output.prompt_ids + output.response_ids == local.token_ids()
    assert output.response_mask == local.loss_mask()[len(output.prompt_ids) :]
    assert generator.calls[0]["prompt_ids"] == output.prompt_ids

    # the model-token spans decode to exactly the model's turns, the environment spans to what came between
    runs = spans(output.response_mask)
    generated = [output.response_ids[s:e] for value, s, e in runs if value == 1]
    environment = [output.response_ids[s:e] for value, s, e in runs if value == 0]
    assert len(generated) == len(generator.calls) == len(local.turns)
    for ids, turn in zip(generated, local.turns, strict=True):
        assert ids == turn.token_ids
    decode = smollm2.tokenizer.decode
    last_turn = max(i for i, m in enumerate(local.messages) if m["role"] == "assistant")
    between = [m for m in local.messages[2:last_turn] if m["role"] != "assistant"]  # after it: never rendered
    env_text = "".join(decode(ids) for ids in environment)
    for message in between:
        assert message["content"].strip() in env_text
    assert "You are" not in env_text  # no system prompt re-rendered between turns

    # log-probs line up with the response tokens: the model's own on its tokens, 0 on the environment's
    assert output.response_logprobs is not None
    assert len(output.response_logprobs) == len(output.response_ids)
    local_logprobs = [lp for t in local.turns for lp in (t.logprobs or [])]
    mine = [lp for lp, m in zip(output.response_logprobs, output.response_mask, strict=True) if m == 1]
    assert mine == pytest.approx(local_logprobs, abs=1e-4)
    assert all(
        lp == 0.0 for lp, m in zip(output.response_logprobs, output.response_mask, strict=True) if m == 0
    )

    # the reward is the server's score of that very episode
    score = server_score(live_server.url, info["episode_id"])
    assert score is not None and score.status == "scored"
    assert output.reward_score == float(score.reward)
    extra = output.extra_fields["reward_extra_info"]
    assert set(extra) == set(REWARD_INFO_KEYS)
    assert extra["gs_reward"] == output.reward_score
    assert extra["gs_turns"] == len(local.turns) and extra["gs_attempts"] == 1
    assert extra[f"gs_end_{info['end_reason']}"] == 1.0
    assert output.metrics.generate_sequences > 0 and output.metrics.tool_calls >= 0


def test_gold_calls_score_one_and_silence_scores_zero(live_server: LiveServer, smollm2: LocalModel) -> None:
    config = verl_config(live_server.url)
    gold = make_loop(config, ScriptedServerManager(smollm2, GOLD_TRANSFER), smollm2.tokenizer)
    silent = make_loop(config, ScriptedServerManager(smollm2, []), smollm2.tokenizer)

    async def both() -> tuple[Any, Any]:
        return await asyncio.gather(
            gold.run(dict(SAMPLING), **row(TASK)), silent.run(dict(SAMPLING), **row(TASK))
        )

    won, lost = asyncio.run(both())
    assert won.reward_score == 1.0 and won.extra_fields["reward_extra_info"]["gs_tool_calls"] == 2
    assert lost.reward_score == 0.0 and lost.extra_fields["groundstate"]["end_reason"] == "empty_turn"
    for output in (won, lost):
        score = server_score(live_server.url, output.extra_fields["groundstate"]["episode_id"])
        assert output.reward_score == float(score.reward)
        # verl's rm_scores put the reward on the last response token
        assert output.as_dict()["rm_scores"][-1].item() == output.reward_score
    # the gold episode's tool results came back as environment tokens: the account and the transfer's id
    env = smollm2.tokenizer.decode(
        [t for t, m in zip(won.response_ids, won.response_mask, strict=True) if m == 0]
    )
    assert '"balance_cents": 10000' in env and "TR-" in env and "Thanks!" in env


def test_response_budget_ends_the_episode_and_it_is_scored(
    live_server: LiveServer, smollm2: LocalModel
) -> None:
    chatter = ["Let me think about that for a while. " * 6] * 30
    loop = make_loop(
        verl_config(live_server.url, "data.max_response_length=160"),
        ScriptedServerManager(smollm2, chatter),
        smollm2.tokenizer,
    )
    output = asyncio.run(loop.run(dict(SAMPLING), **row(TASK)))
    assert len(output.response_ids) <= 160
    assert output.extra_fields["groundstate"]["end_reason"] in ("context_overflow", "user_done")
    assert output.reward_score == 0.0


def test_a_server_stopped_mid_episode_yields_no_reward(live_server: LiveServer, smollm2: LocalModel) -> None:
    async def stop_on_first_turn(call: int) -> None:
        if call == 1:
            await asyncio.to_thread(live_server.stop)

    loop = make_loop(
        verl_config(live_server.url, "groundstate.retries=1"),
        ScriptedServerManager(smollm2, GOLD_TRANSFER, before=stop_on_first_turn),
        smollm2.tokenizer,
    )
    before = failure_counts()
    with pytest.raises(EpisodeFailedError, match="every attempt failed on the backend"):
        asyncio.run(loop.run(dict(SAMPLING), **row(TASK)))
    after = failure_counts()
    assert after.failed_attempts == before.failed_attempts + 2
    assert after.failed_episodes == before.failed_episodes + 1


def test_a_failed_attempt_is_retried_as_a_fresh_episode(live_server: LiveServer, smollm2: LocalModel) -> None:
    def restart_soon() -> None:
        time.sleep(1.5)  # down past the client's own resends of the keyed call (shared.client.TOOL_RESENDS)
        live_server.start()

    async def bounce_the_server(call: int) -> None:
        if call == 1:  # attempt 1, turn 1: the server goes down, and comes back before the retry
            await asyncio.to_thread(live_server.stop)
            threading.Thread(target=restart_soon, daemon=True).start()

    loop = make_loop(
        verl_config(live_server.url, "groundstate.retry_backoff_s=10"),  # a jittered 5-10 s: back by then
        ScriptedServerManager(smollm2, [GOLD_TRANSFER[0], *GOLD_TRANSFER], before=bounce_the_server),
        smollm2.tokenizer,
    )
    output = asyncio.run(loop.run(dict(SAMPLING), **row(TASK)))
    assert output.extra_fields["reward_extra_info"]["gs_attempts"] == 2
    assert output.reward_score == 1.0
    # the tokens are the second episode's alone: one prompt, the gold turns, no trace of the first attempt
    assert output.response_mask[0] == 1 and output.extra_fields["reward_extra_info"]["gs_turns"] == 3


def test_one_failed_episode_drops_its_whole_group(live_server: LiveServer, smollm2: LocalModel) -> None:
    config = verl_config(live_server.url, "groundstate.retries=1")
    uid = "group-under-test"
    finished = asyncio.Event()

    async def wait_for_the_others(call: int) -> None:
        if call == 1:  # the slow session: the server goes away once its siblings have finished
            while agent_loop_module._GROUPS[uid].settled < 2:
                await asyncio.sleep(0.05)
            await asyncio.to_thread(live_server.stop)
            finished.set()

    sessions = [
        make_loop(config, ScriptedServerManager(smollm2, GOLD_TRANSFER), smollm2.tokenizer),
        make_loop(config, ScriptedServerManager(smollm2, []), smollm2.tokenizer),
        make_loop(
            config,
            ScriptedServerManager(smollm2, GOLD_TRANSFER, before=wait_for_the_others),
            smollm2.tokenizer,
        ),
    ]
    before = failure_counts()

    async def group() -> list[Any]:
        tasks = [asyncio.create_task(s.run(dict(SAMPLING), **row(TASK, uid=uid))) for s in sessions]
        return await asyncio.gather(*tasks, return_exceptions=True)

    results = asyncio.run(group())
    assert finished.is_set()
    assert [type(r) for r in results] == [GroupDroppedError, GroupDroppedError, EpisodeFailedError]
    after = failure_counts()
    assert after.dropped_groups == before.dropped_groups + 1
    assert after.dropped_sessions == before.dropped_sessions + 3
    assert uid not in agent_loop_module._GROUPS


def test_a_row_without_a_task_id_is_refused(live_server: LiveServer, smollm2: LocalModel) -> None:
    loop = make_loop(verl_config(live_server.url), ScriptedServerManager(smollm2, []), smollm2.tokenizer)
    with pytest.raises(ValueError, match=r"extra_info\.task_id"):
        asyncio.run(loop.run(dict(SAMPLING), raw_prompt=[], extra_info={"index": 0}))


def test_a_prompt_longer_than_the_budget_is_a_config_error(
    live_server: LiveServer, smollm2: LocalModel
) -> None:
    loop = make_loop(
        verl_config(live_server.url, "data.max_prompt_length=64"),
        ScriptedServerManager(smollm2, []),
        smollm2.tokenizer,
    )
    with pytest.raises(ValueError, match=r"rollout\.prompt_length=64"):
        asyncio.run(loop.run(dict(SAMPLING), **row(TASK)))


def test_no_client_session_is_left_open(live_server: LiveServer, smollm2: LocalModel) -> None:
    """The last episode of a worker closes the shared pool: nothing is left for the garbage collector."""
    loop = make_loop(
        verl_config(live_server.url), ScriptedServerManager(smollm2, GOLD_TRANSFER), smollm2.tokenizer
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        output = asyncio.run(loop.run(dict(SAMPLING), **row(TASK)))
        gc.collect()
    assert output.reward_score == 1.0
    assert agent_loop_module._CLIENTS == {}
    assert [str(w.message) for w in caught if "Unclosed" in str(w.message)] == []
