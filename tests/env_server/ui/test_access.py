"""The viewer with and without `GROUNDSTATE_API_KEY`: header, login form, cookie and what the cookie opens."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from env_server.app import create_app
from env_server.domain.registry import DomainRegistry
from env_server.settings import Settings
from env_server.ui.access import COOKIE

KEY = "s3cret-key"


@pytest.fixture
def keyed(tmp_path: Path, toy_registry: DomainRegistry) -> Iterator[TestClient]:
    settings = Settings(store_url=f"sqlite:///{tmp_path}/store.db", api_key=KEY)
    with TestClient(create_app(settings, registry=toy_registry), follow_redirects=False) as client:
        yield client


def test_without_a_key_pages_open_and_login_passes_through(client: TestClient) -> None:
    assert client.get("/ui/tasks").status_code == 200
    response = client.get("/ui/login?next=/ui/tasks", follow_redirects=False)
    assert response.status_code == 303 and response.headers["location"] == "/ui/tasks"
    assert "Log out" not in client.get("/ui").text


def test_a_browser_without_the_key_is_sent_to_the_login_form(keyed: TestClient) -> None:
    response = keyed.get("/ui/tasks/toybank-transfer-001?x=1")
    assert response.status_code == 303
    assert response.headers["location"] == "/ui/login?next=%2Fui%2Ftasks%2Ftoybank-transfer-001%3Fx%3D1"
    form = keyed.get(response.headers["location"])
    assert form.status_code == 200 and 'name="key"' in form.text
    assert 'value="/ui/tasks/toybank-transfer-001?x=1"' in form.text
    assert keyed.get("/ui/static/viewer.css").status_code == 200  # the login page needs its stylesheet
    assert keyed.get("/v1/tasks").status_code == 401  # the API still wants the key


def test_the_bearer_key_opens_pages_directly(keyed: TestClient) -> None:
    ok = keyed.get("/ui/tasks", headers={"authorization": f"Bearer {KEY}"})
    assert ok.status_code == 200 and "toybank-transfer-001" in ok.text
    assert keyed.get("/ui/tasks", headers={"authorization": "Bearer wrong"}).status_code == 303


def test_login_sets_an_httponly_cookie_that_opens_pages_but_not_the_api(keyed: TestClient) -> None:
    wrong = keyed.post("/ui/login", data={"key": "nope", "next": "/ui/tasks"})
    assert wrong.status_code == 401 and "not the key of this server" in wrong.text
    assert COOKIE not in wrong.cookies
    right = keyed.post("/ui/login", data={"key": KEY, "next": "/ui/episodes"})
    assert right.status_code == 303 and right.headers["location"] == "/ui/episodes"
    cookie = right.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Path=/ui" in cookie
    assert KEY not in cookie  # a token derived from the key, never the key
    token = right.cookies[COOKIE]
    assert keyed.get("/ui/episodes").status_code == 200  # the client keeps the cookie, as a browser would
    keyed.cookies.clear()
    sent = {"cookie": f"{COOKIE}={token}"}  # sent by hand: the browser would not even send it outside /ui
    assert keyed.get("/ui/episodes", headers=sent).status_code == 200
    assert keyed.get("/v1/tasks", headers=sent).status_code == 401
    start = keyed.post("/v1/episodes", json={"task_id": "toybank-transfer-001"}, headers=sent)
    assert start.status_code == 401
    assert keyed.get("/ui/episodes", headers={"cookie": f"{COOKIE}=forged"}).status_code == 303


def test_login_never_redirects_off_the_viewer(keyed: TestClient) -> None:
    for target in ("https://evil.example/", "//evil.example/ui", "/v1/tasks"):
        response = keyed.post("/ui/login", data={"key": KEY, "next": target})
        assert response.headers["location"] == "/ui"


def test_logout_drops_the_cookie(keyed: TestClient) -> None:
    keyed.post("/ui/login", data={"key": KEY, "next": "/ui"})
    assert keyed.get("/ui").status_code == 200  # the client kept the cookie
    response = keyed.post("/ui/logout")
    assert response.status_code == 303 and 'groundstate_viewer=""' in response.headers["set-cookie"]
    assert keyed.get("/ui").status_code == 303
