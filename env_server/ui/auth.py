"""`/ui/login` and `/ui/logout`: trade the API key for the viewer cookie, and drop it (see `access`)."""

from __future__ import annotations

from urllib.parse import parse_qs

from fastapi import APIRouter, Request, Response
from fastapi.responses import RedirectResponse

from env_server.ui.access import COOKIE, authorised, key_matches, viewer_token
from env_server.ui.pages import PageRoute, render

router = APIRouter(prefix="/ui", route_class=PageRoute, include_in_schema=False)

MAX_FORM_BYTES = 8192


def safe_next(target: str | None) -> str:
    """Where to go after logging in: a viewer path only, so the form cannot redirect off the site."""
    if target and target.startswith("/ui") and not target.startswith("//"):
        return target
    return "/ui"


@router.get("/login")
def login_form(request: Request, next: str | None = None) -> Response:
    """The key form; without a key on this server (or with a valid cookie) straight to the page."""
    if authorised(request):
        return RedirectResponse(safe_next(next), status_code=303)
    return render(request, "login.html", next=safe_next(next), failed=False)


@router.post("/login")
async def login(request: Request) -> Response:
    """Check the submitted key; set the HttpOnly cookie and go on, or show the form again (401)."""
    api_key: str | None = request.app.state.settings.api_key
    body = (await request.body())[:MAX_FORM_BYTES].decode("utf-8", errors="replace")
    form = {name: values[0] for name, values in parse_qs(body).items()}
    target = safe_next(form.get("next"))
    if not api_key:
        return RedirectResponse(target, status_code=303)
    if not key_matches(form.get("key", ""), api_key):
        return render(request, "login.html", status=401, next=target, failed=True)
    response = RedirectResponse(target, status_code=303)
    response.set_cookie(
        COOKIE,
        viewer_token(api_key),
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
        path="/ui",
    )
    return response


@router.post("/logout")
def logout() -> Response:
    """Forget the cookie."""
    response = RedirectResponse("/ui/login", status_code=303)
    response.delete_cookie(COOKIE, path="/ui")
    return response
