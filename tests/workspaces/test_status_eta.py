"""GET /api/v1/status/: the embedding backlog with the embedder's recent rate and the time to done."""

from __future__ import annotations

import pytest

from apps.core import cache
from apps.layers.embedder import items_embed_pending
from apps.layers.embedding_rate import RATE_KEY, rate_recent
from apps.layers.models import Item
from apps.layers.services import ItemInput, items_create
from tests.conftest import Tenant

pytestmark = pytest.mark.django_db


def status(tenant: Tenant) -> dict:  # type: ignore[type-arg]
    response = tenant.client.get("/api/v1/status/")
    assert response.status_code == 200
    return response.json()  # type: ignore[no-any-return]


def test_it_measures_the_embedder_and_estimates_the_time_to_done(tenant: Tenant) -> None:
    cache.set_value(RATE_KEY, None, 1)
    items_create(
        layer=tenant.root,
        items=[ItemInput(kind="memory", type="fact", content=f"Fact number {n} about backups.") for n in range(6)],
    )
    before = status(tenant)
    assert before["items_pending_embedding"] == 6
    assert before["embedding_items_per_s"] is None and before["embedding_eta_seconds"] is None  # no rate yet

    items_embed_pending(workspace_id=tenant.workspace.pk, max_batches=1)
    rate = rate_recent()
    assert rate is not None and rate > 0
    done = status(tenant)
    assert done["items_pending_embedding"] == 0 and done["embedding_eta_seconds"] == 0.0
    assert done["embedding_items_per_s"] == pytest.approx(rate, abs=0.01)

    Item.objects.filter(workspace=tenant.workspace).update(embedding=None)  # a backlog of 6 at the measured rate
    later = status(tenant)
    assert later["embedding_eta_seconds"] == pytest.approx(6 / rate, rel=0.01, abs=0.1)
