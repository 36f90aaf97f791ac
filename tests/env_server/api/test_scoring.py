"""`POST /v1/score`: stateless scoring of submitted trajectories."""

from fastapi.testclient import TestClient

GOLD = [
    {"name": "transfer", "arguments": {"source_id": "AC-0001", "target_id": "AC-0002", "amount_cents": 5000}}
]


def test_gold_trajectory_with_message_scores_one(client: TestClient) -> None:
    body = {
        "task_id": "toybank-transfer-001",
        "tool_calls": GOLD,
        "messages": [
            {"role": "user", "content": "move it"},
            {"role": "assistant", "content": "Transfer complete."},
        ],
    }
    r = client.post("/v1/score", json=body).json()
    assert r["reward"] == 1 and r["tool_results"][0]["output"] == "TR-90001"


def test_invalid_calls_in_a_trajectory_are_agent_errors_not_http_errors(client: TestClient) -> None:
    calls = [
        {"name": "no_such_tool", "arguments": {}},
        {"name": "transfer", "arguments": {"source_id": "AC-0001"}},
    ]
    r = client.post("/v1/score", json={"task_id": "toybank-transfer-001", "tool_calls": calls})
    assert r.status_code == 200
    body = r.json()
    assert body["reward"] == 0 and all(t["error"] for t in body["tool_results"])


def test_scoring_the_same_state_twice_gives_the_same_result(client: TestClient) -> None:
    body = {"task_id": "toybank-transfer-001", "tool_calls": GOLD[:1], "messages": []}
    assert client.post("/v1/score", json=body).json() == client.post("/v1/score", json=body).json()


def test_unknown_task_is_404(client: TestClient) -> None:
    assert client.post("/v1/score", json={"task_id": "nope"}).status_code == 404


def test_ignored_columns_do_not_count_and_determined_ones_do(client: TestClient) -> None:
    def reward(**args: str) -> int:
        call = {"name": "open_ticket", "arguments": {"account_id": "AC-0007", "topic": "fees", **args}}
        said = [{"role": "assistant", "content": "Your ticket is TK-90001."}]
        body = {"task_id": "toybank-ticket-006", "tool_calls": [call], "messages": said}
        return int(client.post("/v1/score", json=body).json()["reward"])

    assert reward() == 1
    assert reward(priority="high") == 1  # tickets.priority is in the task's ignore_columns
    assert reward(topic="fraud") == 0  # tickets.topic is determined: the owner asked about a fee


def test_a_silent_trajectory_scores_zero_even_on_a_refusal(client: TestClient) -> None:
    body = {"task_id": "toybank-refuse-frozen-002", "tool_calls": [], "messages": []}
    assert client.post("/v1/score", json=body).json()["reward"] == 0


def test_a_tasks_gold_pastes_into_score_as_it_is_served(client: TestClient) -> None:
    """A task's gold, as `GET /v1/tasks/{id}` serves it, is a `/v1/score` trajectory: one spelling."""
    task = client.get("/v1/tasks/toybank-transfer-001", params={"include_gold": True}).json()
    said = [{"role": "assistant", "content": "Transfer complete."}]
    body = {"task_id": task["id"], "tool_calls": task["gold_actions"], "messages": said}
    r = client.post("/v1/score", json=body)
    assert r.status_code == 200, r.text
    assert r.json()["reward"] == 1


def test_the_reference_conversation_pastes_into_score_in_order(client: TestClient) -> None:
    """Each step of `GET /v1/tasks/{id}/reference` is a chat message; its `tool_call` is the `function`."""
    for task_id in ("toybank-transfer-001", "toybank-ticket-006"):
        steps = client.get(f"/v1/tasks/{task_id}/reference").json()["steps"]
        messages = [
            {"role": s["role"], "content": s["content"]}
            if s["tool_call"] is None
            else {"role": "assistant", "tool_calls": [{"id": f"c{i}", "function": s["tool_call"]}]}
            for i, s in enumerate(steps)
        ]
        r = client.post("/v1/score", json={"task_id": task_id, "messages": messages})
        assert r.status_code == 200, r.text
        assert r.json()["reward"] == 1 and r.json()["ordered"], task_id


def test_every_score_records_its_grading_version(client: TestClient) -> None:
    from env_server.scoring.scorer import SCORER_VERSION

    registry = client.app.state.registry  # type: ignore[attr-defined]
    task = registry.task("toybank-transfer-001")
    body = {"task_id": task.id, "tool_calls": GOLD, "messages": []}
    grading = client.post("/v1/score", json=body).json()["grading"]
    assert grading == {
        "task_fingerprint": task.fingerprint,
        "domain_fingerprint": registry.domain("toybank").fingerprint,
        "scorer_version": SCORER_VERSION,
        "judge_model": "",  # no rubric question: no judge graded it
        "judge_prompt_version": "",
    }
    openapi = client.get("/openapi.json").json()["components"]["schemas"]
    assert "grading" in openapi["ScoreResult"]["properties"] and "GradingVersion" in openapi
