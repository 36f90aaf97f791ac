"""The viewer's pages over HTTP, on both sandbox backends: what each page shows, and that it only reads."""

from __future__ import annotations

import re
from html import unescape

from fastapi.routing import APIRoute
from fastapi.testclient import TestClient

from env_server.app import create_app
from env_server.domain.registry import DomainRegistry
from env_server.settings import Settings
from env_server.ui import auth, campaigns, curricula, episodes, home, tasks
from tests.factories import call, start_episode


def page(client: TestClient, url: str, status: int = 200) -> str:
    response = client.get(url)
    assert response.status_code == status, response.text[:2000]
    assert response.headers["content-type"].startswith("text/html")
    return unescape(response.text)


def play_gold(client: TestClient) -> str:
    eid = start_episode(client)
    call(client, eid, "get_account", account_id="AC-0001")
    call(client, eid, "transfer", source_id="AC-0001", target_id="AC-0002", amount_cents=5000)
    client.post(f"/v1/episodes/{eid}/messages", json={"content": "Your transfer complete!"})
    assert client.post(f"/v1/episodes/{eid}/score").json()["reward"] == 1
    return eid


def test_front_page_counts_tasks_per_domain_split_and_kind(client: TestClient) -> None:
    html = page(client, "/ui")
    assert "toybank" in html
    # toybank: test has 3 action + 1 analytics, train 1 action + 1 analytics
    assert '/ui/tasks?domain=toybank&split=test&kind=action">3</a>' in html
    assert '/ui/tasks?domain=toybank&split=train&kind=analytics">1</a>' in html
    assert "No episodes yet" in html and "No run (a directory holding" in html


def test_task_list_filters_by_domain_split_and_kind(client: TestClient) -> None:
    html = page(client, "/ui/tasks?domain=toybank&split=test&kind=action")
    assert "toybank-transfer-001" in html and "toybank-judge-003" in html
    assert "toybank-analytics-004" not in html and "toybank-refuse-frozen-002" not in html
    assert "3 tasks" in html
    everything = page(client, "/ui/tasks?domain=&split=&kind=")
    assert "6 tasks" in everything


def test_unknown_domain_task_and_bad_filter_are_html_errors_not_500(client: TestClient) -> None:
    assert "unknown domain 'nope' (known: toybank)" in page(client, "/ui/tasks?domain=nope", 404)
    assert "unknown task 'no-such-task'" in page(client, "/ui/tasks/no-such-task", 404)
    assert "split" in page(client, "/ui/tasks?split=validation", 422)
    assert "unknown episode 'feedbeef'" in page(client, "/ui/episodes/feedbeef", 404)
    assert "page" in page(client, "/ui/episodes?page=-1", 422)


def test_task_page_shows_scenario_gold_and_expected_table_diff(client: TestClient) -> None:
    html = page(client, "/ui/tasks/toybank-transfer-001")
    assert "Ana, account owner" in html and "Transfer 50.00 from AC-0001 to AC-0002" in html
    assert "<li>Please move 50.00 from AC-0001 to AC-0002.</li>" in html  # the script
    assert '<code class="tool">transfer</code>' in html and "tool-write" in html
    assert '"amount_cents": 5000' in html
    # the expected change: AC-0001 10000 -> 5000, AC-0002 up by 5000, one transfer row added
    change = '<td class="old">10000</td><td class="new">5000</td>'
    assert f'<td class="mono">AC-0001</td><td class="mono">balance_cents</td>{change}' in html
    assert '<h3 class="table-name">transfers</h3>' in html and "rows added" in html
    assert "<li>complete</li>" in html  # a communicate item


def test_task_without_changes_and_analytics_task(client: TestClient) -> None:
    html = page(client, "/ui/tasks/toybank-refuse-frozen-002")
    assert "No change: scoring expects the database exactly as the task starts." in html
    analytics = page(client, "/ui/tasks/toybank-analytics-004")
    assert "SELECT COUNT(*) FROM accounts WHERE balance_cents > 400000" in analytics
    assert 'id="gold-rows"' in analytics and "Gold answer (1 row)" in analytics


def test_gold_episode_page_shows_the_chat_tool_calls_and_a_clean_diff(client: TestClient) -> None:
    eid = play_gold(client)
    html = page(client, f"/ui/episodes/{eid}")
    assert '<span class="badge state-finished" id="state">finished</span>' in html
    assert '<div class="msg user"><div class="who">user</div><div class="text">Please move 50.00' in html
    assert (
        '<div class="msg agent"><div class="who">agent</div><div class="text">Your transfer complete!' in html
    )
    assert '<code class="tool">transfer</code>' in html and "TR-90001" in html  # the call and its result
    assert '<span class="badge outcome-pass">1</span>' in html
    assert "The state matches the expected state." in html
    assert "communicate:complete" in html
    # the task page links to its episodes, the episode back to its task
    assert f"/ui/episodes/{eid}" in page(client, "/ui/tasks/toybank-transfer-001")
    assert 'href="/ui/tasks/toybank-transfer-001" id="task-link"' in html


def test_wrong_episode_diff_is_grouped_and_coloured_per_table_and_column(client: TestClient) -> None:
    eid = start_episode(client)
    call(client, eid, "transfer", source_id="AC-0001", target_id="AC-0002", amount_cents=4000)
    call(client, eid, "freeze_account", account_id="AC-0050")
    result = call(client, eid, "transfer", source_id="AC-0001", target_id="AC-0002", amount_cents=999_999)
    assert result["error"]
    client.post(f"/v1/episodes/{eid}/score")
    html = page(client, f"/ui/episodes/{eid}")
    assert '<span class="badge outcome-fail">0</span>' in html
    accounts = html.split('data-table="accounts"')[1].split('data-table="transfers"')[0]
    assert '<span class="badge kind-wrong">2 wrong</span>' in accounts
    assert '<span class="badge kind-extra">1 extra</span>' in accounts
    assert '<span class="col kind-wrong" title="2 wrong">balance_cents</span>' in accounts
    assert '<span class="col kind-extra" title="1 extra">status</span>' in accounts
    row = '<tr class="kind-wrong"><td><span class="badge kind-wrong">wrong</span></td>'
    row += '<td class="mono">AC-0001</td>'
    assert (
        row + '<td class="mono">balance_cents</td><td><pre>5000</pre></td><td><pre>6000</pre></td>'
        in accounts
    )
    assert "refused" in html and "insufficient funds in AC-0001" in html  # a refused call, collapsible


def test_live_episode_shows_the_diff_so_far_and_viewing_changes_nothing(client: TestClient) -> None:
    eid = start_episode(client)
    before = client.get(f"/v1/episodes/{eid}").json()
    html = page(client, f"/ui/episodes/{eid}")
    assert '<meta http-equiv="refresh" content="5">' in html and "State diff so far" in html
    assert '<span class="badge kind-missing">' in html  # nothing done yet: the transfer is missing
    page(client, f"/ui/tasks/{'toybank-transfer-001'}")
    page(client, "/ui/episodes?state=active")
    assert client.get(f"/v1/episodes/{eid}").json() == before
    call(client, eid, "transfer", source_id="AC-0001", target_id="AC-0002", amount_cents=5000)
    html = page(client, f"/ui/episodes/{eid}")
    assert "kind-missing" not in html.split('id="diff"')[1].split('id="conversation"')[0]


def test_episode_list_filters_by_state_task_and_pages(client: TestClient) -> None:
    done = play_gold(client)
    live = start_episode(client)
    gone = start_episode(client)
    client.delete(f"/v1/episodes/{gone}")
    active = page(client, "/ui/episodes?state=active")
    assert live[:12] in active and done[:12] not in active and gone[:12] not in active
    finished = page(client, "/ui/episodes?state=finished&task=toybank-transfer-001&domain=toybank")
    assert done[:12] in finished and live[:12] not in finished
    everything = page(client, "/ui/episodes")
    assert done[:12] in everything and live[:12] in everything and gone[:12] not in everything
    assert gone[:12] in page(client, "/ui/episodes?state=disposed")
    assert "No episodes match." in page(client, "/ui/episodes?task=toybank-judge-003")
    for _ in range(51):
        start_episode(client, "toybank-refuse-frozen-002")
    first = page(client, "/ui/episodes?task=toybank-refuse-frozen-002")
    assert "?page=1&task=toybank-refuse-frozen-002" in first
    second = page(client, "/ui/episodes?task=toybank-refuse-frozen-002&page=1")
    assert second.count('<span class="badge state-active">') == 1


def test_disposed_episode_stays_viewable_from_the_store(client: TestClient) -> None:
    eid = start_episode(client)
    call(client, eid, "get_account", account_id="AC-0001")
    client.delete(f"/v1/episodes/{eid}")
    assert client.get(f"/v1/episodes/{eid}").json()["status"] == "disposed"  # the same word on both surfaces
    html = page(client, f"/ui/episodes/{eid}")
    assert '<span class="badge state-disposed" id="state">disposed</span>' in html
    assert "disposed of before it was scored" in html and "get_account" in html


def test_backend_error_is_shown_apart_from_the_agent(client: TestClient) -> None:
    eid = start_episode(client, "toybank-judge-003")
    call(client, eid, "set_balance", account_id="AC-0005", balance_cents=12300)
    client.post(f"/v1/episodes/{eid}/messages", json={"content": "Done: the balance is 123.00."})
    assert client.post(f"/v1/episodes/{eid}/score").json()["status"] == "backend_error"  # no judge to ask
    html = page(client, f"/ui/episodes/{eid}")
    assert '<span class="badge outcome-error">backend error</span>' in html
    assert "has rubric questions but no judge is configured" in html


def test_conversation_text_is_escaped(client: TestClient) -> None:
    eid = start_episode(client)
    client.post(f"/v1/episodes/{eid}/messages", json={"content": "<script>alert('x')</script><b>hi</b>"})
    raw = client.get(f"/ui/episodes/{eid}").text
    assert "<script>" not in raw and "&lt;script&gt;" in raw and "<b>hi</b>" not in raw


def test_pages_only_read_and_forbid_scripts(client: TestClient) -> None:
    eid = start_episode(client)
    urls = ["/ui", "/ui/tasks", "/ui/tasks/toybank-transfer-001", "/ui/episodes", f"/ui/episodes/{eid}"]
    urls += ["/ui/campaigns", "/ui/campaigns/compare", "/ui/campaigns/some-run"]
    urls += ["/ui/curricula", "/ui/curricula/some-run"]
    for url in urls:
        for method in ("POST", "PUT", "PATCH", "DELETE"):
            assert client.request(method, url).status_code == 405, (method, url)
    routes = [
        r for module in (home, tasks, episodes, campaigns, curricula, auth) for r in module.router.routes
    ]
    writes = {
        (r.path, m) for r in routes if isinstance(r, APIRoute) for m in r.methods if m not in ("GET", "HEAD")
    }
    assert writes == {("/ui/login", "POST"), ("/ui/logout", "POST")}  # they only set or drop a cookie
    assert client.get(f"/v1/episodes/{eid}").json()["events"][-1]["kind"] == "user_message"  # untouched
    response = client.get("/ui/tasks")
    policy = response.headers["content-security-policy"]
    assert "default-src 'none'" in policy and "script-src" not in policy  # default-src 'none' covers scripts
    css = client.get("/ui/static/viewer.css")
    assert css.status_code == 200 and ".kind-missing" in css.text
    assert "/ui" not in str(client.get("/openapi.json").json()["paths"])  # not part of the API


def test_episode_page_labels_each_call_with_its_credit_and_marks_the_first_deviation(
    client: TestClient,
) -> None:
    eid = start_episode(client)
    call(client, eid, "get_account", account_id="AC-0001")
    call(client, eid, "transfer", source_id="AC-0001", target_id="AC-0002", amount_cents=4000)
    call(client, eid, "freeze_account", account_id="AC-0050")
    client.post(f"/v1/episodes/{eid}/score")
    html = page(client, f"/ui/episodes/{eid}")
    chat = html.split('id="chat"')[1]
    badges = [part.split("</span>")[0] for part in chat.split('title="per-call credit">')[1:]]
    assert badges == ["no-effect", "wrong", "collateral"]
    assert '<p id="first-deviation"><strong>First decisive deviation:</strong>' in html
    assert 'tool-call deviation" id="call-' in chat  # the transfer (call 1) is outlined and linked
    assert '<a href="#call-' in html and "call 1</a>" in html and "the task wants 5000" in html
    changes = chat.split('<table class="list credit">')[1].split("</table>")[0]
    assert '<span class="badge credit-wrong">wrong</span></td><td class="mono">accounts</td>' in changes
    assert '<td class="mono">TR-90001</td>' in changes  # the new transfer row, under its generated id


def test_an_acting_script_line_is_rendered_not_a_python_repr(settings: Settings) -> None:
    from env_server.domains.telecom import domain as telecom

    with TestClient(create_app(settings, registry=DomainRegistry([telecom]))) as client:
        html = unescape(client.get("/ui/tasks/telecom-airplane-001").text)
    assert "say=" not in html and "actions=[" not in html  # no repr of the ScriptLine model
    assert "signal again. <span class=\"quiet\">— acting first:</span>" in html
    assert '<code>set_airplane_mode(device_id="DV-0012", on=false)</code>' in html
    assert re.search(r"when told: airplane", html)
