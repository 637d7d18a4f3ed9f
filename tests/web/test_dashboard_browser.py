"""The dashboard in a real Chromium: every chart drawn with data, axe-clean, no sideways scroll at 390 px,
the range switched by htmx; and the empty dashboard saying how to get each figure."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import Browser, expect
from pytest_django.live_server_helper import LiveServer

from apps.assembly.models import AssemblyRecord
from apps.assembly.rollup.services import rollup_catch_up
from apps.error_patterns.models import ErrorPattern, HintInjection
from apps.summaries.run_counts import run_count_add
from tests.support.tenants import Tenant
from tests.web.harness import check_page, login, new_page
from tests.web.people import People
from tests.web.records_data import make_records

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

CHARTS = (
    "chart-rate",
    "chart-latency",
    "chart-item-kind",
    "chart-layer-kind",
    "chart-cache",
    "chart-overflow",
    "chart-consumption",
    "chart-hints",
    "chart-summaries",
)


@pytest.fixture
def activity(people: People, tenant: Tenant) -> None:
    """Assemblies (rolled up and in the tail), hints with a failure after one, and summary runs."""
    workspace = tenant.workspace
    records = make_records(tenant, 30, minutes_ago=50)
    make_records(tenant, 10, minutes_ago=0)
    AssemblyRecord.objects.filter(pk__in=[r.pk for r in records[:8]]).update(
        injected_packages=[1, 2], used_packages=[1], consumption_reported_at=timezone.now() - timedelta(minutes=45)
    )
    now = timezone.now()
    pattern = ErrorPattern.objects.create(
        workspace=workspace, signature="e", error_excerpt="e", solution="s", first_seen=now, last_seen=now
    )
    layer = records[0].layer
    assert layer is not None
    for minutes, failed in ((40, True), (30, False), (20, None)):
        at = now - timedelta(minutes=minutes)
        HintInjection.objects.create(
            workspace=workspace,
            pattern=pattern,
            layer=layer,
            created_at=at,
            resolved_at=None if failed is None else at + timedelta(minutes=1),
            failed=failed,
        )
    for minutes, outcome in ((45, "generated"), (35, "skipped"), (25, "failed")):
        run_count_add(workspace_id=workspace.pk, at=now - timedelta(minutes=minutes), outcome=outcome)
    rollup_catch_up()  # after the hints: their time watermark moves to now - SETTLE_SECONDS


def test_it_draws_every_chart_of_the_dashboard_and_stays_axe_clean_and_narrow(
    people: People, activity: None, live_server: LiveServer, browser: Browser
) -> None:
    page = new_page(browser)
    login(page, live_server.url, people.viewer)
    page.goto(f"{live_server.url}/?range=1h")
    for chart in CHARTS:
        expect(page.locator(f"#{chart} .chart canvas")).to_be_visible()
    # Every figure is drawn; only the proxy's table is empty (this workspace made no proxied call).
    assert page.locator("#dashboard .empty:not(#proxied-empty)").count() == 0
    check_page(page)

    page.set_viewport_size({"width": 1440, "height": 900})
    page.get_by_role("link", name="7 days").click()  # htmx swaps #dashboard and draws the charts again
    expect(page).to_have_url(f"{live_server.url}/?range=7d")
    expect(page.locator('#dashboard a[aria-current="true"]')).to_have_text("7 days")
    for chart in CHARTS:
        expect(page.locator(f"#{chart} .chart canvas")).to_be_visible()
    check_page(page)


def test_the_empty_dashboard_says_how_to_get_each_figure(
    people: People, live_server: LiveServer, browser: Browser
) -> None:
    page = new_page(browser)
    login(page, live_server.url, people.viewer)
    expect(page.locator("#chart-hints .empty")).to_contain_text("POST /api/v1/attempts/")
    expect(page.locator("#chart-summaries .empty")).to_contain_text("Regenerate now")
    expect(page.locator("#dashboard > p.empty:not(#proxied-empty)")).to_contain_text("POST /api/v1/context/")
    expect(page.locator("#proxied-empty")).to_contain_text("/proxy/openai/v1")
    check_page(page)


def test_by_default_the_range_fits_the_data_and_every_figure_shows_at_both_widths(
    people: People, activity: None, live_server: LiveServer, browser: Browser
) -> None:
    page = new_page(browser)
    login(page, live_server.url, people.viewer)
    # the records are 50 and 0 minutes old: the hour holds them all, 24 hours would squeeze them right
    expect(page.locator('#dashboard a[aria-current="true"]')).to_have_text("1 hour")
    # a series with isolated values (one bucket, then nothing) is drawn as points, not left blank
    expect(page.locator("#chart-latency .chart")).to_have_attribute("data-points", "1")
    expect(page.locator("#chart-consumption")).to_contain_text("Consumption ratio (packages used / injected)")
    assert "SC-003" not in page.content()
    for width in (1440, 390):
        page.set_viewport_size({"width": width, "height": 900})
        page.wait_for_timeout(50)
        cut = page.evaluate(
            """() => [...document.querySelectorAll('.breakdown')].flatMap((card) => {
                 const edge = card.getBoundingClientRect().right;
                 return [...card.querySelectorAll('td, th')]
                   .filter((cell) => cell.getBoundingClientRect().right > edge + 0.5)
                   .map((cell) => card.querySelector('h2').textContent + ': ' + cell.textContent);
               })"""
        )
        assert cut == [], f"cut off at {width} px: {cut}"
    assert page.locator(".breakdown td.num").count() >= 3
    check_page(page)


def test_a_keyboard_user_keeps_their_place_after_a_swap_and_no_style_breaks_the_csp(
    people: People, activity: None, live_server: LiveServer, browser: Browser
) -> None:
    page = new_page(browser)
    problems: list[str] = []
    page.on("console", lambda message: problems.append(message.text) if message.type == "error" else None)
    login(page, live_server.url, people.viewer)
    page.get_by_role("link", name="7 days").focus()
    page.keyboard.press("Enter")  # htmx replaces #dashboard, the link with it
    expect(page).to_have_url(f"{live_server.url}/?range=7d")
    expect(page.locator("#dashboard a[aria-current='true']")).to_have_text("7 days")
    focused = page.evaluate("document.activeElement.closest('#dashboard') ? document.activeElement.textContent : ''")
    assert focused.strip() == "7 days"  # not <body>: Tab goes on from where the person was
    page.keyboard.press("Tab")
    expect(page.get_by_role("link", name="30 days")).to_be_focused()
    assert problems == []  # htmx injects no indicator <style> (includeIndicatorStyles false): nothing refused
