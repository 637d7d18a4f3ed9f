"""Spans of a context assembly (an agent's, a page's preview, a background warm-up) and a history
search, received by a local OTLP/HTTP receiver.

Tracing is configured in-process here, as the OTEL_* environment would configure it at start;
tests/server/test_tracing_live.py drives a live server configured by its environment.
"""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import urlencode

import pytest
from django.contrib.auth.models import AbstractUser
from django.test import Client

from apps.core import background, telemetry
from apps.layers.services import ItemInput, items_create, layer_create
from apps.workspaces.models import Membership, Role
from tests.support.otlp_receiver import OtlpReceiver, ReceivedSpan, a_caller, children, named, otlp_receiver
from tests.support.tenants import Tenant, make_tenant

pytestmark = pytest.mark.django_db
STAGES = {"resolve", "embedding", "keyword_search", "vector_search", "ranking", "packing"}
# A GitHub token an agent pasted into a memory: it must never reach a span, even with content captured.
TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
FACTS = {
    "backups": "Database backups are taken nightly at 02:00 UTC and kept for 35 days.",
    "restore": "Restoring a database backup takes about forty minutes for the main cluster.",
    "deploys": "Builds are promoted from staging to production every Tuesday.",
    "token": f"The backup bucket is read with the token {TOKEN} by the restore job.",
}


@pytest.fixture
def receiver() -> Iterator[OtlpReceiver]:
    with otlp_receiver() as r:
        yield r


def traced(receiver: OtlpReceiver, **environ: str) -> None:
    assert telemetry.tracing_configure({"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url, **environ})


@pytest.fixture(autouse=True)
def _tracing_off_after() -> Iterator[None]:
    yield
    telemetry.tracing_configure({})


def load(tenant: Tenant) -> None:
    session = layer_create(workspace=tenant.workspace, kind="session", name="s1", parent=tenant.root)
    items = [ItemInput(kind="memory", type="fact", content=text, external_id=key) for key, text in FACTS.items()]
    items_create(layer=session, items=items)
    for role, content in (("user", "Where are the database backups kept?"), ("assistant", "In the backup bucket.")):
        items_create(layer=session, items=[ItemInput(kind="message", role=role, content=content)])


def context_spans(tenant: Tenant, receiver: OtlpReceiver, body: dict[str, object]) -> list[ReceivedSpan]:
    caller = a_caller()
    response = tenant.client.post("/api/v1/context/", body, format="json", HTTP_TRACEPARENT=caller.traceparent)
    assert response.status_code == 200, response.json()
    assert telemetry.tracing_flush()
    spans = receiver.wait_for(caller.trace_id, lambda s: any(x.name.startswith("retrieval") for x in s))
    assert all(s.service == "context-architect" for s in spans)
    request = named(spans, "POST /api/v1/context/")
    assert request.parent_span_id == caller.span_id and request.kind == "SPAN_KIND_SERVER"
    return spans


def test_a_context_request_is_a_retrieval_span_under_the_callers_with_its_stages_and_decisions(
    tenant: Tenant, receiver: OtlpReceiver
) -> None:
    load(tenant)
    traced(receiver)
    body = {"layer": tenant.root.pk, "query": "How long are database backups kept?", "token_budget": 60}
    body |= {"model": "gpt-4o", "timeout_ms": 0}

    spans = context_spans(tenant, receiver, body)

    request = named(spans, "POST /api/v1/context/")
    assert request.attributes["http.route"] == "/api/v1/context/"
    assert request.attributes["http.response.status_code"] == 200
    retrieval = named(spans, f"retrieval {tenant.workspace.slug}")
    assert retrieval.parent_span_id == request.span_id
    attributes = retrieval.attributes
    assert attributes["gen_ai.operation.name"] == "retrieval"
    assert attributes["gen_ai.data_source.id"] == tenant.workspace.slug
    assert attributes["gen_ai.request.model"] == "gpt-4o"
    assert attributes["contextarch.token_budget"] == 60
    assert 0 < attributes["contextarch.total_tokens"] <= 60
    assert attributes["contextarch.cached"] is False and attributes["contextarch.chunks"] >= 1
    assert attributes["contextarch.trace_id"]  # the console's trace of the same answer
    stages = children(spans, retrieval)
    assert STAGES <= {s.name for s in stages}
    assert all(s.start_ns >= retrieval.start_ns and s.end_ns <= retrieval.end_ns for s in stages)
    events = [e for name, e in retrieval.events if name == "contextarch.candidate"]
    assert events and [e["contextarch.candidate.rank"] for e in events] == list(range(1, len(events) + 1))
    scores = [e["contextarch.candidate.score"] for e in events]
    assert scores == sorted(scores, reverse=True)
    included = [e for e in events if e["contextarch.candidate.decision"] in ("included", "truncated")]
    excluded = [e for e in events if e["contextarch.candidate.decision"] == "excluded"]
    assert included and excluded  # 60 tokens hold some, not all
    assert all(e["contextarch.candidate.depth"] for e in included)
    assert all(e["contextarch.candidate.reason"] for e in excluded)
    assert {e["contextarch.candidate.origin"] for e in events} <= {"vector", "keyword", "both", "conversation", ""}
    assert all("contextarch.candidate.text" not in e for e in events)  # no content unless opted in
    assert "gen_ai.retrieval.query.text" not in attributes
    assert not any(tenant.secret in str(s) or TOKEN in str(s) for s in spans)


def test_a_cache_hit_is_a_retrieval_span_that_says_so_without_stages(tenant: Tenant, receiver: OtlpReceiver) -> None:
    load(tenant)
    traced(receiver)
    body = {"layer": tenant.root.pk, "query": "When are builds promoted?", "timeout_ms": 0}
    context_spans(tenant, receiver, body)

    spans = context_spans(tenant, receiver, body)

    retrieval = named(spans, f"retrieval {tenant.workspace.slug}")
    assert retrieval.attributes["contextarch.cached"] is True and children(spans, retrieval) == []


def test_with_the_content_opt_in_the_query_and_chunks_travel_redacted(tenant: Tenant, receiver: OtlpReceiver) -> None:
    load(tenant)
    traced(receiver, OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT="true")
    body = {"layer": tenant.root.pk, "query": f"which job reads the bucket with {TOKEN}?", "timeout_ms": 0}

    spans = context_spans(tenant, receiver, body)

    retrieval = named(spans, f"retrieval {tenant.workspace.slug}")
    query = retrieval.attributes["gen_ai.retrieval.query.text"]
    assert query.startswith("which job reads the bucket with") and TOKEN not in query
    texts = [e["contextarch.candidate.text"] for _, e in retrieval.events if "contextarch.candidate.text" in e]
    assert any("restore job" in text for text in texts)
    assert not any(TOKEN in str(s) or tenant.secret in str(s) for s in spans)


def test_a_history_search_is_a_search_memory_span_with_its_searches(tenant: Tenant, receiver: OtlpReceiver) -> None:
    load(tenant)
    traced(receiver)
    caller = a_caller()

    response = tenant.client.get("/api/v1/history/", {"query": "database backups"}, HTTP_TRACEPARENT=caller.traceparent)

    assert response.status_code == 200, response.json()
    assert telemetry.tracing_flush()
    spans = receiver.wait_for(caller.trace_id, lambda s: any(x.name == "search_memory" for x in s))
    request = named(spans, "GET /api/v1/history/")
    search = named(spans, "search_memory")
    assert request.parent_span_id == caller.span_id and search.parent_span_id == request.span_id
    assert search.attributes["gen_ai.operation.name"] == "search_memory"
    assert search.attributes["gen_ai.memory.store.id"] == f"workspace:{tenant.workspace.slug}"
    assert search.attributes["gen_ai.memory.record.count"] == len(response.json()["messages"]) >= 1
    assert {"keyword_search"} <= {s.name for s in children(spans, search)}
    assert "gen_ai.memory.query.text" not in search.attributes


def test_without_a_traceparent_the_service_starts_a_trace_of_its_own(tenant: Tenant, receiver: OtlpReceiver) -> None:
    load(tenant)
    traced(receiver)

    response = tenant.client.post(
        "/api/v1/context/", {"layer": tenant.root.pk, "query": "backups"}, format="json", HTTP_TRACEPARENT="00-zz-1-01"
    )

    assert response.status_code == 200
    assert telemetry.tracing_flush()
    request = next(s for s in receiver.spans if s.name == "POST /api/v1/context/")
    assert request.parent_span_id == "" and len(request.trace_id) == 32


def test_when_tracing_is_off_nothing_is_sent_and_no_span_is_made(tenant: Tenant, receiver: OtlpReceiver) -> None:
    load(tenant)
    caller = a_caller()
    assert not telemetry.tracing_configure({"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url, "OTEL_SDK_DISABLED": "true"})

    response = tenant.client.post(
        "/api/v1/context/",
        {"layer": tenant.root.pk, "query": "backups"},
        format="json",
        HTTP_TRACEPARENT=caller.traceparent,
    )

    assert response.status_code == 200
    assert telemetry.tracing_flush()
    with telemetry.operation("retrieval") as span:
        assert span is None
    assert telemetry.stage_started("ranking") is None
    assert receiver.requests == 0


def test_a_page_preview_is_a_retrieval_span_with_its_what_if_runs_inside(
    tenant: Tenant, receiver: OtlpReceiver, client: Client, django_user_model: type[AbstractUser]
) -> None:
    load(tenant)
    traced(receiver)
    user = django_user_model.objects.create_user(username="ada", password="x" * 12)
    Membership.objects.create(workspace=tenant.workspace, user=user, role=Role.OPERATOR)
    client.force_login(user)
    caller = a_caller()
    query = urlencode({"layer": tenant.root.pk, "query": "database backups", "token_budget": 300, "timeout_ms": 0})

    assert client.get(f"/preview/?{query}", HTTP_TRACEPARENT=caller.traceparent).status_code == 200

    assert telemetry.tracing_flush()
    name = f"retrieval {tenant.workspace.slug}"
    spans = receiver.wait_for(caller.trace_id, lambda s: any(x.name == name for x in s))
    preview = named(spans, name)
    assert preview.parent_span_id == named(spans, "GET /preview/").span_id
    assert preview.attributes["contextarch.run"] == "preview"
    assert preview.attributes["contextarch.origin"] == "page"
    assert 0 < preview.attributes["contextarch.total_tokens"] <= 300
    assert any(e == "contextarch.candidate" for e, _ in preview.events)
    # The answer's own run and each what-if budget's run pack under the preview's span.
    assert len([s for s in children(spans, preview) if s.name == "packing"]) >= 2


@pytest.mark.django_db(transaction=True)  # the warm-up runs on a background thread: it reads what is committed
def test_a_warm_up_after_a_deadline_is_a_retrieval_span_in_the_requests_trace(receiver: OtlpReceiver) -> None:
    tenant = make_tenant("warm")
    load(tenant)
    traced(receiver)
    caller = a_caller()
    body = {"layer": tenant.root.pk, "query": "How long are database backups kept?", "timeout_ms": 1}

    answer = tenant.client.post("/api/v1/context/", body, format="json", HTTP_TRACEPARENT=caller.traceparent).json()

    assert answer["partial"] is True
    assert background.wait_idle(60)
    assert telemetry.tracing_flush()
    name = f"retrieval {tenant.workspace.slug}"
    spans = receiver.wait_for(caller.trace_id, lambda s: any(x.attributes.get("contextarch.run") for x in s))
    warm_up = next(s for s in spans if s.name == name and s.attributes.get("contextarch.run") == "warm_up")
    request = next(s for s in spans if s.name == name and "contextarch.run" not in s.attributes)
    assert warm_up.parent_span_id == request.span_id and warm_up.start_ns >= request.start_ns
    assert request.attributes["contextarch.partial"] is True and request.attributes["contextarch.origin"] == "agent"
    assert warm_up.attributes["contextarch.partial"] is False and warm_up.attributes["contextarch.chunks"] >= 1
    assert {"vector_search", "packing"} <= {s.name for s in children(spans, warm_up)}
