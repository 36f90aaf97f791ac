"""Analytics boundary variants: each boundary of a gold SQL read the other way, and what settles it."""

from __future__ import annotations

from env_server.validation.boundaries import Variant, settled, tie_query, variants


def labels(sql: str) -> list[str]:
    return [v.label for v in variants(sql, "sqlite")]


def test_comparisons_flip_inclusiveness_but_zero_tests_stay() -> None:
    sql = "SELECT COUNT(*) FROM a WHERE x >= 5 AND d < '2026-10-01' AND n > 0"
    found = {v.label: v for v in variants(sql, "sqlite")}
    assert set(found) == {"x >= 5  ->  x > 5", "d < '2026-10-01'  ->  d <= '2026-10-01'"}
    assert found["x >= 5  ->  x > 5"].settling == ("number", "gte")
    date = found["d < '2026-10-01'  ->  d <= '2026-10-01'"]
    assert date.settling == ("date", "lt") and date.month_start
    assert "d <= '2026-10-01'" in date.sql and "x >= 5" in date.sql


def test_between_and_joins() -> None:
    assert labels("SELECT * FROM a WHERE x BETWEEN 1 AND 5") == [
        "x BETWEEN 1 AND 5  ->  open low end",
        "x BETWEEN 1 AND 5  ->  open high end",
    ]
    assert labels("SELECT * FROM a JOIN b ON b.id = a.b_id LEFT JOIN c ON c.id = a.c_id") == [
        "JOIN b  ->  LEFT JOIN",
        "LEFT JOIN c  ->  JOIN",
    ]
    assert labels("SELECT * FROM a CROSS JOIN b") == []


def test_column_comparisons_of_dates_read_as_dates() -> None:
    (v,) = variants("SELECT * FROM s WHERE s.delivered_on > s.promised_date", "sqlite")
    assert v.settling == ("date", "gt")
    assert settled(v, "how many arrived after the promised date?")
    assert not settled(v, "how many arrived late?")


def test_phrases_settle_only_the_gold_reading() -> None:
    (v,) = variants("SELECT COUNT(*) FROM a WHERE x >= 400000", "sqlite")
    assert settled(v, "how many hold at least 4,000.00?")
    assert not settled(v, "how many hold more than 4,000.00?")
    (m,) = variants("SELECT COUNT(*) FROM a WHERE d >= '2026-09-01'", "sqlite")
    assert settled(m, "how many in september?") and not settled(m, "how many lately?")
    assert settled(Variant("tie", "", ("limit", "ties")), "break ties by id")


def test_tie_query_reads_the_ordering_keys_of_one_row_more() -> None:
    query = tie_query(
        "SELECT name, SUM(x) AS total FROM a GROUP BY name ORDER BY total DESC LIMIT 3", "sqlite"
    )
    assert query == ("SELECT SUM(x) FROM a GROUP BY name ORDER BY SUM(x) DESC LIMIT 4", 3)
    assert tie_query("SELECT name FROM a ORDER BY name", "sqlite") is None
