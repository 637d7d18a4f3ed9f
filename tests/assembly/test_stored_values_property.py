"""Nothing stored through the API can fail a context request (issue 25, finding 2): random items with
random field values and random JSON metadata (any keys, the engine's old bookkeeping keys among them,
any nesting and types within the input limits), then every context request answers 200 within its
budget, and so do the preview, the stream and the history tool."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from apps.core.tokenizer import count_tokens
from apps.layers.models import Layer
from tests.assembly.streams import sse_events
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db

# Text the strict JSON parser accepts: no NUL, no lone surrogates (both a 400 by design).
TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=60)
KEYS = st.sampled_from(
    ["stands_in_for", "neighbour_of", "inherited_relevance", "summary", "stale", "user", "importance_source", "x"]
) | TEXT.filter(lambda k: len(k) <= 20)
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | TEXT
)
JSON = st.recursive(
    SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEYS, inner, max_size=4), max_leaves=12
)
METADATA = st.dictionaries(KEYS, JSON, max_size=6)

ITEM = st.fixed_dictionaries(
    {
        "kind": st.sampled_from(["message", "memory", "package", "spec", "document"]),
        "content": TEXT.filter(lambda s: s.strip()) | st.sampled_from(["Otters swim.", "{content} {title}"]),
        "metadata": METADATA,
    },
    optional={
        "type": st.sampled_from(["", "fact", "entity", "decision", "strategy", "runbook"]),
        "title": TEXT,
        "role": st.sampled_from(["", "user", "assistant", "system", "tool"]),
        "task_ids": st.lists(st.sampled_from(["T-1", "T-dup", "T-2"]), max_size=4),
        "importance": st.floats(min_value=0, max_value=1),
        "confidence": st.none() | st.floats(min_value=0, max_value=1),
        "priority": st.sampled_from(["", "low", "medium", "high", "critical"]),
        "group_id": st.sampled_from(["", "g1", "g2"]),
        "agent_types": st.lists(st.sampled_from(["coder", "reviewer"]), max_size=2),
        "pinned": st.booleans(),
        "created_at": st.datetimes(
            min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30), timezones=st.just(UTC)
        ).map(lambda d: d.isoformat()),
    },
)


def _store(tenant: Tenant, layer_id: int, items: list[dict[str, Any]]) -> None:
    for item in items:
        response = tenant.client.post("/api/v1/items/", {"layer": layer_id, **item}, format="json")
        # Stored (201), merged into an exact repeat stored before (200), or bad input (400): never a 5xx.
        assert response.status_code in (200, 201, 400), response.content


@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@given(
    items=st.lists(ITEM, min_size=1, max_size=6),
    budget=st.integers(min_value=1, max_value=2000),
    fmt=st.sampled_from(["json", "markdown", "text"]),
    template=st.sampled_from([None, "chat", "detailed"]),
    query=st.sampled_from(["otters", "x", "T-dup stands_in_for"]),
)
def test_no_stored_item_makes_a_context_request_fail(
    tenant: Tenant, items: list[dict[str, Any]], budget: int, fmt: str, template: str | None, query: str
) -> None:
    session = Layer.objects.create(workspace=tenant.workspace, kind="session", name="s", parent=tenant.root)
    _store(tenant, session.pk, items)
    _store(tenant, tenant.root.pk, [dict(item, pinned=True) for item in items[:2]])  # pinned at company level
    request: dict[str, Any] = {
        "layer": session.pk,
        "query": query,
        "token_budget": budget,
        "format": fmt,
        "model": "gpt-4",
        "expand_related": 1,
        **({"template": template} if template else {}),
    }
    answer = tenant.client.post("/api/v1/context/", request, format="json")
    assert answer.status_code == 200, answer.content
    body = answer.json()
    assert body["total_tokens"] == count_tokens(body["context"], "cl100k_base") <= budget
    preview = tenant.client.post("/api/v1/context/preview/", request, format="json")
    assert preview.status_code == 200, preview.content
    history = tenant.client.get("/api/v1/history/", {"layer": session.pk, "query": query})
    assert history.status_code == 200, history.content
    stream = tenant.client.get("/api/v1/context/stream", request, HTTP_ACCEPT="text/event-stream")
    assert stream.status_code == 200
    events = sse_events(stream)
    assert events[-1][0] == "complete" and events[-1][1]["total_tokens"] <= budget
