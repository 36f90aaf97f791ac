"""The canonical reading of a text: facts are found however the agent writes them; near misses are not."""

import pytest

from env_server.scoring.communicate import communicated, is_atomic
from env_server.scoring.tokens import read, tokens


@pytest.mark.parametrize(
    "said",
    [
        "The total is $1,450.",
        "That comes to 1450 dollars",
        "You paid $1,450.00 in total.",
        "USD 1,450 was charged",
        "US$1,450 was charged",
        "a refund of $1450",
    ],
)
def test_amount_forms_agree(said: str) -> None:
    assert communicated("$1,450", [said])
    assert communicated("1450 dollars", [said])
    assert communicated("$1,450.00", [said])


@pytest.mark.parametrize(
    "said",
    [
        "The total is $14,500.",
        "That is $145.",
        "That is $1,450.50.",
        "That is 1450.5 dollars",
        "reference 21450",
        "$1,4500",
        "1,450,000 dollars",
        "Nothing to pay.",
    ],
)
def test_amount_near_misses_do_not_match(said: str) -> None:
    assert not communicated("$1,450", [said])


def test_cents_and_decimals() -> None:
    assert communicated("$7.99", ["a return fee of $7.99 applies"])
    assert not communicated("$7.99", ["a return fee of $7.90 applies"])
    assert not communicated("$7.99", ["a return fee of $799 applies"])
    assert communicated("$0.50", ["50 cents, that is $0.5"])
    assert communicated("$50.00", ["a $50 change fee"])
    assert not communicated("$50", ["a $50.01 change fee"])


def test_percent_forms_agree() -> None:
    for said in ["a 50% refund", "50 percent back", "50 per cent of the total"]:
        assert communicated("50%", [said]), said
        assert communicated("50 percent", [said]), said
    assert not communicated("50%", ["a 150% refund"])
    assert not communicated("50%", ["$50 back"])


@pytest.mark.parametrize(
    "said",
    [
        "Check-in is on 2026-10-14.",
        "from 14 October 2026",
        "from October 14, 2026",
        "from Oct 14",
        "from 14 Oct",
        "on Wednesday 14th October",
        "on the 14th of October 2026",
        "Oct. 14th, 2026",
    ],
)
def test_iso_dates_match_written_forms(said: str) -> None:
    assert communicated("2026-10-14", [said])


@pytest.mark.parametrize(
    "said", ["on 15 October 2026", "on 14 October 2025", "on 2026-10-15", "on 2026-11-14", "Oct 1", "room 14"]
)
def test_other_dates_do_not_match(said: str) -> None:
    assert not communicated("2026-10-14", [said])


def test_numeric_dates() -> None:
    assert communicated("1987-08-14", ["Date of birth 08/14/1987, ZIP 17195."])
    assert communicated("1987-08-14", ["born 14/08/1987"]) and communicated("1987-08-14", ["born 14.08.1987"])
    assert communicated("1987-03-04", ["born 03/04/1987"]) and communicated("1987-04-03", ["born 03/04/1987"])
    assert not communicated("1987-03-05", ["born 03/04/1987"])
    assert not communicated("1987-08-14", ["born 08/14/1988"])
    assert tokens("$14.08 on 1.5.2026") == ["14.08", "on", "@2026-05-01"]


def test_written_item_dates_match_iso_and_other_written_forms() -> None:
    assert communicated("14 October 2026", ["on 2026-10-14"])
    assert communicated("October 14", ["on 2026-10-14"])
    assert not communicated("October 14", ["on 2026-10-15"])


def test_ids_counts_and_terms_on_token_boundaries() -> None:
    assert communicated("BK-20417", ["Your booking bk 20417 is on hold"])
    assert not communicated("BK-20417", ["Your booking BK-204170 is on hold"])
    assert not communicated("BK-20417", ["Your booking BK-20418 is on hold"])
    assert communicated("3 instalments", ["That is three instalments of $250."])
    assert not communicated("3 instalments", ["That is 13 instalments."])
    assert communicated("adjuster", ["One of our adjusters will call you."])
    assert communicated("adjuster", ["The adjuster's review takes a week."])
    assert not communicated("adjuster", ["We will adjust it."])
    assert not communicated("fraud", ["This looks fraudulent."])


def test_hyphenated_terms_match_with_a_hyphen_a_space_or_joined() -> None:
    for said in ["It is non-refundable.", "It is non refundable.", "It is nonrefundable.", "NON-REFUNDABLE"]:
        assert communicated("non-refundable", [said]), said
    assert communicated("nonrefundable", ["a non-refundable rate"])
    assert not communicated("non-refundable", ["It is refundable."])
    assert communicated("RT-04-STD", ["room rt 04 std"]) and not communicated("RT-04-STD", ["room RT-04-DLX"])


def test_each_message_is_searched_on_its_own_and_empty_items_never_match() -> None:
    assert communicated("$1,450", ["hello", "It is $1,450."])
    assert not communicated("BK-20417", ["booking BK", "20417"])
    assert not communicated("", ["anything"])
    assert not communicated("$", ["$5"])
    assert not communicated("$1,450", [])


def test_tokens_are_canonical() -> None:
    assert tokens("$1,450.00 on 14 Oct 2026, 50%") == ["1450", "on", "@2026-10-14", "50", "percent"]


@pytest.mark.parametrize(
    "item", ["$1,450", "2026-10-14", "BK-20417", "3 instalments", "adjuster", "don't", "e-mail"]
)
def test_atomic_items(item: str) -> None:
    assert is_atomic(item)


@pytest.mark.parametrize("item", ["supervisor approval", "transfer complete", "no refund", "  "])
def test_phrases_are_not_atomic(item: str) -> None:
    assert not is_atomic(item)


def test_number_words_up_to_ninety_nine() -> None:
    assert tokens("thirty days, twenty-one nights, twenty one, ninety-nine, fourteen") == [
        "30", "days", "21", "nights", "21", "99", "14",
    ]  # fmt: skip
    assert communicated("30", ["Returns are accepted within thirty days."])
    assert not communicated("30", ["Returns are accepted within thirty-one days."])


def test_a_number_or_word_is_never_found_inside_an_id() -> None:
    assert not communicated("4", ["Your RAV4 is now on the policy."])
    assert not communicated("$5.00", ["Can you apply WELCOME5?"])
    assert not communicated("Gold", ["I applied GOLD20."])
    assert communicated("TK-90001", ["Ticket TK-90001 is open."])


@pytest.mark.parametrize(
    ("text", "value", "kind"),
    [
        ("three hundred and six dollars", "306", "money"),
        ("three hundred six", "306", "number"),
        ("one thousand four hundred fifty dollars", "1450", "money"),
        ("a hundred", "100", "number"),
        ("twelve thousand", "12000", "number"),
        ("twenty-one dollars", "21", "money"),
    ],
)
def test_number_words_past_ninety_nine_read_as_one_number(text: str, value: str, kind: str) -> None:
    assert [(t.value, t.kind) for t in read(text)] == [(value, kind)]
