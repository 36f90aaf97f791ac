"""`benchmarks/grpo_step.py` runs end to end at a tiny scale, and its figures are computed as documented."""

import json
import re
from pathlib import Path

import pytest

from benchmarks._measures import by_live, quantiles
from benchmarks.grpo_step import knee, main


def test_quantiles_are_nearest_rank_milliseconds() -> None:
    values = [i / 1000 for i in range(1, 101)]  # 1..100 ms
    assert quantiles(values) == {"n": 100, "p50_ms": 50.0, "p95_ms": 95.0, "p99_ms": 99.0}
    assert quantiles([])["p99_ms"] is None


def test_tool_calls_are_banded_by_live_episodes() -> None:
    bands = by_live([(0, 0.001), (7, 0.002), (8, 0.2), (15, 0.3)], buckets=2)
    assert [(b["live_from"], b["live_to"], b["n"]) for b in bands] == [(0, 7, 2), (8, 15, 2)]
    assert bands[1]["p99_ms"] == 300.0


def test_the_knee_is_the_first_burst_whose_tool_call_p99_passes_100_ms() -> None:
    def result(n: int, p99: float) -> dict:
        return {"episodes": n, "server": {"peak_live": n - 1, "routes": {"tool call": {"p99_ms": p99}}}}

    assert knee([result(16, 20.0), result(32, 101.0), result(64, 300.0)]) == {
        "episodes": 32,
        "peak_live": 31,
        "tool_call_p99_ms": 101.0,
    }
    assert knee([result(16, 20.0)]) is None


@pytest.mark.slow
def test_a_tiny_burst_runs_against_the_server_and_the_floor(tmp_path: Path) -> None:
    out = tmp_path / "grpo.json"
    argv = [
        "--episodes", "8", "--think-median", "0.01", "--tasks-per-domain", "2",
        "--abandon-rate", "0.3", "--resend-rate", "0",
        "--server-env", 'GROUNDSTATE_DOMAINS=["hotel"]', "--out", str(out),
    ]  # fmt: skip
    written = main(argv)
    assert json.loads(out.read_text()) == json.loads(json.dumps(written))
    assert not re.search(r'[" ]/', json.dumps(written)), "an absolute path in the JSON"  # even --out's
    (result,) = written["results"]
    for side in ("server", "floor"):
        figures = result[side]
        assert figures["errors"] == {}
        assert figures["scored"] + figures["abandoned"] == 8
        assert figures["abandoned"] >= 1
        assert figures["routes"]["tool call"]["n"] > 0
        assert figures["server_cpu_s_per_episode"] > 0
    # every finished episode scores what its task's reference conversation scores alone: 1
    assert result["server"]["rewards"] == {"1": result["server"]["scored"]}
