"""GET /api/v1/status/: the embedding backlog with the embedder's recent rate and an honest time to done."""

from __future__ import annotations

import time

import pytest

from apps.layers.embedder import items_embed_pending, tokens_estimate
from apps.layers.embedding_rate import rate_forget, rate_note, rate_recent
from apps.layers.models import Item
from apps.layers.services import ItemInput, items_create
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db

CJK = "東京の倉庫では毎晩バックアップを取り、三十五日間保存します。障害が起きたら当番が対応します。"


def status(tenant: Tenant) -> dict:  # type: ignore[type-arg]
    response = tenant.client.get("/api/v1/status/")
    assert response.status_code == 200
    return response.json()  # type: ignore[no-any-return]


def facts(tenant: Tenant, texts: list[str]) -> None:
    items_create(layer=tenant.root, items=[ItemInput(kind="memory", type="fact", content=t) for t in texts])


def test_it_measures_the_embedder_and_estimates_the_time_to_done(tenant: Tenant) -> None:
    rate_forget()
    facts(tenant, [f"Fact number {n} about backups." for n in range(6)])
    before = status(tenant)
    assert before["items_pending_embedding"] == 6
    assert before["embedding_items_per_s"] is None and before["embedding_eta_seconds"] is None  # no rate yet

    items_embed_pending(workspace_id=tenant.workspace.pk, max_batches=1)
    rate = rate_recent()
    assert rate is not None and rate.items_per_s > 0 and rate.tokens_per_s > 0
    done = status(tenant)
    assert done["items_pending_embedding"] == 0 and done["embedding_eta_seconds"] == 0.0
    assert done["embedding_items_per_s"] == pytest.approx(rate.items_per_s, rel=0.5)

    Item.objects.filter(workspace=tenant.workspace).update(embedding=None)  # a backlog of 6 at the measured rate
    tokens = sum(tokens_estimate(f"{tenant.root.name}\nFact number {n} about backups.") for n in range(6))
    # The answer is rounded to a tenth of a second: on a fast machine 0.06 s reads 0.1.
    assert status(tenant)["embedding_eta_seconds"] == pytest.approx(tokens / rate.tokens_per_s, rel=0.5, abs=0.05)


def test_the_time_to_done_counts_what_the_backlog_costs_and_the_other_workspaces_share(
    tenant: Tenant, other_tenant: Tenant
) -> None:
    rate_forget()
    rate_note(items=100, tokens=4_000, started=time.time() - 10, seconds=10)  # ~400 tokens/s
    facts(tenant, [f"Fact number {n} about backups." for n in range(6)])
    short = status(tenant)["embedding_eta_seconds"]
    facts(other_tenant, [f"{n} {CJK * 40}" for n in range(6)])  # as many items, each ~500 tokens
    long = status(other_tenant)["embedding_eta_seconds"]
    # By items per second both said the same (an ETA of 0.1 s while a CJK batch held items 8 minutes).
    assert long > 10 * short, (short, long)
    # With the CJK backlog waiting too, the short one shares the embedder: about twice its own time, not all of it.
    shared = status(tenant)["embedding_eta_seconds"]
    assert 1.5 * short <= shared <= 2.5 * short and shared < long / 5, (short, shared, long)
