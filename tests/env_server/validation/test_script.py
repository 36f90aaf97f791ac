"""Script checks: a policy-following agent gets identity facts, an explicit yes and a reply to its report."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from env_server.domain import Conduct
from env_server.domains.hotel import domain as hotel
from env_server.validation.script import says_yes, script_check, script_replay
from shared.tasks import Task
from tests.toy_domain import domain as toy

VERIFY = {
    "name": "verify_guest_identity",
    "arguments": {"guest_id": "G-2091", "last_name": "Gallagher", "date_of_birth": "1985-01-19"},
}
CANCEL = {
    "name": "cancel_booking",
    "arguments": {"booking_id": "BK-20901", "refund_percent": 100, "reason": "plans"},
}
OPENING = "Hi, I'd like to cancel booking BK-20901."


def hotel_task(script: list[str], gold: list[dict[str, Any]] | None = None) -> Task:
    return Task.model_validate(
        {
            "id": "hotel-script-999",
            "domain": "hotel",
            "split": "train",
            "user": {"persona": "Owen", "goal": "cancel", "script": script},
            "gold_actions": gold
            if gold is not None
            else [{"name": "get_booking", "arguments": {}}, VERIFY, CANCEL],
        }
    )


def both(task: Task, domain: Any = hotel) -> tuple[tuple[bool, str], tuple[bool, str]]:
    static, dynamic = script_check(task, domain), script_replay(task, domain)
    return (static.passed, static.detail), (dynamic.passed, dynamic.detail)


def test_identity_then_yes_then_a_line_for_the_report_passes() -> None:
    task = hotel_task([OPENING, "Gallagher, 19 January 1985.", "Yes, please go ahead.", "Thanks!"])
    (ok, _), (replayed, detail) = both(task)
    assert ok and replayed, detail


def test_a_script_that_never_says_yes_fails_both_ways() -> None:
    task = hotel_task(
        [OPENING, "Gallagher, 19 January 1985.", "Can't you just refund it today?", "All right, thanks."]
    )
    (ok, detail), (replayed, why) = both(task)
    assert not ok and "explicit yes" in detail
    assert not replayed and "before the user said an explicit yes" in why


def test_a_yes_on_the_last_line_leaves_the_report_unanswered() -> None:
    task = hotel_task([OPENING, "Gallagher, 19 January 1985.", "Yes, go ahead."])
    (ok, detail), (replayed, why) = both(task)
    assert not ok and "none is left for the agent's report" in detail
    assert not replayed and "report" in why


def test_identity_facts_the_gold_verifies_with_must_be_said() -> None:
    task = hotel_task([OPENING, "Yes, go ahead.", "Thanks!"])
    (ok, detail), (replayed, why) = both(task)
    assert not ok and "'1985-01-19'" in detail
    assert not replayed and "identity" in why


def test_a_yes_given_with_the_identity_facts_is_not_a_yes_to_a_proposal() -> None:
    task = hotel_task([OPENING, "Gallagher, 19 January 1985, and yes, go ahead.", "Thanks!"])
    (ok, _), (replayed, _) = both(task)
    assert not ok and not replayed


def test_identity_facts_in_the_opening_need_no_question() -> None:
    task = hotel_task(["Owen Gallagher, born 1985-01-19: please cancel BK-20901.", "Yes, do it.", "Thanks!"])
    (ok, detail), (replayed, why) = both(task)
    assert ok and replayed, (detail, why)


def test_a_write_before_verification_is_a_gold_problem() -> None:
    task = hotel_task([OPENING, "Gallagher, 19 January 1985.", "Yes.", "Thanks!"], gold=[CANCEL, VERIFY])
    ok, detail = script_check(task, hotel).passed, script_check(task, hotel).detail
    assert not ok and "comes before verify_guest_identity" in detail


def test_exempt_writes_need_neither_identity_nor_yes() -> None:
    ticket = {
        "name": "open_support_ticket",
        "arguments": {"guest_id": "G-2091", "category": "other", "summary": "x"},
    }
    task = hotel_task(["My room was noisy.", "Thanks."], gold=[ticket])
    (ok, _), (replayed, _) = both(task)
    assert not ok  # hotel tickets need no identity, but a yes: the policy asks one before any change
    relaxed = dataclasses.replace(
        hotel,
        conduct=dataclasses.replace(hotel.conduct, confirmation_exempt=frozenset({"open_support_ticket"})),
    )
    (ok, _), (replayed, _) = both(task, relaxed)
    assert ok and replayed


def test_the_domain_conduct_decides_what_a_script_needs() -> None:
    transfer = next(t for t in toy.tasks if t.id == "toybank-transfer-001")
    assert script_check(transfer, toy).passed and script_replay(transfer, toy).passed
    strict = dataclasses.replace(toy, conduct=Conduct(confirmation=True))
    assert not script_check(transfer, strict).passed and not script_replay(transfer, strict).passed


@pytest.mark.parametrize(
    "line",
    [
        "Yes, go ahead.",
        "yes please",
        "Please do.",
        "Go ahead and cancel it.",
        "Understood, please file it for approval then.",
        "Sure, go ahead.",
        "OK, please book it.",
        "That's fine, do it.",
        "I confirm.",
    ],
)
def test_explicit_yes(line: str) -> None:
    assert says_yes(line)


@pytest.mark.parametrize(
    "line",
    [
        "All right, I'll wait to hear from them. Thank you.",
        "Okay.",
        "I'm not sure.",
        "Can't you just pay it today?",
        "Hmm, let me think about it.",
        "No, don't do that.",
        "Yesterday I called.",
    ],
)
def test_not_an_explicit_yes(line: str) -> None:
    assert not says_yes(line)
