"""The viewer in a real browser: a real server, real episodes and real campaigns, clicked through in Chromium.

Headless Debian `chromium` driven by Playwright (its Python package only; the browser is the system's).
Screenshots of every page go to `$GROUNDSTATE_TEST_ARTIFACTS/viewer/` (default: the test's tmp_path).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from matplotlib.image import imread
from typer.testing import CliRunner

from env_server.app import create_app
from env_server.domain.registry import DomainRegistry
from env_server.domains.hotel import domain as hotel
from env_server.settings import Settings
from groundstate.cli import app as cli
from shared.client import GroundstateClient
from tests.browser import CHROMIUM_FLAGS, chromium
from tests.live_server import serve
from tests.reference_play import play_reference
from tests.toy_domain import domain as toy_domain

KEY = "viewer-test-key"
SHOWCASE = "hotel-corp-modify-approval-001"


def artifacts(tmp_path: Path) -> Path:
    directory = Path(os.environ.get("GROUNDSTATE_TEST_ARTIFACTS") or tmp_path) / "viewer"
    directory.mkdir(parents=True, exist_ok=True)
    return directory


def play(url: str, gold: bool) -> str:
    """Play the showcase's reference conversation (or its wrong actions and a claim), score; the episode."""
    with GroundstateClient(url, api_key=KEY) as client:
        episode = client.start_episode(SHOWCASE).episode_id
        if gold:
            play_reference(client, episode, SHOWCASE)
        else:
            task = client.task(SHOWCASE, include_gold=True)
            for action in task.wrong_actions:
                client.call_tool(episode, action.name, action.arguments)
            claim = "This change needs manager approval, so I filed an approval request."
            client.send_message(episode, claim)
        client.score(episode)
    return episode


def campaign(url: str, out: Path, trials: int) -> None:
    args = ["eval", "--policy", "replay", "--server", url, "--api-key", KEY, "--domains", "toybank"]
    args += ["--split", "test", "--trials", str(trials), "--retries", "0", "--out", str(out), "--quiet"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output


def shoot(page: object, path: Path) -> None:
    page.screenshot(path=str(path), full_page=True)  # type: ignore[attr-defined]
    pixels = imread(path)[..., :3]
    assert pixels.std() > 0.05, f"{path} is blank"


@pytest.mark.slow
def test_click_from_task_to_episode_to_diff_and_campaign_in_chromium(tmp_path: Path) -> None:
    binary = chromium()
    from playwright.sync_api import expect, sync_playwright

    shots = artifacts(tmp_path)
    runs = tmp_path / "runs"
    settings = Settings(
        store_url=f"sqlite:///{tmp_path}/store.db", api_key=KEY, runs_dirs=[runs], sandbox_url="sqlite://"
    )
    with serve(create_app(settings, registry=DomainRegistry([toy_domain, hotel]))) as url:
        gold, wrong = play(url, gold=True), play(url, gold=False)
        campaign(url, runs / "replay-2", trials=2)
        campaign(url, runs / "replay-3", trials=3)
        with sync_playwright() as pw:
            browser = pw.chromium.launch(
                executable_path=binary, args=[f for f in CHROMIUM_FLAGS if f != "--headless"]
            )
            page = browser.new_page(viewport={"width": 1280, "height": 900})

            # the key: a browser is sent to the login form, and comes back to the page it asked for
            page.goto(f"{url}/ui/tasks/{SHOWCASE}")
            assert "/ui/login" in page.url
            shoot(page, shots / "0-login.png")
            page.fill("#key", KEY)
            page.click("#login")
            page.wait_for_url(f"{url}/ui/tasks/{SHOWCASE}")

            # the task: scenario, rules, gold actions, expected change
            expect(page.locator("#scenario")).to_contain_text("Dana Whitfield, travel coordinator")
            expect(page.locator("#rules")).to_contain_text("create_approval_request")
            expect(page.locator("#gold")).to_contain_text("verify_guest_identity")
            expect(page.locator("#expected")).to_contain_text("approval_requests")
            shoot(page, shots / "1-task.png")

            # task -> its gold episode: the chat, a tool call opened, a clean diff
            page.click(f"#task-episodes a[href='/ui/episodes/{gold}']")
            page.wait_for_url(f"{url}/ui/episodes/{gold}")
            expect(page.locator("#state")).to_have_text("finished")
            expect(page.locator("#chat .msg.user").first).to_contain_text("Deluxe King")
            expect(page.locator("#chat .msg.agent").first).to_contain_text("verify your identity")
            call = page.locator("#chat details.tool-call", has_text="create_approval_request")
            expect(call.locator(".call-body")).to_be_hidden()
            call.locator("summary").click()
            expect(call.locator(".call-body")).to_be_visible()
            expect(call.locator(".call-body")).to_contain_text("BK-20417")
            expect(page.locator("#diff-empty")).to_be_visible()
            expect(page.locator("#verdict .outcome-pass").first).to_have_text("1")
            shoot(page, shots / "2-episode-gold.png")

            # back to the task -> the wrong episode: the diff, coloured per kind, table and column
            page.go_back()
            page.click(f"#task-episodes a[href='/ui/episodes/{wrong}']")
            page.wait_for_url(f"{url}/ui/episodes/{wrong}")
            diff = page.locator("#diff")
            expect(diff.locator(".table-diff[data-table='approval_requests'] tr.kind-missing")).to_have_count(
                1
            )
            expect(diff.locator(".table-diff[data-table='bookings'] .col.kind-extra").first).to_be_visible()
            missing = diff.locator(".badge.kind-missing").first
            assert missing.evaluate("e => getComputedStyle(e).backgroundColor") == "rgb(255, 248, 197)"
            extra = diff.locator(".badge.kind-extra").first
            assert extra.evaluate("e => getComputedStyle(e).color") == "rgb(130, 80, 223)"
            expect(page.locator("#verdict .outcome-fail").first).to_have_text("0")
            shoot(page, shots / "3-episode-diff.png")

            # campaigns: the list, a run's figures, curves and grid, a cell -> its episode
            page.click("header nav a[href='/ui/campaigns']")
            expect(page.locator("#runs tr", has_text="replay-3")).to_contain_text("replay")
            expect(page.locator("#runs tr", has_text="replay-3")).to_contain_text("test")
            shoot(page, shots / "4-campaigns.png")
            page.click("#runs a[href='/ui/campaigns/replay-3']")
            expect(page.locator("#domain-figures")).to_contain_text("toybank")
            expect(page.locator("#curves svg polyline")).to_have_count(4)
            toy_test_tasks = sum(t.split == "test" for t in toy_domain.tasks)
            expect(page.locator("#trial-grid a.cell")).to_have_count(toy_test_tasks * 3)  # 3 trials a task
            expect(page.locator("#trial-grid a.cell.outcome-error")).to_have_count(3)  # no judge: judge-003
            shoot(page, shots / "5-campaign.png")
            page.locator("#trial-grid a.cell.outcome-pass").first.click()
            expect(page.locator("#state")).to_have_text("finished")
            expect(page.locator("#task-link")).to_contain_text("toybank-")

            # two runs side by side, chosen with the checkboxes
            page.goto(f"{url}/ui/campaigns")
            page.check("#runs input[value='replay-2']")
            page.check("#runs input[value='replay-3']")
            page.click("#compare")
            expect(page.locator("h1")).to_contain_text("replay-2 vs replay-3")
            expect(page.locator("#compare-grid")).to_contain_text("toybank-transfer-001")
            shoot(page, shots / "6-compare.png")

            # the front page: task counts, the latest episodes, the runs
            page.click("header a.brand")
            expect(page.locator("#episodes")).to_contain_text("toybank-transfer-001")
            expect(page.locator("main table").first).to_contain_text("hotel")
            expect(page.locator("main")).to_contain_text("replay-2")
            shoot(page, shots / "7-overview.png")
            browser.close()
    print(f"viewer screenshots: {shots}")
