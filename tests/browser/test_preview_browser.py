"""A real headless Chromium logs in, runs a context preview and sees the chunk table swapped in."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import AbstractUser
from playwright.sync_api import Browser, expect

from apps.layers.embedder import items_embed_pending
from apps.layers.models import Layer
from apps.layers.services import ItemInput, items_create, layer_create
from apps.workspaces.models import Membership, Role
from apps.workspaces.services import workspace_create

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "correct horse battery"


@pytest.fixture
def project(django_user_model: type[AbstractUser], wait_background: object) -> Layer:
    workspace, _ = workspace_create(slug="acme")
    user = django_user_model.objects.create_user(username="ada", password=PASSWORD)
    Membership.objects.create(workspace=workspace, user=user, role=Role.VIEWER)
    root = Layer.objects.get(workspace=workspace, kind="company")
    project = layer_create(workspace=workspace, kind="project", name="Billing", parent=root)
    items_create(
        layer=project,
        items=[
            ItemInput(kind="memory", type="fact", content="Invoices are generated nightly by the billing cron job."),
            ItemInput(kind="memory", type="decision", content="Failed card payments are retried three times."),
        ],
    )
    wait_background()  # type: ignore[operator]  # the in-process embedder may already be running
    items_embed_pending(workspace_id=workspace.pk)
    return project


# `project` comes before `browser` on purpose: rows must be written before Playwright starts its
# event loop, or Django hands the test a second connection that nothing closes at teardown.
def test_it_logs_in_runs_a_preview_and_swaps_in_the_chunk_table(
    project: Layer, live_server: object, browser: Browser
) -> None:
    base = str(live_server)
    page = browser.new_page()
    page.set_default_timeout(30_000)

    page.goto(f"{base}/preview/")
    expect(page).to_have_url(f"{base}/login/?next=/preview/")
    page.fill("input[name=username]", "ada")
    page.fill("input[name=password]", PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    expect(page).to_have_url(f"{base}/preview/")

    page.evaluate("window.__marker = 1")  # survives only if the page is never reloaded
    page.select_option("select[name=layer]", str(project.pk))
    page.fill("textarea[name=query]", "when are invoices generated?")
    page.fill("input[name=token_budget]", "300")
    page.get_by_role("button", name="Assemble").click()

    table = page.locator("#preview-result #chunk-table")
    expect(table).to_be_visible()
    expect(table).to_contain_text("Invoices are generated nightly")
    expect(page.locator("#preview-result pre.context")).to_contain_text("Invoices are generated nightly")
    expect(page.locator("#preview-result svg.token-split rect").first).to_have_attribute(
        "width", re.compile(r"^\d+(\.\d+)?$")
    )
    assert page.evaluate("window.__marker") == 1
    # the request is in the address (pushed, not loaded): a reload or a shared link shows the same preview
    assert page.url.startswith(f"{base}/preview/?") and "token_budget=300" in page.url
    assert page.locator("#preview-result").count() == 1  # swapped, not nested
