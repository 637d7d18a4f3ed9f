"""The `browser` fixture for page tests; the helpers (login, axe, 390 px) are in tests/web/harness.py."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, sync_playwright

from tests.web.harness import CHROMIUM, CHROMIUM_ARGS


@pytest.fixture
def browser() -> Iterator[Browser]:
    """Headless Debian chromium; one per test (request it after the fixtures that write rows)."""
    if not os.path.exists(CHROMIUM):
        pytest.fail("Debian chromium is required: apt-get install -y chromium (make test installs it)")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield launched
        launched.close()
