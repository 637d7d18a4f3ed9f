"""The preview's chunk actions: open a chunk's source, pin or unpin it, exclude it from the request's
agent profile (and let it in again), lower its importance. Each POST needs an operator, a CSRF token
and an item of the workspace; the preview comes back assembled again with the result announced."""

from __future__ import annotations

from urllib.parse import urlencode

import pytest
from django.contrib.auth.models import AbstractUser
from django.test import Client

from apps.layers.models import Item, Layer
from apps.layers.services import ItemInput, items_create, layer_create
from apps.profiles.models import AgentProfile
from apps.profiles.services import ProfileInput, profile_create
from apps.workspaces.models import Membership, Role
from tests.support.tenants import Tenant

PASSWORD = "correct horse battery"
SECRET = ItemInput(kind="memory", type="fact", content="Their secret.")


@pytest.fixture
def project(tenant: Tenant) -> Layer:
    project = layer_create(workspace=tenant.workspace, kind="project", name="Billing", parent=tenant.root)
    items_create(
        layer=project,
        items=[
            ItemInput(kind="memory", type="fact", content="Invoices are generated nightly by the billing cron job."),
            ItemInput(kind="memory", type="decision", content="Billing retries failed card payments three times."),
            *(
                ItemInput(kind="document", content=f"Billing note {n}: invoices for region {n} are sent in batches.")
                for n in range(6)
            ),
        ],
    )
    return project


@pytest.fixture
def profile(tenant: Tenant) -> AgentProfile:
    return profile_create(workspace=tenant.workspace, name="billing-bot", data=ProfileInput())


def member(tenant: Tenant, django_user_model: type[AbstractUser], role: str, *, csrf: bool = False) -> Client:
    user = django_user_model.objects.create_user(username=f"{role}-user", password=PASSWORD)
    Membership.objects.create(workspace=tenant.workspace, user=user, role=role)
    client = Client(enforce_csrf_checks=csrf)
    client.force_login(user)
    return client


@pytest.fixture
def operator(tenant: Tenant, django_user_model: type[AbstractUser]) -> Client:
    return member(tenant, django_user_model, Role.OPERATOR)


@pytest.fixture
def viewer(tenant: Tenant, django_user_model: type[AbstractUser]) -> Client:
    return member(tenant, django_user_model, Role.VIEWER)


def query(layer: Layer, **overrides: object) -> str:
    params = {"layer": layer.pk, "query": "invoices billing", "token_budget": 2000, "timeout_ms": 0, **overrides}
    return urlencode(params)


def nightly(project: Layer) -> Item:
    return Item.objects.get(layer=project, content__startswith="Invoices are generated nightly")


def chunk_ids(html: str) -> list[str]:
    table = html.split('id="chunk-table"', 1)[1].split("</tbody>", 1)[0]
    return [row.split('class="chunk-open"', 1)[0] for row in table.split("</tr>")[1:-1]]


def test_every_chunk_links_to_its_source_and_a_viewer_gets_no_action_buttons(viewer: Client, project: Layer) -> None:
    response = viewer.get(f"/preview/?{query(project)}")
    view = response.context["view"]
    assert view.chunks and all(chunk["url"] for chunk in view.chunks)
    item = nightly(project)
    html = response.content.decode()
    assert f'href="/layers/{project.pk}/items/{item.pk}/" class="chunk-open"' in html
    assert "/preview/items/" not in html  # no pin, exclude or lower form


def test_an_operator_gets_pin_and_lower_on_each_item_and_exclude_only_with_a_profile(
    operator: Client, project: Layer, profile: AgentProfile
) -> None:
    item = nightly(project)
    html = operator.get(f"/preview/?{query(project)}").content.decode()
    assert f'hx-post="/preview/items/{item.pk}/pin/?' in html
    assert f'hx-post="/preview/items/{item.pk}/lower/?' in html
    assert "/exclude/" not in html  # no profile in the request: nothing to exclude it from
    with_profile = operator.get(f"/preview/?{query(project, profile=profile.name)}").content.decode()
    assert f'hx-post="/preview/items/{item.pk}/exclude/?' in with_profile
    assert "Exclude from billing-bot" in with_profile
    assert 'name="csrfmiddlewaretoken"' in with_profile


def test_pin_pins_the_item_and_answers_with_the_preview_assembled_again(operator: Client, project: Layer) -> None:
    item = nightly(project)
    response = operator.post(f"/preview/items/{item.pk}/pin/?{query(project)}", {"pinned": "1"}, HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    html = response.content.decode().strip()
    assert html.startswith('<section id="preview-result"') and "<form" in html and "<html" not in html
    assert '<p id="chunk-action-status" hx-swap-oob="innerHTML">Pinned memory #' in html
    item.refresh_from_db()
    assert item.pinned
    first = response.context["view"].chunks[0]
    assert (first["id"], first["pinned"]) == (item.pk, True)  # pinned chunks go first
    assert f'href="/layers/{project.pk}/items/{item.pk}/" class="chunk-open" autofocus' in html  # focus stays on it

    unpinned = operator.post(f"/preview/items/{item.pk}/pin/?{query(project)}", {"pinned": "0"}, HTTP_HX_REQUEST="true")
    assert "Unpinned memory #" in unpinned.content.decode()
    item.refresh_from_db()
    assert not item.pinned


def test_without_htmx_an_action_redirects_to_the_same_preview_with_a_message(operator: Client, project: Layer) -> None:
    item = nightly(project)
    response = operator.post(f"/preview/items/{item.pk}/pin/?{query(project)}", {"pinned": "1"})
    assert response.status_code == 302 and response["Location"] == f"/preview/?{query(project)}"
    page = operator.get(response["Location"]).content.decode()
    assert "Pinned memory #" in page and 'class="badge pin-badge">pinned<' in page


def test_exclude_leaves_the_item_out_of_the_profiles_contexts_and_include_lets_it_in_again(
    operator: Client, project: Layer, profile: AgentProfile
) -> None:
    item = nightly(project)
    asked = query(project, profile=profile.name)
    response = operator.post(f"/preview/items/{item.pk}/exclude/?{asked}", {"excluded": "1"}, HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    html = response.content.decode()
    assert f"Excluded memory #{item.pk} from profile billing-bot" in html
    profile.refresh_from_db()
    assert profile.excluded_items == [item.pk]
    view = response.context["view"]
    assert item.pk not in view.chunk_item_ids
    (row,) = [row for row in view.left_out if row.id == item.pk and row.source == "item"]
    assert row.reason == "profile_excluded" and row.decision_text == "left out: the agent profile excludes it"
    assert '<details id="overflow" ' in html and " open>" in html.split('<details id="overflow"', 1)[1][:80]
    assert "Include again" in html

    back = operator.post(f"/preview/items/{item.pk}/exclude/?{asked}", {"excluded": "0"}, HTTP_HX_REQUEST="true")
    assert "is in the contexts of profile billing-bot again" in back.content.decode()
    profile.refresh_from_db()
    assert profile.excluded_items == []
    assert item.pk in back.context["view"].chunk_item_ids
    # Without the profile the item was never left out: the exclusion is the profile's alone.
    operator.post(f"/preview/items/{item.pk}/exclude/?{asked}", {"excluded": "1"}, HTTP_HX_REQUEST="true")
    plain = operator.get(f"/preview/?{query(project)}").context["view"]
    assert item.pk in plain.chunk_item_ids


def test_exclude_needs_a_profile_of_the_workspace(operator: Client, project: Layer, other_tenant: Tenant) -> None:
    theirs = profile_create(workspace=other_tenant.workspace, name="theirs", data=ProfileInput())
    item = nightly(project)
    assert operator.post(f"/preview/items/{item.pk}/exclude/?{query(project)}").status_code == 404
    assert operator.post(f"/preview/items/{item.pk}/exclude/?{query(project, profile='theirs')}").status_code == 404
    theirs.refresh_from_db()
    assert theirs.excluded_items == []


def test_lower_takes_a_step_off_the_importance_down_to_zero(operator: Client, project: Layer) -> None:
    item = nightly(project)
    assert item.importance == 0.5
    said = []
    for _ in range(3):
        response = operator.post(f"/preview/items/{item.pk}/lower/?{query(project)}", HTTP_HX_REQUEST="true")
        assert response.status_code == 200
        said.append(response.content.decode().split('hx-swap-oob="innerHTML">', 1)[1].split("</p>", 1)[0])
    item.refresh_from_db()
    assert item.importance == 0.0
    assert said[0] == f"Lowered the importance of memory #{item.pk} from 0.50 to 0.25, for every profile."
    assert said[2] == f"The importance of memory #{item.pk} is 0 already, the lowest."
    html = operator.get(f"/preview/?{query(project)}").content.decode()
    assert f"/preview/items/{item.pk}/lower/" not in html  # nothing left to lower


@pytest.mark.parametrize("action", ["pin", "exclude", "lower"])
def test_a_viewer_may_not_act(viewer: Client, project: Layer, profile: AgentProfile, action: str) -> None:
    item = nightly(project)
    response = viewer.post(
        f"/preview/items/{item.pk}/{action}/?{query(project, profile=profile.name)}", HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 403
    item.refresh_from_db()
    profile.refresh_from_db()
    assert (item.pinned, item.importance, profile.excluded_items) == (False, 0.5, [])


@pytest.mark.parametrize("action", ["pin", "exclude", "lower"])
def test_an_item_of_another_workspace_is_not_found(
    operator: Client, project: Layer, profile: AgentProfile, other_tenant: Tenant, action: str
) -> None:
    (foreign,) = items_create(layer=other_tenant.root, items=[SECRET])
    response = operator.post(f"/preview/items/{foreign.pk}/{action}/?{query(project, profile=profile.name)}")
    assert response.status_code == 404
    foreign.refresh_from_db()
    assert (foreign.pinned, foreign.importance) == (False, 0.5)


def test_an_action_needs_the_csrf_token_and_a_post(
    tenant: Tenant, django_user_model: type[AbstractUser], project: Layer
) -> None:
    client = member(tenant, django_user_model, Role.OPERATOR, csrf=True)
    item = nightly(project)
    assert client.post(f"/preview/items/{item.pk}/pin/?{query(project)}").status_code == 403
    assert client.get(f"/preview/items/{item.pk}/pin/?{query(project)}").status_code == 405
    item.refresh_from_db()
    assert not item.pinned


def test_an_items_own_link_opens_the_page_of_its_layer_that_lists_it(viewer: Client, tenant: Tenant) -> None:
    layer = layer_create(workspace=tenant.workspace, kind="project", name="Notes", parent=tenant.root)
    notes = [ItemInput(kind="memory", type="fact", content=f"Note {n}.") for n in range(30)]
    items = items_create(layer=layer, items=notes)
    oldest, newest = min(items, key=lambda i: i.pk), max(items, key=lambda i: i.pk)
    opened = viewer.get(f"/layers/{layer.pk}/items/{oldest.pk}/")["Location"]
    assert opened == f"/layers/{layer.pk}/?page=2#item-{oldest.pk}"  # newest first: the oldest is 30th
    opened = viewer.get(f"/layers/{layer.pk}/items/{newest.pk}/")["Location"]
    assert opened == f"/layers/{layer.pk}/#item-{newest.pk}"
    page = viewer.get(f"/layers/{layer.pk}/?page=2").content.decode()
    assert f'id="item-{oldest.pk}"' in page
