"""Execution accuracy: set comparison of result rows with numeric tolerance."""

import pytest

from env_server.analytics import answer_matches


@pytest.mark.parametrize(
    ("submitted", "gold", "ok"),
    [
        ([[17]], [[17]], True),
        (17, [[17]], True),
        ("17", [[17]], True),
        ([[17.000001]], [[17]], True),
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


def test_tolerance_is_relative() -> None:
    assert answer_matches([[1005]], [[1000]], tolerance=0.01)[0]
    assert not answer_matches([[1020]], [[1000]], tolerance=0.01)[0]
