"""Execution accuracy: sets of rows; whole numbers compare exactly, computed values within tolerance."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from env_server.analytics import answer_matches


@pytest.mark.parametrize(
    ("submitted", "gold", "ok"),
    [
        ([[17]], [[17]], True),
        (17, [[17]], True),
        ("17", [[17]], True),
        ([[17.0]], [[17]], True),
        ([[17.000001]], [[17]], False),  # a count is exact, whatever the tolerance
        ([[18]], [[17]], False),
        (
            [["Gold", 3], ["platinum", 1]],
            [["platinum", 1], ["gold", 3]],
            True,
        ),  # order and case do not matter
        ([["gold", 3]], [["platinum", 1], ["gold", 3]], False),  # a row missing
        ([["gold", 3], ["gold", 3]], [["gold", 3]], True),  # sets, as in BIRD
        ([["gold", 3], ["silver", 2]], [["gold", 3]], False),  # an extra row
        ([[3, "gold"]], [["gold", 3]], False),  # columns keep their order
        ([[None]], [[None]], True),
    ],
)
def test_answer_matching(submitted: object, gold: list, ok: bool) -> None:
    assert answer_matches(submitted, gold, tolerance=0.01)[0] is ok


def test_whole_numbers_compare_exactly_whatever_the_tolerance() -> None:
    # issue #20: a 1% tolerance let 215 bookings pass for 214 and 2,701,244 cents for 2,701,243
    assert not answer_matches([[215]], [[214]], tolerance=0.01)[0]
    assert not answer_matches([[2701244]], [[2701243]], tolerance=0.05)[0]
    assert answer_matches([["2701243"]], [[2701243]], tolerance=0)[0]


def test_tolerance_is_relative_for_computed_values() -> None:
    assert answer_matches([[1005.5]], [[1000.5]], tolerance=0.01)[0]
    assert not answer_matches([[1020.5]], [[1000.5]], tolerance=0.01)[0]
    assert answer_matches([[0.3333]], [[1 / 3]], tolerance=0.001)[0]
    assert not answer_matches([[0.3333]], [[1 / 3]], tolerance=0)[0]


@given(st.integers(-(10**12), 10**12), st.integers(1, 10**6), st.floats(0, 0.05))
def test_an_integer_answer_off_by_any_amount_fails(gold: int, off: int, tolerance: float) -> None:
    assert not answer_matches([[gold + off]], [[gold]], tolerance)[0]
    assert not answer_matches([[gold - off]], [[gold]], tolerance)[0]
    assert answer_matches([[gold]], [[gold]], tolerance)[0]
