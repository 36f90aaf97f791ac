"""Minting for the adaptive curriculum: which families, when, how many, and that no test task gets in."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from env_server.app import create_app
from env_server.domain.registry import DomainRegistry
from env_server.settings import Settings
from groundstate.cli import app
from shared.client import AsyncGroundstateClient
from shared.curriculum import family_of
from trainer.curriculum import Curriculum, CurriculumError, CurriculumSettings, GroupOutcome
from trainer.minting import Minter, MintOutcome

G = 4
STARTER_FAMILIES = [f"starter/{f}" for f in ("renew", "return", "renew-two", "return-renew")]


@pytest.fixture(scope="module")
def starter_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    store = tmp_path_factory.mktemp("store") / "store.db"
    yield create_app(
        Settings(store_url=f"sqlite:///{store}"), registry=DomainRegistry.discover(only=["starter"])
    )


def _top_up(application: object, minter: Minter, curriculum: Curriculum, slots: int) -> MintOutcome:
    async def run() -> MintOutcome:
        transport = httpx.ASGITransport(app=application)  # type: ignore[arg-type]
        async with AsyncGroundstateClient("http://test", transport=transport) as client:
            return await minter.top_up(curriculum, slots, client)

    return asyncio.run(run())


def _played(curriculum: Curriculum, task_id: str, wins: int, times: int = 5) -> None:
    """`times` steps in which the task's group of G won `wins` episodes."""
    for _ in range(times):
        curriculum.update([GroupOutcome(task_id=task_id, rewards=[1] * wins + [0] * (G - wins))])


def test_untried_families_are_in_the_band_and_mastered_or_hopeless_ones_leave_it() -> None:
    ids = ["starter-gen-renew-900000", "starter-gen-return-900000", "starter-gen-renew-two-900000"]
    curriculum = Curriculum.start(ids, CurriculumSettings(group=G))
    assert curriculum.families_in_band(STARTER_FAMILIES) == sorted(STARTER_FAMILIES)  # the prior, all equal
    for _ in range(5):  # renew mastered, return hopeless, renew-two split: the most informative
        curriculum.update(
            [
                GroupOutcome(task_id=t, rewards=[1] * w + [0] * (G - w))
                for t, w in zip(ids, [G, 0, 2], strict=True)
            ]
        )
    in_band = curriculum.families_in_band(STARTER_FAMILIES)
    assert in_band[0] == "starter/renew-two"
    assert "starter/renew" not in in_band and "starter/return" not in in_band
    assert "starter/return-renew" in in_band  # never tried: still the prior's chance


def test_the_shortfall_is_what_the_band_lacks_for_a_step() -> None:
    curriculum = Curriculum.start(["a", "b", "c"], CurriculumSettings(group=G))
    assert curriculum.shortfall(2) == 0 and curriculum.shortfall(5) == 2
    _played(curriculum, "a", wins=G, times=8)  # retired, out of the band
    assert curriculum.shortfall(3) == 1


def test_a_thin_band_is_topped_up_from_its_families_and_the_next_record_counts_them(
    starter_app: object,
) -> None:
    curriculum = Curriculum.start(["starter-renew-101", "starter-return-101"], CurriculumSettings(group=G))
    minter = Minter(per_step=3, families=STARTER_FAMILIES, seed=4)
    outcome = _top_up(starter_app, minter, curriculum, slots=6)  # the band holds 2 of 6
    assert outcome.asked == {"starter": 3} and len(outcome.minted) == 3
    assert all(family_of(t) in STARTER_FAMILIES for t in outcome.minted)
    assert set(outcome.minted) <= set(curriculum.active())
    drawn = curriculum.draw(5)
    record = curriculum.update([GroupOutcome(task_id=t, rewards=[1, 0, 1, 0]) for t in drawn])
    assert record.added == outcome.minted and record.minted == 3
    assert curriculum.update([]).minted == 0  # counted once


def test_a_full_band_mints_nothing_and_a_mastered_family_is_not_asked_for(starter_app: object) -> None:
    pool = [f"starter-renew-1{i:02d}" for i in range(1, 9)]
    curriculum = Curriculum.start(pool, CurriculumSettings(group=G))
    minter = Minter(per_step=4, families=STARTER_FAMILIES)
    assert _top_up(starter_app, minter, curriculum, slots=4).asked == {}
    mastered = "starter-gen-renew-000001"
    curriculum.add([mastered])
    _played(curriculum, mastered, wins=G, times=10)
    outcome = _top_up(starter_app, minter, curriculum, slots=12)
    assert outcome.minted and not [t for t in outcome.minted if family_of(t) == "starter/renew"]


def test_a_minted_task_that_is_not_a_train_task_is_refused_before_the_curriculum_sees_it() -> None:
    """The server never mints a test task (its own tests prove it); this side does not rely on that."""
    leaked = {
        "id": "starter-renew-001", "domain": "starter", "split": "test", "kind": "action",
        "difficulty_tags": [], "description": "", "has_communicate": False, "has_rubric": False,
        "user": {"persona": "p", "goal": "g", "script": ["hi"]},
    }  # fmt: skip

    def server(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"tasks": [leaked], "discarded": []})

    async def run(curriculum: Curriculum) -> None:
        transport = httpx.MockTransport(server)
        async with AsyncGroundstateClient("http://test", transport=transport) as client:
            await Minter(per_step=2, families=STARTER_FAMILIES).top_up(curriculum, 4, client)

    curriculum = Curriculum.start(["starter-renew-101"], CurriculumSettings(group=G))
    with pytest.raises(CurriculumError, match="not train tasks"):
        asyncio.run(run(curriculum))
    assert list(curriculum.state.tasks) == ["starter-renew-101"]


def test_minting_without_the_adaptive_curriculum_is_refused_naming_the_option(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app,
        ["train", "local", "--pool", str(tmp_path / "p.json"), "--steps", "1", "--out", str(tmp_path / "o"),
         "--mint-per-step", "2"],
    )  # fmt: skip
    assert result.exit_code == 2
    assert "mint" in result.output and "adaptive" in result.output
