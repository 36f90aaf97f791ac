"""`groundstate train local` for real: SmolLM2 trained with TRL on starter tasks played on a live server."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from env_server.app import create_app
from env_server.domain.registry import DomainRegistry
from env_server.settings import Settings
from groundstate.cli import app
from shared.client import AsyncGroundstateClient
from tests.live_server import serve
from trainer.curriculum import CURRICULUM_FILE, Curriculum, StepRecord
from trainer.groups import EpisodeGroup, StepGroups
from trainer.policies.local import LocalOptions, LocalPolicy, load_model
from trainer.results import read_results
from trainer.rollout import run_rollout
from trainer.rollout_models import RolloutConfig, RolloutResult
from trainer.train_local import LOG_FILE, StepLog, trl_batch

runner = CliRunner()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    store = tmp_path_factory.mktemp("store")
    settings = Settings(store_url=f"sqlite:///{store}/store.db", sandbox_url="sqlite://")
    with serve(create_app(settings, registry=DomainRegistry.discover(only=["starter"]))) as url:
        yield url


def pool_of(server: str, tmp_path: Path, tasks: str) -> Path:
    """A pool through the real path: probe (the gold-replaying policy solves every task) and select."""
    probe = runner.invoke(
        app, ["probe", "--policy", "replay", "--server", server, "--tasks", tasks, "--trials", "1",
              "--out", str(tmp_path / "probe"), "--quiet"],
    )  # fmt: skip
    assert probe.exit_code == 0, probe.output
    pool = tmp_path / "pool.json"
    selected = runner.invoke(
        app,
        ["select", str(tmp_path / "probe"), "--out", str(pool), "--keep", "too_easy", "--min-trials", "1"],
    )
    assert selected.exit_code == 0, selected.output
    return pool


def test_train_local_refuses_a_pool_smaller_than_a_step(server: str, tmp_path: Path) -> None:
    pool = pool_of(server, tmp_path, "starter-renew-101")
    result = runner.invoke(
        app, ["train", "local", "--pool", str(pool), "--steps", "1", "--out", str(tmp_path / "out"),
              "--server", server, "--tasks-per-step", "2", "--quiet"],
    )  # fmt: skip
    assert result.exit_code == 1
    assert "holds 1 tasks, fewer than --tasks-per-step 2" in result.output
    bad = runner.invoke(
        app, ["train", "local", "--pool", str(pool), "--steps", "1", "--out", str(tmp_path / "out"),
              "--server", server, "--tasks-per-step", "1", "--episodes-per-task", "3", "--micro-batch", "2"],
    )  # fmt: skip
    assert bad.exit_code == 1 and "--micro-batch 2 must divide" in bad.output


def test_train_local_takes_tasks_or_domains_without_a_pool(server: str, tmp_path: Path) -> None:
    base = ["train", "local", "--steps", "1", "--out", str(tmp_path / "out"), "--server", server, "--quiet"]
    neither = runner.invoke(app, base)
    assert neither.exit_code == 2 and "give a pool" in neither.output
    whole = runner.invoke(app, [*base, "--domains", "starter", "--tasks-per-step", "1000"])
    assert whole.exit_code == 1 and "fewer than --tasks-per-step 1000" in whole.output
    assert "--tasks/--domains holds" in whole.output
    unknown = runner.invoke(app, [*base, "--domains", "nosuch", "--tasks-per-step", "1"])
    assert unknown.exit_code == 1 and "no train task of domain nosuch" in unknown.output
    test_task = runner.invoke(app, [*base, "--tasks", "starter-renew-001", "--tasks-per-step", "1"])
    assert test_task.exit_code == 1 and "has no train task starter-renew-001" in test_task.output


TASKS = ["starter-renew-101", "starter-renew-102", "starter-return-101", "starter-return-102"]


@pytest.fixture(scope="module")
def warm(server: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """SmolLM2 after `groundstate train warm-start` on the gold first call of TASKS, shared by the module.

    The base model almost never writes a valid tool call (see docs/training/learning.md), so no
    group would have both outcomes and GRPO would have nothing to learn from; the warm start makes it
    succeed sometimes, which is what these tests need to see the weights move.
    """
    out = tmp_path_factory.mktemp("warm") / "model"
    args = ["train", "warm-start", "--server", server, "--out", str(out), "--epochs", "3", "--lr", "3e-5"]
    result = runner.invoke(
        app, [*args, *(x for t in TASKS for x in ("--task", t)), "--threads", "1", "--quiet"]
    )
    assert result.exit_code == 0, result.output
    return out


def test_warm_start_refuses_test_tasks_before_loading_a_model(server: str, tmp_path: Path) -> None:
    result = runner.invoke(
        app, ["train", "warm-start", "--server", server, "--out", str(tmp_path / "m"),
              "--task", "starter-renew-101", "--task", "starter-renew-001", "--quiet"],
    )  # fmt: skip
    assert result.exit_code == 1
    assert "test-split tasks never enter training: starter-renew-001" in result.output
    assert not (tmp_path / "m").exists()


@pytest.mark.slow
def test_warm_start_targets_parse_back_into_the_gold_call_after_the_policys_own_prompt(server: str) -> None:
    from shared.client import GroundstateClient
    from trainer.policies.chat_format import EpisodeTokens
    from trainer.policies.local import read_model, wrap_model
    from trainer.warm_start import WarmStartConfig, chosen_tasks, collect_examples

    model, tokenizer = read_model("smollm2", threads=1)
    fmt = wrap_model(model, tokenizer, "base").chat_format()
    config = WarmStartConfig(server=server, out=Path("unused"), tasks=["starter-renew-two-101"])
    with GroundstateClient(server) as client:
        (task,) = chosen_tasks(client, config)
        (example,) = collect_examples(client, fmt, [task])
        started = client.start_episode(task.id)
    messages = [{"role": "system", "content": started.system_prompt},
                {"role": "user", "content": started.first_message}]  # fmt: skip
    assert example.prompt_ids == EpisodeTokens(fmt).context(messages, started.tools), "the policy's prompt"
    turn = fmt.turn(example.target_ids, None, context_ids=[], tokens_in=0)
    assert [(c.name, c.arguments) for c in turn.tool_calls] == [("renew_loan", {"loan_id": "L-1300"})]
    assert turn.finish_reason == "tool_calls" and example.target_ids[-1] == fmt.end_of_turn_id


@pytest.mark.slow
def test_the_training_batch_masks_every_environment_token(server: str, warm: Path) -> None:
    start = warm
    policy = LocalPolicy(str(start), LocalOptions(max_new_tokens=40, temperature=0.0, threads=1))

    async def play() -> RolloutResult:
        client = AsyncGroundstateClient(server)
        try:
            return await run_rollout(client, policy, "starter-renew-101", RolloutConfig(max_turns=2))
        finally:
            await client.aclose()

    played = asyncio.run(play())
    assert played.tool_calls >= 1 and len(played.turns) == 2, played.messages
    # trl_batch keeps only groups with both outcomes: pair the episode with a copy scored the other way
    other = played.model_copy(update={"reward": 1 - (played.reward or 0)})
    batch = trl_batch(StepGroups(groups=[EpisodeGroup(task_id=played.task_id, rollouts=[played, other],
                                                      complete=True)]), 2, 0)  # fmt: skip
    ids, cut = played.token_ids(), len(played.turns[0].context_ids or [])
    assert batch["prompt_ids"][0] == ids[:cut] and batch["completion_ids"][0] == ids[cut:]
    mask = batch["env_mask"][0]
    assert len(mask) == len(batch["completion_ids"][0]) == len(batch["logprobs"][0])
    tokenizer = load_model(str(start)).tokenizer
    env = tokenizer.decode([t for t, m in zip(ids[cut:], mask, strict=True) if m == 0])
    own = tokenizer.decode([t for t, m in zip(ids[cut:], mask, strict=True) if m == 1])
    result = next(m["content"] for m in played.messages if m["role"] == "tool")
    assert "<tool_response>" in env and result in env, "the server's tool result is environment text"
    assert own.startswith("<tool_call>"), "the model's own call is trained on"
    assert [t for t, m in zip(ids[cut:], mask, strict=True) if m == 1] == [
        t for turn in played.turns for t in turn.token_ids or []
    ], "exactly the sampled tokens are trained on"
    assert batch["episode_reward"] == [float(played.reward or 0), float(other.reward or 0)]


@pytest.mark.slow
def test_train_local_updates_the_model_masks_the_environment_and_saves_an_evaluable_checkpoint(
    server: str, warm: Path, tmp_path: Path
) -> None:
    import torch
    from safetensors.torch import load_file

    pool = pool_of(server, tmp_path, ",".join(TASKS))
    start = warm
    out = tmp_path / "run"
    args = ["train", "local", "--pool", str(pool), "--steps", "2", "--out", str(out), "--server", server]
    args += ["--model", str(start)]
    args += ["--tasks-per-step", "2", "--episodes-per-task", "3", "--micro-batch", "3", "--lr", "1e-4"]
    args += ["--max-new-tokens", "40", "--max-turns", "2", "--replacements", "1", "--save-every", "1"]
    args += ["--threads", "1", "--seed", "3", "--quiet"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    lines = [StepLog.model_validate_json(x) for x in (out / LOG_FILE).read_text().splitlines()]
    assert [x.step for x in lines] == [1, 2]
    for line in lines:
        assert line.groups == 2 and line.episodes >= 6 and line.backend_errors == 0
        assert line.informative_groups + line.dropped == 2
        assert line.uninformative + line.incomplete >= line.replaced
        assert line.times.generation_s > 0 and 0 < line.env_share < 1
    informative = [x for x in lines if x.informative_groups]
    assert all(x.trained_tokens > 0 and x.env_tokens > 0 for x in informative)
    assert all(x.trained_tokens == 0 and x.loss == 0 for x in lines if not x.informative_groups)

    # the weights move exactly when a group with both outcomes was trained on (whether the sampled groups
    # are informative depends on the model's samples; the batch's masking has its own test above)
    before = load_file(str(start / "model.safetensors"))
    after = load_file(str(out / "final" / "model.safetensors"))
    changed = [k for k, v in after.items() if k in before and not torch.equal(before[k], v)]
    assert bool(changed) == bool(informative), (len(changed), [x.informative_groups for x in lines])
    assert sorted(p.name for p in (out / "checkpoints").iterdir()) == ["step-00001", "step-00002"]
    run = json.loads((out / "run.json").read_text())
    assert run["config"]["episodes_per_task"] == 3 and len(run["pool_tasks"]) == 4
    assert run["config"]["model"].startswith("model@")  # the start model by name and fingerprint, no path

    evaluated = runner.invoke(
        app, ["eval", "--policy", f"local:{out / 'final'}?max_new_tokens=40&threads=1", "--server", server,
              "--tasks", "starter-renew-001", "--trials", "1", "--max-turns", "2",
              "--out", str(tmp_path / "ev"), "--quiet"],
    )  # fmt: skip
    assert evaluated.exit_code == 0, evaluated.output
    (trial,) = read_results(tmp_path / "ev")
    assert trial.status == "scored" and trial.policy.startswith("local:final@")  # no path of this machine
    assert str(tmp_path) not in (tmp_path / "ev" / "run.json").read_text()


@pytest.mark.slow
def test_smollm2_warm_starts_plays_and_trains_in_the_llama_json_format(server: str, tmp_path: Path) -> None:
    """The format named on the command line reaches the warm start's targets, the policy's parser and TRL.

    SmolLM2's template knows no tools, so `--tool-format llama3_json` renders them (and its calls) as Llama
    3.x JSON text: the warm-started model then writes `{"name": ..., "parameters": ...}` calls, which the
    `local:` policy reads with the Llama parser, and one `train local` step runs on such episodes.
    """
    warm_llama = tmp_path / "warm"
    args = ["train", "warm-start", "--server", server, "--out", str(warm_llama), "--epochs", "3"]
    args += ["--lr", "3e-5", "--tool-format", "llama3_json", "--threads", "1", "--quiet"]
    result = runner.invoke(app, [*args, *(x for t in TASKS for x in ("--task", t))])
    assert result.exit_code == 0, result.output

    loaded = load_model(str(warm_llama), threads=1)
    policy = LocalPolicy(str(warm_llama), LocalOptions(max_new_tokens=48, tool_format="llama3_json"))

    async def first_turn() -> RolloutResult:
        async with AsyncGroundstateClient(server) as client:
            return await run_rollout(client, policy, TASKS[0], RolloutConfig(max_turns=1))

    played = asyncio.run(first_turn())
    text = loaded.tokenizer.decode(played.turns[0].token_ids or [], skip_special_tokens=True)
    assert text.lstrip().startswith('{"name"') and '"parameters"' in text, text
    (call,) = played.turns[0].tool_calls
    assert call.parse_error is None and call.name, call

    pool = pool_of(server, tmp_path, ",".join(TASKS))
    out = tmp_path / "run"
    args = ["train", "local", "--pool", str(pool), "--steps", "1", "--out", str(out), "--server", server]
    args += ["--model", str(warm_llama), "--tool-format", "llama3_json", "--tasks-per-step", "2"]
    args += ["--episodes-per-task", "2", "--micro-batch", "2", "--max-new-tokens", "40", "--max-turns", "2"]
    args += ["--replacements", "0", "--threads", "1", "--seed", "1", "--quiet"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    (line,) = [StepLog.model_validate_json(x) for x in (out / LOG_FILE).read_text().splitlines()]
    assert line.step == 1 and line.episodes == 4 and line.backend_errors == 0
    assert json.loads((out / "run.json").read_text())["config"]["tool_format"] == "llama3_json"


@pytest.mark.slow
def test_an_adaptive_curriculum_draws_from_the_pool_and_a_run_from_a_checkpoint_continues_it(
    server: str, warm: Path, tmp_path: Path
) -> None:
    pool = pool_of(server, tmp_path, ",".join(TASKS))
    common = ["--server", server, "--tasks-per-step", "2", "--episodes-per-task", "2", "--micro-batch", "2"]
    common += ["--max-new-tokens", "24", "--max-turns", "1", "--replacements", "1", "--save-every", "1"]
    common += ["--threads", "1", "--seed", "5", "--quiet", "--curriculum", "adaptive", "--pool", str(pool)]
    first = tmp_path / "first"
    result = runner.invoke(
        app, ["train", "local", "--steps", "1", "--out", str(first), "--model", str(warm), *common]
    )
    assert result.exit_code == 0, result.output
    checkpoint = first / "checkpoints" / "step-00001"
    saved = Curriculum.load(checkpoint / CURRICULUM_FILE)
    (record,) = [
        StepRecord.model_validate_json(x) for x in (first / "curriculum.jsonl").read_text().splitlines()
    ]
    assert saved.state.step == 1 and set(saved.state.tasks) == set(TASKS)  # the pool, and only the pool
    assert record.groups >= 2 and set(record.tasks) <= set(TASKS)
    assert sum(e.drawn for e in saved.state.tasks.values()) == record.groups

    second = tmp_path / "second"
    args = ["train", "local", "--steps", "1", "--out", str(second), "--model", str(checkpoint), *common]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    resumed = Curriculum.load(second / CURRICULUM_FILE)
    assert resumed.state.step == 2  # continued from the checkpoint's step 1, not started over
    assert sum(e.drawn for e in resumed.state.tasks.values()) > record.groups
