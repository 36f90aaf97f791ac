"""The episode record in a real browser: rejected calls, the end of the conversation, the agent's changes.

Headless Chromium through Playwright against a real server (the pattern of `test_browser.py`).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from env_server.app import create_app
from env_server.domain.registry import DomainRegistry
from env_server.settings import Settings
from shared.client import ApiError, GroundstateClient
from tests.browser import CHROMIUM_FLAGS, chromium
from tests.live_server import serve
from tests.toy_domain import domain as toy_domain

KEY = "record-test-key"


def _played(url: str) -> tuple[str, str]:
    """A passing episode with a rejected call that played to the user's end, and a disposed one."""
    with GroundstateClient(url, api_key=KEY) as client:
        episode = client.start_episode("toybank-transfer-001").episode_id
        with pytest.raises(ApiError):
            client.call_tool(episode, "launch_rocket", {})
        client.call_tool(
            episode, "transfer", {"source_id": "AC-0001", "target_id": "AC-0002", "amount_cents": 5000}
        )
        client.send_message(episode, "Your transfer is complete.")
        assert client.send_message(episode, "Anything else?").done
        assert client.score(episode).reward == 1
        dropped = client.start_episode("toybank-transfer-001").episode_id
        client.dispose(dropped)
    return episode, dropped


@pytest.mark.slow
def test_the_episode_record_in_chromium(tmp_path: Path) -> None:
    binary = chromium()
    from playwright.sync_api import expect, sync_playwright

    settings = Settings(store_url=f"sqlite:///{tmp_path}/store.db", api_key=KEY, sandbox_url="sqlite://")
    with serve(create_app(settings, registry=DomainRegistry([toy_domain]))) as url:
        episode, dropped = _played(url)
        with sync_playwright() as pw:
            browser = pw.chromium.launch(
                executable_path=binary, args=[f for f in CHROMIUM_FLAGS if f != "--headless"]
            )
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto(f"{url}/ui/login")
            page.fill("#key", KEY)
            page.click("#login")
            page.goto(f"{url}/ui/episodes/{episode}")

            rejected = page.locator("#chat details.tool-call.rejected")
            expect(rejected).to_have_count(1)
            expect(rejected.locator("summary")).to_contain_text("rejected: unknown-tool")
            rejected.locator("summary").click()
            expect(rejected.locator(".call-body")).to_contain_text("launch_rocket")
            expect(page.locator("#chat .conversation-end")).to_have_text("the user ended the conversation")
            expect(page.locator("#chat .msg.user .text").last).to_have_text("Thanks!")
            expect(page.locator("#chat")).not_to_contain_text("###STOP###")

            expect(page.locator("#diff-empty")).to_be_visible()  # passing: nothing differs...
            changes = page.locator("#changes table.changes")  # ...and what the agent changed is there
            expect(changes.locator("tr[data-table='accounts']")).to_have_count(2)
            expect(changes.locator("tr[data-table='transfers']")).to_contain_text("(row added)")

            page.goto(f"{url}/ui/episodes/{dropped}")
            expect(page.locator("#state")).to_have_text("disposed")
            browser.close()
        with GroundstateClient(url, api_key=KEY) as client:
            assert client.episode(dropped).status == "disposed"  # the same word over REST
