"""Minting under Verl: a thin band makes the sampler mint; Verl's dataloader fetches the minted tasks.

As `test_curriculum.py`: Verl's trainer construction, `_init_dataloader` over the Parquet `groundstate train
dataset` writes, `_next_train_batch` for every fetch, the agent loop's stored outcomes read back by
`played_batch`, checkpoints through the dataloader's `state_dict()` and `torch.save`/`torch.load` as Verl's
`_save_checkpoint`/`_load_checkpoint` do. The server is a real one (the starter domain, whose scenario
families the server mints from and validates), each test's on a store of its own.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
import torch
from typer.testing import CliRunner

from env_server.app import create_app
from env_server.domain.registry import DomainRegistry
from env_server.settings import Settings
from groundstate.cli import app
from shared.client import GroundstateClient
from shared.curriculum import family_of
from tests.live_server import serve
from tests.trainer.verl.conftest import verl_config
from tests.trainer.verl.test_curriculum import GROUP, SLOTS, fetch, pool_of, stored_episodes, task_ids
from trainer.selection import Pool, TaskSelection, jeffreys_posterior
from trainer.verl.dataset import write_dataset

runner = CliRunner()
STARTER = ["starter-renew-101", "starter-renew-102", "starter-renew-103"]
"""The pool: as many hand-written starter tasks as a step has slots."""
MINT = 2


@pytest.fixture
def servers(tmp_path: Path) -> Iterator[Callable[[], str]]:
    """Start real starter-domain servers, each on a store of its own; yields the starter (URL per call)."""
    started: list[str] = []
    with ExitStack() as stack:

        def start() -> str:
            store = tmp_path / f"store-{len(started)}.db"
            application = create_app(
                Settings(store_url=f"sqlite:///{store}"), registry=DomainRegistry.discover(only=["starter"])
            )
            started.append(stack.enter_context(serve(application)))
            return started[-1]

        yield start


@pytest.fixture
def train_file(tmp_path: Path) -> Path:
    selections = [
        TaskSelection(
            task_id=t,
            domain="starter",
            split="train",
            trials=8,
            successes=4,
            band="medium",
            posterior=jeffreys_posterior(4, 8),
        )
        for t in STARTER
    ]
    pool = Pool(keep=["medium"], min_trials=4, tasks=selections, histogram={"medium": len(selections)})
    return write_dataset(pool, tmp_path / "train.parquet")


def make_trainer(server: str, data: Path, run: Path, *overrides: str) -> Any:
    """Verl's `__init__` and `_init_dataloader` for real, minting up to MINT tasks a step from `server`."""
    from trainer.verl.main import CurriculumTrainer

    config = verl_config(
        server,
        f"data.train_files={data}",
        f"trainer.default_local_dir={run}",
        "groundstate.curriculum=adaptive",
        f"groundstate.mint_per_step={MINT}",
        "data.dataloader_num_workers=0",
        f"data.train_batch_size={SLOTS}",
        "actor_rollout_ref.actor.ppo_mini_batch_size=3",
        f"actor_rollout_ref.rollout.n={GROUP}",
        *overrides,
    )
    trainer = CurriculumTrainer(config)
    trainer.tokenizer, trainer.processor = None, None  # `_init_tokenizer` would read a model directory
    trainer._init_dataloader()
    trainer.global_steps = 1
    return trainer


def reward(task_id: str, session: int) -> int:
    """The pool's tasks are always solved (they leave the band: it runs thin); minted ones half the time."""
    return 1 if task_id in STARTER else session % 2


def play_step(trainer: Any) -> tuple[list[str], list[str], Any]:
    """One step: the slots and one refill fetched through Verl, every group folded in through `update`."""
    from verl.protocol import DataProto

    from trainer.verl.main import played_batch

    slots = fetch(trainer, SLOTS)
    refill = fetch(trainer, 1)
    played = [played_batch(stored_episodes(b, reward)) for b in (slots, refill)]
    record = trainer.sampler.update(DataProto.concat(played))
    trainer.global_steps += 1
    return task_ids(slots), task_ids(refill), record


def checkpoint(trainer: Any, folder: Path) -> None:
    """Verl's `_save_checkpoint` (the dataloader's state as data.pt) and what `CurriculumTrainer` adds."""
    folder.mkdir(parents=True)
    torch.save(trainer.train_dataloader.state_dict(), folder / "data.pt")
    trainer.sampler.save(folder)


def resume(server: str, data: Path, run: Path, folder: Path) -> Any:
    """Verl's `_load_checkpoint`: a new trainer (its dataset read again from Parquet), the saved state."""
    resumed = make_trainer(server, data, run)
    resumed.train_dataloader.load_state_dict(torch.load(folder / "data.pt", weights_only=False))
    return resumed


def test_a_thin_band_mints_and_verl_fetches_the_minted_rows(
    servers: Callable[[], str], train_file: Path, tmp_path: Path
) -> None:
    from trainer.verl.main import played_batch

    server = servers()
    trainer = make_trainer(server, train_file, tmp_path / "run")
    sampler, dataset = trainer.sampler, trainer.train_dataset
    assert sampler.minter is not None and all(f.startswith("starter/") for f in sampler.minter.families)
    assert len(dataset) == len(STARTER)  # a full band at the start: nothing minted before step 1

    slots, _, record = play_step(trainer)  # every pool task solved by every episode: the band empties
    assert sorted(slots) == sorted(STARTER) and record.added == [] and record.band == 0
    minted = [t for t in sampler.curriculum.state.tasks if t not in STARTER]
    assert len(minted) == MINT and all(family_of(t) for t in minted)
    with GroundstateClient(server) as client:  # the server serves them as train tasks from now on
        assert all(client.task(t).split == "train" for t in minted)
    # they are rows of the dataset Verl's dataloader reads, built as `groundstate train dataset` builds rows
    assert len(dataset) == len(STARTER) + MINT
    infos = list(dataset.dataframe["extra_info"])[len(STARTER) :]
    assert [i["task_id"] for i in infos] == minted
    assert all(i["band"] == "minted" and i["split"] == "train" and i["domain"] == "starter" for i in infos)
    assert [i["index"] for i in infos] == [3, 4]
    saved = json.loads((tmp_path / "run" / "curriculum.json").read_text())
    assert set(saved["tasks"]) == set(STARTER) | set(minted)  # the saved state holds them

    slots = fetch(trainer, SLOTS)  # the band is the minted tasks: Verl's fetch returns their rows
    assert set(minted) <= set(task_ids(slots))
    fetched = {i["task_id"]: i for i in slots["extra_info"]}
    assert all(fetched[t]["band"] == "minted" and fetched[t]["split"] == "train" for t in minted)
    # `update` takes their outcomes, and the step's record counts them as added and minted
    record = trainer.sampler.update(played_batch(stored_episodes(slots, reward)))
    assert record.added == minted and record.minted == MINT
    assert all(sampler.curriculum.state.tasks[t].drawn >= 1 for t in minted)
    assert all(record.tasks[t] == pytest.approx(0.5) for t in minted)
    log = [json.loads(line) for line in (tmp_path / "run" / "curriculum.jsonl").read_text().splitlines()]
    assert [r["minted"] for r in log] == [0, MINT]


def test_a_resumed_run_appends_the_minted_rows_again_and_draws_what_an_uninterrupted_one_would(
    servers: Callable[[], str], train_file: Path, tmp_path: Path
) -> None:
    # two runs, each against a server on its own store (so both are minted the same tasks)
    first, second = servers(), servers()
    uninterrupted = make_trainer(first, train_file, tmp_path / "a")
    interrupted = make_trainer(second, train_file, tmp_path / "b")
    for _ in range(3):
        assert play_step(uninterrupted)[:2] == play_step(interrupted)[:2]
    grown = list(interrupted.train_dataset.dataframe["extra_info"])
    assert len(grown) > len(STARTER)
    folder = tmp_path / "b" / "global_step_3"
    checkpoint(interrupted, folder)
    del interrupted

    resumed = resume(second, train_file, tmp_path / "b", folder)
    assert len(resumed.train_dataset) == len(STARTER)  # read again from Parquet
    resumed.global_steps = uninterrupted.global_steps
    for step in range(3):
        assert play_step(uninterrupted)[:2] == play_step(resumed)[:2]
        if step == 0:  # the minted rows were appended before the first draw, in the order minted
            assert list(resumed.train_dataset.dataframe["extra_info"])[: len(grown)] == grown
    assert resumed.sampler.curriculum.state == uninterrupted.sampler.curriculum.state
    assert list(resumed.train_dataset.dataframe["extra_info"]) == list(
        uninterrupted.train_dataset.dataframe["extra_info"]
    )


def test_a_resumed_run_retires_the_minted_tasks_the_server_no_longer_serves(
    servers: Callable[[], str], train_file: Path, tmp_path: Path
) -> None:
    run = make_trainer(servers(), train_file, tmp_path / "run")
    play_step(run)
    minted = [t for t in run.sampler.curriculum.state.tasks if t not in STARTER]
    assert minted
    folder = tmp_path / "run" / "global_step_1"
    checkpoint(run, folder)

    elsewhere = servers()  # another store: it never minted them
    resumed = resume(elsewhere, train_file, tmp_path / "run", folder)
    drawn = task_ids(fetch(resumed, SLOTS))
    state = resumed.sampler.curriculum.state
    assert all(state.tasks[t].retired == 1 for t in minted)  # retired, their history kept
    assert not set(minted) & set(drawn)
    assert not set(minted) & set(resumed.sampler.rows)


def dry_run(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, ["train", "verl", "--server", "http://10.0.0.7:8000", "--dry-run", *args])
    return result.exit_code, result.output


def test_dry_run_refuses_minting_without_the_adaptive_curriculum(tmp_path: Path) -> None:
    recipe = write_dataset(pool_of([f"toybank-task-{i:03d}" for i in range(18)]), tmp_path / "recipe.parquet")
    data = f"data.train_files={recipe}"
    code, output = dry_run("--mint-per-step", "2", data)
    assert code == 1, output
    assert "groundstate.mint_per_step=2 (--mint-per-step)" in output and "--curriculum adaptive" in output
    code, output = dry_run(data, "groundstate.mint_per_step=2")  # the recipe's setting is checked too
    assert code == 1 and "--mint-per-step" in output
    code, output = dry_run("--curriculum", "adaptive", "--mint-per-step", "2", data)
    assert code == 0, output
    assert "groundstate.mint_per_step=2" in output.splitlines()[0] and "minting up to 2 a step" in output


def test_a_failed_mint_request_costs_fresh_tasks_not_the_run(
    train_file: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = tmp_path / "store.db"
    application = create_app(
        Settings(store_url=f"sqlite:///{store}"), registry=DomainRegistry.discover(only=["starter"])
    )
    with serve(application) as server:
        trainer = make_trainer(server, train_file, tmp_path / "run")
    # the server is gone: the band empties, the top-up's request fails, the step is still folded in
    with caplog.at_level("WARNING", logger="trainer.verl.curriculum_sampler"):
        _, _, record = play_step(trainer)
    assert record.step == 1 and record.band == 0
    assert "minting before step 2 failed" in caplog.text
    assert set(trainer.sampler.curriculum.state.tasks) == set(STARTER)
    assert len(trainer.train_dataset) == len(STARTER)
    assert sorted(task_ids(fetch(trainer, SLOTS))) == sorted(STARTER)  # the run draws on
