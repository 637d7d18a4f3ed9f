"""The layer page: items with search, filters and pages; summaries; the trigger form; roles."""

from __future__ import annotations

from django.test import Client

from apps.layers.models import Item, Layer, LayerConfig
from apps.layers.services import ItemInput, items_create, layer_create
from tests.conftest import Tenant
from tests.web.conftest import People
from tests.web.harness import PASSWORD


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
    bad = client.post(f"/layers/{project.pk}/items/", {"kind": "memory", "type": "nonsense", "content": "x"})
    assert bad.status_code == 422 and "A memory takes one of" in bad.content.decode()
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
