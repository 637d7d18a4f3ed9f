"""The engine's correctness properties, as Hypothesis properties (the profile round-trip lives in
tests/profiles; the budget in test_engine.py and test_context_api.py)."""

from __future__ import annotations

import json
import re
import threading
from datetime import UTC, datetime

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pytest_django.fixtures import SettingsWrapper

from apps.assembly.params import ContextParams
from apps.assembly.services import ContextResult, context_assemble
from apps.core.tokenizer import count_tokens
from apps.engine import Candidate, RankContext, assemble, rank
from apps.engine.format import FRAMES, render_piece
from tests.support.tenants import Tenant, make_tenant

NOW = datetime(2026, 11, 1, tzinfo=UTC)
CTX = RankContext(now=NOW)
WORDS = st.sampled_from(["alpha", "beta", "gamma", "delta", "omega", "node", "cache", "deploy", "plan", "note"])
SENTENCE = st.builds(
    lambda ws, end: " ".join(ws).capitalize() + end,
    st.lists(WORDS, min_size=2, max_size=12),
    st.sampled_from([".", "!", "?"]),
)
TEXT = st.builds(" ".join, st.lists(SENTENCE, min_size=1, max_size=25))


def o200k(text: str) -> int:
    return count_tokens(text, "o200k_base")


@st.composite
def candidates(draw: st.DrawFn) -> list[Candidate]:
    n = draw(st.integers(min_value=0, max_value=10))
    out = []
    for i in range(n):
        out.append(
            Candidate(
                id=i + 1,
                kind=draw(st.sampled_from(["memory", "document", "spec"])),
                type="fact",
                layer_id=1,
                layer_name="layer",
                content=draw(TEXT),
                created_at=NOW,
                pinned=draw(st.booleans()),
                vector_rank=draw(st.one_of(st.none(), st.integers(1, 50))),
                keyword_rank=draw(st.one_of(st.none(), st.integers(1, 50))),
                importance=draw(st.floats(0, 1)),
            )
        )
    return out


PROPERTY = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPERTY
@given(items=candidates(), budget=st.integers(1, 600), fmt=st.sampled_from(["json", "markdown", "text"]))
def test_property_1_pinned_first_then_by_relevance(items: list[Candidate], budget: int, fmt: str) -> None:
    chunks = assemble(rank(items, context=CTX), budget=budget, fmt=fmt, count=o200k).chunks
    pinned = [c.pinned for c in chunks]
    assert pinned == sorted(pinned, reverse=True)
    for group in (True, False):
        scores = [c.score for c in chunks if c.pinned is group]
        assert scores == sorted(scores, reverse=True)


@PROPERTY
@given(scores=st.lists(st.integers(1, 50), min_size=1, max_size=10, unique=True), budget=st.integers(20, 400))
def test_property_3_higher_relevance_is_kept_over_lower(scores: list[int], budget: int) -> None:
    # Equal-sized items: whatever fits is exactly the best-ranked ones.
    items = [
        Candidate(
            id=r,
            kind="memory",
            type="fact",
            layer_id=1,
            layer_name="l",
            created_at=NOW,
            content="Equal sized item text here.",
            vector_rank=r,
        )
        for r in scores
    ]
    result = assemble(rank(items, context=CTX), budget=budget, fmt="text", count=o200k)
    kept = [c.id for c in result.chunks]
    assert kept == sorted(scores)[: len(kept)]


@PROPERTY
@given(text=TEXT, budget=st.integers(5, 200), fmt=st.sampled_from(["json", "markdown", "text"]))
def test_property_4_truncation_ends_at_a_sentence_boundary(text: str, budget: int, fmt: str) -> None:
    item = Candidate(
        id=1, kind="document", type="", layer_id=1, layer_name="l", content=text, created_at=NOW, vector_rank=1
    )
    for chunk in assemble(rank([item], context=CTX), budget=budget, fmt=fmt, count=o200k).chunks:
        if chunk.truncated:
            assert text.startswith(chunk.text) and chunk.text[-1] in ".!?"
            assert text[len(chunk.text) :][:1] in (" ", "")


@PROPERTY
@given(items=candidates(), budget=st.integers(50, 2000))
def test_property_6_every_json_chunk_has_id_type_source_and_relevance(items: list[Candidate], budget: int) -> None:
    result = assemble(rank(items, context=CTX), budget=budget, fmt="json", count=o200k)
    parsed = json.loads(result.context)
    assert len(parsed) == len(result.chunks)
    assert all({"id", "type", "source", "relevance"} <= set(obj) for obj in parsed)


@PROPERTY
@given(items=candidates(), budget=st.integers(50, 2000))
def test_property_7_markdown_has_headers(items: list[Candidate], budget: int) -> None:
    result = assemble(rank(items, context=CTX), budget=budget, fmt="markdown", count=o200k)
    if result.chunks:
        headers = [line for line in result.context.splitlines() if line.startswith("#")]
        assert len(headers) >= 1 + len(result.chunks)


@PROPERTY
@given(
    texts=st.lists(st.text(min_size=1, max_size=300), min_size=1, max_size=12),
    fmt=st.sampled_from(["json", "markdown", "text"]),
)
def test_property_9_the_piecewise_estimate_is_within_5_percent(texts: list[str], fmt: str) -> None:
    items = [
        Candidate(id=i, kind="document", type="", layer_id=1, layer_name="l", content=t, created_at=NOW)
        for i, t in enumerate(texts)
    ]
    pieces = [render_piece(c, c.content, fmt=fmt, score=0.5, truncated=False) for c in items]
    frame = FRAMES[fmt]
    estimate = o200k(frame.head + frame.tail) + sum(o200k(p) for p in pieces) + o200k(frame.sep) * (len(pieces) - 1)
    exact = o200k(frame.head + frame.sep.join(pieces) + frame.tail)
    # Tokens can merge across a piece boundary (both sides of a separator, as in "}, {"); the
    # packer's final exact count absorbs that, and for chunks of a realistic size (40+ tokens each)
    # the estimate is within 5 %.
    assert abs(estimate - exact) <= 2 * (len(pieces) + 1)
    if exact >= 40 * len(pieces):
        assert abs(estimate - exact) <= 0.05 * exact


@pytest.mark.django_db
@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@given(
    chosen=st.lists(
        st.sampled_from(["fact", "decision", "entity", "requirement", "design"]), min_size=1, max_size=3, unique=True
    )
)
def test_property_8_type_filters_only_return_matching_types(tenant: Tenant, chosen: list[str]) -> None:
    if not tenant.client.get("/api/v1/items/").json()["count"]:
        items = [
            {"kind": "memory", "type": t, "content": f"Cache note as a {t}."} for t in ("fact", "decision", "entity")
        ]
        items += [{"kind": "spec", "type": t, "content": f"Cache spec as a {t}."} for t in ("requirement", "design")]
        tenant.client.post("/api/v1/items/bulk/", {"layer": tenant.root.pk, "items": items}, format="json")
    body = tenant.client.post(
        "/api/v1/context/", {"layer": tenant.root.pk, "query": "cache", "types": chosen}, format="json"
    ).json()
    assert body["chunks"] and {c["type"] for c in body["chunks"] if c["source"] == "item"} <= set(chosen)


@pytest.mark.django_db(transaction=True)
def test_property_10_concurrent_requests_complete_without_deadlock(settings: SettingsWrapper) -> None:
    # Eight at once in one workspace pass its share of the worker (apps/core/fair_share.py) in turn:
    # they wait for their slots as long as it takes, so the gate is under test for deadlocks too.
    settings.WORKSPACE_QUEUE_MS = 120_000
    t = make_tenant("concurrent")
    items = [{"kind": "memory", "type": "fact", "content": f"Fact {i} about deploys and caches."} for i in range(40)]
    t.client.post("/api/v1/items/bulk/", {"layer": t.root.pk, "items": items}, format="json")
    results: list[ContextResult] = []
    errors: list[BaseException] = []

    def worker(n: int) -> None:
        from django.db import connection

        try:
            for j in range(3):
                results.append(
                    context_assemble(
                        workspace=t.workspace,
                        params=ContextParams(
                            layer_id=t.root.pk, query=f"deploys {n} {j}", token_budget=200, timeout_ms=0
                        ),
                    )
                )
        except BaseException as exc:  # noqa: BLE001 - collected and asserted below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert not any(thread.is_alive() for thread in threads), "a request did not finish: deadlock?"
    assert errors == [] and len(results) == 24
    assert all(0 < r.total_tokens <= 200 and re.search("Fact", r.context) for r in results)
