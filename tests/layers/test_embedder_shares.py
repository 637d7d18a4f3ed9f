"""The embedder's shares: batches bounded in model tokens and shared fairly between workspaces, a
backlog embedded on every core below the requests' priority."""

from __future__ import annotations

import os
import threading

import pytest
from django.conf import settings
from django.db import connection, connections, transaction
from django.test import override_settings

from apps.core import background, embeddings
from apps.layers.embedder import _lower_priority, items_claim_batch
from apps.layers.models import Item
from apps.layers.services import ItemInput, items_create
from tests.support.fake_provider import fake_provider
from tests.support.tenants import make_tenant

CJK = "東京の倉庫では毎晩バックアップを取り、三十五日間保存します。障害が起きたら当番が対応します。"


@pytest.mark.django_db
def test_one_workspaces_cjk_bulk_fills_a_batch_with_a_bounded_cost_and_others_ride_in_it() -> None:
    bulky, small = make_tenant("bulky"), make_tenant("small")
    text = (CJK * 200)[:8_000]  # ~5,800 model tokens each before the cut; 512 after
    items_create(layer=bulky.root, items=[ItemInput(kind="document", content=f"{n} {text}") for n in range(20)])
    (lone,) = items_create(layer=small.root, items=[ItemInput(kind="memory", type="fact", content="Backups at 2am.")])
    claimed = items_claim_batch(workspace_id=None, max_items=128, max_tokens=settings.EMBEDDING_BATCH_TOKENS)
    provider = embeddings.get_provider()
    cost = sum(provider.tokens(provider.clip(row.text, query=False), query=False) for row in claimed)
    # By characters (64,000 a batch), this batch held 8 such items, ~46,000 tokens: 8 minutes of a core.
    assert cost <= settings.EMBEDDING_BATCH_TOKENS, cost
    assert lone.pk in [row.id for row in claimed]


@pytest.mark.django_db(transaction=True)
def test_a_runner_that_loses_its_planned_rows_to_another_claims_the_next_ones() -> None:
    tenant = make_tenant("acme")
    items = items_create(
        layer=tenant.root, items=[ItemInput(kind="memory", type="fact", content=f"Fact {n}.") for n in range(6)]
    )
    assert background.wait_idle(60)  # the sweep that the write started is done: only our runners claim
    Item.objects.filter(pk__in=[item.pk for item in items]).update(embedding=None)
    newest = [item.pk for item in items[3:]]
    holding, release = threading.Event(), threading.Event()

    def other_runner() -> None:  # leases the three newest rows and commits while our claim waits on them
        try:
            with transaction.atomic(), connection.cursor() as cursor:
                cursor.execute(
                    "INSERT INTO layers_embeddingclaim (item_id, claimed_until) "
                    "SELECT id, now() + interval '1 minute' FROM unnest(%s::bigint[]) AS id",
                    [newest],
                )
                holding.set()
                release.wait(10)
        finally:
            connections.close_all()

    thread = threading.Thread(target=other_runner)
    thread.start()
    assert holding.wait(10)
    threading.Timer(0.5, release.set).start()
    claimed = items_claim_batch(workspace_id=None, max_items=3, max_tokens=settings.EMBEDDING_BATCH_TOKENS)
    thread.join()
    # It read the newest three as free, lost them to the other runner's lease, and planned again.
    assert [row.id for row in claimed] == [item.pk for item in items[:3]]


@pytest.mark.django_db
def test_a_new_item_is_claimed_before_its_workspaces_backlog_and_the_longest_waiting_workspace_first() -> None:
    tenant, other = make_tenant("acme"), make_tenant("globex")
    waiting = items_create(layer=other.root, items=[ItemInput(kind="memory", type="fact", content="Globex fact.")])
    backlog = items_create(
        layer=tenant.root,
        items=[ItemInput(kind="memory", type="fact", content=f"Imported fact {n}.") for n in range(12)],
    )
    (live,) = items_create(layer=tenant.root, items=[ItemInput(kind="memory", type="fact", content="A new fact.")])
    claimed = items_claim_batch(workspace_id=None, max_items=4, max_tokens=settings.EMBEDDING_BATCH_TOKENS)
    # The other workspace's item (waiting longest) and this one's newest items; its older history waits.
    assert {row.id for row in claimed} == {waiting[0].pk, live.pk, backlog[-1].pk, backlog[-2].pk}


@pytest.mark.django_db(transaction=True)
@override_settings(EMBEDDING_BATCH_SIZE=3, EMBEDDING_CONCURRENCY=2)
def test_a_backlog_is_embedded_by_concurrent_batches() -> None:
    with fake_provider(delay=0.5) as server:
        with override_settings(EMBEDDING_PROVIDER="openai", EMBEDDING_BASE_URL=server.url, EMBEDDING_MODEL="fake"):
            embeddings.get_provider.cache_clear()
            try:
                tenant = make_tenant("acme")
                items_create(
                    layer=tenant.root,
                    items=[
                        ItemInput(kind="memory", type="fact", content=f"Fact {n} about the backups.") for n in range(12)
                    ],
                )
                assert background.wait_idle(60)
            finally:
                embeddings.get_provider.cache_clear()
    assert server.most_active == 2  # one process, two batches at once: both cores
    # The items' texts, each once (the layer's summary rows are embedded after them, in their own calls).
    facts = {f"acme\nFact {n} about the backups." for n in range(12)}
    sent = [text for batch in server.inputs for text in batch if text in facts]
    assert len(sent) == 12 and len(set(sent)) == 12
    assert not Item.objects.filter(embedding__isnull=True).exists()


def test_an_embedding_thread_runs_below_the_requests_priority() -> None:
    seen: list[int] = []

    def runner() -> None:
        _lower_priority()
        seen.append(os.getpriority(os.PRIO_PROCESS, threading.get_native_id()))

    before = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    thread = threading.Thread(target=runner)
    thread.start()
    thread.join()
    assert seen == [settings.EMBEDDING_NICE] and settings.EMBEDDING_NICE > before
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == before  # only that thread
