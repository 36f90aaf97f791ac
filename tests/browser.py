"""Headless Chromium for tests that render pages: Debian's `chromium` (installed by `.ci/run`), as root."""

from __future__ import annotations

import os
import shutil

import pytest

#: Flags for a headless Chromium as root on a machine without a display or network.
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)


def chromium() -> str:
    """The Chromium binary; skips the test without one, except under CI where that is a failure."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if found := shutil.which(name):
            return found
    if os.environ.get("CI") == "true":
        pytest.fail("chromium is required under CI (apt-get install -y chromium)")
    pytest.skip("chromium is not installed")
