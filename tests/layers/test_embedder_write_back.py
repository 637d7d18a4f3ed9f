"""The embedder stores a batch's vectors in one statement, each on its own item, and none on an item
whose content changed while it was being embedded."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.layers.embedder import _write_back, items_claim_batch
from apps.layers.models import EmbeddingClaim, Item
from apps.layers.services import ItemInput, content_hash, items_create
from tests.support.fake_provider import vector_of
from tests.support.tenants import make_tenant


@pytest.mark.django_db
def test_it_writes_a_batch_back_in_one_update_and_skips_an_item_edited_meanwhile() -> None:
    tenant = make_tenant("acme")
    items = items_create(
        layer=tenant.root, items=[ItemInput(kind="memory", type="fact", content=f"Fact number {n}.") for n in range(5)]
    )
    claimed = items_claim_batch(workspace_id=tenant.workspace.pk, max_items=64, max_tokens=100_000)
    assert sorted(row.id for row in claimed) == sorted(item.pk for item in items)
    edited = items[2]  # rewritten while the provider was embedding its old text
    Item.objects.filter(pk=edited.pk).update(
        content="Rewritten meanwhile.", content_hash=content_hash(title="", content="Rewritten meanwhile.")
    )
    vectors = [vector_of(row.text) for row in claimed]

    with CaptureQueriesContext(connection) as queries:
        stored = _write_back(claimed, vectors, "test:model")

    assert stored == 4
    updates = [q["sql"] for q in queries.captured_queries if q["sql"].lstrip().upper().startswith("UPDATE")]
    assert len(updates) == 1, updates
    for row, vector in zip(claimed, vectors, strict=True):
        item = Item.objects.get(pk=row.id)
        if row.id == edited.pk:
            assert item.embedding is None and item.embedding_model == ""
        else:
            assert list(item.embedding) == pytest.approx(vector, abs=1e-6)
            assert item.embedding_model == "test:model"
    assert not EmbeddingClaim.objects.exists()


@pytest.mark.django_db
def test_it_never_overwrites_a_vector_stored_meanwhile() -> None:
    tenant = make_tenant("acme")
    (item,) = items_create(layer=tenant.root, items=[ItemInput(kind="memory", type="fact", content="One fact.")])
    claimed = items_claim_batch(workspace_id=tenant.workspace.pk, max_items=64, max_tokens=100_000)
    first = vector_of("another worker's")
    Item.objects.filter(pk=item.pk).update(embedding=first, embedding_model="other:model")

    assert _write_back(claimed, [vector_of("late")], "test:model") == 0

    stored = Item.objects.get(pk=item.pk)
    assert list(stored.embedding) == pytest.approx(first, abs=1e-6) and stored.embedding_model == "other:model"
