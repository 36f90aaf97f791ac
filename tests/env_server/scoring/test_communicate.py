"""The `communicate` rules: an honest answer earns a fact in any wording; recitals, dumps, sprays, echoes,
hedges and negations earn nothing."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from env_server.domain.registry import DomainRegistry
from env_server.scoring.communicate import MAX_DISTINCT, MAX_WORDS, Conversation, Verdict
from env_server.scoring.scorer import told_values
from env_server.scoring.trajectory import Message
from env_server.scoring.vocabulary import Vocabulary, vocabulary

HOTEL = DomainRegistry.discover(only=["hotel"]).domain("hotel")
VOCAB = vocabulary(HOTEL)
OPENING = Message("user", "Hi, can you help me with my booking?")


def told(item: str, *said: str | Message) -> Verdict:
    messages = [OPENING] + [m if isinstance(m, Message) else Message("assistant", m) for m in said]
    return Conversation(messages, VOCAB, HOTEL.policy).told(item)


@pytest.mark.parametrize(
    ("item", "reply"),
    [
        ("$40", "Late check-out costs $40 for Silver members; it is free from Gold up. Would you like it?"),
        ("$40", "For your tier it's a paid extra at 40 dollars."),
        ("306", "If you cancel now, you'll get $306 back: the $612 you paid minus half."),
        ("306", "You'd get $306.00 back if you cancel."),
        ("non-refundable", "Your booking is on a non-refundable rate, so cancelling it refunds nothing."),
        ("non-refundable", "I'm afraid I can't refund it: it's nonrefundable, not flexible."),
        ("pending", "The request is still pending until a manager approves it."),
        ("2026-10-14", "Your new check-in date is 14 October 2026."),
        ("TK-90001", "I've opened ticket TK-90001 for you."),
        ("30", "Returns aren't accepted after 30 days, and yours arrived 45 days ago."),
        ("30", "You're not within the 30-day window, I'm sorry."),
    ],
)
def test_an_honest_answer_earns_the_fact_in_any_wording(item: str, reply: str) -> None:
    verdict = told(item, reply)
    assert verdict.passed, verdict.detail


def test_the_policy_pasted_whole_or_in_pieces_earns_nothing() -> None:
    assert "words (an answer has at most" in told("non-refundable", HOTEL.policy).detail
    pieces = [p for p in HOTEL.policy.split("\n\n") if "non-refundable" in p.lower() or "40" in p]
    assert pieces
    for item in ("non-refundable", "$40"):
        assert not told(item, *pieces).passed


def test_a_dump_of_values_earns_nothing_in_one_message_or_one_value_per_message() -> None:
    values = [f"${n}" for n in range(10, 200, 10)]
    assert not told("$40", ", ".join(values)).passed
    assert not told("$40", " ".join(values)).passed
    assert "same role" in told("$40", *(f"It is {v}." for v in values)).detail
    frames = ["The fee is", "You pay", "Tax comes to", "Deposit:", "Breakfast costs", "Parking runs",
              "Minibar adds", "Spa charges", "Valet costs", "Wifi costs"]  # fmt: skip
    varied = told("$40", *(f"{f} {v}." for f, v in zip(frames, values, strict=False)))
    assert not varied.passed and "spray" in varied.detail


def test_a_spray_of_the_domain_terms_earns_nothing() -> None:
    terms = sorted(VOCAB.terms)
    assert not told("non-refundable", ", ".join(terms)).passed
    assert not told("non-refundable", " ".join(terms)).passed


def test_one_term_per_message_earns_only_if_the_first_answer_was_right() -> None:
    hedged = told("non-refundable", "It is flexible.", "It is non-refundable.")
    assert not hedged.passed and "same role" in hedged.detail
    assert told("non-refundable", "It is non-refundable.", "Flexible bookings can be changed.").passed


@pytest.mark.parametrize(
    "hedge",
    [
        "It is $40 or $50.",
        "Somewhere between $40 and $50.",
        "It's $30/$40/$50.",
        "It is flexible or non-refundable.",
    ],
)
def test_a_hedge_between_values_earns_nothing(hedge: str) -> None:
    item = "non-refundable" if "refundable" in hedge else "$40"
    assert not told(item, hedge).passed


@pytest.mark.parametrize(
    "negated",
    [
        "I cannot confirm that it is {x}.",
        "I can't say whether it's {x}.",
        "It is not {x}.",
        "It isn't {x}.",
        "I'm not sure it is {x}.",
        "Maybe {x}.",
        "It might be {x}.",
        "If it were {x} I could help.",
        "Instead of {x}, it is something else.",
        "{x} is wrong.",
        "There is no {x} fee.",
    ],
)
def test_a_negated_or_hedged_fact_earns_nothing(negated: str) -> None:
    for item in ("$40", "non-refundable", "2026-10-14"):
        assert not told(item, negated.format(x=item)).passed, negated.format(x=item)


def test_echoing_the_user_earns_nothing_but_telling_first_does() -> None:
    user = Message("user", "No, I won't pay $40 for that.")
    echo = told("$40", "What would you like?", user, "No, I won't pay $40 for that.")
    assert not echo.passed and "user had said it first" in echo.detail
    assert told("$40", "It costs $40.", user, "Understood.").passed


def test_a_fact_beside_many_values_of_its_kind_earns_nothing_but_a_short_breakdown_does() -> None:
    assert told("306", "You get $306: $612 paid, minus $306 kept.").passed
    crowded = told("306", "Amounts on file: $306 refund, $612 paid, $54 tax, $12 fee, $99 deposit.")
    assert not crowded.passed and "other values" in crowded.detail


def test_a_long_message_earns_nothing() -> None:
    filler = "Thank you for your patience while I look into this for you. " * 12
    verdict = told("$40", filler + "It costs $40.")
    assert not verdict.passed and f"at most {MAX_WORDS}" in verdict.detail


def test_a_term_outside_the_vocabulary_is_still_found_but_not_in_a_spray() -> None:
    assert told("supervisor", "A supervisor will review your request within two days.").passed
    spray = ", ".join(["supervisor", *sorted(VOCAB.terms)[:10]])
    assert not told("supervisor", spray).passed


def test_a_term_held_by_a_longer_vocabulary_term_competes_in_that_class() -> None:
    vocab = Vocabulary((frozenset({"accidental damage", "defect", "battery"}),))
    convo = Conversation(
        [OPENING, Message("assistant", "It is defect."), Message("assistant", "It is accidental damage.")],
        vocab,
    )
    assert not convo.told("accidental").passed
    honest = Conversation([OPENING, Message("assistant", "The plan doesn't cover accidental damage.")], vocab)
    assert honest.told("accidental").passed


_AMOUNTS = st.integers(1, 99_999).map(lambda n: f"${n:,}")
_TEMPLATES = st.sampled_from(
    [
        "That comes to {x}.",
        "The fee is {x}, payable now.",
        "You'll get {x} back on your card.",
        "It's {x} in total for the two nights.",
        "Sure: {x}.",
    ]
)


@settings(max_examples=60, derandomize=True, deadline=None)
@given(_AMOUNTS, _TEMPLATES)
def test_property_an_amount_told_plainly_is_earned(amount: str, template: str) -> None:
    assert told(amount, template.format(x=amount)).passed


@settings(max_examples=60, derandomize=True, deadline=None)
@given(
    _AMOUNTS, st.lists(_AMOUNTS, min_size=1, max_size=6, unique=True), st.sampled_from([", ", " or ", "/"])
)
def test_property_an_amount_in_a_list_of_amounts_is_not_earned(
    amount: str, others: list[str], sep: str
) -> None:
    others = [o for o in others if o.replace(",", "") != amount.replace(",", "")]
    if not others:
        return
    for position in (0, len(others)):
        listed = [*others[:position], amount, *others[position:]]
        assert not told(amount, "It is " + sep.join(listed) + ".").passed


@settings(max_examples=40, derandomize=True, deadline=None)
@given(st.lists(_AMOUNTS, min_size=MAX_DISTINCT + 1, max_size=MAX_DISTINCT + 6, unique=True), st.data())
def test_property_values_spread_over_many_messages_are_not_earned(
    values: list[str], data: st.DataObject
) -> None:
    item = data.draw(st.sampled_from(values))
    assert not told(item, *(f"It is {v}." for v in values)).passed


def test_values_offered_in_the_same_words_are_a_hedge_within_or_across_messages() -> None:
    assert not told("$40", "It is $40. It is $50.").passed
    assert not told("$40", "It is $50.", "It is $40.").passed
    assert not told("$40", "It is $40.", "It is $50.").passed
    assert told("$40", "It costs $40; you paid $50 last time.").passed


def test_a_fact_repeated_is_not_a_list() -> None:
    assert told("non-refundable", "It is non-refundable, and non-refundable rates can't be changed.").passed
    assert told("$40", "It's $40, yes, $40 for the late check-out.").passed


def test_values_of_different_kinds_side_by_side_are_no_list() -> None:
    assert told("$135", "Cancelling refunds $135, 50% of the stay. Shall I cancel it?").passed
    assert not told("$135", "Cancelling refunds $135, $270 or $405.").passed


def test_an_amount_is_never_read_as_a_word_of_an_enumerated_term() -> None:
    # insurance's liability limits include "250/500/250": the amount $250 is still an amount
    vocab = Vocabulary((frozenset({"25/50/25", "250/500/250"}),))
    said = [OPENING, *(Message("assistant", f"It is {v}.") for v in ("25000", "$344", "$250"))]
    assert not Conversation(said, vocab).told("$250").passed


@pytest.mark.parametrize(
    ("said", "passed"),
    [
        ("Your number is on Mobile 10. A line only changes to a plan of its own kind.", True),
        ("You're on the Mobile 10 plan, so that switch isn't possible.", True),
        ("Mobile 10, Mobile 30, Mobile 45, Mobile 60: one of those is your plan.", False),
    ],
)
def test_an_item_that_opens_with_words_is_judged_by_its_value(said: str, passed: bool) -> None:
    """ "Mobile 10" is a value (10) after a word: rivals and lists are counted by the 10, and no message
    an agent sends may crash the scorer (it once raised StopIteration: a backend error the agent caused)."""
    assert told("Mobile 10", said).passed is passed


def test_a_bare_repeat_of_the_item_adds_no_role_but_a_bare_rival_is_still_one() -> None:
    reply = "You paid $30 for it last time; the late check-out now costs $40."
    proposal = "Here is exactly what I will do: add, $40. Shall I go ahead?"
    assert told("$40", reply, proposal).passed, told("$40", reply, proposal).detail
    assert "same role" in told("$40", "The late check-out costs $40.", "$30.").detail


def test_the_gold_writes_decisive_values_are_no_rivals_of_the_item() -> None:
    registry = DomainRegistry.discover(only=["insurance"])
    task = registry.task("insurance-claim-deer-001")
    assert "$2,350" in told_values(task, registry.domain("insurance"))
