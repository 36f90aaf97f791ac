"""The episode record is complete and honest: rejected calls and the end of the conversation are events."""

from fastapi.testclient import TestClient

from tests.factories import call, start_episode


def _events(client: TestClient, eid: str) -> list[dict]:
    return client.get(f"/v1/episodes/{eid}").json()["events"]


def test_rejected_tool_calls_are_events_of_the_episode(client: TestClient) -> None:
    eid = start_episode(client)
    unknown = client.post(f"/v1/episodes/{eid}/tool_calls", json={"name": "launch_rocket", "call_id": "c1"})
    assert unknown.status_code == 422
    invalid = client.post(f"/v1/episodes/{eid}/tool_calls", json={"name": "get_account", "arguments": {}})
    assert invalid.status_code == 422
    rejected = [e["payload"] for e in _events(client, eid) if e["kind"] == "rejected_tool_call"]
    assert rejected == [
        {
            "name": "launch_rocket",
            "call_id": "c1",
            "arguments": {},
            "code": "unknown-tool",
            "error": unknown.json()["error"]["message"],
            "field": unknown.json()["error"]["field"],
        },
        {
            "name": "get_account",
            "call_id": None,
            "arguments": {},
            "code": "invalid-arguments",
            "error": invalid.json()["error"]["message"],
            "field": "arguments.account_id",
        },
    ]


def test_a_rejected_call_changes_nothing_and_scores_as_if_absent(client: TestClient) -> None:
    eid = start_episode(client)
    bad = {"source_id": "AC-0001", "target_id": "AC-0002", "amount_cents": "lots"}
    assert client.post(f"/v1/episodes/{eid}/tool_calls", json={"name": "transfer", "arguments": bad}).is_error
    call(client, eid, "transfer", source_id="AC-0001", target_id="AC-0002", amount_cents=5000)
    client.post(f"/v1/episodes/{eid}/messages", json={"content": "Your transfer is complete."})
    assert client.post(f"/v1/episodes/{eid}/score").json()["reward"] == 1


def test_a_call_with_nul_text_is_refused_where_it_enters_and_the_record_stays_readable(
    client: TestClient,
) -> None:
    eid = start_episode(client)
    r = client.post(
        f"/v1/episodes/{eid}/tool_calls",
        json={"name": "get_account", "arguments": {"account_id": "AC\u00000"}},
    )
    assert r.status_code == 422 and r.json()["error"]["field"] == "arguments"
    assert [e["kind"] for e in _events(client, eid)] == ["user_message"]  # nothing of it was recorded


def test_the_end_of_the_conversation_is_an_event_not_a_user_message(client: TestClient) -> None:
    eid = start_episode(client)
    said = client.post(f"/v1/episodes/{eid}/messages", json={"content": "Done, it is complete."}).json()
    assert said == {"content": "Thanks!", "done": False}  # the script's last line
    ended = client.post(f"/v1/episodes/{eid}/messages", json={"content": "Anything else?"}).json()
    assert ended == {"content": "", "done": True}  # the user ends without a word
    events = _events(client, eid)
    assert [e["kind"] for e in events][-2:] == ["assistant_message", "conversation_end"]
    assert all("###" not in e["payload"].get("content", "") for e in events)
    over = client.post(f"/v1/episodes/{eid}/messages", json={"content": "Hello?"})
    assert over.status_code == 409 and over.json()["error"]["code"] == "conversation-over"


def test_a_passing_episode_shows_what_the_agent_changed(client: TestClient) -> None:
    eid = start_episode(client)
    call(client, eid, "transfer", source_id="AC-0001", target_id="AC-0002", amount_cents=5000)
    so_far = client.get(f"/v1/episodes/{eid}").json()
    client.post(f"/v1/episodes/{eid}/messages", json={"content": "Your transfer is complete."})
    score = client.post(f"/v1/episodes/{eid}/score").json()
    assert score["reward"] == 1 and score["diff"] == []  # nothing differs from the expected changes...
    cells = {(c["table"], c["key"], c["column"]): (c["before"], c["after"]) for c in score["changes"]}
    assert cells[("accounts", "AC-0001", "balance_cents")] == (10000, 5000)  # ...and this is what changed
    assert cells[("accounts", "AC-0002", "balance_cents")] == (0, 5000)
    (added,) = [c for c in score["changes"] if c["table"] == "transfers"]
    assert added["key"] == "(new row)" and added["before"] is None and added["after"]["amount_cents"] == 5000
    assert so_far["changes"] == score["changes"] == client.get(f"/v1/episodes/{eid}").json()["changes"]
