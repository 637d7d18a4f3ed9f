"""Text mode: the request sends only its question; the service embeds it in a thread while the
keyword search runs, and a slow or hung embedder is cut at the deadline."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator

import pytest
from django.test import override_settings

from apps.assembly.params import ContextParams
from apps.assembly.services import context_assemble
from apps.core import embeddings
from apps.layers.embedder import items_embed_pending
from apps.layers.services import ItemInput, items_create
from tests.support.tenants import Tenant

FACTS = (
    "Backups are kept for 35 days in the EU region.",
    "The billing service deploys on Tuesdays after review.",
    "Night jobs archive the audit log to cold storage.",
    "Restores from a backup take about two hours.",
)


@pytest.fixture
def facts(tenant: Tenant) -> Tenant:
    items_create(layer=tenant.root, items=[ItemInput(kind="memory", type="fact", content=t) for t in FACTS])
    items_embed_pending(workspace_id=tenant.workspace.pk)
    return tenant


@pytest.fixture
def hung_embedder() -> Iterator[str]:
    """An embeddings endpoint that takes the connection and never answers (a real socket peer)."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        embeddings.get_provider.cache_clear()
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
    embeddings.get_provider.cache_clear()


@pytest.mark.django_db
def test_a_text_request_finds_what_the_same_request_with_its_vector_finds(facts: Tenant) -> None:
    question = f"how long do we keep backups ({time.time()})"  # not in the embedding cache
    text = context_assemble(
        workspace=facts.workspace, params=ContextParams(layer_id=facts.root.pk, query=question, timeout_ms=0)
    )
    vector = [float(x) for x in embeddings.embed_query(question)[0]]
    given = context_assemble(
        workspace=facts.workspace,
        params=ContextParams(layer_id=facts.root.pk, query=question, query_vector=vector, timeout_ms=0),
    )
    assert [c.text for c in text.chunks] == [c.text for c in given.chunks]
    assert FACTS[0] in [c.text for c in text.chunks] and not text.warnings and not text.partial


@pytest.mark.django_db
def test_a_hung_embedder_is_cut_at_the_deadline_and_keyword_results_come_back(
    facts: Tenant, hung_embedder: str
) -> None:
    with override_settings(
        EMBEDDING_PROVIDER="openai", EMBEDDING_BASE_URL=hung_embedder, EMBEDDING_MODEL="e5", EMBEDDING_TIMEOUT_SECONDS=5
    ):
        embeddings.get_provider()  # built as at a server's start (its SDK imported)
        started = time.perf_counter()
        result = context_assemble(
            workspace=facts.workspace,
            params=ContextParams(layer_id=facts.root.pk, query="backups kept", timeout_ms=300),
        )
        elapsed = time.perf_counter() - started
    assert result.partial and elapsed < 3  # the embedder's own timeout (5 s) is not waited for
    assert any("deadline" in w and "query embedding" in w for w in result.warnings)
    assert FACTS[0] in [c.text for c in result.chunks]  # found by keyword
