"""The clause model of `communicate`: a fact is credited only when the agent asserts it, once, as its answer.

The red-team forms of issue 30 (questions, modal hedges, negations before and after the value, labels and
guess lists, guesses spread over messages, a rival said first) earn nothing; honest forms (the reference
replies, refusals with their reason, honest contrasts, number words) earn the fact.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from env_server.domain.registry import DomainRegistry
from env_server.scoring.assertion import Clauses
from env_server.scoring.communicate import Conversation, Verdict
from env_server.scoring.tokens import read
from env_server.scoring.trajectory import Message
from env_server.scoring.vocabulary import vocabulary

HOTEL = DomainRegistry.discover(only=["hotel"]).domain("hotel")
VOCAB = vocabulary(HOTEL)
OPENING = Message("user", "Hi, how much would I get back if I cancel?")


def told(item: str, *said: str, items: tuple[str, ...] = ()) -> Verdict:
    messages = [OPENING] + [Message("assistant", m) for m in said]
    return Conversation(messages, VOCAB, HOTEL.policy, items or (item,)).told(item)


@pytest.mark.parametrize(
    "said",
    [
        ("Is it 306?",),
        ("Is it 306.",),
        ("What is it, 306",),
        ("It could be 306.",),
        ("It might be $306.",),
        ("Maybe $306.",),
        ("$306, I think.",),
        ("I think it's about $306.",),
        ("306 is not the answer.",),
        ("$306 isn't right.",),
        ("306 is wrong.",),
        ("306? No.",),
        ("It's $306 — no.",),
        ("Not 306.",),
        ("It is not $306.",),
        ("I can't confirm that it is $306.",),
        ("I'm not sure it's $306.",),
        ("If it were $306, I would say so.",),
        ("Unless it is $306, you get nothing.",),
        ("Either $306 or $310.",),
        ("A: $306. B: $310. C: $320.",),
        ("1) $306 2) $310",),
        ("Option A: $306. Option B: $310.",),
        ("It's $306 or $310.",),
        ("$300, $306, $312",),
        ("It is $306. It is $310.",),
        ("It's $310.", "It's $306."),
        ("It's $306.", "It is $310."),
        ("It is $300.", "It is $306.", "It is $312."),
        ("Refund: $306.", "$310."),
        ("It's $306.", "Or is it $310?"),
        ("The outage was on 3 Nov. $306 is not the answer.",),
    ],
)
def test_a_value_not_asserted_once_as_the_answer_earns_nothing(said: tuple[str, ...]) -> None:
    verdict = told("306", *said)
    assert not verdict.passed, verdict.detail


@pytest.mark.parametrize(
    ("item", "said"),
    [
        ("306", "Cancelling booking BK-20201 now would refund $306 of the $612 you paid. Shall I cancel it?"),
        ("306", "You'd get $306 back, which is half of what you paid. Do you want me to go ahead?"),
        ("306", "You'd get three hundred and six dollars back."),
        ("306", "Your refund is $306. That is not $310."),
        ("306", "You get $306: $612 paid, minus half."),
        ("306", "306 dollars is what you get back."),
        ("1280", "The Classic Queen is $1,280 rather than the $1,450 you pay now."),
        ("1450", "You pay one thousand four hundred fifty dollars now."),
        ("135", "It was $270; after the 50% penalty you get $135 back."),
        ("150", "Delay compensation only applies to orders of $150 or more, and your order was $129, so no."),
        ("150", "Orders under 150 dollars aren't eligible for late-delivery credit."),
        ("30", "Returns aren't accepted after 30 days, and yours arrived 45 days ago."),
        (
            "30",
            "I'm sorry, claims have to be filed within 30 days, and the storm was 40 days ago, so I can't.",
        ),
        ("189", "If you cancel BK-30201 today, $189 goes back to your card. Would you like me to cancel?"),
        ("non-refundable", "It's non-refundable, not flexible."),
        (
            "non-refundable",
            "I'm sorry: your booking is non-refundable, so a cancellation gives nothing back.",
        ),
        ("44.90", "Your phone arrived 5 days late, so you get 10% store credit: $44.90. Shall I add it?"),
        ("$35", "our cheapest fibre plan is fibre 100 at $35 a month, from today. shall i move you to it?"),
        ("$25", "You already have the 30 GB plan, Mobile 30 at $25 monthly; no change is needed."),
        ("$1.16", "The outage lasted 1 day, on 3 Nov. On your $35 plan that is a credit of $1.16."),
        (
            "103.34",
            "It has to be three monthly instalments of $103.34. Shall I set up the three-instalment plan?",
        ),
    ],
)
def test_an_honest_answer_refusal_or_contrast_earns_the_fact(item: str, said: str) -> None:
    verdict = told(item, said)
    assert verdict.passed, verdict.detail


def test_a_rival_term_said_first_or_beside_leaves_the_item_uncredited() -> None:
    assert not told("non-refundable", "It is flexible.", "It is non-refundable.").passed
    assert not told("non-refundable", "Flexible? Non-refundable.").passed
    assert not told("non-refundable", "It's flexible/non-refundable.").passed
    assert told("non-refundable", "It is non-refundable.", "Flexible bookings can be changed.").passed


def test_a_word_outside_the_vocabulary_sprayed_as_a_list_earns_nothing() -> None:
    words = ", ".join(["airplane", "wifi", "roaming", "bluetooth", "restart", "reset", "sim", "apn"] * 3)
    assert not told("airplane", words).passed
    assert not told("airplane", " ".join(["airplane", "wifi", "roaming", "bluetooth"] * 12)).passed
    assert told("airplane", "Your phone is in airplane mode: please switch it off.").passed


def test_the_task_s_other_items_are_no_rivals() -> None:
    said = "The PUK is 91743917. Mobile 10 costs $15 a month, from today; it was $25."
    assert told("$15", said, items=("$15", "$25")).passed
    assert not told("$15", "It is $15.", "It is $25.").passed


def test_a_question_or_inversion_marks_the_whole_sentence() -> None:
    for text, asked in [("Is it 306.", True), ("It is 306.", False), ("What you get is 306.", False)]:
        hay = read(text)
        at = next(i for i, t in enumerate(hay) if t.value == "306")
        assert (Clauses(text, hay).why_not(at, at + 1) == "asked, not told") is asked, text


HONEST = [
    "Your refund comes to {v}.",
    "Cancelling now gives you {v} back.",
    "You'd get {v} back if you cancel today.",
    "Good news: you will receive {v}.",
    "The refund for this booking is {v}, half of what you paid.",
    "I checked it for you. The amount back is {v}. Shall I cancel?",
]
GUESSES = [
    "It's {a} or {b}.",
    "A: {a}. B: {b}.",
    "{a}, {b}",
    "It is {a}. It is {b}.",
    "Is it {a}? Is it {b}?",
    "It could be {a} or maybe {b}.",
]


@settings(max_examples=60, deadline=None)
@given(
    value=st.integers(min_value=10, max_value=99_999),
    template=st.sampled_from(HONEST),
    dollars=st.booleans(),
)
def test_property_any_honest_template_with_the_item_keeps_it(
    value: int, template: str, dollars: bool
) -> None:
    said = template.format(v=f"${value:,}" if dollars else f"{value} dollars")
    verdict = told(str(value), said)
    assert verdict.passed, (said, verdict.detail)


@settings(max_examples=60, deadline=None)
@given(
    value=st.integers(min_value=10, max_value=99_999),
    offset=st.integers(min_value=1, max_value=500),
    template=st.sampled_from(GUESSES),
    item_first=st.booleans(),
    split=st.booleans(),
)
def test_property_any_guess_list_holding_the_item_earns_nothing(
    value: int, offset: int, template: str, item_first: bool, split: bool
) -> None:
    a, b = (f"${value}", f"${value + offset}") if item_first else (f"${value + offset}", f"${value}")
    said = template.format(a=a, b=b)
    messages = [s.strip() + "." for s in said.split(".") if s.strip()] if split and ". " in said else [said]
    verdict = told(str(value), *messages)
    assert not verdict.passed, (messages, verdict.detail)


def test_a_word_outside_the_vocabulary_joined_to_other_words_is_a_list() -> None:
    assert not told("airplane", "Please turn off airplane, wifi, roaming and bluetooth.").passed
    assert not told("airplane", "It could be airplane or wifi.").passed
    assert told("airplane", "Your phone is in airplane mode, so please switch it off.").passed
    assert told(
        "kansas", "Your policy is written in Kansas, and Kansas policies can't exclude a driver."
    ).passed
    assert not told("airplane", "Airplane. Wifi. Roaming. Bluetooth.").passed
    assert told("harbourside", "Credits cover outages in your own area, Harbourside; none there.").passed
