"""Template expansion is capped, and the deadline is checked while packing and while expanding
related items: a costly request answers partial, and says so (issue 26, finding 10)."""

from __future__ import annotations

import time
from datetime import UTC, datetime

import pytest

from apps.assembly.deadline import Deadline
from apps.assembly.models import OutputTemplate
from apps.assembly.retrieval import related_items
from apps.core import tokenizer
from apps.engine import Candidate, RankContext, assemble, rank
from apps.layers.filters import ItemFilters
from tests.support.api import bulk, layer
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 1, 1, tzinfo=UTC)
PARAGRAPH = "The otters of the brook hold hands while they sleep, so the current never parts them. "


def test_a_template_that_repeats_its_content_is_refused(tenant: Tenant) -> None:
    for body in ("{content}" * 555, "{title} " * 21, "{content}{content}{content}"):
        response = tenant.client.post("/api/v1/templates/", {"name": "huge", "body": body}, format="json")
        assert response.status_code == 400 and response.json()["error"]["code"] == "invalid_template", body
    twice = {"name": "twice", "body": "{title}\n{content}\n{content}"}
    ok = tenant.client.post("/api/v1/templates/", twice, format="json")
    assert ok.status_code == 201


def test_a_stored_template_past_the_caps_answers_at_once_with_the_formats_default(tenant: Tenant) -> None:
    session = layer(tenant, "session", tenant.root.pk, external_id="s1")
    bulk(tenant, session, [{"kind": "document", "content": PARAGRAPH * 25} for _ in range(40)])
    OutputTemplate.objects.create(
        workspace=tenant.workspace, name="huge", body="{content}" * 555
    )  # stored before the cap
    started = time.perf_counter()
    response = tenant.client.post(
        "/api/v1/context/",
        {"layer": session, "query": "otters", "token_budget": 4000, "template": "huge", "timeout_ms": 0},
        format="json",
    )
    elapsed = time.perf_counter() - started
    assert response.status_code == 200, response.content
    body = response.json()
    assert any(w.startswith("template_invalid: template 'huge'") for w in body["warnings"]), body["warnings"]
    assert body["total_tokens"] <= 4000 and body["chunks"]
    assert elapsed < 10, elapsed  # it took minutes: every rung tried rendered and counted 555 copies


def test_packing_past_the_deadline_answers_partial_and_says_so(tenant: Tenant) -> None:
    session = layer(tenant, "session", tenant.root.pk, external_id="s1")
    big = PARAGRAPH * 1100  # ~99k characters, within the item limit
    bulk(tenant, session, [{"kind": "document", "content": big, "title": f"Doc {i}"} for i in range(20)])
    OutputTemplate.objects.create(workspace=tenant.workspace, name="twice", body="{content}\n{content}")
    started = time.perf_counter()
    response = tenant.client.post(
        "/api/v1/context/",
        {"layer": session, "query": "otters", "token_budget": 100_000, "template": "twice", "timeout_ms": 300},
        format="json",
    )
    elapsed = time.perf_counter() - started
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["partial"] is True, body["warnings"]
    assert any("the packing of" in w for w in body["warnings"]), body["warnings"]
    assert body["total_tokens"] == tokenizer.count_tokens(body["context"], "o200k_base") <= 100_000
    assert elapsed < 5, elapsed  # without the check, every rung of the 20 documents was rendered and counted


def _candidate(id: int) -> Candidate:
    return Candidate(
        id=id, kind="memory", type="fact", layer_id=1, layer_name="s", content=f"Fact {id}.", created_at=NOW
    )


def test_the_packer_stops_where_it_is_told_and_keeps_its_count_exact() -> None:
    ranked = rank([_candidate(i) for i in range(1, 6)], context=RankContext(now=NOW))
    asked = []

    def stop() -> bool:
        asked.append(1)
        return len(asked) > 2

    count = lambda text: tokenizer.count_tokens(text, "cl100k_base")  # noqa: E731
    packed = assemble(ranked, budget=500, fmt="markdown", count=count, stop=stop)
    assert len(packed.chunks) == 2 and packed.total_tokens == count(packed.context)
    assert [e.reason for e in packed.trace].count("deadline") == 3
    assert assemble(ranked, budget=500, fmt="markdown", count=count) == assemble(
        ranked, budget=500, fmt="markdown", count=count, stop=lambda: False
    )


def test_related_expansion_checks_the_deadline_before_each_hop(tenant: Tenant) -> None:
    session = layer(tenant, "session", tenant.root.pk, external_id="s1")
    ids = bulk(tenant, session, [{"kind": "memory", "type": "fact", "content": f"Fact {i}."} for i in range(3)])
    for source, target in ((ids[0], ids[1]), (ids[1], ids[2])):
        body = {"source": source, "target": target, "kind": "relates_to"}
        assert tenant.client.post("/api/v1/relationships/", body, format="json").status_code == 201
    filters = ItemFilters(workspace_id=tenant.workspace.pk, layer_ids=(session,))
    both = related_items(seeds={ids[0]: 1.0}, filters=filters, layer_names={}, depth=2)
    assert {c.id for c in both} == {ids[1], ids[2]}
    late = Deadline(limit_ms=1, started=time.perf_counter() - 1)
    assert related_items(seeds={ids[0]: 1.0}, filters=filters, layer_names={}, depth=2, deadline=late) == []
    assert late.skipped == ["related items 1 or more hops away"]
