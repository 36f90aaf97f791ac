"""Line charts laid out in Python and drawn as inline SVG by the templates.

No plotting library and no script: a chart is a handful of polylines whose coordinates are computed here,
so a page is complete HTML that any browser (or a test reading the markup) can check. Campaigns chart rates
over k (pass@k, pass^k); training runs chart rates and task counts over steps (`scale="count"`), and each
task's posterior as a sparkline.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

PALETTE = ("#0969da", "#1a7f37", "#bf3989", "#9a6700", "#8250df", "#cf222e", "#1b7c83", "#57606a")
WIDTH, HEIGHT = 420, 240
LEFT, RIGHT, TOP, BOTTOM = 44, 12, 12, 30
SPARK_WIDTH, SPARK_HEIGHT = 96, 20

Scale = Literal["share", "count"]


@dataclass
class Series:
    """One line: a label, its colour, whether it is dashed (the second run of a comparison), its values."""

    label: str
    colour: str
    values: list[tuple[int, float]]
    dashed: bool = False
    points: str = ""
    dots: list[tuple[float, float, str]] = field(default_factory=list)


@dataclass
class Chart:
    """A chart ready to draw: plot area, axis ticks and series with their SVG coordinates."""

    title: str
    series: list[Series]
    x_ticks: list[tuple[float, str]]
    y_ticks: list[tuple[float, str]]
    x_label: str = "k"
    width: int = WIDTH
    height: int = HEIGHT
    left: int = LEFT
    right: int = WIDTH - RIGHT
    top: int = TOP
    bottom: int = HEIGHT - BOTTOM


@dataclass
class Sparkline:
    """A small line of rates in [0, 1] over x, for a table cell: its points and a text summary."""

    points: str
    summary: str
    last: tuple[float, float]
    """The latest point, marked with a dot (a task played once has no line, only that dot)."""
    width: int = SPARK_WIDTH
    height: int = SPARK_HEIGHT


def line_chart(
    title: str,
    series: list[Series],
    k_max: int,
    *,
    k_min: int = 1,
    x_label: str = "k",
    scale: Scale = "share",
) -> Chart:
    """Place `series` (values over x = k_min..k_max) on a chart titled `title`.

    With `scale="share"` values are rates in [0, 1], labelled as percentages; with `scale="count"` they are
    counts from 0 to a round top above the largest value (a band of 37 tasks gets an axis to 40).
    """
    k_max = max(k_max, k_min)
    top = 1.0 if scale == "share" else _round_top(max((v for s in series for _, v in s.values), default=0))

    def x(k: int) -> float:
        span = WIDTH - RIGHT - LEFT
        return LEFT + (span / 2 if k_max == k_min else (k - k_min) * span / (k_max - k_min))

    def y(value: float) -> float:
        return TOP + (1 - value / top) * (HEIGHT - BOTTOM - TOP)

    def shown(value: float) -> str:
        return f"{100 * value:.1f}%" if scale == "share" else f"{value:g}"

    for s in series:
        coords = [(round(x(k), 1), round(y(v), 1)) for k, v in s.values]
        s.points = " ".join(f"{cx},{cy}" for cx, cy in coords)
        s.dots = [
            (cx, cy, f"{s.label}: {x_label}={k}, {shown(v)}")
            for (cx, cy), (k, v) in zip(coords, s.values, strict=True)
        ]
    step = max(1, (k_max - k_min + 1) // 10)
    x_ticks = [(round(x(k), 1), str(k)) for k in range(k_min, k_max + 1, step)]
    if scale == "share":
        y_ticks = [(round(y(v / 4), 1), f"{25 * v}%") for v in range(5)]
    else:
        y_ticks = [(round(y(top * v / 4), 1), f"{top * v / 4:g}") for v in range(5)]
    return Chart(title=title, series=series, x_ticks=x_ticks, y_ticks=y_ticks, x_label=x_label)


def _round_top(largest: float) -> float:
    """The axis top for counts up to `largest`: four equal whole ticks of 1, 2, 2.5 or 5 times 10^n."""
    if largest <= 4:
        return 4.0
    magnitude = 10 ** math.floor(math.log10(largest / 4))  # >= 1: largest / 4 > 1
    for factor in (1, 2, 2.5, 5, 10):
        tick = factor * magnitude
        if tick == int(tick) and 4 * tick >= largest:
            return float(4 * tick)
    raise AssertionError("unreachable: 4 * 10 * magnitude > largest by the choice of magnitude")


def sparkline(values: list[tuple[int, float]], x_min: int, x_max: int) -> Sparkline:
    """A sparkline of rates in [0, 1] over x_min..x_max (a task's posterior mean over the steps played).

    A table of a hundred tasks cannot hold a hundred charts; a word-sized line per row still shows which
    tasks climbed, stalled or fell back. `values` must not be empty.
    """
    span = max(x_max - x_min, 1)

    def x(k: int) -> float:
        return round(1 + (k - x_min) * (SPARK_WIDTH - 2) / span, 1)

    def y(value: float) -> float:
        return round(1 + (1 - value) * (SPARK_HEIGHT - 2), 1)

    coords = [(x(k), y(v)) for k, v in values]
    points = " ".join(f"{cx},{cy}" for cx, cy in coords)
    summary = "; ".join(f"step {k}: {100 * v:.0f}%" for k, v in values)
    return Sparkline(points=points, summary=summary, last=coords[-1])
