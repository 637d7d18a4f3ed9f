"""Roles and workspaces walked in Chromium: a viewer reads every page but has no control that changes
anything, and the server refuses the change when sent anyway; a staff developer of globex sees nothing
of acme, in the pages (each acme URL is the styled 404, the switcher lists globex only, a switch or a
change sent to acme is refused) or in the Django admin (reserved to superusers).

The changes are sent with `fetch` from the signed-in page, with its CSRF token, as a crafted request
would be; the rows are read back afterwards to show nothing moved.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import Browser, Page, expect
from pytest_django.live_server_helper import LiveServer

from apps.assembly.params import ContextParams
from apps.assembly.services import context_assemble
from apps.error_patterns.models import ErrorPattern
from apps.layers.models import Item, Layer
from apps.layers.services import ItemInput, items_create, layer_create
from apps.profiles.models import AgentProfile
from apps.profiles.services import ProfileInput, profile_create
from apps.summaries.models import LayerConfig
from apps.workspaces.models import ApiKey
from tests.support.tenants import Tenant
from tests.web.harness import check_page, login, new_page, reading_back
from tests.web.patterns_data import pattern_of
from tests.web.people import People

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Read-only POST actions a viewer may use: trying a profile's values, comparing two, replaying a trace.
READ_ONLY_ACTIONS = ("/try/", "/compare/", "/replay/")


class Acme:
    """What acme holds, made before the browser starts (see tests/web/harness.py)."""

    def __init__(self, tenant: Tenant) -> None:
        self.workspace = tenant.workspace
        self.project = layer_create(
            workspace=tenant.workspace, kind="project", name="Acme secret project", parent=tenant.root
        )
        items_create(layer=self.project, items=[ItemInput(kind="memory", type="fact", content="Acme launch date.")])
        self.session = layer_create(workspace=tenant.workspace, kind="session", name="Acme chat", parent=self.project)
        self.pattern: ErrorPattern = pattern_of(tenant.workspace, "AcmeError: quota <N>")
        self.profile: AgentProfile = profile_create(
            workspace=tenant.workspace, name="acme-coder", data=ProfileInput(token_budget=1500)
        )
        self.config = LayerConfig.objects.get(layer=self.project)
        self.trace_id = context_assemble(
            workspace=tenant.workspace,
            params=ContextParams(layer_id=self.project.pk, query="launch date", token_budget=200, timeout_ms=0),
        ).trace_id


@pytest.fixture
def acme(people: People, tenant: Tenant) -> Acme:
    return Acme(tenant)


def post(page: Page, path: str, data: dict[str, str]) -> int:
    """POST `data` as a form from the signed-in page, with its CSRF token; the response status."""
    return int(
        page.evaluate(
            """async ([path, data]) => {
              const token = JSON.parse(document.body.getAttribute('hx-headers'))['X-CSRFToken'];
              const response = await fetch(path, {method: 'POST', body: new URLSearchParams(data),
                headers: {'X-CSRFToken': token}, redirect: 'manual'});
              return response.status;
            }""",
            [path, data],
        )
    )


def edit_forms(page: Page) -> list[str]:
    """Where each enabled submit button of the page's POST forms sends (its formaction or its form's),
    the layout's switch and logout aside, and the read-only try / compare / replay left out."""
    actions = page.locator("main form[method=post]").evaluate_all(
        """forms => forms.flatMap(f => [...f.elements].filter(e =>
             !e.disabled && !e.closest('fieldset:disabled') && (e.type === 'submit' || e.type === 'image')
           ).map(e => e.getAttribute('hx-post') || e.formAction))"""
    )
    return [action for action in actions if not any(part in action for part in READ_ONLY_ACTIONS)]


def test_a_viewer_reads_every_page_without_a_control_that_changes_anything(
    acme: Acme, people: People, live_server: LiveServer, browser: Browser
) -> None:
    page = new_page(browser)
    login(page, live_server.url, people.viewer)
    reads = [
        "/",
        "/layers/",
        f"/layers/{acme.project.pk}/",
        "/profiles/",
        f"/profiles/{acme.profile.name}/",
        f"/preview/?layer={acme.project.pk}",
        "/sessions/",
        f"/sessions/{acme.session.pk}/",
        "/patterns/",
        f"/patterns/{acme.pattern.pk}/",
    ]
    for path in reads:
        response = page.goto(f"{live_server.url}{path}")
        assert response is not None and response.status == 200, path
        assert edit_forms(page) == [], f"{path} offers a viewer: {edit_forms(page)}"
        expect(page.locator("main")).not_to_contain_text("Delete")
    expect(page.get_by_role("link", name="Keys and members")).to_have_count(0)
    page.goto(f"{live_server.url}/members/")
    expect(page.locator("h1")).to_have_text("You may not do this here")
    check_page(page)  # the styled 403

    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto(f"{live_server.url}/layers/{acme.project.pk}/")
    refused = {
        f"/layers/{acme.project.pk}/config/": {"update_on_changes": "99"},
        f"/layers/{acme.project.pk}/items/": {"kind": "memory", "type": "fact", "content": "A viewer's note."},
        f"/layers/{acme.project.pk}/delete/": {},
        f"/profiles/{acme.profile.name}/": {"token_budget": "99"},
        f"/profiles/{acme.profile.name}/delete/": {},
        f"/patterns/{acme.pattern.pk}/": {"solution": "Overwritten.", "confidence": "0.1"},
        f"/patterns/{acme.pattern.pk}/delete/": {},
        "/members/keys/": {"name": "viewer key"},
    }
    for path, data in refused.items():
        assert post(page, path, data) == 403, path
    with reading_back():
        assert LayerConfig.objects.get(pk=acme.config.pk).update_on_changes == acme.config.update_on_changes
        assert not Item.objects.filter(content="A viewer's note.").exists()
        assert Layer.objects.filter(pk=acme.project.pk).exists()
        assert AgentProfile.objects.get(pk=acme.profile.pk).token_budget == 1500
        assert ErrorPattern.objects.get(pk=acme.pattern.pk).solution == "Raise the client timeout to 10 s."
        assert not ApiKey.objects.filter(name="viewer key").exists()


def test_a_staff_member_of_globex_sees_and_changes_nothing_of_acme_in_the_pages_or_the_admin(
    acme: Acme, people: People, other_tenant: Tenant, live_server: LiveServer, browser: Browser
) -> None:
    page = new_page(browser)
    login(page, live_server.url, people.outsider)  # a staff developer of globex only
    page.goto(f"{live_server.url}/layers/")
    # One workspace: its name stands where the switcher would be, with nothing to switch to.
    expect(page.locator("#workspace-switch")).to_have_count(0)
    expect(page.locator(".sidebar .workspace-name")).to_have_text(other_tenant.workspace.name)
    expect(page.locator("main")).not_to_contain_text("Acme secret project")

    acme_pages = [
        f"/layers/{acme.project.pk}/",
        f"/profiles/{acme.profile.name}/",
        f"/sessions/{acme.session.pk}/",
        f"/patterns/{acme.pattern.pk}/",
        f"/console/traces/{acme.trace_id}/",
        f"/console/state/{acme.project.pk}/",
        f"/console/state/{acme.project.pk}/?format=json",
    ]
    for path in acme_pages:
        response = page.goto(f"{live_server.url}{path}")
        assert response is not None and response.status == 404, path
        expect(page.locator("h1")).to_have_text("Nothing here")
        assert "Acme secret project" not in page.content(), path
    check_page(page)  # the styled 404
    page.set_viewport_size({"width": 1440, "height": 900})

    page.goto(f"{live_server.url}/console/?q={acme.trace_id}")
    expect(page.locator("#records-count")).to_contain_text("0 assemblies match")
    page.goto(f"{live_server.url}/preview/?layer={acme.project.pk}&query=launch&token_budget=200&timeout_ms=0")
    expect(page.locator("main")).to_contain_text("Select a valid choice")
    expect(page.locator("main")).not_to_contain_text("Acme launch date")

    for path, data in {
        "/workspace/": {"workspace": acme.workspace.slug},
        f"/layers/{acme.project.pk}/config/": {"update_on_changes": "99"},
        f"/layers/{acme.project.pk}/items/": {"kind": "memory", "type": "fact", "content": "Globex was here."},
        f"/profiles/{acme.profile.name}/": {"token_budget": "99"},
        f"/patterns/{acme.pattern.pk}/delete/": {},
        f"/console/traces/{acme.trace_id}/replay/": {},
    }.items():
        assert post(page, path, data) == 404, path
    page.goto(f"{live_server.url}/layers/")
    expect(page.locator(".sidebar .workspace-name")).to_have_text(other_tenant.workspace.name)

    # The Django admin is for superusers: a staff member gets its login form, never a list or a form.
    for path in (
        "/admin/",
        f"/admin/summaries/layerconfig/{acme.config.pk}/change/",
        f"/admin/workspaces/workspace/{acme.workspace.pk}/change/",
        "/admin/profiles/agentprofile/",
    ):
        page.goto(f"{live_server.url}{path}")
        expect(page).to_have_url(f"{live_server.url}/admin/login/?next={path}")
        expect(page.locator("#content")).to_contain_text("not authorized to access this page")
        assert "Acme" not in page.locator("#content").inner_text(), path
    with reading_back():
        assert LayerConfig.objects.get(pk=acme.config.pk).update_on_changes == acme.config.update_on_changes
        assert not Item.objects.filter(content="Globex was here.").exists()
        assert AgentProfile.objects.get(pk=acme.profile.pk).token_budget == 1500
        assert ErrorPattern.objects.filter(pk=acme.pattern.pk).exists()
