"""Rendering viewer pages: the Jinja2 templates, and a route class that answers every failure in HTML.

Every page route goes through `PageRoute`: a request without the key is sent to the login form, a
`GroundstateError` (unknown task, episode or run; a backend failure) becomes an error page with the same
status the REST API would give, and every response carries headers that forbid scripts, framing and
referrers. The templates autoescape everything, which matters: conversations hold text an agent wrote.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, Depends, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, RedirectResponse
from fastapi.routing import APIRoute
from fastapi.templating import Jinja2Templates

from env_server.errors import GroundstateError, InvalidRequestError
from env_server.ui.access import LoginRequired, require_viewer

TEMPLATES = Jinja2Templates(directory=Path(__file__).parent / "templates")

SECURITY_HEADERS = {
    # No scripts at all, styles and images only from here (inline SVG charts are markup, not images).
    "content-security-policy": "default-src 'none'; style-src 'self'; img-src 'self' data:; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cache-control": "no-store",
}


def pretty(value: Any) -> str:
    """JSON for people: indented, non-ASCII kept, strings as they are."""
    if isinstance(value, str):
        return value
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=False, default=str)


def compact(value: Any) -> str:
    """JSON on one line (tool arguments in a summary line)."""
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "), default=str)


def percent(value: float | None, digits: int = 1) -> str:
    """A rate as a percentage, or an em dash when there is none."""
    return "—" if value is None else f"{100 * value:.{digits}f}%"


TEMPLATES.env.filters.update(pretty=pretty, compact=compact, percent=percent)


def render(request: Request, template: str, status: int = 200, **context: Any) -> HTMLResponse:
    """Render `template` with `context` (and the request, for URLs) as an HTML response."""
    return TEMPLATES.TemplateResponse(request, template, context, status_code=status)


class PageRoute(APIRoute):
    """A viewer route: HTML error pages, the login redirect and the security headers."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        """Wrap FastAPI's handler so failures render as pages instead of JSON."""
        handler = super().get_route_handler()

        async def page(request: Request) -> Response:
            try:
                response = await handler(request)
            except LoginRequired:
                target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
                response = RedirectResponse(f"/ui/login?next={quote(target, safe='')}", status_code=303)
            except GroundstateError as exc:
                response = error_page(request, exc.status, exc.code, exc.message)
            except RequestValidationError as exc:
                first = exc.errors()[0]
                field = ".".join(str(p) for p in first.get("loc", ()) if p not in ("query", "path", "body"))
                response = error_page(request, 422, "invalid-request", f"{field}: {first.get('msg')}")
            response.headers.update(SECURITY_HEADERS)
            return response

        return page


def error_page(request: Request, status: int, code: str, message: str) -> HTMLResponse:
    """A page saying what went wrong, with the status the REST API would give."""
    return render(request, "error.html", status=status, code=code, message=message)


def form_choice(value: str | None, allowed: tuple[str, ...], field: str) -> str | None:
    """A filter from a GET form: empty means "all"; anything else must be one of `allowed` (else a 422)."""
    if not value:
        return None
    if value not in allowed:
        raise InvalidRequestError(f"{field} must be one of {', '.join(allowed)}, got '{value}'", field=field)
    return value


def page_router(prefix: str = "/ui") -> APIRouter:
    """A router of key-protected viewer pages (not part of the OpenAPI schema: it is not the API)."""
    return APIRouter(
        prefix=prefix, route_class=PageRoute, dependencies=[Depends(require_viewer)], include_in_schema=False
    )
