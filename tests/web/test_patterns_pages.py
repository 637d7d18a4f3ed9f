"""The error pattern pages: list with the counters, detail, an operator's edit and delete, roles, scoping."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.conf import settings
from django.test import Client
from django.utils import timezone
from playwright.sync_api import Browser
from pytest_django.live_server_helper import LiveServer

from apps.error_patterns.models import ErrorPattern
from tests.support.tenants import Tenant
from tests.web.harness import PASSWORD, check_page, login, new_page
from tests.web.patterns_data import pattern_of
from tests.web.people import People


def signed_in(username: str) -> Client:
    client = Client()
    assert client.login(username=username, password=PASSWORD)
    return client


def test_it_lists_patterns_with_their_counters(people: People, tenant: Tenant) -> None:
    pattern = pattern_of(tenant.workspace)
    seen = timezone.now() - timedelta(days=10)
    ErrorPattern.objects.filter(pk=pattern.pk).update(last_seen=seen)
    expires = timezone.localtime(seen + timedelta(days=settings.ERROR_PATTERN_TTL_DAYS)).strftime("%Y-%m-%d %H:%M")
    html = signed_in("vera").get("/patterns/?q=Timeout").content.decode()
    assert f'href="/patterns/{pattern.pk}/"' in html and "0.70" in html
    assert f">{expires}</time>" in html  # the date the hourly sweep removes it unless it is seen again
    detail = signed_in("vera").get(f"/patterns/{pattern.pk}/").content.decode()
    assert "[REDACTED]" in detail and "Raise the client timeout" in detail and "Save pattern" not in detail
    assert f">{expires}</time> unless it is seen again" in detail


def test_it_lets_an_operator_correct_and_delete_a_pattern(people: People, tenant: Tenant) -> None:
    pattern = pattern_of(tenant.workspace)
    client = signed_in("otto")
    bad = client.post(f"/patterns/{pattern.pk}/", {"solution": " ", "confidence": "3"})
    assert bad.status_code == 422 and set(bad.context["form"].errors) == {"solution", "confidence"}
    secret = "sk-proj-" + "a1B2c3D4e5F6g7H8i9J0" * 2
    assert (
        client.post(f"/patterns/{pattern.pk}/", {"solution": f"Use key {secret}", "confidence": "0.9"}).status_code
        == 302
    )
    pattern.refresh_from_db()
    assert pattern.confidence == 0.9 and secret not in pattern.solution  # redacted like an attempt's
    assert client.post(f"/patterns/{pattern.pk}/delete/").status_code == 302
    assert not ErrorPattern.objects.filter(pk=pattern.pk).exists()


def test_it_refuses_edits_to_a_viewer_and_hides_other_workspaces(
    people: People, tenant: Tenant, other_tenant: Tenant
) -> None:
    pattern = pattern_of(tenant.workspace)
    theirs = pattern_of(other_tenant.workspace)
    client = signed_in("vera")
    assert client.post(f"/patterns/{pattern.pk}/", {"solution": "x", "confidence": "0.1"}).status_code == 403
    assert client.post(f"/patterns/{pattern.pk}/delete/").status_code == 403
    assert client.get(f"/patterns/{theirs.pk}/").status_code == 404
    assert signed_in("otto").post(f"/patterns/{theirs.pk}/delete/").status_code == 404


@pytest.fixture
def seeded_pattern(people: People, tenant: Tenant) -> ErrorPattern:
    """With a traceback-long excerpt, so its box scrolls at 390 px (and must be reachable by keyboard)."""
    pattern = pattern_of(tenant.workspace)
    frames = "".join(
        f'  File "/srv/app/worker_{n}.py", line {n}, in handle\n    await upstream.call()\n' for n in range(60)
    )
    pattern.error_excerpt = f"Traceback (most recent call last):\n{frames}TimeoutError: upstream 5000 ms"
    pattern.save(update_fields=["error_excerpt"])
    return pattern


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_it_keeps_the_operator_pages_axe_clean_and_narrow(
    seeded_pattern: ErrorPattern, people: People, live_server: LiveServer, browser: Browser
) -> None:
    page = new_page(browser)
    login(page, live_server.url, people.operator)
    for path in ("/patterns/", f"/patterns/{seeded_pattern.pk}/", "/profiles/", "/profiles/+new/"):
        page.set_viewport_size({"width": 1440, "height": 900})
        page.goto(f"{live_server.url}{path}")
        check_page(page)


def test_it_shows_a_rounded_confidence_and_the_hint_floor(people: People, tenant: Tenant) -> None:
    pattern = pattern_of(tenant.workspace)
    ErrorPattern.objects.filter(pk=pattern.pk).update(confidence=0.75 * 0.8)  # 0.6000000000000001
    client = signed_in(people.operator.username)
    html = client.get(f"/patterns/{pattern.pk}/").content.decode()
    assert "0.6000000000000001" not in html and 'value="0.6"' in html
    assert "not above the hint floor 0.7: no hint is injected" in html
    assert "only above 0.7" in html  # the field's help
    assert "only while its confidence is above 0.7" in client.get("/patterns/").content.decode()
