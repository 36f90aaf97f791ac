"""Who may see the viewer: with `GROUNDSTATE_API_KEY` set, a bearer header or the viewer's login cookie.

A browser cannot send an `Authorization` header when it follows a link, so `/ui/login` takes the key once
(a form POST, never a URL: URLs end up in logs and history) and sets an HttpOnly cookie. The cookie holds
an HMAC of a fixed label under the key, not the key itself, and it is accepted only by the viewer's pages,
never by the REST API: a stolen cookie shows pages but cannot start, act in or score an episode, and a
cross-site form cannot use it against `/v1` either. Changing the key invalidates every cookie.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

from fastapi import Request

COOKIE = "groundstate_viewer"
"""The name of the viewer's login cookie."""


class LoginRequired(Exception):
    """The request carries neither the key nor a valid cookie: the page answers with the login form."""


def viewer_token(api_key: str) -> str:
    """The login cookie's value for `api_key`: derived from it, so the cookie never holds the key."""
    return hmac.new(api_key.encode(), b"groundstate viewer v1", hashlib.sha256).hexdigest()


def key_matches(supplied: str, api_key: str) -> bool:
    """Constant-time comparison of a supplied key with the server's."""
    return secrets.compare_digest(supplied.encode(), api_key.encode())


def authorised(request: Request) -> bool:
    """True when no key is set, or the request has the bearer key or the viewer cookie."""
    api_key: str | None = request.app.state.settings.api_key
    if not api_key:
        return True
    bearer = request.headers.get("authorization", "").removeprefix("Bearer ").strip()
    if bearer and key_matches(bearer, api_key):
        return True
    cookie = request.cookies.get(COOKIE, "")
    return bool(cookie) and secrets.compare_digest(cookie.encode(), viewer_token(api_key).encode())


async def require_viewer(request: Request) -> None:
    """Dependency of every viewer page: raise `LoginRequired` for a request that may not see it."""
    if not authorised(request):
        raise LoginRequired
