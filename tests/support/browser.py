"""The one headless Chromium: Debian's /usr/bin/chromium driven through Playwright.

The `browser` fixture (registered for every test by tests/conftest.py; asking for it marks a test
`slow`) starts one per test. Ask for it after the fixtures that write rows: rows written after
Playwright has started its event loop would go through a second database connection that nothing
closes at teardown. Page helpers (login, axe-core, 390 px) are in tests/web/harness.py.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from playwright.sync_api import Browser

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]


@contextmanager
def chromium() -> Iterator[Browser]:
    """A headless Chromium, closed on exit; fails the test if Debian's chromium is not installed."""
    from playwright.sync_api import sync_playwright  # imported here: the quick loop never loads Playwright

    if not os.path.exists(CHROMIUM):
        pytest.fail("Debian chromium is required: apt-get install -y chromium (make test installs it)")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def browser(monkeypatch: pytest.MonkeyPatch) -> Iterator[Browser]:
    """Headless Chromium for one test."""
    # Playwright's sync API drives its own event loop; Django must not mistake it for async code.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    with chromium() as launched:
        yield launched
