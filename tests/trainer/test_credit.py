"""Per-turn credit: the server's per-call credit on a real rollout's turns, and the opt-in shaping."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from env_server.app import create_app
from env_server.domain.registry import DomainRegistry
from env_server.settings import Settings
from shared.client import AsyncGroundstateClient
from tests.live_server import serve
from tests.toy_domain import domain as toy_domain
from trainer.credit import MAX_CREDIT_WEIGHT, partial_progress, shaped_reward, turn_credit
from trainer.policies import Turn
from trainer.policies.base import ToolCall
from trainer.policies.scripted import RecordedPolicy
from trainer.rollout import run_rollout
from trainer.rollout_models import RolloutConfig, RolloutResult

TASK = "toybank-transfer-001"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    store = tmp_path_factory.mktemp("store")
    settings = Settings(store_url=f"sqlite:///{store}/store.db", sandbox_url="sqlite://")
    with serve(create_app(settings, registry=DomainRegistry([toy_domain]))) as url:
        yield url


def call(name: str, **arguments: Any) -> ToolCall:
    return ToolCall(id=f"c-{name}-{len(arguments)}", name=name, arguments=arguments)


def transfer(amount: int) -> ToolCall:
    return call("transfer", source_id="AC-0001", target_id="AC-0002", amount_cents=amount, memo="rent")


def play(url: str, turns: list[Turn]) -> RolloutResult:
    async def go() -> RolloutResult:
        async with AsyncGroundstateClient(url) as client:
            return await run_rollout(client, RecordedPolicy(turns), TASK, RolloutConfig(max_turns=len(turns)))

    result = asyncio.run(go())
    assert result.status == "scored", result.error
    return result


def test_calls_map_to_their_turns_with_rejected_and_unparsable_ones_in_place(server: str) -> None:
    result = play(
        server,
        [
            Turn(tool_calls=[call("get_account", account_id="AC-0001"), call("no_such_tool")]),
            Turn(tool_calls=[transfer(4000)]),
            Turn(tool_calls=[ToolCall(id="c-bad", name="transfer", parse_error="bad JSON")]),
            Turn(content="The transfer is complete.", stop=True),
        ],
    )
    turns = turn_credit(result)
    assert turns is not None and result.reward == 0
    assert [t.labels for t in turns] == [["no-effect", "unknown-tool"], ["wrong"], ["unparsable"], []]
    assert [t.value for t in turns] == [0, -1, 0, 0]
    assert [t.deviation for t in turns] == [False, True, False, False]
    assert partial_progress(result) == -1 and shaped_reward(result, MAX_CREDIT_WEIGHT) == 0


def test_a_failure_that_made_the_needed_change_earns_a_share_only_when_a_recipe_opts_in(server: str) -> None:
    silent = play(server, [Turn(tool_calls=[transfer(5000)]), Turn(content="Bye.", stop=True)])
    assert silent.reward == 0  # the fact was never told
    assert [t.labels for t in turn_credit(silent) or []] == [["needed"], []]
    assert shaped_reward(silent, 0.0) == 0 and shaped_reward(silent, 0.2) == pytest.approx(0.2)
    done = play(
        server,
        [Turn(tool_calls=[transfer(5000)]), Turn(content="The transfer of 50.00 is complete.", stop=True)],
    )
    assert done.reward == 1 and shaped_reward(done, 0.2) == 1
    with pytest.raises(ValueError, match="credit weight"):
        shaped_reward(done, 0.9)


def test_an_unscored_or_creditless_result_has_no_turn_credit() -> None:
    result = RolloutResult(task_id=TASK, policy="x", status="backend_error", end_reason="backend_error")
    assert turn_credit(result) is None and partial_progress(result) == 0


def test_the_training_batch_carries_the_shaped_reward_only_when_asked(server: str) -> None:
    from trainer.groups import EpisodeGroup, StepGroups
    from trainer.train_local import trl_batch

    tokens: dict[str, Any] = {"context_ids": [3], "token_ids": [1, 2], "logprobs": [-0.1, -0.2]}
    write = Turn(tool_calls=[transfer(5000)], **tokens)
    silent = play(server, [write, Turn(content="Bye.", stop=True, **tokens)])
    done = play(server, [write, Turn(content="It is complete.", stop=True, **tokens)])
    step = StepGroups(groups=[EpisodeGroup(task_id=TASK, rollouts=[silent, done], complete=True)])
    assert trl_batch(step, 2, 0)["episode_reward"] == [0.0, 1.0]
    assert trl_batch(step, 2, 0, credit_weight=0.25)["episode_reward"] == [0.25, 1.0]
