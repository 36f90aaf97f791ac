"""Text lint: doubled words, weekdays that contradict their dates, ids that exist nowhere."""

from __future__ import annotations

from datetime import datetime

import pytest

from env_server.validation.lint import doubled_words, unknown_ids, wrong_weekdays
from shared.tasks import Task

TODAY = datetime(2026, 10, 1, 9, 0)


def task(*script: str, persona: str = "Ann", patch: dict | None = None) -> Task:
    return Task.model_validate(
        {
            "id": "x-lint-001",
            "domain": "x",
            "split": "train",
            "user": {"persona": persona, "goal": "g", "script": list(script)},
            "initial_patch": patch or {},
        }
    )


@pytest.mark.parametrize(
    "line",
    [
        "I arrive on Tuesday 14 October 2026.",
        "I arrive on Tuesday, October 14.",
        "I arrive on Tue 2026-10-14.",
        "I arrive 14 October (Tuesday).",
        "I arrive on Monday the 14th of October",
    ],
)
def test_a_weekday_next_to_a_date_of_another_day_is_flagged(line: str) -> None:
    (found,) = wrong_weekdays(task(line), TODAY)
    assert "is a Wednesday" in found


@pytest.mark.parametrize(
    "line",
    [
        "I arrive on Wednesday 14 October 2026.",
        "Wed, Oct 14 works",
        "Thursday 1 October",
        "On Tuesday I called; my stay starts 14 October.",
    ],
)
def test_matching_or_unrelated_weekdays_pass(line: str) -> None:
    assert wrong_weekdays(task(line), TODAY) == []


def test_a_yearless_date_takes_the_year_nearest_today() -> None:
    assert wrong_weekdays(task("Saturday 2 January"), TODAY) == []  # 2 January 2027
    assert wrong_weekdays(task("Friday 2 January"), TODAY) != []


def test_doubled_words() -> None:
    assert doubled_words(task("Hi", persona="a member member of the club")) == ['persona: "member member"']
    assert doubled_words(task("I had had enough", "The The band")) == ['script[1]: "The The"']


def test_ids_must_exist_in_the_seed_or_patch_unless_a_tool_issues_them() -> None:
    line = "Booking BK-20417 and BK-20999, refund PAY-90004, room RT-04-STD."
    t = task(line, patch={"bookings": [{"booking_id": "BK-20417"}]})
    assert unknown_ids(t, frozenset({"RT-04-STD"}), 90001) == ["BK-20999"]
