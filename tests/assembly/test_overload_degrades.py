"""Issue 22 step 2: overload degrades, it does not fail. A statement of a context assembly that does
not finish in time (a statement or lock timeout) leaves out what it was for, and the answer says so;
it is never a 503 `database_timeout`.

The timeout is made deterministic by holding an ACCESS EXCLUSIVE lock (what a migration, a VACUUM
FULL or autovacuum's truncation takes) from another connection while the request runs with a short
lock_timeout."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from django.db import connection, connections
from django.test import override_settings

from apps.layers.embedder import items_embed_pending
from apps.layers.embedding_space import space_forget
from apps.workspaces.models import ApiKey
from tests.support.api import embedded_facts
from tests.support.tenants import Tenant, admin_client, make_tenant

FACTS = [f"Deploy note {i}: the billing service deploys on Tuesdays after review." for i in range(12)]


def load(t: Tenant) -> int:
    return embedded_facts(t, FACTS)


@contextmanager
def table_held(table: str, *, lock_timeout_ms: int = 300) -> Iterator[None]:
    """`table` locked ACCESS EXCLUSIVE by another connection; this one waits at most `lock_timeout_ms`."""
    with held(f"LOCK TABLE {table} IN ACCESS EXCLUSIVE MODE", lock_timeout_ms=lock_timeout_ms):
        yield


@contextmanager
def held(statement: str, *, lock_timeout_ms: int = 300) -> Iterator[None]:
    """The locks of `statement` held by another connection's open transaction; this one waits at most
    `lock_timeout_ms` for a lock."""
    locked, release = threading.Event(), threading.Event()

    def hold() -> None:
        other = connections.create_connection("default")
        try:
            with other.cursor() as cur:
                cur.execute("BEGIN")
                cur.execute(statement)
                locked.set()
                release.wait(30)
                cur.execute("ROLLBACK")
        finally:
            other.close()

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert locked.wait(30)
        with connection.cursor() as cur:
            cur.execute(f"SET lock_timeout = '{lock_timeout_ms}ms'")
        yield
    finally:
        release.set()
        holder.join(30)
        with connection.cursor() as cur:
            cur.execute("RESET lock_timeout")


@pytest.mark.django_db(transaction=True)
def test_an_unreadable_content_version_answers_without_the_cache_not_503() -> None:
    t = make_tenant("overload-version")
    session = load(t)
    request = {"layer": session, "query": "when does billing deploy", "timeout_ms": 5000}
    with table_held("core_contentversion"):
        response = t.client.post("/api/v1/context/", request, format="json")
        assert response.status_code == 200, response.content  # was 503 database_timeout
        body = response.json()
    assert body["chunks"] and body["cached"] is False
    assert any("content version could not be read in time" in w and "not cached" in w for w in body["warnings"])
    after = t.client.post("/api/v1/context/", request, format="json").json()
    assert after["cached"] is False, "an answer assembled without its version is never cached"
    assert not any("content version" in w for w in after["warnings"])
    assert [c["id"] for c in after["chunks"]] == [c["id"] for c in body["chunks"]]
    assert t.client.post("/api/v1/context/", request, format="json").json()["cached"] is True


@pytest.mark.django_db(transaction=True)
def test_a_key_whose_last_use_cannot_be_recorded_in_time_still_answers() -> None:
    t = make_tenant("overload-key")
    session = load(t)
    client = admin_client(t)  # a new key: its first request records its last use
    key = ApiKey.objects.filter(workspace=t.workspace, name="admin").get()
    assert key.last_used_at is None
    with held(f"SELECT id FROM workspaces_apikey WHERE id = {key.pk} FOR UPDATE"):  # e.g. the key being edited
        response = client.post("/api/v1/context/", {"layer": session, "query": "billing deploys"}, format="json")
        assert response.status_code == 200, response.content  # was 503 database_timeout
    assert response.json()["chunks"]
    key.refresh_from_db()
    assert key.last_used_at is None  # left as it was; the next request past the minute records it
    assert client.post("/api/v1/context/", {"layer": session, "query": "billing"}, format="json").status_code == 200
    key.refresh_from_db()
    assert key.last_used_at is not None


@pytest.mark.django_db(transaction=True)
def test_a_source_whose_query_times_out_makes_the_answer_partial_and_named() -> None:
    t = make_tenant("overload-source")
    session = load(t)
    request = {"layer": session, "query": "when does billing deploy", "timeout_ms": 5000}
    with table_held("summaries_summary"):  # only the layer summaries source reads it
        response = t.client.post("/api/v1/context/", request, format="json")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["chunks"], "the other sources still answer"
    assert body["partial"] is True  # was False: the source's failure said nothing about time
    assert any(
        w.startswith("part of the assembly did not finish in time") and "layer summaries" in w for w in body["warnings"]
    )
    assert "candidates_failed: layer summaries could not be read" in body["warnings"]


@pytest.mark.django_db(transaction=True)
def test_the_llm_message_summaries_not_read_in_time_leave_the_engines_rungs() -> None:
    t = make_tenant("overload-rungs")
    body = {"kind": "session", "name": "s", "parent": t.root.pk}
    session = t.client.post("/api/v1/layers/", body, format="json").json()["id"]
    turns = [{"kind": "message", "content": text, "role": "user"} for text in FACTS]
    assert t.client.post("/api/v1/items/bulk/", {"layer": session, "items": turns}, format="json").status_code == 201
    items_embed_pending(workspace_id=t.workspace.pk)
    request = {"layer": session, "query": "when does billing deploy", "timeout_ms": 5000}
    with override_settings(SUMMARY_PROVIDER="llm"), table_held("conversations_messagesummary"):
        response = t.client.post("/api/v1/context/", request, format="json")
    assert response.status_code == 200, response.content  # was 503 database_timeout
    answer = response.json()
    assert answer["chunks"] and answer["partial"] is True
    assert any("did not finish in time" in w and "the LLM's message summaries" in w for w in answer["warnings"])


@pytest.mark.django_db(transaction=True)
def test_the_embedding_space_not_read_in_time_leaves_out_the_re_embedding_check() -> None:
    t = make_tenant("overload-space")
    session = load(t)
    request = {"layer": session, "query": "when does billing deploy", "timeout_ms": 5000}
    space_forget()  # this process reads the space again (it does every few seconds)
    with table_held("layers_embeddingspace"):
        response = t.client.post("/api/v1/context/", request, format="json")
    space_forget()
    assert response.status_code == 200, response.content
    answer = response.json()
    assert answer["chunks"] and answer["partial"] is True
    assert any("did not finish in time" in w and "the re-embedding check" in w for w in answer["warnings"])


@pytest.mark.django_db(transaction=True)
def test_an_allow_list_not_read_in_time_redacts_without_it() -> None:
    t = make_tenant("overload-allow")
    session = load(t)
    request = {
        "layer": session,
        "query": "billing deploys",
        "error": "TypeError: x is undefined",
        "agent_type": "coder",
    }
    with table_held("redaction_allowlistentry"):
        response = t.client.post("/api/v1/context/", {**request, "timeout_ms": 5000}, format="json")
    assert response.status_code == 200, response.content  # was 503 database_timeout
    answer = response.json()
    assert answer["chunks"] and answer["cached"] is False
    assert any("allow-list could not be read in time" in w for w in answer["warnings"])
