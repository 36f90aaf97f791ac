"""Campaign pages: runs found under GROUNDSTATE_RUNS_DIRS, their figures, curves, grids and comparisons."""

from __future__ import annotations

from html import unescape
from pathlib import Path

from fastapi.testclient import TestClient

from env_server.app import create_app
from env_server.domain.registry import DomainRegistry
from env_server.settings import Settings
from env_server.ui.runs import discover_runs
from tests.env_server.ui.conftest import trial, write_run
from tests.toy_domain import domain as toy_domain


def outcomes(rewards: dict[str, list[int | None]]) -> list[dict[str, object]]:
    return [trial(task, i, r) for task, rs in rewards.items() for i, r in enumerate(rs)]


def test_no_runs_configured_or_found(client: TestClient, runs_dir: Path) -> None:
    html = client.get("/ui/campaigns").text
    assert "No run (a directory holding" in html
    assert f"--out {runs_dir}/NAME" in unescape(html) and "without a restart" in html


def test_a_run_written_while_the_server_runs_shows_up_without_a_restart(
    client: TestClient, runs_dir: Path
) -> None:
    assert 'id="no-runs"' in client.get("/ui/campaigns").text
    write_run(runs_dir / "later", outcomes({"toybank-transfer-001": [1, 0]}))
    html = client.get("/ui/campaigns").text
    assert 'id="no-runs"' not in html and 'href="/ui/campaigns/later"' in html


def test_the_runs_directory_defaults_to_runs_in_the_working_directory() -> None:
    from env_server.settings import Settings

    assert Settings().runs_dirs == [Path("runs")]


def test_run_page_shows_figures_curves_and_a_linked_grid(client: TestClient, runs_dir: Path) -> None:
    # task a: 3 of 4; task b: 1 of 4 and a backend error; task c (another domain): 4 of 4
    lines = outcomes(
        {
            "hotel-a": [1, 1, 0, 1],
            "hotel-b": [0, None, 1, 0, 0],
            "retail-c": [1, 1, 1, 1],
        }
    )
    config = {"config": {"policy": "local:smollm2", "split": "test", "trials": 5}, "created_at": "2026-12-01"}
    write_run(runs_dir / "smol", lines, config)
    html = unescape(client.get("/ui/campaigns/smol").text)
    hotel = html.split("<td>hotel</td>")[1].split("</tr>")[0]
    # hotel: pass@1 = (3/4 + 1/4) / 2 = 50%; k = 4 (fewest clean trials of any task);
    # pass@4 = (1 + 1) / 2 = 100%; pass^4 = (0 + 0) / 2 = 0%
    assert "50.0%" in hotel and "100.0%" in hotel and "0.0%" in hotel
    assert '<td class="num">1</td>' in hotel  # one backend error
    overall = html.split("<td>all domains</td>")[1].split("</tr>")[0]
    # overall pass@1 = (0.75 + 0.25 + 1) / 3; pass^4 = (0 + 0 + 1) / 3
    assert "66.7%" in overall and "33.3%" in overall
    assert "pass@4" in html and "pass^4" in html
    assert html.count('<polyline class="series"') == 6  # two charts x (all domains, hotel, retail)
    assert 'data-label="retail"' in html
    assert '<a class="cell outcome-pass" href="/ui/episodes/ephotel-a0?run=smol"' in html
    error = 'href="/ui/episodes/ephotel-b1?run=smol" title="trial 1: backend error: judge endpoint down">'
    assert f'<a class="cell outcome-error" {error}' in html
    assert 'title="trial 4: not run">4</span>' in html  # hotel-a has no fifth trial
    assert "policy <strong>local:smollm2</strong>" in html and "<th>trials</th><td><code>5</code>" in html
    listing = unescape(client.get("/ui/campaigns").text)
    assert '<a href="/ui/campaigns/smol">smol</a>' in listing and "66.7%" in listing
    assert "<td>local:smollm2</td><td>test</td>" in listing


def test_cells_link_to_real_episodes_and_tasks_of_this_server(client: TestClient, runs_dir: Path) -> None:
    eid = client.post("/v1/episodes", json={"task_id": "toybank-transfer-001"}).json()["episode_id"]
    write_run(
        runs_dir / "toy", [trial("toybank-transfer-001", 0, 0, episode_id=eid), trial("elsewhere-x", 0, 1)]
    )
    html = client.get("/ui/campaigns/toy").text
    assert f'href="/ui/episodes/{eid}?run=toy"' in html
    assert '<a href="/ui/tasks/toybank-transfer-001">' in html
    assert "<td>elsewhere-x</td>" in html  # a task this server does not serve: no link
    assert client.get(f"/ui/episodes/{eid}").status_code == 200


def test_two_runs_side_by_side(client: TestClient, runs_dir: Path) -> None:
    write_run(runs_dir / "base", outcomes({"hotel-a": [0, 0], "hotel-b": [1, 1]}))
    write_run(runs_dir / "new", outcomes({"hotel-a": [1, 1], "hotel-b": [1, 1], "retail-c": [0, 1]}))
    html = unescape(client.get("/ui/campaigns/compare?run=base&run=new").text)
    assert 'base <span class="quiet">vs</span> new' in html
    hotel = html.split("<td>hotel</td>")[1].split("</tr>")[0]
    assert "50.0%" in hotel and "100.0%" in hotel and "+50.0 pts" in hotel
    grid = html.split('id="compare-grid"')[1]
    assert grid.index("hotel-a") < grid.index("hotel-b")  # the largest change first
    assert "+100 pts" in grid and "not in run" in grid
    moves = html.split('id="moves"')[1].split("</p>")[0]
    assert "1 better" in moves and "0 worse" in moves and "1 unchanged; the rest ran in one run only" in moves
    assert 'stroke-dasharray="6 4"' in html  # the second run dashed


def test_bad_run_requests_are_clear_4xx(client: TestClient, runs_dir: Path) -> None:
    write_run(runs_dir / "only", outcomes({"hotel-a": [1]}))
    missing = client.get("/ui/campaigns/nope")
    assert missing.status_code == 404 and "unknown run 'nope' (known: only)" in unescape(missing.text)
    assert client.get("/ui/campaigns/compare?run=only").status_code == 422
    assert client.get("/ui/campaigns/..%2F..%2Fetc").status_code == 404
    broken = runs_dir / "broken"
    broken.mkdir()
    (broken / "results.jsonl").write_text('{"task_id": "x"}\n')
    response = client.get("/ui/campaigns/broken")
    assert response.status_code == 422 and "not a valid TrialResult" in response.text
    listing = client.get("/ui/campaigns")
    assert listing.status_code == 200 and "not a valid TrialResult" in listing.text


def test_a_torn_last_line_is_skipped(client: TestClient, runs_dir: Path) -> None:
    run = write_run(runs_dir / "torn", outcomes({"hotel-a": [1, 0]}))
    with (run / "results.jsonl").open("a") as fh:
        fh.write('{"task_id": "hotel-a", "tri')
    html = client.get("/ui/campaigns/torn").text
    assert "50.0%" in html and "policy <strong>replay</strong>" in html  # no run.json: the lines' policy


def test_discovery_takes_run_dirs_and_parents_and_keeps_names_unique(tmp_path: Path) -> None:
    write_run(tmp_path / "a" / "run1", outcomes({"hotel-a": [1]}))
    write_run(tmp_path / "b" / "run1", outcomes({"hotel-a": [1]}))
    single = write_run(tmp_path / "single", outcomes({"hotel-a": [1]}))
    reserved = write_run(tmp_path / "c" / "compare", outcomes({"hotel-a": [1]}))
    (tmp_path / "a" / "not-a-run").mkdir()
    runs = discover_runs([tmp_path / "a", tmp_path / "b", single, tmp_path / "absent", tmp_path / "c"])
    assert runs == {
        "run1": tmp_path / "a" / "run1",
        "run1-2": tmp_path / "b" / "run1",
        "single": single,
        "compare-2": reserved,
    }


OVERFLOW = "policy openai:smol: maximum context length is 2048 tokens, you requested 3030"


def policy_failure(task_id: str, trial_index: int, **extra: object) -> dict[str, object]:
    """A trial whose policy endpoint failed, as `groundstate eval` records it."""
    return trial(task_id, trial_index, None, status="policy_error", error=OVERFLOW, **extra)


def test_policy_errors_are_named_not_scored_zero(client: TestClient, runs_dir: Path) -> None:
    lines = [trial("hotel-a", 0, 1), policy_failure("hotel-b", 0), policy_failure("hotel-c", 0)]
    write_run(runs_dir / "ctx", lines)
    html = unescape(client.get("/ui/campaigns/ctx").text)
    assert "2 trials ended in policy errors" in html and OVERFLOW in html
    hotel = html.split("<td>hotel</td>")[1].split("</tr>")[0]
    assert '<td class="num">1</td><td class="num">0</td><td class="num">2</td>' in hotel  # clean 1, ok, 2
    assert "100.0%" in hotel  # pass@1 over the one trial the model played, not 1 of 3
    assert 'class="cell outcome-policy" href="/ui/episodes/ephotel-b0?run=ctx"' in html
    listing = unescape(client.get("/ui/campaigns").text)
    assert '<td class="num problem">2</td>' in listing


def test_the_episode_page_opened_from_a_campaign_names_the_policy_error(
    client: TestClient, runs_dir: Path
) -> None:
    eid = client.post("/v1/episodes", json={"task_id": "toybank-transfer-001"}).json()["episode_id"]
    client.delete(f"/v1/episodes/{eid}")
    write_run(runs_dir / "ctx", [policy_failure("toybank-transfer-001", 0, episode_id=eid)])
    html = unescape(client.get(f"/ui/episodes/{eid}?run=ctx").text)
    assert 'id="trial-outcome"' in html and "policy error" in html and OVERFLOW in html
    assert "the model never played" in html
    assert 'id="trial-outcome"' not in client.get(f"/ui/episodes/{eid}").text


def test_the_campaign_page_shows_the_interval_of_pass_at_1(client: TestClient, runs_dir: Path) -> None:
    write_run(runs_dir / "ci", outcomes({"hotel-a": [1, 1], "hotel-b": [0, 0], "hotel-c": [1, 0]}))
    html = unescape(client.get("/ui/campaigns/ci").text)
    assert "<th>95% CI</th>" in html
    overall = html.split("<td>all domains</td>")[1].split("</tr>")[0]
    # per-task rates 1, 0, 0.5: every resampled mean lies in [0, 1], the bootstrap's tails at 0% and 100%
    assert "0.0%–100.0%" in overall


def test_a_curriculum_domain_is_left_out_of_the_total(settings: Settings, runs_dir: Path) -> None:
    from env_server.domains.starter import domain as starter

    write_run(runs_dir / "mixed", outcomes({"hotel-a": [0, 0], "starter-a": [1, 1]}))
    with TestClient(create_app(settings, registry=DomainRegistry([toy_domain, starter]))) as client:
        assert {d["name"]: d["benchmark"] for d in client.get("/v1/domains").json()} == {
            "toybank": True,
            "starter": False,
        }
        html = unescape(client.get("/ui/campaigns/mixed").text)
    overall = html.split("<td>all domains</td>")[1].split("</tr>")[0]
    assert '<td class="num">1</td><td class="num">2</td><td class="num">0</td>' in overall  # hotel alone
    assert "leaves out the curriculum domains starter" in html
    assert "<td>starter</td>" in html  # still shown on its own row
