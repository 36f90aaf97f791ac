"""Unit tests of the viewer's small cores: chart layout, diff grouping, and what the server imports."""

from __future__ import annotations

import subprocess
import sys

from env_server.ui.charts import Series, line_chart, sparkline
from env_server.ui.diffs import group_diff
from shared.models import DiffEntry


def test_chart_places_k_and_rates_inside_the_plot_area() -> None:
    chart = line_chart("pass@k", [Series("all", "#000", [(1, 0.0), (2, 0.5), (3, 1.0)])], k_max=3)
    (x1, y1), (x2, y2), (x3, y3) = (tuple(map(float, p.split(","))) for p in chart.series[0].points.split())
    assert (x1, y1) == (chart.left, chart.bottom)  # k=1 at the left, 0% at the bottom
    assert (x3, y3) == (chart.right, chart.top)  # k=k_max at the right, 100% at the top
    assert x2 == (x1 + x3) / 2 and y2 == (y1 + y3) / 2
    assert [label for _, label in chart.x_ticks] == ["1", "2", "3"]
    assert chart.series[0].dots[1][2] == "all: k=2, 50.0%"
    single = line_chart("pass^k", [Series("all", "#000", [(1, 0.25)])], k_max=1)
    assert (
        single.series[0].points
        == f"{(chart.left + chart.right) / 2},{chart.top + 0.75 * (chart.bottom - chart.top)}"
    )


def test_count_chart_over_steps_gets_a_round_top_and_starts_at_the_first_step() -> None:
    series = [Series("band", "#000", [(11, 3.0), (12, 37.0), (13, 0.0)])]
    chart = line_chart("Tasks", series, 13, k_min=11, x_label="step", scale="count")
    assert [label for _, label in chart.y_ticks] == ["0", "10", "20", "30", "40"]  # 37 -> an axis to 40
    assert [label for _, label in chart.x_ticks] == ["11", "12", "13"]
    (x1, _), (_, y2), (x3, y3) = (tuple(map(float, p.split(","))) for p in chart.series[0].points.split())
    assert x1 == chart.left and x3 == chart.right and y3 == chart.bottom
    assert y2 == round(chart.top + (1 - 37 / 40) * (chart.bottom - chart.top), 1)
    assert chart.series[0].dots[1][2] == "band: step=12, 37"
    tops = {
        v: line_chart("t", [Series("s", "#000", [(1, v)])], 1, scale="count").y_ticks[-1][1]
        for v in (0, 5, 90)
    }
    assert tops == {0: "4", 5: "8", 90: "100"}
    spark = sparkline([(2, 0.5), (4, 1.0)], 1, 5)
    assert spark.points == "24.5,10.0 71.5,1.0" and spark.last == (71.5, 1.0)
    assert spark.summary == "step 2: 50%; step 4: 100%"


def test_diff_groups_by_table_and_counts_columns_per_kind() -> None:
    entries = [
        DiffEntry(kind="wrong", table="b", key="K1", column="x", expected=1, actual=2),
        DiffEntry(kind="missing", table="a", key="(new row)", expected={"id": 1}),
        DiffEntry(kind="wrong", table="b", key="K2", column="x", expected=1, actual=3),
        DiffEntry(kind="extra", table="b", key="K2", column="y", expected="p", actual="q"),
    ]
    groups = group_diff(entries)
    assert [g.table for g in groups] == ["a", "b"]
    assert groups[0].by_column == {"(row)": {"missing": 1}}
    assert groups[1].by_column == {"x": {"wrong": 2}, "y": {"extra": 1}}
    assert groups[1].counts == {"wrong": 2, "extra": 1}


def test_the_server_with_its_viewer_never_imports_the_trainer() -> None:
    code = (
        "import sys\n"
        "from env_server.app import create_app\n"
        "import env_server.ui.campaigns, env_server.ui.runs\n"
        "leaked = sorted(m for m in sys.modules if m.split('.')[0] in ('trainer', 'torch'))\n"
        "assert not leaked, leaked"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
