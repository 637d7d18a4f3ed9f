"""An item's metadata is the user's: the engine never reads its own bookkeeping out of it, so no key
or value stored there can fail or steer a context request (issue 25, finding 1)."""

from __future__ import annotations

import pytest

from apps.core.versions import content_changed
from apps.layers.models import Item
from tests.support.api import ask, bulk, layer
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db

# The engine's own marks, which it used to read from user metadata.
ENGINE_KEYS = (
    {"stands_in_for": "x"},
    {"stands_in_for": [1, "two", None]},
    {"neighbour_of": "x"},
    {"neighbour_of": {"id": 1}},
    {"inherited_relevance": "high"},
    {"inherited_relevance": [0.9]},
    {"stale": True},
    {"summary": {"text": "not a string"}},
)


@pytest.mark.parametrize("metadata", ENGINE_KEYS, ids=lambda m: next(iter(m)))
def test_a_pinned_memory_with_engine_keys_in_its_metadata_leaves_context_working(
    tenant: Tenant, metadata: dict[str, object]
) -> None:
    session = layer(tenant, "session", tenant.root.pk, external_id="s1")
    bulk(tenant, session, [{"kind": "message", "role": "user", "content": f"Turn {i} about otters."} for i in range(3)])
    response = tenant.client.post(
        "/api/v1/items/",
        {"layer": tenant.root.pk, "kind": "memory", "type": "fact", "content": "Company rule.", "pinned": True}
        | {"metadata": metadata},
        format="json",
    )
    assert response.status_code == 201, response.json()
    body = ask(tenant, layer=session, query="otters", token_budget=500)
    assert "Company rule." in body["context"] and body["total_tokens"] <= 500
    assert not any("stale" in w for w in body["warnings"])  # a user's "stale" is not a stale summary


def test_a_search_hit_claiming_high_inherited_relevance_ranks_as_if_its_metadata_were_empty(tenant: Tenant) -> None:
    session = layer(tenant, "session", tenant.root.pk, external_id="s1")
    ids = bulk(
        tenant,
        session,
        [
            {"kind": "memory", "type": "fact", "content": "Otters hold hands while they sleep."},
            {"kind": "memory", "type": "fact", "content": "The car park closes at night.", "pinned": True},
        ],
    )
    plain = ask(tenant, layer=session, query="otters sleep", token_budget=500)
    Item.objects.filter(pk=ids[1]).update(metadata={"inherited_relevance": 1.0, "neighbour_of": ids[0]})
    content_changed(tenant.workspace.pk)  # as a write through the API would
    claimed = ask(tenant, layer=session, query="otters sleep", token_budget=500)
    assert [c["id"] for c in claimed["chunks"]] == [c["id"] for c in plain["chunks"]]
    assert [c["score"] for c in claimed["chunks"]] == [c["score"] for c in plain["chunks"]]


@pytest.mark.parametrize("value", [[1, 2], ["user"], "text", 7, True], ids=repr)
def test_metadata_that_is_not_an_object_written_around_the_api_leaves_context_working(
    tenant: Tenant, value: object
) -> None:
    session = layer(tenant, "session", tenant.root.pk, external_id="s1")
    ids = bulk(
        tenant,
        session,
        [
            {"kind": "message", "role": "user", "content": "Otters swim in the brook."},
            {"kind": "message", "role": "user", "content": "They sleep on their backs."},
            {"kind": "memory", "type": "fact", "content": "Pinned note.", "pinned": True},
        ],
    )
    Item.objects.filter(pk__in=ids).update(metadata=value)
    body = ask(tenant, layer=session, query="otters", token_budget=500)
    assert "Otters swim in the brook." in body["context"] and "Pinned note." in body["context"]
    history = tenant.client.get("/api/v1/history/", {"layer": session, "query": "otters"})
    assert history.status_code == 200
    marked = tenant.client.post(f"/api/v1/items/{ids[0]}/importance/", {"important": True}, format="json")
    assert marked.status_code == 200 and marked.json()["importance"] == 1.0
