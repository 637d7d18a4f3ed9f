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
from apps.layers.embedder import Candidate, batch_plan, items_embed_batch, items_embed_pending, tokens_estimate
from apps.layers.models import EmbeddingClaim, Item
from apps.layers.services import ItemInput, items_create
from tests.support.fake_provider import FakeProvider, fake_provider, vector_of
from tests.support.processes import database_url
from tests.support.tenants import Tenant, make_tenant
from tests.support.waiting import wait_until


def test_it_takes_turns_between_workspaces_the_longest_waiting_first() -> None:
    bulk = [Candidate(id=i, workspace_id=1, tokens=64, since=1) for i in range(100, 0, -1)]  # newest first
    late = [Candidate(id=500, workspace_id=2, tokens=64, since=500)]
    assert batch_plan(late + bulk, max_items=4, max_tokens=10_000) == [100, 500, 99, 98]


def test_it_shares_a_batch_in_model_tokens_not_in_items() -> None:
    # One workspace's CJK items cost ~500 tokens each, another's turns ~40: by items, the CJK
    # workspace took 12x the compute of each round and held everyone's items back behind it.
    cjk = [Candidate(id=i, workspace_id=1, tokens=500, since=1) for i in range(1, 101)]
    turns = [Candidate(id=1000 + i, workspace_id=2, tokens=40, since=1000) for i in range(100)]
    plan = batch_plan(cjk + turns, max_items=128, max_tokens=2_048)
    spent = {1: sum(500 for i in plan if i < 1000), 2: sum(40 for i in plan if i >= 1000)}
    assert 1000 in plan and plan.index(1000) == 0  # the other workspace's oldest item goes first
    assert sum(spent.values()) <= 2_048 and abs(spent[1] - spent[2]) <= 500, spent


def test_it_stops_a_batch_at_its_token_budget_but_never_leaves_it_empty() -> None:
    huge = [
        Candidate(id=1, workspace_id=1, tokens=3_000, since=1),
        Candidate(id=2, workspace_id=1, tokens=3_000, since=1),
    ]
    small = [Candidate(id=3, workspace_id=2, tokens=10, since=0)]
    assert batch_plan(huge, max_items=64, max_tokens=2_000) == [1]
    assert batch_plan(small + huge, max_items=64, max_tokens=4_000) == [3, 1]
    assert batch_plan([], max_items=64, max_tokens=4_000) == []


@pytest.fixture
def slow_endpoint() -> Iterator[FakeProvider]:
    """The OpenAI-compatible provider pointed at a local endpoint that takes 2 s per batch."""
    with fake_provider(delay=2.0) as server:
        with override_settings(EMBEDDING_PROVIDER="openai", EMBEDDING_BASE_URL=server.url, EMBEDDING_MODEL="fake"):
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


def _idle_transactions() -> set[tuple[int, object]]:
    with psycopg.connect(database_url(connection.settings_dict), autocommit=True) as other:
        rows = other.execute(
            "SELECT pid, xact_start FROM pg_stat_activity WHERE datname = current_database() "
            "AND state LIKE 'idle in transaction%%' AND pid <> pg_backend_pid()"
        ).fetchall()
        return {(int(pid), start) for pid, start in rows}


def _open_transactions() -> int:
    """Transactions left open across a quarter second: one held over the endpoint's answer shows
    in both samples; another thread's transaction caught between two statements (a summaries sweep)
    does not."""
    first = _idle_transactions()
    time.sleep(0.25)
    return len(first & _idle_transactions())


@pytest.mark.django_db(transaction=True)
@override_settings(EMBEDDING_BATCH_SIZE=64, EMBEDDING_BATCH_TOKENS=5_000, EMBEDDING_CONCURRENCY=1)
def test_a_patch_answers_while_its_item_is_embedded_and_another_workspace_is_not_starved(
    slow_endpoint: FakeProvider,
) -> None:
    bulky, small = make_tenant("bulky"), make_tenant("small")
    assert bulky.client.get("/api/v1/items/").status_code == 200  # the first request imports the API (~1 s)
    slow_endpoint.delay, slow_endpoint.hold = 0.0, threading.Event()  # the first batch waits for the test's word
    with transaction.atomic():  # the background sweep starts when both are committed
        big = _items(bulky, 40, 5_000)  # 200,000 characters waiting in one workspace
        (lone,) = _items(small, 1, 60)  # and one small item in another
    assert slow_endpoint.started.wait(30), "the background embedder never called the endpoint"
    sent = slow_endpoint.inputs[0]
    assert len(sent) == 3 and sum(map(tokens_estimate, sent)) <= 5_000, [len(t) for t in sent]
    assert any(text.endswith(lone.content) for text in sent), "the other workspace waited behind the bulk"

    assert _open_transactions() == 0  # the endpoint is answering: no transaction is open meanwhile
    rewrite = {"content": "Rewritten while embedding."}
    patched = bulky.client.patch(f"/api/v1/items/{big[0].pk}/", rewrite, format="json")
    deleted = bulky.client.delete(f"/api/v1/items/{big[1].pk}/")
    assert patched.status_code == 200 and deleted.status_code == 204
    # Both answered while the first batch was still held: neither waited for the endpoint's answer.
    assert len(slow_endpoint.inputs) == 1 and slow_endpoint.active == 1 and slow_endpoint.held_too_long == 0
    slow_endpoint.hold.set()
    # The other workspace's item gets its vector from the first batch, whatever the bulk's size.
    wait_until(lambda: Item.objects.get(pk=lone.pk).embedding is not None, timeout=10, what="the lone item")
    assert background.wait_idle(60)
    assert not EmbeddingClaim.objects.exists()
    # The rewritten item kept no vector of its old text: it was embedded again with the new one.
    rewritten = Item.objects.get(pk=big[0].pk)
    assert rewritten.embedding is not None
    expected = vector_of(f"{bulky.root.name}\nRewritten while embedding.")
    assert list(rewritten.embedding) == pytest.approx(expected, abs=1e-6)
    assert not Item.objects.filter(embedding__isnull=True).exists()


@pytest.mark.django_db(transaction=True)
def test_a_failed_batch_releases_its_claims_for_the_next_sweep(slow_endpoint: FakeProvider) -> None:
    tenant = make_tenant("acme")
    slow_endpoint.delay, slow_endpoint.down = 0.0, True
    _items(tenant, 3, 100)
    assert background.wait_idle(30)  # the background sweep failed too
    assert not EmbeddingClaim.objects.exists()
    with pytest.raises(embeddings.EmbeddingError):
        items_embed_batch(workspace_id=None, batch_size=64)
    assert not EmbeddingClaim.objects.exists()
    slow_endpoint.down = False
    assert items_embed_pending() == 3
    wait_until(lambda: not Item.objects.filter(embedding__isnull=True).exists(), timeout=5, what="all embedded")


@pytest.mark.django_db(transaction=True)
def test_two_workers_never_embed_the_same_item(slow_endpoint: FakeProvider) -> None:
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
