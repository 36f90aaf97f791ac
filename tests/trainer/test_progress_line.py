"""`groundstate eval`'s progress line in an 80-column terminal: every field whole, nothing cut."""

from __future__ import annotations

import io
import re

import pytest
from rich.console import Console
from rich.progress import Progress

from trainer.evaluate import policy_label, progress_columns
from trainer.progress import PlainProgress, duration


@pytest.mark.parametrize(
    ("spec", "label"),
    [
        ("replay", "replay"),
        ("openai:gpt-4o-mini?max_tokens=512", "openai:gpt-4o-mini"),
        ("openai:Qwen/Qwen2.5-7B-Instruct@http://10.0.0.7:8001/v1", "openai:Qwen2.5-7B-"),
        ("local:/models/checkpoints/run-7/step-1200", "local:step-1200"),
    ],
)
def test_the_policy_label_is_short(spec: str, label: str) -> None:
    assert policy_label(spec) == label and len(label) <= 18


@pytest.mark.parametrize("errors", ["", " · 12 errors"])
def test_the_progress_line_fits_80_columns_whole(errors: str) -> None:
    out = io.StringIO()
    console = Console(file=out, width=80, force_terminal=True, color_system=None)
    with Progress(*progress_columns(), console=console, auto_refresh=False) as progress:
        label = policy_label("openai:Qwen/Qwen2.5-7B-Instruct@http://h:8001/v1")
        bar = progress.add_task(label, total=1000, running=0, errors="", rate="")
        progress.update(bar, completed=999, running=32, errors=errors, rate="pass@1 100.0%")
        progress.refresh()
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", out.getvalue())  # the cursor controls of a live display
    last = [line for line in text.replace("\r", "\n").splitlines() if line.strip()][-1]
    assert "…" not in last and len(last) <= 80, last
    for part in ("openai:Qwen2.5-7B-", "999/1000", "32 running", "pass@1 100.0%", errors.strip(" ·")):
        assert part in last, (part, last)


def test_plain_progress_lines_count_trials_rate_and_eta() -> None:
    out = io.StringIO()
    progress = PlainProgress("replay", 10, done=2, every_s=0.0, stream=out)
    progress.update(advance=3, running=2, errors=1, rate="pass@1 40.0%")
    line = out.getvalue().strip()
    assert line.startswith("replay: 5/10 trials · 2 running · 1 errors · pass@1 40.0% · ")
    assert re.search(r"\d+\.\d\d trials/s · ETA (\d+h)?(\d+m)?\d+s$", line), line
    progress.update(advance=5, running=0, errors=1, rate="pass@1 50.0%")
    assert out.getvalue().splitlines()[-1].endswith("ETA 0s")


def test_plain_progress_waits_between_lines() -> None:
    out = io.StringIO()
    progress = PlainProgress("replay", 10, every_s=3600, stream=out)
    progress.update(advance=1, running=1, errors=0, rate="pass@1 —")
    assert out.getvalue() == ""  # nothing until the interval passes, or `write` at the end
    progress.write()
    assert out.getvalue().startswith("replay: 1/10 trials · 1 running · pass@1 —")


@pytest.mark.parametrize(("seconds", "text"), [(42, "42s"), (439, "7m19s"), (3720, "1h02m")])
def test_durations_are_short(seconds: float, text: str) -> None:
    assert duration(seconds) == text
