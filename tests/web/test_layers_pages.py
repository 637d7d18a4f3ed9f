"""The layer page: items with search, filters and pages; summaries; the trigger form; roles."""

from __future__ import annotations

import re
from itertools import pairwise
from typing import Any

from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from apps.layers.embedder import items_embed_pending
from apps.layers.models import Item, Layer, Relationship
from apps.layers.relationships import relationship_create
from apps.layers.services import ItemInput, items_create, layer_create
from apps.summaries.models import LayerConfig
from tests.support.tenants import Tenant
from tests.web.harness import PASSWORD
from tests.web.people import People


def signed_in(username: str) -> Client:
    client = Client()
    assert client.login(username=username, password=PASSWORD)
    return client


def project_of(tenant: Tenant) -> Layer:
    project = layer_create(workspace=tenant.workspace, kind="project", name="Billing", parent=tenant.root)
    items_create(
        layer=project,
        items=[ItemInput(kind="memory", type="fact", content=f"Invoice rule number {i}.") for i in range(30)]
        + [ItemInput(kind="spec", type="requirement", content="Every invoice carries a VAT number.", pinned=True)],
    )
    return project


def test_it_shows_a_layer_with_pinned_items_first_and_pages(people: People, tenant: Tenant) -> None:
    project = project_of(tenant)
    page = signed_in("vera").get(f"/layers/{project.pk}/")
    assert page.status_code == 200
    items = page.context["items"]
    assert items.paginator.count == 31 and len(items.object_list) == 25
    assert items.object_list[0].pinned
    html = page.content.decode()
    assert "pending embedding" in html and "Page 1 of 2" in html
    assert "Save triggers" not in html and 'fieldset class="grid" disabled' in html  # a viewer reads


def test_it_filters_items_by_text_kind_and_type(people: People, tenant: Tenant) -> None:
    project = project_of(tenant)
    client = signed_in("vera")
    assert client.get(f"/layers/{project.pk}/?q=VAT").context["items"].paginator.count == 1
    assert client.get(f"/layers/{project.pk}/?kind=memory&type=fact").context["items"].paginator.count == 30
    partial = client.get(f"/layers/{project.pk}/?kind=spec", HTTP_HX_REQUEST="true").content.decode().strip()
    assert partial.startswith('<section id="layer-items"')


def test_it_never_shows_a_layer_of_another_workspace(people: People, other_tenant: Tenant) -> None:
    assert signed_in("vera").get(f"/layers/{other_tenant.root.pk}/").status_code == 404
    response = signed_in("otto").post(f"/layers/{other_tenant.root.pk}/config/", {"interval": "5"})
    assert response.status_code == 404


def test_it_shows_every_config_error_at_once_and_saves_nothing(people: People, tenant: Tenant) -> None:
    client = signed_in("otto")
    data = {
        "interval": "10",
        "interval_unit": "days",
        "update_on_changes": "0",
        "personalization": "highly_personalized",
    }
    response = client.post(f"/layers/{tenant.root.pk}/config/", data, HTTP_HX_REQUEST="true")
    assert response.status_code == 422  # htmx swaps 422 (base.html's responseHandling)
    errors = response.context["config_form"].errors
    assert set(errors) == {"interval", "update_on_changes", "personalization"}
    html = response.content.decode()
    assert html.strip().startswith('<section id="layer-config"')
    assert "organisation-wide" in html and "between 1 minute and 7 days" in html
    assert LayerConfig.objects.get(layer=tenant.root).update_on_changes == 10


def test_it_saves_the_triggers_in_human_units(people: People, tenant: Tenant) -> None:
    project = layer_create(workspace=tenant.workspace, kind="project", name="Ops", parent=tenant.root)
    data = {"interval": "2", "interval_unit": "hours", "update_on_changes": "7", "personalization": "personalized"}
    response = signed_in("otto").post(f"/layers/{project.pk}/config/", data)
    assert response.status_code == 302
    config = LayerConfig.objects.get(layer=project)
    assert (config.update_interval_seconds, config.update_on_changes, config.skip_if_unchanged) == (7200, 7, False)


def test_it_refuses_every_edit_to_a_viewer(people: People, tenant: Tenant) -> None:
    project = project_of(tenant)
    item = Item.objects.filter(layer=project).first()
    assert item is not None
    client = signed_in("vera")
    for url, data in (
        (f"/layers/{project.pk}/config/", {"interval": "1"}),
        (f"/layers/{project.pk}/summarize/", {}),
        (f"/layers/{project.pk}/items/", {"kind": "memory", "type": "fact", "content": "x"}),
        (f"/layers/{project.pk}/items/{item.pk}/delete/", {}),
        (f"/layers/{project.pk}/children/", {"kind": "session", "name": "s"}),
        (f"/layers/{project.pk}/delete/", {}),
    ):
        assert client.post(url, data).status_code == 403, url
    assert Item.objects.filter(layer=project).count() == 31 and Layer.objects.filter(pk=project.pk).exists()


def test_it_lets_an_operator_add_and_delete_items_and_sub_layers(people: People, tenant: Tenant) -> None:
    project = project_of(tenant)
    client = signed_in("otto")
    added = client.post(f"/layers/{project.pk}/items/", {"kind": "memory", "type": "decision", "content": "Ship it."})
    assert added.status_code == 302
    bad = client.post(f"/layers/{project.pk}/items/", {"kind": "memory", "type": "nonsense", "content": " "})
    assert bad.status_code == 422 and set(bad.context["item_form"].errors) == {"type", "content"}  # both at once
    assert "type of a memory must be one of" in bad.content.decode()  # the service's words, as the API gives them
    item = Item.objects.get(layer=project, content="Ship it.")
    assert client.post(f"/layers/{project.pk}/items/{item.pk}/delete/").status_code == 302
    assert not Item.objects.filter(pk=item.pk).exists()
    child = client.post(f"/layers/{project.pk}/children/", {"kind": "session", "name": "Monday"})
    assert child.status_code == 302
    session = Layer.objects.get(parent=project, name="Monday")
    wrong = client.post(f"/layers/{session.pk}/children/", {"kind": "team", "name": "Nope"})
    assert wrong.status_code == 422
    assert client.post(f"/layers/{session.pk}/delete/").status_code == 302
    assert client.post(f"/layers/{tenant.root.pk}/delete/").status_code == 302  # refused with a message
    assert Layer.objects.filter(pk=tenant.root.pk).exists()


def edit_data(item: Item, **changes: str) -> dict[str, str]:
    """The inline editor's fields as the page fills them for `item`, with `changes` on top."""
    data = {
        "type": item.type,
        "title": item.title,
        "content": item.content,
        "importance": str(item.importance),
        "confidence": "" if item.confidence is None else str(item.confidence),
        "priority": item.priority,
        "group_id": item.group_id,
        "agent_types": ", ".join(item.agent_types),
        "task_ids": ", ".join(item.task_ids),
        "source_refs": "\n".join(item.source_refs),
        "external_id": item.external_id or "",
        "metadata": "{}",
    }
    if item.pinned:
        data["pinned"] = "on"
    return {**data, **changes}


def test_it_opens_an_items_editor_in_its_row_and_saves_it_there(people: People, tenant: Tenant) -> None:
    project = project_of(tenant)
    item = Item.objects.get(layer=project, kind="spec")
    client = signed_in("otto")
    url = f"/layers/{project.pk}/items/{item.pk}/edit/"
    editor = client.get(url, HTTP_HX_REQUEST="true").content.decode().strip()
    assert editor.startswith(f'<tr id="item-{item.pk}" class="editing">') and 'name="content"' in editor
    data = edit_data(item, type="design", content="Every invoice carries a VAT id.", metadata='{"source": "wiki"}')
    data.pop("pinned")
    saved = client.post(url, data, HTTP_HX_REQUEST="true")
    assert saved.status_code == 200
    row = saved.content.decode().strip()
    assert row.startswith(f'<tr id="item-{item.pk}"') and "VAT id" in row and ">saved<" in row
    item.refresh_from_db()
    assert (item.type, item.content, item.pinned, item.metadata) == (
        "design",
        "Every invoice carries a VAT id.",
        False,
        {"source": "wiki"},
    )
    assert item.embedding is None  # new text: embedded again in the background
    assert 'hx-trigger="every 3s"' in row  # so the saved row asks until its embedding is there
    back = client.get(f"/layers/{project.pk}/items/{item.pk}/", HTTP_HX_REQUEST="true").content.decode()
    assert back.strip().startswith(f'<tr id="item-{item.pk}">')  # Cancel swaps the row back


def test_it_shows_every_item_error_at_once_and_saves_nothing(people: People, tenant: Tenant) -> None:
    project = project_of(tenant)
    item = Item.objects.get(layer=project, kind="spec")
    taken = Item.objects.filter(layer=project, kind="memory").first()
    assert taken is not None
    Item.objects.filter(pk=taken.pk).update(external_id="inv-1")
    bad = edit_data(
        item,
        type="opinion",
        content="   ",
        importance="1.5",
        confidence="2",
        external_id="inv-1",
        metadata="[1, 2]",
        priority="urgent",
    )
    response = signed_in("otto").post(f"/layers/{project.pk}/items/{item.pk}/edit/", bad, HTTP_HX_REQUEST="true")
    assert response.status_code == 422
    errors = response.context["edit_form"].errors
    assert set(errors) == {"type", "content", "importance", "confidence", "external_id", "metadata", "priority"}
    html = response.content.decode()
    # The service's own words, the ones the API answers with.
    assert "type of a spec must be one of" in html and "content must not be empty" in html
    assert "importance must be within [0, 1]" in html and "already exists" not in html
    assert "an item with external_id" in html and "must be a JSON object" in html
    item.refresh_from_db()
    assert item.content == "Every invoice carries a VAT number." and item.type == "requirement"


def test_it_edits_without_htmx_too(people: People, tenant: Tenant) -> None:
    project = project_of(tenant)
    item = Item.objects.filter(layer=project, kind="memory").order_by("pk").first()  # not on the first page
    assert item is not None
    client = signed_in("otto")
    page = client.get(f"/layers/{project.pk}/items/{item.pk}/edit/")
    assert page.status_code == 200 and f'<tr id="item-{item.pk}" class="editing">' in page.content.decode()
    saved = client.post(f"/layers/{project.pk}/items/{item.pk}/edit/", edit_data(item, title="Rule"))
    assert saved.status_code == 302 and saved.headers["Location"].endswith(f"/layers/{project.pk}/#item-{item.pk}")
    item.refresh_from_db()
    assert item.title == "Rule"


def test_it_gives_viewers_no_editor_and_refuses_their_edits(people: People, tenant: Tenant) -> None:
    project = project_of(tenant)
    item = Item.objects.get(layer=project, kind="spec")
    client = signed_in("vera")
    assert "/edit/" not in client.get(f"/layers/{project.pk}/").content.decode()
    assert client.get(f"/layers/{project.pk}/items/{item.pk}/edit/").status_code == 403
    edit = client.post(f"/layers/{project.pk}/items/{item.pk}/edit/", edit_data(item, content="Hacked."))
    assert edit.status_code == 403
    item.refresh_from_db()
    assert item.content == "Every invoice carries a VAT number."


def test_it_answers_404_to_an_edit_of_another_workspaces_item(
    people: People, tenant: Tenant, other_tenant: Tenant
) -> None:
    project = project_of(tenant)
    (foreign,) = items_create(layer=other_tenant.root, items=[ItemInput(kind="memory", type="fact", content="Theirs.")])
    client = signed_in("otto")  # an operator of acme, crafting URLs with globex's item
    for url in (
        f"/layers/{project.pk}/items/{foreign.pk}/edit/",
        f"/layers/{other_tenant.root.pk}/items/{foreign.pk}/edit/",
        f"/layers/{project.pk}/items/{foreign.pk}/relationships/",
    ):
        assert (
            client.post(url, edit_data(foreign, content="Mine now.", kind="relates_to", other="1")).status_code == 404
        )
    foreign.refresh_from_db()
    assert foreign.content == "Theirs."


def test_it_lists_relationships_both_ways_with_the_other_items_excerpt_and_layer(
    people: People, tenant: Tenant
) -> None:
    project = project_of(tenant)
    spec = Item.objects.get(layer=project, kind="spec")
    team = layer_create(workspace=tenant.workspace, kind="team", name="Finance", parent=tenant.root)
    (policy,) = items_create(
        layer=team, items=[ItemInput(kind="memory", type="decision", content="VAT ids are checked.")]
    )
    relationship_create(workspace=tenant.workspace, source_id=spec.pk, target_id=policy.pk, kind="derived_from")
    page = signed_in("vera").get(f"/layers/{project.pk}/")
    row = next(item for item in page.context["items"] if item.pk == spec.pk)
    (shown,) = row.relations
    assert (shown.outgoing, shown.kind, shown.other_id, shown.other_layer_name) == (
        True,
        "derived_from",
        policy.pk,
        "Finance",
    )
    html = page.content.decode()
    assert "VAT ids are checked." in html and f'href="/layers/{team.pk}/#item-{policy.pk}"' in html
    other_side = signed_in("vera").get(f"/layers/{team.pk}/")
    (back,) = next(item for item in other_side.context["items"] if item.pk == policy.pk).relations
    assert not back.outgoing and back.other_id == spec.pk


def test_it_lets_an_operator_add_and_remove_a_relationship(
    people: People, tenant: Tenant, other_tenant: Tenant
) -> None:
    project = project_of(tenant)
    spec = Item.objects.get(layer=project, kind="spec")
    fact = Item.objects.filter(layer=project, kind="memory").first()
    assert fact is not None
    (foreign,) = items_create(layer=other_tenant.root, items=[ItemInput(kind="memory", type="fact", content="Theirs.")])
    client = signed_in("otto")
    url = f"/layers/{project.pk}/items/{spec.pk}/relationships/"
    added = client.post(url, {"kind": "supports", "direction": "incoming", "other": fact.pk}, HTTP_HX_REQUEST="true")
    assert added.status_code == 200
    assert added.content.decode().strip().startswith(f'<section id="item-{spec.pk}-relations"')
    edge = Relationship.objects.get(workspace=tenant.workspace)
    assert (edge.source_id, edge.target_id, edge.kind) == (fact.pk, spec.pk, "supports")
    again = client.post(url, {"kind": "supports", "direction": "incoming", "other": fact.pk}, HTTP_HX_REQUEST="true")
    assert again.status_code == 422 and "already supports" in again.content.decode()
    # Another workspace's item is "not found", the words the service gives every caller.
    cross = client.post(
        url, {"kind": "relates_to", "direction": "outgoing", "other": foreign.pk}, HTTP_HX_REQUEST="true"
    )
    assert cross.status_code == 422 and f"item {foreign.pk} not found" in cross.content.decode()
    itself = client.post(url, {"kind": "relates_to", "direction": "outgoing", "other": spec.pk}, HTTP_HX_REQUEST="true")
    assert itself.status_code == 422 and "cannot be related to itself" in itself.content.decode()
    assert Relationship.objects.count() == 1
    assert signed_in("vera").post(f"{url}{edge.pk}/delete/").status_code == 403
    removed = client.post(f"{url}{edge.pk}/delete/", HTTP_HX_REQUEST="true")
    assert removed.status_code == 200 and not Relationship.objects.exists()
    assert client.post(f"{url}{edge.pk}/delete/").status_code == 404


def test_it_reads_a_page_of_items_with_their_relationships_in_constant_queries(
    people: People, tenant: Tenant, django_assert_max_num_queries: Any
) -> None:
    project = project_of(tenant)
    client = signed_in("vera")
    client.get(f"/layers/{project.pk}/")  # the session's first page settles the workspace choice
    with CaptureQueriesContext(connection) as bare:
        client.get(f"/layers/{project.pk}/")
    ids = list(Item.objects.filter(layer=project).values_list("pk", flat=True))
    for source, target in pairwise(ids):
        relationship_create(workspace=tenant.workspace, source_id=source, target_id=target, kind="relates_to")
    with django_assert_max_num_queries(len(bare)):
        page = client.get(f"/layers/{project.pk}/")
    assert sum(len(item.relations) for item in page.context["items"]) >= 25


def test_it_pages_through_filtered_items_and_keeps_the_filters_in_the_links(people: People, tenant: Tenant) -> None:
    project = project_of(tenant)
    client = signed_in("vera")
    first = client.get(f"/layers/{project.pk}/?kind=memory")
    assert first.context["items"].paginator.count == 30
    assert 'href="?q=&amp;kind=memory&amp;type=&amp;page=2"' in first.content.decode()
    second = client.get(f"/layers/{project.pk}/?kind=memory&page=2")
    assert len(second.context["items"].object_list) == 5
    assert all(item.kind == "memory" for item in second.context["items"])
    swapped = client.get(f"/layers/{project.pk}/?kind=memory&page=2", HTTP_HX_REQUEST="true").content.decode()
    assert swapped.strip().startswith('<section id="layer-items"') and "Page 2 of 2" in swapped
    # A page past the end or not a number shows a real page, never an error.
    assert client.get(f"/layers/{project.pk}/?page=99").context["items"].number == 2
    assert client.get(f"/layers/{project.pk}/?page=x").context["items"].number == 1
    nothing = client.get(f"/layers/{project.pk}/?q=no+such+words&kind=bogus")
    assert nothing.status_code == 200 and "No item matches these filters." in nothing.content.decode()


def test_it_offers_the_types_the_layers_items_have(people: People, tenant: Tenant) -> None:
    project = project_of(tenant)
    items_create(layer=project, items=[ItemInput(kind="document", type="runbook", content="Restart the biller.")])
    page = signed_in("vera").get(f"/layers/{project.pk}/?type=runbook")
    assert "runbook" in page.context["types"] and "fact" in page.context["types"]
    assert page.context["items"].paginator.count == 1


def test_it_marks_items_pending_embedding_until_they_are_embedded(people: People, tenant: Tenant) -> None:
    project = layer_create(workspace=tenant.workspace, kind="project", name="Ops", parent=tenant.root)
    items_create(layer=project, items=[ItemInput(kind="memory", type="fact", content="The pager rotates weekly.")])
    client = signed_in("vera")
    before = client.get(f"/layers/{project.pk}/")
    assert before.context["figures"]["pending"] == 1 and "pending embedding</span>" in before.content.decode()
    assert items_embed_pending(workspace_id=tenant.workspace.pk) >= 1  # the real model
    after = client.get(f"/layers/{project.pk}/")
    assert after.context["figures"]["pending"] == 0
    (item,) = after.context["items"]
    assert not item.pending and "pending embedding</span>" not in after.content.decode()


def test_it_relates_items_without_htmx_too(people: People, tenant: Tenant) -> None:
    project = project_of(tenant)
    spec = Item.objects.get(layer=project, kind="spec")
    fact = Item.objects.filter(layer=project, kind="memory").first()
    assert fact is not None
    client = signed_in("otto")
    url = f"/layers/{project.pk}/items/{spec.pk}/relationships/"
    added = client.post(url, {"kind": "relates_to", "direction": "outgoing", "other": fact.pk})
    assert added.status_code == 302 and added.headers["Location"] == f"/layers/{project.pk}/items/{spec.pk}/edit/"
    refused = client.post(url, {"kind": "relates_to", "direction": "outgoing", "other": "x"})
    assert refused.status_code == 422 and f'<tr id="item-{spec.pk}" class="editing">' in refused.content.decode()
    assert Relationship.objects.filter(source=spec, target=fact).count() == 1


def test_it_lets_an_operator_rename_a_layer_and_refuses_a_taken_external_id(people: People, tenant: Tenant) -> None:
    project = layer_create(workspace=tenant.workspace, kind="project", name="Billing", parent=tenant.root)
    layer_create(workspace=tenant.workspace, kind="project", name="Ops", parent=tenant.root, external_id="ops")
    client = signed_in("otto")
    saved = client.post(f"/layers/{project.pk}/edit/", {"name": "Invoicing", "external_id": "inv"})
    assert saved.status_code == 302
    project.refresh_from_db()
    assert (project.name, project.external_id) == ("Invoicing", "inv")
    taken = client.post(f"/layers/{project.pk}/edit/", {"name": "Renamed", "external_id": "ops"})
    assert taken.status_code == 422 and taken.context["layer_form"].errors["external_id"]
    assert "with external_id &#x27;ops&#x27; exists" in taken.content.decode()
    project.refresh_from_db()
    assert (project.name, project.external_id) == ("Invoicing", "inv")
    assert signed_in("vera").post(f"/layers/{project.pk}/edit/", {"name": "Viewer's"}).status_code == 403


def test_it_gives_every_field_on_the_layer_page_its_own_id(people: People, tenant: Tenant) -> None:
    project = project_of(tenant)
    item = Item.objects.filter(layer=project).first()
    assert item is not None
    html = signed_in("otto").get(f"/layers/{project.pk}/items/{item.pk}/edit/").content.decode()
    ids = re.findall(r'\sid="([^"]+)"', html)
    assert len(ids) == len(set(ids)), sorted({x for x in ids if ids.count(x) > 1})


def test_it_stops_watching_a_row_once_its_item_is_embedded(people: People, tenant: Tenant) -> None:
    project = layer_create(workspace=tenant.workspace, kind="project", name="Ops", parent=tenant.root)
    (item,) = items_create(layer=project, items=[ItemInput(kind="memory", type="fact", content="Pager weekly.")])
    client = signed_in("vera")
    url = f"/layers/{project.pk}/items/{item.pk}/?watch=1"
    assert 'hx-trigger="every 3s"' in client.get(url, HTTP_HX_REQUEST="true").content.decode()
    items_embed_pending(workspace_id=tenant.workspace.pk)
    row = client.get(url, HTTP_HX_REQUEST="true").content.decode()
    assert "hx-trigger" not in row and "embedded" in row


def test_a_field_that_does_not_parse_does_not_hide_the_other_config_errors(people: People, tenant: Tenant) -> None:
    data = {"interval": "", "interval_unit": "days", "update_on_changes": "0", "personalization": "highly_personalized"}
    response = signed_in("otto").post(f"/layers/{tenant.root.pk}/config/", data, HTTP_HX_REQUEST="true")
    assert response.status_code == 422
    errors = response.context["config_form"].errors
    assert set(errors) == {"interval", "update_on_changes", "personalization"}  # all three, not one
    assert errors["interval"] == ["This field is required."]


def test_the_sub_layer_form_offers_only_the_kinds_that_may_sit_under_the_layer(people: People, tenant: Tenant) -> None:
    client = signed_in("otto")
    team = layer_create(workspace=tenant.workspace, kind="team", name="Payments", parent=tenant.root)
    session = layer_create(workspace=tenant.workspace, kind="session", name="Monday", parent=team)
    kinds = [value for value, _ in client.get(f"/layers/{team.pk}/").context["child_form"].fields["kind"].choices]
    assert kinds == ["project", "multi_session", "session"]
    html = client.get(f"/layers/{session.pk}/").content.decode()
    assert "nothing sits under it" in html and 'id="child-kind"' not in html
