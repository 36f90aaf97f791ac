"""The episode lifecycle through HTTP, on both sandbox backends."""

from fastapi.testclient import TestClient

from tests.factories import call, start_episode


def test_start_returns_policy_tools_and_first_message(client: TestClient) -> None:
    body = client.post("/v1/episodes", json={"task_id": "toybank-transfer-001"}).json()
    assert body["first_message"] == "Please move 50.00 from AC-0001 to AC-0002."
    assert "Toy bank policy" in body["system_prompt"]
    assert all(set(t) == {"type", "function"} for t in body["tools"])  # exactly OpenAI's format
    assert [t["function"]["name"] for t in body["tools"]] == list(body["tool_kinds"])
    kinds = body["tool_kinds"]  # our mark, apart
    assert kinds["transfer"] == "write" and kinds["get_account"] == "read"
    assert body["user"] == "scripted"


def test_gold_trajectory_scores_one_and_score_is_idempotent(client: TestClient) -> None:
    eid = start_episode(client)
    assert call(client, eid, "get_account", account_id="AC-0001")["output"]["balance_cents"] == 10000
    assert call(client, eid, "transfer", source_id="AC-0001", target_id="AC-0002", amount_cents=5000)[
        "output"
    ] == ("TR-90001")
    reply = client.post(f"/v1/episodes/{eid}/messages", json={"content": "Your transfer complete!"}).json()
    assert reply == {"content": "Thanks!", "done": False}
    first = client.post(f"/v1/episodes/{eid}/score").json()
    assert first["status"] == "scored" and first["reward"] == 1 and first["diff"] == []
    assert client.post(f"/v1/episodes/{eid}/score").json() == first


def test_wrong_amount_scores_zero_with_readable_diff(client: TestClient) -> None:
    eid = start_episode(client)
    call(client, eid, "transfer", source_id="AC-0001", target_id="AC-0002", amount_cents=4000)
    client.post(f"/v1/episodes/{eid}/messages", json={"content": "transfer complete"})
    score = client.post(f"/v1/episodes/{eid}/score").json()
    assert score["reward"] == 0
    wrong = {(d["table"], d["key"], d["column"]): (d["expected"], d["actual"]) for d in score["diff"]}
    assert wrong[("accounts", "AC-0001", "balance_cents")] == (5000, 6000)
    assert wrong[("transfers", "(new row)", "amount_cents")] == (5000, 4000)
    assert {d["kind"] for d in score["diff"]} == {"wrong"}


def test_extra_write_is_reported_as_extra(client: TestClient) -> None:
    eid = start_episode(client)
    call(client, eid, "transfer", source_id="AC-0001", target_id="AC-0002", amount_cents=5000)
    call(client, eid, "freeze_account", account_id="AC-0050")
    client.post(f"/v1/episodes/{eid}/messages", json={"content": "transfer complete"})
    score = client.post(f"/v1/episodes/{eid}/score").json()
    assert score["reward"] == 0
    assert score["diff"] == [
        {
            "kind": "extra",
            "table": "accounts",
            "key": "AC-0050",
            "column": "status",
            "expected": "open",
            "actual": "frozen",
            "side": "agent",
        }
    ]


def test_missing_communicate_item_costs_the_reward(client: TestClient) -> None:
    eid = start_episode(client)
    call(client, eid, "transfer", source_id="AC-0001", target_id="AC-0002", amount_cents=5000)
    client.post(f"/v1/episodes/{eid}/messages", json={"content": "All done."})
    score = client.post(f"/v1/episodes/{eid}/score").json()
    assert score["reward"] == 0
    assert {c["name"]: c["passed"] for c in score["checks"]} == {
        "state": True,
        "communicate:complete": False,
    }


def test_tool_refusal_is_agent_visible_and_rolls_back(client: TestClient) -> None:
    eid = start_episode(client)
    result = call(client, eid, "transfer", source_id="AC-0001", target_id="AC-0002", amount_cents=999_999)
    assert result["error"] == "insufficient funds in AC-0001" and result["output"] is None
    assert call(client, eid, "get_account", account_id="AC-0001")["output"]["balance_cents"] == 10000


def test_missing_expected_change_is_reported_as_missing(client: TestClient) -> None:
    eid = start_episode(client)
    score = client.post(f"/v1/episodes/{eid}/score").json()
    kinds = {(d["kind"], d["table"], d["key"]) for d in score["diff"]}
    assert ("missing", "accounts", "AC-0001") in kinds and ("missing", "transfers", "(new row)") in kinds


def test_scripted_user_ends_after_its_script(client: TestClient) -> None:
    eid = start_episode(client)
    assert client.post(f"/v1/episodes/{eid}/messages", json={"content": "ok"}).json()["done"] is False
    assert client.post(f"/v1/episodes/{eid}/messages", json={"content": "bye"}).json()["done"] is True
    over = client.post(f"/v1/episodes/{eid}/messages", json={"content": "hello?"})
    assert over.status_code == 409 and over.json()["error"]["code"] == "conversation-over"


def test_get_episode_shows_events_and_diff_so_far(client: TestClient) -> None:
    eid = start_episode(client)
    call(client, eid, "freeze_account", account_id="AC-0050")
    info = client.get(f"/v1/episodes/{eid}").json()
    assert [e["kind"] for e in info["events"]] == ["user_message", "tool_call"]
    assert info["events"][1]["payload"]["arguments"] == {"account_id": "AC-0050"}
    assert {(d["kind"], d["key"]) for d in info["diff"]} >= {("extra", "AC-0050"), ("missing", "AC-0001")}
    assert info["status"] == "active" and info["score"] is None


def test_a_disposed_episode_reads_disposed_and_takes_no_more_calls(client: TestClient) -> None:
    eid = start_episode(client)
    call(client, eid, "get_account", account_id="AC-0001")
    assert client.delete(f"/v1/episodes/{eid}").status_code == 204
    info = client.get(f"/v1/episodes/{eid}").json()
    assert info["status"] == "disposed" and [e["kind"] for e in info["events"]] == [
        "user_message",
        "tool_call",
    ]
    for method, path in [
        ("post", "tool_calls"),
        ("post", "messages"),
        ("post", "score"),
        ("delete", ""),
        ("post", "mcp"),
    ]:
        body = {"content": "hello"} if path == "messages" else {"name": "get_account"}
        r = client.request(method.upper(), f"/v1/episodes/{eid}/{path}".rstrip("/"), json=body)
        assert r.status_code == 410, (path, r.text)
        error = r.json()["error"]  # MCP's is a JSON-RPC error, with the REST code in its `data`
        assert (error["data"]["code"] if path == "mcp" else error["code"]) == "episode-disposed"
        assert "disposed of" in error["message"]
    assert client.get("/v1/episodes/no-such-episode").json()["error"]["code"] == "unknown-episode"


def test_rubric_without_judge_is_a_backend_error(client: TestClient) -> None:
    eid = start_episode(client, "toybank-judge-003")
    call(client, eid, "set_balance", account_id="AC-0005", balance_cents=12300)
    said = client.post(f"/v1/episodes/{eid}/messages", json={"content": "Done: the balance is 123.00."})
    assert said.status_code == 200, said.text
    score = client.post(f"/v1/episodes/{eid}/score").json()
    assert score["status"] == "backend_error" and score["reward"] is None
    assert "no judge is configured" in score["error"]


def test_rubric_fails_without_a_judge_when_the_agent_said_nothing(client: TestClient) -> None:
    eid = start_episode(client, "toybank-judge-003")
    call(client, eid, "set_balance", account_id="AC-0005", balance_cents=12300)
    score = client.post(f"/v1/episodes/{eid}/score").json()
    assert score["status"] == "scored" and score["reward"] == 0
    rubric = [c for c in score["checks"] if c["name"].startswith("rubric:")]
    assert rubric and not any(c["passed"] for c in rubric)


def test_finished_episodes_leave_no_per_episode_state(client: TestClient) -> None:
    """Thousands of episodes per step must not grow the server's memory: locks go with their calls."""
    for _ in range(3):
        eid = start_episode(client)
        call(client, eid, "get_account", account_id="AC-0001")
        client.post(f"/v1/episodes/{eid}/score")
        client.get(f"/v1/episodes/{eid}")
    service = client.app.state.episodes  # type: ignore[attr-defined]
    assert len(service._locks) == 0 and len(service._live) == 0
