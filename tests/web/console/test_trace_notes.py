"""Tags and a note on a trace: kept per trace of a workspace by developers and admins, shown on the trace
page and in the console's list, which filters by a tag; erased with the text an erasure names."""

from __future__ import annotations

import uuid

import pytest
from django.test import Client
from playwright.sync_api import Browser, expect
from pytest_django.live_server_helper import LiveServer

from apps.assembly.services import records_flush
from apps.core.erasure import ErasureRun, ErasureTarget
from apps.layers.models import Layer
from apps.layers.services import ItemInput, items_create, layer_create
from apps.web.models import TraceNote
from apps.web.trace_notes import register
from tests.support.tenants import Tenant
from tests.web.console.traces import assemble
from tests.web.harness import PASSWORD, check_page, login, new_page
from tests.web.people import People


@pytest.fixture
def billing(tenant: Tenant) -> Layer:
    layer = layer_create(workspace=tenant.workspace, kind="project", name="Billing", parent=tenant.root)
    items_create(
        layer=layer,
        items=[
            ItemInput(kind="memory", type="fact", content="Invoices are generated nightly by the billing cron job."),
            ItemInput(kind="document", content="Billing questions go to #billing."),
        ],
    )
    return layer


HX = {"HTTP_HX_REQUEST": "true", "HTTP_HX_TARGET": "trace-note"}


def signed_in(username: str) -> Client:
    client = Client()
    assert client.login(username=username, password=PASSWORD)
    return client


def test_a_developer_tags_and_annotates_a_trace_and_finds_it_by_its_tag(
    people: People,
    tenant: Tenant,
    billing: Layer,
) -> None:
    tagged = assemble(tenant, billing, "When are invoices generated?")
    other = assemble(tenant, billing, "Who answers billing questions?")
    records_flush()
    dana = signed_in(people.developer.username)
    bad = dana.post(f"/console/traces/{tagged}/note/", {"tags": "ok !bad", "note": "x" * 5001}, **HX)
    assert bad.status_code == 422 and set(bad.context["note_form"].errors) == {"tags", "note"}
    assert not TraceNote.objects.exists()

    saved = dana.post(
        f"/console/traces/{tagged}/note/",
        {"tags": "Regression, needs-pin regression", "note": "The nightly-cron fact lost to chatter."},
        **HX,
    )
    assert saved.status_code == 200 and "<html" not in saved.content.decode()
    note = TraceNote.objects.get(workspace=tenant.workspace, trace_id=tagged)
    assert note.tags == ["needs-pin", "regression"] and note.updated_by.username == "dana"  # type: ignore[union-attr]
    page = dana.get(f"/console/traces/{tagged}/").content.decode()
    assert "The nightly-cron fact lost to chatter." in page and 'href="/console/?tag=regression"' in page

    listed = dana.get("/console/?tag=regression").context["rows"]
    assert [(str(record.trace_id), tags) for record, _zone, tags in listed] == [(tagged, ["needs-pin", "regression"])]
    assert len(dana.get("/console/").context["rows"]) == 2 and other
    # Emptied: the note goes (a plain POST redirects to the trace).
    cleared = dana.post(f"/console/traces/{tagged}/note/", {"tags": "", "note": " "})
    assert cleared.status_code == 302 and cleared["Location"] == f"/console/traces/{tagged}/"
    assert not TraceNote.objects.exists()


def test_only_developers_and_admins_of_its_workspace_annotate_a_trace(
    people: People,
    tenant: Tenant,
    other_tenant: Tenant,
    billing: Layer,
) -> None:
    trace = assemble(tenant, billing, "When are invoices generated?")
    records_flush()
    for username in (people.viewer.username, people.operator.username):
        assert signed_in(username).post(f"/console/traces/{trace}/note/", {"tags": "x"}).status_code == 403
    # olga is a developer of globex: acme's trace does not exist for her.
    assert signed_in(people.outsider.username).post(f"/console/traces/{trace}/note/", {"tags": "x"}).status_code == 404
    missing = uuid.uuid4()
    assert signed_in(people.admin.username).post(f"/console/traces/{missing}/note/", {"tags": "x"}).status_code == 404
    assert signed_in(people.admin.username).post(f"/console/traces/{trace}/note/", {"tags": "x"}).status_code == 302
    assert TraceNote.objects.get().workspace_id == tenant.workspace.pk


def test_an_erasure_rewrites_the_notes_that_hold_its_text(people: People, tenant: Tenant) -> None:
    register()
    kept = TraceNote.objects.create(workspace=tenant.workspace, trace_id=uuid.uuid4(), tags=["x"], note="unrelated")
    named = TraceNote.objects.create(
        workspace=tenant.workspace, trace_id=uuid.uuid4(), tags=["bluebird", "y"], note="Project Bluebird leaked here"
    )
    from apps.web.trace_notes import _erase

    dry = ErasureRun(workspace_id=tenant.workspace.pk, target=ErasureTarget(text="bluebird"), dry_run=True)
    _erase(dry)
    assert dry.places["trace_notes"].found == 1
    run = ErasureRun(workspace_id=tenant.workspace.pk, target=ErasureTarget(text="bluebird"), dry_run=False)
    _erase(run)
    named.refresh_from_db()
    kept.refresh_from_db()
    assert named.note == "Project [erased] leaked here" and named.tags == ["y"] and kept.note == "unrelated"


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_the_note_form_on_the_trace_page_is_axe_clean_and_narrow(
    people: People,
    tenant: Tenant,
    billing: Layer,
    live_server: LiveServer,
    browser: Browser,
) -> None:
    trace = assemble(tenant, billing, "When are invoices generated?")
    records_flush()
    page = new_page(browser)
    login(page, live_server.url, people.developer)
    page.goto(f"{live_server.url}/console/traces/{trace}/")
    page.get_by_text("Add tags or a note").click()
    page.get_by_label("Tags", exact=True).fill("regression needs-pin")
    page.get_by_label("Note", exact=True).fill("The nightly-cron fact lost to chatter.")
    page.get_by_role("button", name="Save tags and note").click()
    expect(page.locator("#trace-tags")).to_contain_text("needs-pin")
    expect(page.locator("#trace-note-text")).to_have_text("The nightly-cron fact lost to chatter.")
    check_page(page)
    page.set_viewport_size({"width": 1440, "height": 900})
    page.locator("#trace-tags").get_by_role("link", name="regression").click()
    expect(page.locator("#records tbody tr")).to_have_count(1)
    check_page(page)
