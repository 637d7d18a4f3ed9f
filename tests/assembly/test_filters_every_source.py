"""Every source of candidates honours the request's filters, not only the searches: `types` and
`kinds` keep conversation turns, layer summaries and community summaries
out when they do not match, and `conversation_id` keeps other sessions' items out,
memories as well as turns."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from apps.conversations.communities import communities_refresh
from apps.summaries.models import Summary
from tests.conversations.sessions import messages
from tests.support.api import ask, bulk, layer
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db


def _summary(t: Tenant, layer_id: int, text: str) -> None:
    Summary.objects.create(
        workspace=t.workspace,
        layer_id=layer_id,
        depth="sentence",
        text=text,
        token_count=0,
        source_hash="h",
        generated_at=timezone.now(),
        provider="test",
    )


@pytest.fixture
def busy_session(tenant: Tenant) -> int:
    """A session of 40 turns about invoices (a task community stands in for the far ones), two
    memories of each of three types, and a summary of the session and of the company."""
    session = layer(tenant, "session", tenant.root.pk, external_id="sess-busy")
    start = timezone.now() - timedelta(days=2)
    messages(
        tenant,
        session,
        [f"Invoice step {i}: the export job writes a CSV of every open invoice." for i in range(40)],
        start=start,
        task_ids=["BILL-7"],
    )
    bulk(
        tenant,
        session,
        [
            {"kind": "memory", "type": kind, "content": f"Invoice {kind} number {i}: exports run nightly."}
            for kind in ("decision", "entity", "fact")
            for i in range(2)
        ],
    )
    _summary(tenant, session, "This session is about invoice exports.")
    _summary(tenant, tenant.root.pk, "The company sends invoices.")
    communities_refresh(layer_id=session)
    return session


def test_it_returns_only_items_of_the_requested_types(tenant: Tenant, busy_session: int) -> None:
    unfiltered = ask(tenant, layer=busy_session, query="invoice export", token_budget=8000)
    assert {c["source"] for c in unfiltered["chunks"]} >= {"item", "summary", "community"}
    assert any(c["kind"] == "message" for c in unfiltered["chunks"])
    body = ask(tenant, layer=busy_session, query="invoice export", token_budget=8000, types=["decision", "entity"])
    assert body["chunks"]
    assert {(c["source"], c["type"]) for c in body["chunks"]} == {("item", "decision"), ("item", "entity")}
    assert '"Invoice step' not in body["context"] and "Summary of" not in body["context"]


def test_it_returns_only_chunks_of_the_requested_kinds(tenant: Tenant, busy_session: int) -> None:
    turns = ask(tenant, layer=busy_session, query="invoice export", token_budget=8000, kinds=["message"])
    assert turns["chunks"] and {(c["source"], c["kind"]) for c in turns["chunks"]} == {("item", "message")}
    far = [c for c in turns["chunks"] if c["text"].startswith("Invoice step 1:")]
    assert far, "a turn no community stands in for any more comes back as itself"
    memories = ask(tenant, layer=busy_session, query="invoice export", token_budget=8000, kinds=["memory"])
    assert memories["chunks"] and {c["kind"] for c in memories["chunks"]} == {"memory"}
    preview = tenant.client.post(
        "/api/v1/context/preview/",
        {"layer": busy_session, "query": "invoice export", "token_budget": 8000, "kinds": ["memory"]},
        format="json",
    ).json()
    reasons = {(t["source"], t["reason"]) for t in preview["trace"] if t["decision"] == "excluded"}
    assert ("community", "kind_filter") in reasons  # named in the trace, not silently dropped


def test_conversation_id_leaves_out_the_memories_of_other_sessions(tenant: Tenant) -> None:
    ours = layer(tenant, "session", tenant.root.pk, external_id="sess-ours")
    theirs = layer(tenant, "session", tenant.root.pk, external_id="sess-theirs")
    bulk(tenant, ours, [{"kind": "memory", "type": "fact", "content": "Our deploy target is Kubernetes."}])
    bulk(tenant, theirs, [{"kind": "memory", "type": "fact", "content": "Their deploy target is Nomad."}])
    bulk(tenant, tenant.root.pk, [{"kind": "memory", "type": "fact", "content": "Every deploy needs a review."}])
    body = ask(tenant, layer=tenant.root.pk, query="deploy target", conversation_id="sess-ours")
    texts = {c["text"] for c in body["chunks"]}
    assert "Our deploy target is Kubernetes." in texts and "Every deploy needs a review." in texts
    assert "Their deploy target is Nomad." not in texts
    everything = ask(tenant, layer=tenant.root.pk, query="deploy target")
    assert "Their deploy target is Nomad." in {c["text"] for c in everything["chunks"]}
