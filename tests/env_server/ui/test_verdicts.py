"""The judge's verdicts and reasons on the episode page (the judge is a scripted OpenAI-compatible server)."""

from __future__ import annotations

from html import unescape
from pathlib import Path

from fastapi.testclient import TestClient

from env_server.app import create_app
from env_server.domain.registry import DomainRegistry
from env_server.settings import Settings
from tests.factories import call, start_episode
from tests.live_server import serve
from tests.llm_server import EdgeScript, completion, edge_app


def test_rubric_verdicts_show_answer_reason_and_judge_model(
    tmp_path: Path, toy_registry: DomainRegistry
) -> None:
    script = EdgeScript((200, completion('{"answer": "no", "reason": "The agent never greeted Di."}')))
    with serve(edge_app(script)) as judge_url:
        settings = Settings(
            store_url=f"sqlite:///{tmp_path}/store.db",
            judge_base_url=f"{judge_url}/v1",
            judge_model="edge-judge",
            judge_max_retries=0,
        )
        with TestClient(create_app(settings, registry=toy_registry)) as client:
            eid = start_episode(client, "toybank-judge-003")
            call(client, eid, "set_balance", account_id="AC-0005", balance_cents=12300)
            client.post(f"/v1/episodes/{eid}/messages", json={"content": "Done."})
            score = client.post(f"/v1/episodes/{eid}/score").json()
            assert score["status"] == "scored" and score["reward"] == 0
            html = unescape(client.get(f"/ui/episodes/{eid}").text)
    verdicts = html.split('id="verdicts"')[1].split("</table>")[0]
    assert "<td>Was the agent polite?</td>" in verdicts
    assert '<span class="badge outcome-fail">no</span>' in verdicts
    assert "The agent never greeted Di." in verdicts
    assert "edge-judge, judge-v1" in html
