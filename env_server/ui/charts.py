"""Line charts of pass@k and pass^k over k, laid out in Python and drawn as inline SVG by the templates.

No plotting library and no script: a chart is a handful of polylines whose coordinates are computed here,
so a page is complete HTML that any browser (or a test reading the markup) can check.
"""

from __future__ import annotations

from dataclasses import dataclass, field

PALETTE = ("#0969da", "#1a7f37", "#bf3989", "#9a6700", "#8250df", "#cf222e", "#1b7c83", "#57606a")
WIDTH, HEIGHT = 420, 240
LEFT, RIGHT, TOP, BOTTOM = 44, 12, 12, 30


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
    width: int = WIDTH
    height: int = HEIGHT
    left: int = LEFT
    right: int = WIDTH - RIGHT
    top: int = TOP
    bottom: int = HEIGHT - BOTTOM


def line_chart(title: str, series: list[Series], k_max: int) -> Chart:
    """Place `series` (values in [0, 1] over k = 1..k_max) on a chart titled `title`."""
    k_max = max(k_max, 1)

    def x(k: int) -> float:
        span = WIDTH - RIGHT - LEFT
        return LEFT + (span / 2 if k_max == 1 else (k - 1) * span / (k_max - 1))

    def y(value: float) -> float:
        return TOP + (1 - value) * (HEIGHT - BOTTOM - TOP)

    for s in series:
        coords = [(round(x(k), 1), round(y(v), 1)) for k, v in s.values]
        s.points = " ".join(f"{cx},{cy}" for cx, cy in coords)
        s.dots = [
            (cx, cy, f"{s.label}: k={k}, {100 * v:.1f}%")
            for (cx, cy), (k, v) in zip(coords, s.values, strict=True)
        ]
    step = max(1, k_max // 10)
    x_ticks = [(round(x(k), 1), str(k)) for k in range(1, k_max + 1, step)]
    y_ticks = [(round(y(v / 4), 1), f"{25 * v}%") for v in range(5)]
    return Chart(title=title, series=series, x_ticks=x_ticks, y_ticks=y_ticks)
