"""The embedding configuration against the stored vectors: checked at start and by /readyz; a model
change re-embeds every item and search never compares vectors of two models."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator

import numpy as np
import pytest
from django.core.exceptions import ImproperlyConfigured
from django.db import connection
from django.test import Client, override_settings

from apps.core import embeddings
from apps.core.health import READINESS_CHECKS
from apps.layers.embedder import items_embed_batch, items_embed_pending
from apps.layers.embedding_space import (
    space_forget,
    space_problems,
    space_sync,
    vectors_clear_other_models,
)
from apps.layers.filters import ItemFilters
from apps.layers.models import EmbeddingSpace, Item
from apps.layers.services import ItemInput, items_create
from apps.layers.vectors import nearest_items
from tests.support.fake_provider import FakeProvider, fake_provider, vector_of
from tests.support.processes import ROOT, database_url
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _forget() -> Iterator[None]:
    embeddings.get_provider.cache_clear()
    space_forget()
    yield
    embeddings.get_provider.cache_clear()
    space_forget()


def test_a_dimension_mismatch_is_named_with_its_fix() -> None:
    with override_settings(EMBEDDING_DIMENSIONS=256):
        problems = space_problems()
        assert any("layers_item.embedding" in p and "384 dimensions" in p for p in problems), problems
        assert any("set EMBEDDING_DIMENSIONS=384" in p for p in problems)
        assert any("manage.py embedding_dimensions 256" in p for p in problems)
        with pytest.raises(ImproperlyConfigured, match="EMBEDDING_DIMENSIONS=256"):
            space_sync()
    assert space_problems() == []


def test_readyz_answers_503_misconfigured_with_the_fix_for_a_dimension_mismatch() -> None:
    with override_settings(EMBEDDING_DIMENSIONS=256):
        response = Client().get("/readyz")
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "misconfigured"
    assert not body["checks"]["embedding_space"]["ok"]
    assert "set EMBEDDING_DIMENSIONS=384" in body["checks"]["embedding_space"]["error"]
    assert Client().get("/readyz").json()["status"] == "ready"


def test_a_server_worker_does_not_start_with_the_wrong_dimensions() -> None:
    env = {**os.environ, "DATABASE_URL": database_url(connection.settings_dict), "EMBEDDING_DIMENSIONS": "256"}
    started = subprocess.run(
        [sys.executable, "-c", "import contextarch.asgi"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert started.returncode != 0
    assert "ImproperlyConfigured" in started.stderr and "set EMBEDDING_DIMENSIONS=384" in started.stderr


def test_an_unknown_local_model_is_refused_with_the_models_it_offers() -> None:
    with override_settings(EMBEDDING_MODEL="e5-large"):
        problems = space_problems()
    assert len(problems) == 1 and "multilingual-e5-small" in problems[0] and "EMBEDDING_PROVIDER=openai" in problems[0]


def test_the_embedder_embeds_nothing_while_the_dimensions_do_not_fit(tenant: Tenant) -> None:
    items_create(layer=tenant.root, items=[ItemInput(kind="memory", type="fact", content="Backups run nightly.")])
    with override_settings(EMBEDDING_DIMENSIONS=256):
        space_forget()
        assert items_embed_batch(workspace_id=tenant.workspace.pk, batch_size=8) == 0
    assert Item.objects.filter(embedding__isnull=True).count() == 1


@pytest.fixture
def two_models() -> Iterator[FakeProvider]:
    """One OpenAI-compatible endpoint whose vectors depend on the model asked for: fake-a and fake-b."""
    with fake_provider(by_model=True) as server:
        with override_settings(EMBEDDING_PROVIDER="openai", EMBEDDING_BASE_URL=server.url, EMBEDDING_MODEL="fake-a"):
            yield server


FACTS = ["The staging database is restored every Sunday.", "Marco owns the billing service."]


def test_a_model_change_re_embeds_every_item_and_never_mixes_models(tenant: Tenant, two_models: FakeProvider) -> None:
    items = items_create(layer=tenant.root, items=[ItemInput(kind="memory", type="fact", content=t) for t in FACTS])
    items_embed_pending(workspace_id=tenant.workspace.pk)
    space_sync()
    assert set(Item.objects.values_list("embedding_model", flat=True)) == {"openai:fake-a"}
    stored = Item.objects.get(pk=items[0].pk).embedding
    filters = ItemFilters(workspace_id=tenant.workspace.pk, layer_ids=(tenant.root.pk,))
    assert nearest_items(filters=filters, query_vector=stored, limit=5)[0].item_id == items[0].pk

    with override_settings(EMBEDDING_MODEL="fake-b"):
        embeddings.get_provider.cache_clear()
        space_forget()
        space_sync()
        space = EmbeddingSpace.objects.get()
        assert (space.previous_label, space.label, space.reembedding) == ("openai:fake-a", "openai:fake-b", True)
        # Before the old vectors are cleared, a query of the new model is never compared with them.
        assert nearest_items(filters=filters, query_vector=np.asarray(stored), limit=5) == []

        assert vectors_clear_other_models() == len(FACTS)
        status = tenant.client.get("/api/v1/status/").json()
        assert status["items_pending_embedding"] == len(FACTS)
        assert status["embedding_model_change"]["from"] == "openai:fake-a"
        assert status["embedding_model_change"]["to"] == "openai:fake-b"
        ready = READINESS_CHECKS["embedding_space"]()  # what /readyz reports: degraded, with the way back
        assert (
            not ready.ok
            and not ready.fatal
            and "set EMBEDDING_PROVIDER and EMBEDDING_MODEL to openai:fake-a" in ready.error
        )

        context = tenant.client.post(
            "/api/v1/context/", {"layer": tenant.root.pk, "query": "who owns billing"}, format="json"
        ).json()
        assert any("embedding model changed to openai:fake-b" in w for w in context["warnings"])
        assert any(c["id"] == items[1].pk for c in context["chunks"])  # found by keyword search meanwhile

        items_embed_pending(workspace_id=tenant.workspace.pk)
        space_forget()
        assert set(Item.objects.values_list("embedding_model", flat=True)) == {"openai:fake-b"}
        again = Item.objects.get(pk=items[0].pk).embedding
        assert np.allclose(again, vector_of(f"fake-b\x00{tenant.root.name}\n{FACTS[0]}"), atol=1e-5)
        assert nearest_items(filters=filters, query_vector=again, limit=5)[0].item_id == items[0].pk
        assert tenant.client.get("/api/v1/status/").json()["embedding_model_change"] is None
        assert EmbeddingSpace.objects.get().reembedding is False
