"""Layer summaries ranked by their relevance to the query like an item (issue 20: layer vectors):
each summary row is embedded in the background by the items' embedder, an off-topic summary ranks
below an on-topic one and is left out under the similarity floor, saying so; an on-topic one gets in."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.test import override_settings

from apps.core import embeddings
from apps.layers.embedder import items_embed_pending
from apps.layers.models import Layer
from apps.summaries.models import Summary
from apps.summaries.services import layer_summarize
from apps.summaries.vectors import summaries_embed
from tests.support.api import ask, bulk, layer
from tests.support.fake_provider import FakeProvider, fake_provider
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db

PAYMENTS = (
    "The payment service retries a failed card charge three times, one minute apart.",
    "After the third failed charge the payment service emails the customer a payment link.",
    "Refunds go through the card processor and reach the customer's card within five days.",
    "The payment service keeps no card numbers: the processor stores them and gives us a token.",
)
OFFICE = (
    "The office kitchen is restocked with coffee and fruit every Monday morning.",
    "The summer party is on the rooftop terrace on the second Friday of July.",
    "Bicycles go in the basement garage; the door code changes every quarter.",
)
QUERY = "What if billing somebody does not work out?"  # no word of it in the items: by meaning alone


def _memories(t: Tenant, layer_id: int, texts: tuple[str, ...]) -> None:
    bulk(t, layer_id, [{"kind": "memory", "type": "fact", "content": text} for text in texts])


@pytest.fixture
def payments(tenant: Tenant) -> int:
    """A project about payments under a company whose own summary is about the office (written first,
    so it rolls up no payment text), every item and summary embedded."""
    _memories(tenant, tenant.root.pk, OFFICE)
    layer_summarize(layer=tenant.root, force=True, extractive=True)
    project = layer(tenant, "project", tenant.root.pk, name="Payments service")
    _memories(tenant, project, PAYMENTS)
    layer_summarize(layer=Layer.objects.get(pk=project), force=True, extractive=True)
    items_embed_pending(workspace_id=tenant.workspace.pk)
    assert summaries_embed() == Summary.objects.filter(workspace=tenant.workspace).count() == 6
    return project


def _preview(t: Tenant, **body: object) -> dict:  # type: ignore[type-arg]
    response = t.client.post("/api/v1/context/preview/", body, format="json")
    assert response.status_code == 200, response.json()
    return response.json()


def test_an_off_topic_summary_is_left_out_under_the_floor_and_an_on_topic_one_gets_in(
    tenant: Tenant, payments: int
) -> None:
    body = _preview(tenant, layer=payments, query=QUERY, token_budget=400, format="text", timeout_ms=0)
    summaries = {t["layer"]: t for t in body["trace"] if t["source"] == "summary"}
    project, company = summaries[payments], summaries[tenant.root.pk]
    assert project["decision"] == "included", project
    assert company["decision"] == "excluded" and company["reason"] == "below_floor", company
    assert company["parts"]["vector_similarity"] < project["parts"]["vector_similarity"]
    assert company["score"] < project["score"]
    assert [c["layer"] for c in body["chunks"] if c["source"] == "summary"] == [payments]


def test_a_query_about_the_other_layer_turns_the_order_around(tenant: Tenant, payments: int) -> None:
    body = _preview(
        tenant, layer=payments, query="What should a newcomer know about our office?", token_budget=400, timeout_ms=0
    )
    assert [c["layer"] for c in body["chunks"] if c["source"] == "summary"] == [tenant.root.pk]
    reasons = {t["layer"]: t["reason"] for t in body["trace"] if t["source"] == "summary"}
    assert reasons[payments] == "below_floor"  # the office summary, closer than any hit, set the bar


def test_a_summary_is_embedded_again_once_its_text_changes(tenant: Tenant, payments: int) -> None:
    _memories(tenant, payments, ("Chargebacks are answered within seven days with the receipt attached.",))
    layer_summarize(layer=Layer.objects.get(pk=payments), force=True, extractive=True)
    changed = Summary.objects.filter(layer_id=payments, embedding__isnull=True).count()
    assert changed > 0  # the new text's vector is not the old one's
    assert summaries_embed(layer_id=payments) == changed
    assert not Summary.objects.filter(layer_id=payments, embedding__isnull=True).exists()


@pytest.fixture
def failing_embedder() -> Iterator[FakeProvider]:
    """The OpenAI-compatible provider pointed at a local endpoint that answers 503."""
    with fake_provider() as server:
        server.down = True
        with override_settings(EMBEDDING_PROVIDER="openai", EMBEDDING_BASE_URL=server.url, EMBEDDING_MODEL="fake"):
            embeddings.get_provider.cache_clear()
            try:
                yield server
            finally:
                embeddings.get_provider.cache_clear()


def test_a_failing_embedder_leaves_summaries_without_a_vector_ranked_as_before(
    tenant: Tenant, failing_embedder: FakeProvider
) -> None:
    _memories(tenant, tenant.root.pk, OFFICE)
    layer_summarize(layer=tenant.root, force=True, extractive=True)
    assert summaries_embed() == 0  # logged, never raised
    assert failing_embedder.inputs  # it was asked
    assert not Summary.objects.filter(workspace=tenant.workspace, embedding__isnull=False).exists()
    body = ask(tenant, layer=tenant.root.pk, query="coffee", token_budget=400, timeout_ms=0)
    assert any(c["source"] == "summary" for c in body["chunks"])  # no vector, no floor: as before


@pytest.mark.django_db(transaction=True)
def test_a_summary_write_is_embedded_in_the_background(tenant: Tenant, wait_background: object) -> None:
    _memories(tenant, tenant.root.pk, OFFICE)
    layer_summarize(layer=tenant.root, force=True, extractive=True)
    wait_background()  # type: ignore[operator]
    rows = Summary.objects.filter(layer=tenant.root)
    assert rows.count() == 3 and all(row.embedding and row.embedding_model == embeddings.model_label() for row in rows)
