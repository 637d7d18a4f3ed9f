"""The browser-test harness for the pages: Debian chromium through Playwright, a login, axe-core, 390 px.

The `browser` fixture lives in tests/support/browser.py; the helpers here are imported. Use them like
this (data first, then the browser: rows written after Playwright has started its event loop would
go through a second database connection that nothing closes at teardown):

    def test_it_...(member: PageUser, live_server: LiveServer, browser: Browser) -> None:
        page = new_page(browser)
        login(page, live_server.url, member)
        page.goto(f"{live_server.url}/preview/")
        assert axe_violations(page) == []
        assert no_horizontal_scroll(page)

`axe_violations` injects the vendored axe-core (tests/web/vendor/axe.min.js, npm pack axe-core
4.14.1) through the DevTools protocol, so it runs under the pages' strict Content-Security-Policy.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.contrib.auth.models import AbstractUser
from django.db import connections
from playwright.sync_api import Browser, Page, expect

from apps.workspaces.models import Membership, Role, Workspace

# Playwright's sync API drives its own event loop; Django must not mistake it for async code.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

AXE_SOURCE = Path(__file__).with_name("vendor") / "axe.min.js"
PASSWORD = "correct horse battery staple"
DESKTOP = {"width": 1440, "height": 900}
PHONE = {"width": 390, "height": 844}
BLOCKING_IMPACTS = ("serious", "critical")


@dataclass(frozen=True)
class PageUser:
    """A user who signs in through the login page, and the workspace they belong to."""

    username: str
    password: str
    workspace: Workspace
    role: str
    is_staff: bool


def page_user_create(
    *, workspace: Workspace, username: str, role: str = Role.VIEWER, is_staff: bool = False
) -> PageUser:
    """A user with a password and a membership in `workspace` (call before the browser starts)."""
    from django.contrib.auth import get_user_model

    user: AbstractUser = get_user_model().objects.create_user(  # type: ignore[assignment]
        username=username, password=PASSWORD, is_staff=is_staff
    )
    Membership.objects.create(workspace=workspace, user=user, role=role)
    return PageUser(username=username, password=PASSWORD, workspace=workspace, role=role, is_staff=is_staff)


def new_page(browser: Browser, *, viewport: dict[str, int] | None = None, **context_options: Any) -> Page:
    """A page in a fresh context (its own cookies) at 1440 px unless told otherwise, 30 s timeouts."""
    context = browser.new_context(viewport=viewport or DESKTOP, **context_options)  # type: ignore[arg-type]
    page = context.new_page()
    page.set_default_timeout(30_000)
    return page


def login(page: Page, base_url: str, user: PageUser, *, next_path: str = "/") -> None:
    """Sign in through the login form, as a person would, and wait for the page it leads to."""
    page.goto(f"{base_url}/login/?next={next_path}")
    page.fill("input[name=username]", user.username)
    page.fill("input[name=password]", user.password)
    page.locator("form button[type=submit], form input[type=submit]").first.click()
    expect(page).not_to_have_url(f"{base_url}/login/?next={next_path}")


def axe_violations(page: Page, *, impacts: tuple[str, ...] = BLOCKING_IMPACTS) -> list[dict[str, Any]]:
    """axe-core's violations on the page as it is now, of these impacts (serious and critical).

    Each is {"id", "impact", "help", "nodes": [target selectors]}, so a failing assertion reads well.
    """
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        # Evaluated through the DevTools protocol, which the page's CSP does not govern.
        page.evaluate(AXE_SOURCE.read_text(encoding="utf-8"))
    result = page.evaluate("() => axe.run(document, {resultTypes: ['violations']})")
    return [
        {
            "id": violation["id"],
            "impact": violation["impact"],
            "help": violation["help"],
            "nodes": [node["target"] for node in violation["nodes"]][:5],
        }
        for violation in result["violations"]
        if violation["impact"] in impacts
    ]


def no_horizontal_scroll(page: Page) -> bool:
    """At 390 px wide, the page does not scroll sideways (wide content scrolls inside its own box).

    Leaves the viewport at 390 px; `wide_elements(page)` names the culprits when this is False.
    """
    page.set_viewport_size(PHONE)
    page.wait_for_timeout(50)  # one layout pass after the resize
    return bool(
        page.evaluate(
            "() => Math.max(document.documentElement.scrollWidth, document.body.scrollWidth)"
            " <= document.documentElement.clientWidth"
        )
    )


def wide_elements(page: Page, *, limit: int = 8) -> list[str]:
    """Elements whose right edge passes the viewport and that no scrolling box contains."""
    return list(
        page.evaluate(
            """(limit) => {
              const width = document.documentElement.clientWidth;
              const clips = ['auto', 'scroll', 'hidden'];
              const scrolls = (el) => {
                for (let p = el.parentElement; p; p = p.parentElement) {
                  if (clips.includes(getComputedStyle(p).overflowX)) return true;
                }
                return false;
              };
              const out = [];
              for (const el of document.body.querySelectorAll('*')) {
                const box = el.getBoundingClientRect();
                if (box.right > width + 1 && !scrolls(el)) {
                  const classes = typeof el.className === 'string' && el.className
                    ? '.' + el.className.split(' ').join('.') : '';
                  out.push(el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + classes +
                           ' right=' + Math.round(box.right));
                  if (out.length >= limit) break;
                }
              }
              return out;
            }""",
            limit,
        )
    )


def check_page(page: Page) -> None:
    """The two checks every page must pass, at 1440 px for axe then at 390 px for both."""
    found = axe_violations(page)
    assert not found, f"axe at 1440 px on {page.url}: {found}"
    fits = no_horizontal_scroll(page)
    assert fits, f"{page.url} scrolls sideways at 390 px: {wide_elements(page)}"
    found = axe_violations(page)
    assert not found, f"axe at 390 px on {page.url}: {found}"


@contextmanager
def reading_back() -> Iterator[None]:
    """Reads of the rows once the browser runs go through a connection of their own: closed here,
    so the test database can be dropped at the end (see this module's docstring)."""
    try:
        yield
    finally:
        connections.close_all()
