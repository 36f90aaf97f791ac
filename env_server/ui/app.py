"""Mount the viewer on the server app: its page routers and its stylesheet."""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles

from env_server.ui import auth, campaigns, curricula, episodes, home, tasks

STATIC_DIR = Path(__file__).parent / "static"


def install_viewer(app: FastAPI) -> None:
    """Add the `/ui` pages and `/ui/static` to `app` (the key check is the pages' own; see `auth`)."""
    app.include_router(auth.router)
    for module in (home, tasks, episodes, campaigns, curricula):
        app.include_router(module.router)
    app.mount("/ui/static", StaticFiles(directory=STATIC_DIR), name="ui-static")
