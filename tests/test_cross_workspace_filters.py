"""One rule for filters that name an object: they answer like the object's own route, so a layer of
another workspace (or none) is a 404 whether it is asked for at /layers/{id}/ or as ?layer=/?parent=."""

from __future__ import annotations

import pytest

from apps.layers.models import Layer
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    "route",
    [
        "/api/v1/layers/{id}/",
        "/api/v1/layers/?parent={id}",
        "/api/v1/items/?layer={id}",
        "/api/v1/attempts/?layer={id}",
        "/api/v1/history/?layer={id}&query=x",
        "/api/v1/layers/{id}/summaries/",
    ],
)
def test_a_filter_naming_another_workspaces_layer_is_a_404_like_its_route(
    tenant: Tenant, other_tenant: Tenant, route: str
) -> None:
    theirs = Layer.objects.create(workspace=other_tenant.workspace, kind="project", name="x", parent=other_tenant.root)
    for layer_id in (theirs.pk, other_tenant.root.pk, 10**9):
        response = tenant.client.get(route.format(id=layer_id))
        assert response.status_code == 404, (route, response.json())
        assert response.json()["error"]["code"] == "layer_not_found"
    mine = tenant.client.get(route.format(id=tenant.root.pk))
    assert mine.status_code == 200, mine.json()


def test_free_value_filters_match_nothing_with_an_empty_page(tenant: Tenant) -> None:
    for route in (
        "/api/v1/strategies/?group_id=nobody",
        "/api/v1/attempts/?agent_type=nobody",
        "/api/v1/items/?type=x",
    ):
        response = tenant.client.get(route)
        assert response.status_code == 200 and response.json()["results"] == [], route
