"""The page-test harness catches what it is meant to catch: axe violations (also under a strict
CSP) and sideways scrolling at 390 px. Pages come from Playwright routes, so no server is needed."""

from __future__ import annotations

import pytest
from playwright.sync_api import Browser, Page

from tests.web.harness import axe_violations, new_page, no_horizontal_scroll, wide_elements

pytestmark = pytest.mark.browser

STRICT_CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:"


def serve(page: Page, body: str, *, csp: str = STRICT_CSP) -> None:
    html = f'<!doctype html><html lang="en"><head><title>t</title></head><body><main>{body}</main></body></html>'
    page.route(
        "http://pages.test/",
        lambda route: route.fulfill(body=html, content_type="text/html", headers={"Content-Security-Policy": csp}),
    )
    page.goto("http://pages.test/")


def test_it_reports_serious_and_critical_violations_even_under_a_strict_csp(browser: Browser) -> None:
    page = new_page(browser)
    serve(page, '<img src="data:image/gif;base64,R0lGODlhAQABAAAAACw="><button></button>')
    found = {violation["id"] for violation in axe_violations(page)}
    assert {"image-alt", "button-name"} <= found


def test_it_finds_nothing_on_a_clean_page(browser: Browser) -> None:
    page = new_page(browser)
    serve(page, "<h1>Fine</h1><p>Plain text.</p><button>Go</button>")
    assert axe_violations(page) == []


def test_it_sees_a_page_that_scrolls_sideways_at_390_px_and_names_the_culprit(browser: Browser) -> None:
    page = new_page(browser)
    serve(page, '<div id="too-wide" style="width: 700px">wide</div>', csp="default-src 'self' 'unsafe-inline'")
    assert not no_horizontal_scroll(page)
    assert any(name.startswith("div#too-wide") for name in wide_elements(page))


def test_it_accepts_a_wide_table_that_scrolls_inside_its_own_box(browser: Browser) -> None:
    page = new_page(browser)
    table = '<div style="overflow-x: auto"><table style="width: 900px"><tr><td>cell</td></tr></table></div>'
    serve(page, table, csp="default-src 'self' 'unsafe-inline'")
    assert no_horizontal_scroll(page)
