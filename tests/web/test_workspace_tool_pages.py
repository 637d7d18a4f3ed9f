"""The pages for what was API-only: templates, strategies, the redaction allow-list, a session's export and
import, its communities' recompute. Each refuses what the API refuses (its own validator), viewers read,
operators (admins for the allow-list) write, and another workspace's objects are 404s."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from apps.assembly.models import OutputTemplate
from apps.conversations.models import Community
from apps.layers.models import Item, Layer
from apps.layers.services import layer_create
from apps.redaction.models import AllowlistEntry
from tests.support.tenants import Tenant
from tests.web.harness import PASSWORD
from tests.web.people import People
from tests.web.sessions_data import conversation_create

HX = {"HTTP_HX_REQUEST": "true"}


def signed_in(username: str) -> Client:
    client = Client()
    assert client.login(username=username, password=PASSWORD)
    return client


def test_an_operator_creates_edits_and_deletes_a_template_with_every_error_at_once(
    people: People, tenant: Tenant
) -> None:
    client = signed_in(people.operator.username)
    bad = client.post(
        "/templates/+new/",
        {"name": "chat", "body": "{content.__class__}", "type_0": "decision", "body_0": "{nope}"},
    )
    assert bad.status_code == 422
    assert set(bad.context["form"].errors) == {"name", "body", "body_0"}  # the API would answer the first only
    assert "built-in" in bad.content.decode() and not OutputTemplate.objects.exists()

    made = client.post(
        "/templates/+new/", {"name": "terse", "body": "- {content}", "type_0": "decision", "body_0": "D: {content}"}
    )
    assert made.status_code == 302 and made["Location"] == "/templates/terse/"
    again = client.post("/templates/+new/", {"name": "terse", "body": "{content}"})
    assert again.status_code == 422 and "exists" in again.context["form"].errors["name"][0]

    edited = client.post("/templates/terse/", {"body": "* {content}", "type_0": "", "body_0": ""})
    assert edited.status_code == 302
    template = OutputTemplate.objects.get(workspace=tenant.workspace, name="terse")
    assert template.body == "* {content}" and template.by_type == {}  # the emptied row is removed
    # The API sees the page's template, and the context uses it.
    assert tenant.client.get("/api/v1/templates/terse/").json()["body"] == "* {content}"

    listed = signed_in(people.viewer.username).get("/templates/").content.decode()
    assert 'href="/templates/terse/"' in listed and "New template" not in listed
    assert client.post("/templates/terse/delete/").status_code == 302
    assert not OutputTemplate.objects.exists()


def test_a_viewer_reads_templates_but_cannot_change_them_and_other_workspaces_are_404(
    people: People, tenant: Tenant, other_tenant: Tenant
) -> None:
    OutputTemplate.objects.create(workspace=tenant.workspace, name="mine", body="{content}")
    OutputTemplate.objects.create(workspace=other_tenant.workspace, name="theirs", body="{content}")
    viewer = signed_in(people.viewer.username)
    page = viewer.get("/templates/mine/")
    assert page.status_code == 200 and "Save template" not in page.content.decode()
    assert viewer.post("/templates/mine/", {"body": "x {content}"}).status_code == 403
    assert viewer.post("/templates/mine/delete/").status_code == 403
    assert viewer.get("/templates/+new/").status_code == 403
    operator = signed_in(people.operator.username)
    assert operator.get("/templates/theirs/").status_code == 404
    assert operator.post("/templates/theirs/", {"body": "{content}"}).status_code == 404
    assert operator.post("/templates/theirs/delete/").status_code == 404
    assert OutputTemplate.objects.get(name="mine").body == "{content}"


def test_an_operator_adds_edits_rates_and_deletes_a_strategy(people: People, tenant: Tenant) -> None:
    client = signed_in(people.operator.username)
    bad = client.post("/strategies/", {"layer": tenant.root.pk, "content": "  ", "helpfulness": "2"})
    assert bad.status_code == 422 and set(bad.context["form"].errors) == {"content", "helpfulness"}
    made = client.post(
        "/strategies/",
        {
            "layer": tenant.root.pk,
            "title": "Back off",
            "content": "Retry with exponential backoff.",
            "group_id": "payments",
            "agent_types": "coder, reviewer",
            "helpfulness": "0.5",
        },
    )
    assert made.status_code == 302
    strategy = Item.objects.get(type="strategy")
    assert strategy.agent_types == ["coder", "reviewer"] and strategy.kind == "package"
    listed = tenant.client.get("/api/v1/strategies/?group_id=payments").json()["results"]
    assert [s["id"] for s in listed] == [strategy.pk]

    assert client.post(f"/strategies/{strategy.pk}/", {"title": "Back off", "content": ""}).status_code == 422
    assert client.post(f"/strategies/{strategy.pk}/", {"title": "Backoff", "content": "Wait 2^n s."}).status_code == 302
    rated = client.post(f"/strategies/{strategy.pk}/feedback/", {"helpful": "true"}, **HX)
    assert rated.status_code == 200 and 'id="strategy-helpfulness"' in rated.content.decode()
    assert "<html" not in rated.content.decode()  # the region alone
    strategy.refresh_from_db()
    assert strategy.title == "Backoff" and strategy.content == "Wait 2^n s." and strategy.helpfulness > 0.5
    assert client.post(f"/strategies/{strategy.pk}/delete/").status_code == 302
    assert not Item.objects.filter(pk=strategy.pk).exists()


def test_strategies_are_scoped_and_viewers_only_read(people: People, tenant: Tenant, other_tenant: Tenant) -> None:
    theirs = other_tenant.client.post(
        "/api/v1/strategies/", {"layer": other_tenant.root.pk, "content": "Their secret plan."}, format="json"
    ).json()["id"]
    mine = tenant.client.post(
        "/api/v1/strategies/", {"layer": tenant.root.pk, "content": "Our plan."}, format="json"
    ).json()["id"]
    viewer = signed_in(people.viewer.username)
    listed = viewer.get("/strategies/").content.decode()
    assert "Our plan." in listed and "Their secret plan." not in listed and "Add a strategy" not in listed
    assert viewer.post("/strategies/", {"layer": tenant.root.pk, "content": "x"}).status_code == 403
    assert viewer.post(f"/strategies/{mine}/", {"content": "x"}).status_code == 403
    assert viewer.post(f"/strategies/{mine}/feedback/", {"helpful": "true"}).status_code == 403
    assert viewer.post(f"/strategies/{mine}/delete/").status_code == 403
    operator = signed_in(people.operator.username)
    assert operator.get(f"/strategies/{theirs}/").status_code == 404
    assert operator.post(f"/strategies/{theirs}/delete/").status_code == 404
    # Another workspace's layer is not a choice for a new strategy.
    refused = operator.post("/strategies/", {"layer": other_tenant.root.pk, "content": "x", "helpfulness": "0.5"})
    assert refused.status_code == 422 and "layer" in refused.context["form"].errors


def test_an_admin_keeps_a_false_positive_and_a_bad_pattern_is_a_form_error(people: People, tenant: Tenant) -> None:
    admin = signed_in(people.admin.username)
    bad = admin.post("/redaction/", {"kind": "pattern", "value": "(?=sk-)\\w+"}, **HX)
    assert bad.status_code == 422 and "RE2" in bad.context["form"].errors["value"][0]
    assert "<html" not in bad.content.decode() and not AllowlistEntry.objects.exists()
    everything = admin.post("/redaction/", {"kind": "pattern", "value": ".*"})
    assert everything.status_code == 422 and "any value" in everything.context["form"].errors["value"][0]

    value = "AKIAIOSFODNN7EXAMPLE"  # AWS's documented example key: a false positive here
    trial = admin.post("/redaction/try/", {"text": f"key {value}"}, **HX)
    assert value not in trial.context["result"].text
    assert admin.post("/redaction/", {"kind": "exact", "value": value, "note": "AWS docs"}).status_code == 302
    assert value in admin.post("/redaction/try/", {"text": f"key {value}"}).context["result"].text
    entry = AllowlistEntry.objects.get(workspace=tenant.workspace)
    assert [e["value"] for e in tenant.client.get("/api/v1/redaction/allowlist/").json()] == [value]
    removed = admin.post(f"/redaction/allowlist/{entry.pk}/delete/", **HX)
    assert removed.status_code == 200 and not AllowlistEntry.objects.exists()


def test_only_admins_change_the_allow_list_and_other_workspaces_entries_are_404(
    people: People, tenant: Tenant, other_tenant: Tenant
) -> None:
    theirs = AllowlistEntry.objects.create(workspace=other_tenant.workspace, kind="exact", value="their-value")
    mine = AllowlistEntry.objects.create(workspace=tenant.workspace, kind="exact", value="our-value")
    for username in (people.viewer.username, people.operator.username, people.developer.username):
        client = signed_in(username)
        page = client.get("/redaction/").content.decode()
        assert "our-value" in page and "their-value" not in page and "Add to the allow-list" not in page
        assert client.post("/redaction/", {"kind": "exact", "value": "x"}).status_code == 403
        assert client.post(f"/redaction/allowlist/{mine.pk}/delete/").status_code == 403
        assert client.post("/redaction/try/", {"text": "hello"}).status_code == 200  # trying changes nothing
    assert signed_in(people.admin.username).post(f"/redaction/allowlist/{theirs.pk}/delete/").status_code == 404
    assert AllowlistEntry.objects.count() == 2


def test_a_session_exported_from_its_page_imports_into_a_new_session(people: People, tenant: Tenant) -> None:
    chat = conversation_create(workspace=tenant.workspace, parent=tenant.root)
    viewer = signed_in(people.viewer.username)
    exported = viewer.get(f"/sessions/{chat.layer.pk}/export/")
    assert exported.status_code == 200 and exported["Content-Disposition"].startswith("attachment;")
    graph = json.loads(exported.content)
    assert graph == tenant.client.get(f"/api/v1/layers/{chat.layer.pk}/export/").json()  # the API's export

    project = layer_create(workspace=tenant.workspace, kind="project", name="Archive", parent=tenant.root)
    operator = signed_in(people.operator.username)
    upload = SimpleUploadedFile("chat.json", exported.content, content_type="application/json")
    made = operator.post("/sessions/import/", {"parent": project.pk, "name": "Copy", "graph": upload})
    assert made.status_code == 302
    copy = Layer.objects.get(workspace=tenant.workspace, name="Copy")
    assert copy.parent_id == project.pk and made["Location"] == f"/sessions/{copy.pk}/"
    again = tenant.client.get(f"/api/v1/layers/{copy.pk}/export/").json()
    assert again["messages"] == graph["messages"] and again["communities"] == graph["communities"]


def test_an_import_refuses_what_the_api_refuses(people: People, tenant: Tenant, other_tenant: Tenant) -> None:
    operator = signed_in(people.operator.username)
    post = lambda body, parent=tenant.root.pk: operator.post(  # noqa: E731
        "/sessions/import/", {"parent": parent, "graph": SimpleUploadedFile("g.json", body)}
    )
    not_json = post(b"{nope")
    assert not_json.status_code == 422 and "not JSON" in not_json.context["import_form"].errors["graph"][0]
    nan = post(b'{"format": NaN}')
    assert nan.status_code == 422 and "graph" in nan.context["import_form"].errors
    shape = post(json.dumps({"format": "contextarch.conversation", "version": 1}).encode())
    assert shape.status_code == 422 and "layer" in shape.context["import_form"].errors["graph"][0]
    cycle = {
        "format": "contextarch.conversation",
        "version": 1,
        "layer": {"name": "Loop"},
        "messages": [
            {"ref": "m1", "parent": "m2", "role": "user", "content": "a", "created_at": "2026-01-01T00:00:00Z"},
            {"ref": "m2", "parent": "m1", "role": "user", "content": "b", "created_at": "2026-01-01T00:01:00Z"},
        ],
    }
    looped = post(json.dumps(cycle).encode())
    assert looped.status_code == 422 and "own ancestor" in looped.context["import_form"].errors["graph"][0]
    elsewhere = post(json.dumps(cycle).encode(), parent=other_tenant.root.pk)
    assert elsewhere.status_code == 422 and "parent" in elsewhere.context["import_form"].errors
    assert not Layer.objects.filter(name="Loop").exists()
    assert signed_in(people.viewer.username).post("/sessions/import/", {}).status_code == 403


def test_an_operator_recomputes_a_sessions_communities(people: People, tenant: Tenant, other_tenant: Tenant) -> None:
    chat = conversation_create(workspace=tenant.workspace, parent=tenant.root)
    Community.objects.filter(layer=chat.layer).delete()
    operator = signed_in(people.operator.username)
    page = operator.get(f"/sessions/{chat.layer.pk}/").content.decode()
    assert "Recompute communities" in page and "Download export" in page
    swapped = operator.post(f"/sessions/{chat.layer.pk}/communities/", HTTP_HX_REQUEST="true", HTTP_HX_TARGET="graph")
    assert swapped.status_code == 200 and "Communities recomputed: " in swapped.content.decode()
    assert Community.objects.filter(layer=chat.layer).exists()
    assert "<html" not in swapped.content.decode()

    viewer = signed_in(people.viewer.username)
    assert "Recompute communities" not in viewer.get(f"/sessions/{chat.layer.pk}/").content.decode()
    assert viewer.post(f"/sessions/{chat.layer.pk}/communities/").status_code == 403
    theirs = conversation_create(workspace=other_tenant.workspace, parent=other_tenant.root, external_id="x")
    assert operator.post(f"/sessions/{theirs.layer.pk}/communities/").status_code == 404
    assert operator.get(f"/sessions/{theirs.layer.pk}/export/").status_code == 404


@pytest.mark.parametrize("path", ["/templates/", "/strategies/", "/redaction/", "/sessions/"])
def test_the_new_pages_are_in_the_sidebar_for_viewers(people: People, path: str) -> None:
    html = signed_in(people.viewer.username).get(path).content.decode()
    for label in ("Templates", "Strategies", "Redaction"):
        assert f">{label}<" in html
