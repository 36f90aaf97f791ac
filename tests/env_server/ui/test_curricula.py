"""Curriculum pages: training runs under GROUNDSTATE_RUNS_DIRS, charted from the files the trainer writes.

The runs are written by the real `trainer.curriculum.Curriculum` (start, draw, update, add, save), the way
`groundstate train local --curriculum adaptive` writes them, and read back through the app.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from html import unescape
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from env_server.app import create_app
from env_server.domain.registry import DomainRegistry
from env_server.settings import Settings
from env_server.ui.training import discover_training_runs
from shared.curriculum import CURRICULUM_LOG, read_curriculum_log
from tests.env_server.ui.conftest import trial, write_run
from trainer.curriculum import CURRICULUM_FILE, Curriculum, CurriculumSettings, GroupOutcome, StepRecord

EASY = "hotel-gen-cancel-001"
"""Wins every group it plays: retired after five steps."""
REWARDS = {
    "hotel-gen-cancel-002": [1, 0, 0, 1],
    "retail-gen-refund-001": [0, 0, 0, 0],
    "toybank-transfer-001": [1, 1, 0, 1],
    "toybank-transfer-002": [0, 1, 0, 0],
    "hotel-gen-cancel-003": [1, 0, 1, 1],
    "hotel-gen-cancel-004": [0, 0, 1, 0],
    "retail-gen-refund-002": [1, 1, 1, 0],
}
MINTED = ["hotel-gen-cancel-003", "hotel-gen-cancel-004"]


def train(out: Path, steps: int, curriculum: Curriculum | None = None) -> tuple[Curriculum, list[StepRecord]]:
    """Play `steps` steps of 3 slots as `train local` does: draw, play (the easy task also as a refill),
    update, append the record, save the state. Before step 4 the server mints two tasks and a resumed
    pool brings a third."""
    if curriculum is None:
        out.mkdir(parents=True)
        pool = ["hotel-gen-cancel-001", "hotel-gen-cancel-002", "retail-gen-refund-001"]
        pool += ["toybank-transfer-001", "toybank-transfer-002"]
        curriculum = Curriculum.start(pool, CurriculumSettings(group=4))
        (out / CURRICULUM_LOG).touch()
        config = {
            "config": {"model": "smollm2", "curriculum": "adaptive", "steps": steps},
            "pool_tasks": pool,
        }
        (out / "run.json").write_text(json.dumps(config))
    records = []
    for _ in range(steps):
        if curriculum.state.step == 3:
            curriculum.add(MINTED, minted=True)
            curriculum.add(["retail-gen-refund-002"])
        played = set(curriculum.draw(3))
        if curriculum.state.tasks[EASY].retired is None:
            played.add(EASY)
        outcomes = [
            GroupOutcome(task_id=t, rewards=[1] * 4 if t == EASY else REWARDS[t]) for t in sorted(played)
        ]
        record = curriculum.update(outcomes)
        with (out / CURRICULUM_LOG).open("a") as handle:
            handle.write(record.model_dump_json() + "\n")
        curriculum.save(out / CURRICULUM_FILE)
        records.append(record)
    return curriculum, records


def dot(html: str, label: str, step: int) -> str:
    """The tooltip of a chart's point: the value a series shows at a step."""
    return html.split(f"<title>{label}: step={step}, ")[1].split("</title>")[0]


def test_a_runs_curriculum_is_charted_step_by_step(client: TestClient, runs_dir: Path) -> None:
    curriculum, records = train(runs_dir / "adaptive", 8)
    retired_at = next(r.step for r in records if EASY in r.retired)
    assert [r.step for r in records if r.minted] == [4] and records[
        3
    ].minted == 2  # the real curriculum's figures
    html = unescape(client.get("/ui/curricula/adaptive").text)

    latest = html.split('id="latest"')[1].split("</table>")[0]
    last = records[-1]
    shown = re.findall(r'<td class="num">([^<]*)</td>', latest)
    assert shown == [
        str(v) for v in (8, last.band, last.active, 1, 3, 2, last.groups, last.informative_groups)
    ]
    assert "model <strong>smollm2</strong>" in html and "<th>group</th><td><code>4</code>" in html

    # (a) pool sizes over steps: band and active every step, retirements cumulative, admitted and minted tasks
    for record in records:
        assert dot(html, "band", record.step) == str(record.band)
        assert dot(html, "active", record.step) == str(record.active)
    assert dot(html, "retired (cumulative)", retired_at - 1) == "0"
    assert dot(html, "retired (cumulative)", 8) == "1"
    assert dot(html, "added", 4) == "3" and dot(html, "minted", 4) == "2" and dot(html, "minted", 5) == "0"
    # (b) the share of informative groups
    share = records[0].informative_groups / records[0].groups
    assert dot(html, "groups with both outcomes", 1) == f"{100 * share:.1f}%"
    # (c) one line per generator family
    assert 'data-label="hotel/cancel"' in html and 'data-label="retail/refund"' in html
    assert dot(html, "retail/refund", 8) == f"{100 * last.families['retail/refund']:.1f}%"
    # (d) the tasks: retired last, with its step; the minted ones admitted at step 4; known tasks linked
    table = html.split('id="task-table"')[1].split("</table>")[0]
    rows = {r.split('"')[0]: r for r in table.split('data-task="')[1:]}
    assert len(rows) == 8 and list(rows)[-1] == EASY
    easy = curriculum.state.tasks[EASY]
    assert '<span class="badge status-retired">retired</span>' in rows[EASY]
    assert (
        f'<td class="num">{easy.drawn}</td>' in rows[EASY]
        and f'<td class="num">{retired_at}</td>' in rows[EASY]
    )
    assert f"{100 * easy.mean:.1f}%" in rows[EASY]
    for task_id in MINTED:
        assert '<td class="num">4</td>' in rows[task_id] and "hotel/cancel" in rows[task_id]
    assert '<a href="/ui/tasks/toybank-transfer-001">' in rows["toybank-transfer-001"]
    assert "<a href" not in rows["hotel-gen-cancel-002"]  # not a task of this server
    assert all('<svg class="spark"' in row for row in rows.values())  # every task was played
    first_played = next(r for r in records if EASY in r.tasks)
    assert f"step {first_played.step}: {100 * first_played.tasks[EASY]:.0f}%" in rows[EASY]
    most_drawn = max((t for t in rows if t != EASY), key=lambda t: curriculum.state.tasks[t].drawn)
    assert "Posterior of the 8 most drawn tasks" in html and f'data-label="{most_drawn}"' in html

    listing = unescape(client.get("/ui/curricula").text)
    row = listing.split('<a href="/ui/curricula/adaptive">adaptive</a>')[1].split("</tr>")[0]
    assert "<td>smollm2</td>" in row and '<td class="num">8</td>' in row and '<td class="num">2</td>' in row
    front = client.get("/ui").text
    assert '<a href="/ui/curricula/adaptive">adaptive</a>' in front and '<a href="/ui/curricula">' in front
    # a training run is no evaluation run, and the other way round
    assert "/ui/campaigns/adaptive" not in client.get("/ui/campaigns").text
    write_run(runs_dir / "eval", [trial("hotel-a", 0, 1)])
    assert "/ui/curricula/eval" not in client.get("/ui/curricula").text


def test_a_run_still_training_shows_its_latest_step(client: TestClient, runs_dir: Path) -> None:
    out = runs_dir / "live"
    out.mkdir()
    (out / CURRICULUM_LOG).touch()  # `train local` creates the log before its first step
    html = client.get("/ui/curricula/live").text
    assert 'id="no-steps"' in html and "curriculum.json</code>) is written after the first step" in html
    assert "no step yet" in client.get("/ui/curricula").text
    (out / CURRICULUM_LOG).unlink()
    out.rmdir()
    curriculum, _ = train(out, 2)
    assert "<title>band: step=3," not in client.get("/ui/curricula/live").text
    with (out / CURRICULUM_LOG).open("a") as handle:
        handle.write('{"step": 3, "band": 2, "act')  # the trainer is writing step 3
    html = client.get("/ui/curricula/live").text
    assert "<title>band: step=2," in html and "<title>band: step=3," not in html
    (out / CURRICULUM_LOG).write_text((out / CURRICULUM_LOG).read_text().rsplit("\n", 1)[0] + "\n")
    _, records = train(out, 1, curriculum)
    assert f"<title>band: step=3, {records[0].band}</title>" in client.get("/ui/curricula/live").text


def test_bad_curriculum_requests_are_clear_4xx(client: TestClient, runs_dir: Path, tmp_path: Path) -> None:
    _, records = train(runs_dir / "good", 3)
    missing = client.get("/ui/curricula/nope")
    assert missing.status_code == 404 and "unknown training run 'nope' (known: good)" in unescape(
        missing.text
    )
    outside = tmp_path / "secret"
    train(outside, 1)  # a real training run, but not under a configured runs directory
    for name in ("secret", "..%2Fsecret", "..%2F..%2Fetc", "%2Fetc%2Fpasswd"):
        assert client.get(f"/ui/curricula/{name}").status_code == 404, name

    lines = [r.model_dump_json() for r in records]
    broken = {
        "invalid": (lines[0] + "\n" + '{"step": 2}\n', "2: not a valid StepRecord"),
        "torn-inside": ('{"step": 1, "ba\n' + lines[1] + "\n", "1: not JSON"),
        "gap": (lines[0] + "\n" + lines[2] + "\n", "step 3 follows step 1 (the line of step 2 is missing)"),
    }
    for name, (text, problem) in broken.items():
        (runs_dir / name).mkdir()
        (runs_dir / name / CURRICULUM_LOG).write_text(text)
        response = client.get(f"/ui/curricula/{name}")
        assert response.status_code == 422 and problem in unescape(response.text), name
        assert "unreadable-run" in response.text
    (runs_dir / "bad-state").mkdir()
    (runs_dir / "bad-state" / CURRICULUM_LOG).write_text(lines[0] + "\n")
    (runs_dir / "bad-state" / CURRICULUM_FILE).write_text('{"settings": {"group": 1}, "tasks": {}}')
    response = client.get("/ui/curricula/bad-state")
    assert response.status_code == 422 and "not a valid CurriculumState" in response.text
    listing = client.get("/ui/curricula")
    assert listing.status_code == 200 and listing.text.count('class="problem"') == 4
    assert '<a href="/ui/curricula/good">good</a>' in listing.text


def test_a_run_resumed_in_place_replaces_the_steps_it_replays(tmp_path: Path) -> None:
    """`train local --model OUT/checkpoints/step-2 --out OUT` appends steps 3.. again after the old 3..4."""
    out = tmp_path / "run"
    curriculum, _ = train(out, 2)
    checkpoint = tmp_path / "step-2.json"
    curriculum.save(checkpoint)
    train(out, 2, curriculum)
    _, replayed = train(out, 1, Curriculum.load(checkpoint))
    records = read_curriculum_log(out)
    assert [r.step for r in records] == [1, 2, 3] and records[-1] == replayed[0]


def test_discovery_takes_run_dirs_and_parents_and_keeps_names_unique(tmp_path: Path) -> None:
    train(tmp_path / "a" / "run1", 1)
    train(tmp_path / "b" / "run1", 1)
    train(tmp_path / "single", 1)
    write_run(tmp_path / "a" / "eval", [trial("hotel-a", 0, 1)])  # an evaluation run: not listed
    runs = discover_training_runs([tmp_path / "a", tmp_path / "b", tmp_path / "single", tmp_path / "absent"])
    assert runs == {
        "run1": tmp_path / "a" / "run1",
        "run1-2": tmp_path / "b" / "run1",
        "single": tmp_path / "single",
    }


@pytest.fixture
def keyed(tmp_path: Path, runs_dir: Path, toy_registry: DomainRegistry) -> Iterator[TestClient]:
    settings = Settings(store_url=f"sqlite:///{tmp_path}/store.db", api_key="k3y", runs_dirs=[runs_dir])
    with TestClient(create_app(settings, registry=toy_registry), follow_redirects=False) as client:
        yield client


def test_curriculum_pages_want_the_key_like_every_page(keyed: TestClient, runs_dir: Path) -> None:
    train(runs_dir / "adaptive", 1)
    for url in ("/ui/curricula", "/ui/curricula/adaptive"):
        response = keyed.get(url)
        assert response.status_code == 303 and response.headers["location"].startswith("/ui/login?next=")
        assert keyed.get(url, headers={"authorization": "Bearer k3y"}).status_code == 200
