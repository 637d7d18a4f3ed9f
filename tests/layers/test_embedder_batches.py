"""The embedder claims bounded batches fairly across workspaces and embeds with no transaction open."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import psycopg
import pytest
from django.db import connection, transaction
from django.test import override_settings

from apps.core import background, embeddings
from apps.layers.embedder import Candidate, batch_plan, items_embed_batch, items_embed_pending
from apps.layers.models import EmbeddingClaim, Item
from apps.layers.services import ItemInput, items_create
from tests.conftest import Tenant, make_tenant
from tests.embedding_server import FakeEmbedder, fake_embedder, vector_of
from tests.processes import database_url
from tests.waiting import wait_until


def test_it_takes_one_item_per_workspace_per_round_oldest_first() -> None:
    bulk = [Candidate(id=i, workspace_id=1, chars=100) for i in range(1, 101)]
    late = [Candidate(id=500, workspace_id=2, chars=100)]
    assert batch_plan(bulk + late, max_items=4, max_chars=10_000) == [1, 500, 2, 3]


def test_it_stops_a_batch_at_its_character_budget_but_never_leaves_it_empty() -> None:
    huge = [Candidate(id=1, workspace_id=1, chars=8_000), Candidate(id=2, workspace_id=1, chars=8_000)]
    small = [Candidate(id=3, workspace_id=2, chars=10)]
    assert batch_plan(huge + small, max_items=64, max_chars=5_000) == [1]
    assert batch_plan(small + huge, max_items=64, max_chars=9_000) == [1, 3]
    assert batch_plan([], max_items=64, max_chars=9_000) == []


@pytest.fixture
def slow_endpoint() -> Iterator[FakeEmbedder]:
    """The OpenAI-compatible provider pointed at a local endpoint that takes 2 s per batch."""
    with fake_embedder(delay=2.0) as server:
        with override_settings(EMBEDDING_PROVIDER="openai", EMBEDDING_BASE_URL=server.base_url, EMBEDDING_MODEL="fake"):
            embeddings.get_provider.cache_clear()
            embeddings.get_provider()  # built here: importing the SDK takes a second or two
            try:
                yield server
            finally:
                embeddings.get_provider.cache_clear()


def _items(tenant: Tenant, count: int, chars: int) -> list[Item]:
    text = ("The retry worker backs off exponentially and honours Retry-After. " * (chars // 66 + 1))[:chars]
    return items_create(
        layer=tenant.root,
        items=[ItemInput(kind="memory", type="fact", content=f"{n} {text}") for n in range(count)],
    )


def _open_transactions() -> int:
    with psycopg.connect(database_url(connection.settings_dict), autocommit=True) as other:
        row = other.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND state LIKE 'idle in transaction%%' AND pid <> pg_backend_pid()"
        ).fetchone()
        return int(row[0]) if row else 0


@pytest.mark.django_db(transaction=True)
@override_settings(EMBEDDING_BATCH_SIZE=64, EMBEDDING_BATCH_CHARS=20_000)
def test_a_patch_answers_fast_while_its_item_is_embedded_and_another_workspace_is_not_starved(
    slow_endpoint: FakeEmbedder,
) -> None:
    bulky, small = make_tenant("bulky"), make_tenant("small")
    assert bulky.client.get("/api/v1/items/").status_code == 200  # the first request imports the API (~1 s)
    with transaction.atomic():  # the background sweep starts when both are committed
        big = _items(bulky, 40, 5_000)  # 200,000 characters waiting in one workspace
        (lone,) = _items(small, 1, 60)  # and one small item in another
    assert slow_endpoint.started.wait(30), "the background embedder never called the endpoint"
    sent = slow_endpoint.inputs[0]
    assert len(sent) == 4 and sum(map(len, sent)) <= 20_000 + 3 * 5_100, [len(t) for t in sent]
    assert any(text.endswith(lone.content) for text in sent), "the other workspace waited behind the bulk"

    assert _open_transactions() == 0  # the endpoint is answering: no transaction is open meanwhile
    started = time.monotonic()
    rewrite = {"content": "Rewritten while embedding."}
    patched = bulky.client.patch(f"/api/v1/items/{big[0].pk}/", rewrite, format="json")
    patch_took = time.monotonic() - started
    deleted = bulky.client.delete(f"/api/v1/items/{big[1].pk}/")
    delete_took = time.monotonic() - started - patch_took
    assert patched.status_code == 200 and deleted.status_code == 204
    assert len(slow_endpoint.inputs) == 1, "the first batch ended before the writes could overlap it"
    assert patch_took < 1.0 and delete_took < 1.0, f"PATCH {patch_took:.2f}s, DELETE {delete_took:.2f}s"
    # The other workspace's item gets its vector from the first batch, whatever the bulk's size.
    wait_until(lambda: Item.objects.get(pk=lone.pk).embedding is not None, timeout=10, what="the lone item")
    slow_endpoint.delay = 0.0
    assert background.wait_idle(60)
    assert not EmbeddingClaim.objects.exists()
    # The rewritten item kept no vector of its old text: it was embedded again with the new one.
    rewritten = Item.objects.get(pk=big[0].pk)
    assert rewritten.embedding is not None
    expected = vector_of(f"{bulky.root.name}\nRewritten while embedding.")
    assert list(rewritten.embedding) == pytest.approx(expected, abs=1e-6)
    assert not Item.objects.filter(embedding__isnull=True).exists()


@pytest.mark.django_db(transaction=True)
def test_a_failed_batch_releases_its_claims_for_the_next_sweep(slow_endpoint: FakeEmbedder) -> None:
    tenant = make_tenant("acme")
    slow_endpoint.delay, slow_endpoint.failing = 0.0, True
    _items(tenant, 3, 100)
    assert background.wait_idle(30)  # the background sweep failed too
    assert not EmbeddingClaim.objects.exists()
    with pytest.raises(embeddings.EmbeddingError):
        items_embed_batch(workspace_id=None, batch_size=64)
    assert not EmbeddingClaim.objects.exists()
    slow_endpoint.failing = False
    assert items_embed_pending() == 3
    wait_until(lambda: not Item.objects.filter(embedding__isnull=True).exists(), timeout=5, what="all embedded")


@pytest.mark.django_db(transaction=True)
def test_two_workers_never_embed_the_same_item(slow_endpoint: FakeEmbedder) -> None:
    tenant = make_tenant("acme")
    _items(tenant, 6, 100)
    slow_endpoint.delay = 1.0

    def work() -> None:
        items_embed_batch(workspace_id=None, batch_size=3)
        connection.close()

    workers = [threading.Thread(target=work) for _ in range(2)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(20)
    assert background.wait_idle(30)  # the after-write sweep is a third worker
    sent = [text for batch in slow_endpoint.inputs for text in batch]
    assert len(sent) == 6 and len(set(sent)) == 6
    assert not Item.objects.filter(embedding__isnull=True).exists()
