"""The adaptive curriculum's core: posteriors, the band draw, decay, retirement, resumption."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trainer.curriculum import (
    Curriculum,
    CurriculumError,
    CurriculumSettings,
    GroupOutcome,
    family_of,
    mixed_chance,
)

G = 4


def curriculum(n: int = 12, **overrides: float) -> Curriculum:
    return Curriculum.start([f"t{i:02d}" for i in range(n)], CurriculumSettings(group=G, **overrides))


def play(c: Curriculum, rates: dict[str, float], slots: int, rng: random.Random) -> list[GroupOutcome]:
    """One simulated step: each drawn task's group of G episodes at the task's true success rate."""
    drawn = c.draw(slots)
    outcomes = [
        GroupOutcome(task_id=t, rewards=[int(rng.random() < rates[t]) for _ in range(G)]) for t in drawn
    ]
    c.update(outcomes)
    return outcomes


@settings(max_examples=200, deadline=None)
@given(st.floats(0.05, 50), st.floats(0.05, 50))
def test_mixed_chance_for_pairs_is_the_closed_form_of_the_beta_moments(alpha: float, beta: float) -> None:
    # E[2p(1-p)] under Beta(a, b) is 2ab / ((a+b)(a+b+1))
    expected = 2 * alpha * beta / ((alpha + beta) * (alpha + beta + 1))
    assert mixed_chance(alpha, beta, 2) == pytest.approx(expected, rel=1e-9, abs=1e-12)


def test_mixed_chance_agrees_with_sampling_and_vanishes_at_the_extremes() -> None:
    rng = random.Random(0)
    draws = [rng.betavariate(3.5, 1.5) for _ in range(200_000)]
    sampled = sum(1 - p**G - (1 - p) ** G for p in draws) / len(draws)
    assert mixed_chance(3.5, 1.5, G) == pytest.approx(sampled, abs=0.005)
    assert mixed_chance(0.5, 200.5, G) < 0.02 and mixed_chance(200.5, 0.5, G) < 0.02


def test_evidence_decays_every_step_and_new_outcomes_are_added() -> None:
    c = curriculum(3, decay=0.5)
    c.update([GroupOutcome(task_id="t00", rewards=[1, 1, 0, 0])])
    c.update([GroupOutcome(task_id="t01", rewards=[1, 0, 0, 0])])
    first, second, unseen = (c.state.tasks[t] for t in ("t00", "t01", "t02"))
    assert (first.successes, first.failures) == (1.0, 1.0)  # halved once since it was seen
    assert (second.successes, second.failures) == (1.0, 3.0)
    assert (unseen.successes, unseen.failures, unseen.last_drawn) == (0.0, 0.0, None)
    assert first.last_drawn == 1 and second.last_drawn == 2 and c.state.step == 2


def test_a_mastered_task_is_retired_and_never_drawn_again() -> None:
    c = curriculum(6, explore=0.5)
    for _ in range(4):
        c.update([GroupOutcome(task_id="t00", rewards=[1] * G)])
    assert c.state.tasks["t00"].retired is None  # 16 straight successes, discounted: not yet sure
    c.update([GroupOutcome(task_id="t00", rewards=[1] * G)])
    assert c.state.tasks["t00"].retired == 5
    assert "t00" not in c.active() and "t00" not in c.band()
    assert all("t00" not in c.draw(5) for _ in range(5))


def test_the_band_holds_the_tasks_groups_split_on_and_leaves_out_hopeless_and_mastered_ones() -> None:
    c = curriculum(3)
    for _ in range(4):
        c.update(
            [
                GroupOutcome(task_id="t00", rewards=[0] * G),  # hopeless
                GroupOutcome(task_id="t01", rewards=[1, 0, 1, 0]),  # learning
                GroupOutcome(task_id="t02", rewards=[1, 1, 1, 0]),  # nearly there
            ]
        )
    assert c.band()[0] == "t01" and "t00" not in c.band()
    assert c.informative("t01") > c.informative("t02") > c.informative("t00")


def test_a_hopeless_task_left_alone_drifts_back_into_reach_of_exploration() -> None:
    c = curriculum(2, decay=0.7)
    for _ in range(3):
        c.update([GroupOutcome(task_id="t00", rewards=[0] * G)])
    low = c.informative("t00")
    for _ in range(6):
        c.update([GroupOutcome(task_id="t01", rewards=[1, 0, 1, 0])])
    assert c.informative("t00") > low  # its evidence decayed towards the prior


def test_draws_take_the_exploration_share_from_the_least_recently_played_tasks() -> None:
    c = curriculum(10, explore=0.5)
    c.update([GroupOutcome(task_id=t, rewards=[1, 0, 1, 0]) for t in ("t00", "t01", "t02", "t03")])
    drawn = c.draw(4)
    assert len(drawn) == len(set(drawn)) == 4
    never = {f"t{i:02d}" for i in range(4, 10)}
    assert len(set(drawn) & never) >= 2  # half the slots explore; never-drawn tasks come first


def test_draws_never_leave_the_pool_and_a_resumed_curriculum_draws_what_the_uninterrupted_one_would(
    tmp_path: Path,
) -> None:
    rates = {f"t{i:02d}": i / 12 for i in range(12)}
    straight, resumed = curriculum(), curriculum()
    rng_a, rng_b = random.Random(7), random.Random(7)
    for _ in range(3):
        play(straight, rates, 4, rng_a)
        play(resumed, rates, 4, rng_b)
    resumed = Curriculum.load(resumed.save(tmp_path / "curriculum.json"))
    for _ in range(5):
        a, b = play(straight, rates, 4, rng_a), play(resumed, rates, 4, rng_b)
        assert a == b and {o.task_id for o in a} <= set(rates)
    assert straight.state == resumed.state


def test_an_outcome_of_a_task_outside_the_curriculum_is_refused() -> None:
    c = curriculum(2)
    with pytest.raises(CurriculumError, match="hotel-cancel-001"):
        c.update([GroupOutcome(task_id="hotel-cancel-001", rewards=[1, 0])])


def test_a_curriculum_without_tasks_or_with_every_task_retired_says_so() -> None:
    with pytest.raises(CurriculumError, match="no task"):
        Curriculum.start([], CurriculumSettings(group=G))
    c = curriculum(1)
    for _ in range(5):
        c.update([GroupOutcome(task_id="t00", rewards=[1] * G)])
    with pytest.raises(CurriculumError, match="retired"):
        c.draw(1)


def test_a_corrupt_state_file_is_refused_with_its_path(tmp_path: Path) -> None:
    path = tmp_path / "curriculum.json"
    path.write_text('{"settings": {"group": 1}, "tasks": {}}')
    with pytest.raises(CurriculumError, match=r"curriculum\.json"):
        Curriculum.load(path)


def test_families_of_generated_tasks_pool_their_evidence() -> None:
    assert family_of("hotel-gen-late-checkout-000012") == "hotel/late-checkout"
    assert family_of("hotel-cancel-refund-002") is None and family_of("x-gen-abc") is None
    ids = ["hotel-gen-refund-000001", "hotel-gen-refund-000002", "hotel-cancel-001"]
    c = Curriculum.start(ids, CurriculumSettings(group=G, decay=1.0))
    c.update(
        [GroupOutcome(task_id=ids[0], rewards=[1, 1, 1, 1]), GroupOutcome(task_id=ids[1], rewards=[0] * 4)]
    )
    assert c.families() == {"hotel/refund": pytest.approx(0.5)}
