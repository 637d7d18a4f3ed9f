"""The same-origin Content-Security-Policy: every page works in a real Chromium with no violation."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import AbstractUser
from playwright.sync_api import Browser, Page, expect

from apps.layers.embedder import items_embed_pending
from apps.layers.models import Layer
from apps.layers.services import ItemInput, items_create, layer_create
from apps.workspaces.models import Membership, Role
from apps.workspaces.services import workspace_create

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "correct horse battery"
# A violation listener installed before any page script runs; Chromium also logs each refusal.
LISTEN = (
    "document.addEventListener('securitypolicyviolation',"
    " e => (window.__csp = window.__csp || []).push(e.violatedDirective + ' ' + e.blockedURI))"
)


@pytest.fixture
def project(django_user_model: type[AbstractUser], wait_background: object) -> Layer:
    workspace, _ = workspace_create(slug="acme")
    user = django_user_model.objects.create_superuser(username="ada", password=PASSWORD, email="ada@example.com")
    Membership.objects.create(workspace=workspace, user=user, role=Role.ADMIN)
    root = Layer.objects.get(workspace=workspace, kind="company")
    project = layer_create(workspace=workspace, kind="project", name="Billing", parent=root)
    items_create(layer=project, items=[ItemInput(kind="memory", type="fact", content="Invoices go out nightly.")])
    wait_background()  # type: ignore[operator]
    items_embed_pending(workspace_id=workspace.pk)
    return project


def violations(page: Page, console: list[str]) -> list[str]:
    seen = page.evaluate("window.__csp || []")
    return [*seen, *(text for text in console if "Content Security Policy" in text)]


def test_it_serves_every_page_under_the_csp_without_a_violation(
    project: Layer, live_server: object, browser: Browser
) -> None:
    base = str(live_server)
    page = browser.new_page()
    page.set_default_timeout(30_000)
    page.add_init_script(LISTEN)
    console: list[str] = []
    page.on("console", lambda message: console.append(f"{page.url}: {message.text}"))

    response = page.goto(f"{base}/login/")
    assert response is not None
    policy = response.headers["content-security-policy"]
    assert "default-src 'self'" in policy and "script-src 'self'" in policy and "unsafe-inline" not in policy
    page.fill("input[name=username]", "ada")
    page.fill("input[name=password]", PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    expect(page.locator("h1")).to_contain_text("Dashboard")
    assert violations(page, console) == []

    page.goto(f"{base}/layers/")
    expect(page.locator("#layer-" + str(project.pk))).to_be_visible()
    assert violations(page, console) == []

    page.goto(f"{base}/preview/?layer={project.pk}")
    page.fill("textarea[name=query]", "when do invoices go out?")
    page.get_by_role("button", name="Assemble").click()
    expect(page.locator("#preview-result #chunk-table")).to_contain_text("Invoices go out nightly.")
    assert violations(page, console) == []

    page.goto(f"{base}/api/docs/")
    expect(page.locator(".swagger-ui .opblock").first).to_be_visible(
        timeout=60_000
    )  # the init script ran and read the schema
    expect(page.locator("body")).to_have_css("margin", "0px")  # the nonce'd inline style applied
    assert violations(page, console) == []

    page.goto(f"{base}/admin/workspaces/apikey/add/")
    expect(page.locator("#apikey_form")).to_be_visible()
    assert violations(page, console) == []
