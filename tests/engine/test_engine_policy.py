"""The engine's policies: zones, the compression ladder, distance presets, limits, templates, scorers."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from apps.core.tokenizer import count_tokens
from apps.engine import (
    BUILTIN_TEMPLATES,
    PRESETS,
    Candidate,
    RankContext,
    RankWeights,
    Rung,
    Template,
    TemplateError,
    ZoneThresholds,
    assemble,
    rank,
    recency_score,
    zone_for,
)
from apps.engine.ladder import ladder

NOW = datetime(2026, 11, 1, tzinfo=UTC)
CTX = RankContext(now=NOW)
LONG = " ".join(f"Point {i} of the plan is written down here." for i in range(30))


def o200k(text: str) -> int:
    return count_tokens(text, "o200k_base")


def cand(id: int, content: str = "Short fact.", **kw: object) -> Candidate:
    defaults: dict[str, object] = {
        "kind": "memory",
        "type": "fact",
        "layer_id": 1,
        "layer_name": "s",
        "created_at": NOW,
        "vector_rank": id,
    }
    defaults.update(kw)
    return Candidate(id=id, content=content, **defaults)  # type: ignore[arg-type]


def summary(layer: int, **kw: object) -> Candidate:
    rungs = (Rung("detailed", "Detailed. " * 60), Rung("paragraph", "Paragraph. " * 15), Rung("sentence", "Sentence."))
    return cand(layer, source="summary", kind="summary", type="", content=rungs[0].text, rungs=rungs, **kw)


@pytest.mark.parametrize(
    ("used", "zone"),
    [
        (None, "normal"),
        (0, "normal"),
        (59, "normal"),
        (60, "soft_warning"),
        (74, "soft_warning"),
        (75, "conservative"),
        (85, "wrap_up"),
        (94, "wrap_up"),
        (95, "emergency"),
        (100, "emergency"),
    ],
)
def test_it_picks_the_zone_from_the_share_of_the_window_used(used: int | None, zone: str) -> None:
    assert zone_for(tokens_used=used, context_window=100, thresholds=ZoneThresholds()) == zone


def test_zone_thresholds_are_configurable() -> None:
    assert zone_for(tokens_used=50, context_window=100, thresholds=ZoneThresholds(0.4, 0.5, 0.6, 0.7)) == "conservative"


def test_an_item_ladder_goes_full_summary_title() -> None:
    rungs = ladder(cand(1, LONG, title="The plan"))
    assert [r.depth for r in rungs] == ["full", "summary", "title"]
    assert rungs[1].prefix and LONG.startswith(rungs[1].text) and rungs[2].text == "The plan"
    short = ladder(cand(2, "One sentence."))  # a short text is its own title
    assert [(r.depth, r.text) for r in short] == [("full", "One sentence."), ("title", "One sentence.")]
    stored = ladder(cand(3, LONG, summary="A plan in thirty points."))
    assert stored[1] == Rung("summary", "A plan in thirty points.", prefix=False)


def test_a_summary_takes_the_deepest_depth_that_fits() -> None:
    ranked = rank([summary(10)], context=CTX)
    depths = {budget: assemble(ranked, budget=budget, fmt="text", count=o200k).chunks for budget in (400, 80, 20, 3)}
    assert depths[400][0].depth == "detailed"
    assert depths[80][0].depth == "paragraph"
    assert depths[20][0].depth == "sentence"
    assert depths[3] == ()


def test_normal_zone_keeps_full_items_and_soft_warning_prefers_summaries() -> None:
    ranked = rank([cand(1, LONG)], context=CTX)
    assert assemble(ranked, budget=2000, fmt="text", count=o200k).chunks[0].depth == "full"
    soft = assemble(ranked, budget=2000, fmt="text", count=o200k, zone="soft_warning")
    assert soft.chunks[0].depth == "summary"


def test_conservative_zone_takes_only_summaries_and_fewer_of_them() -> None:
    items = [cand(i) for i in range(1, 4)] + [summary(100 + i) for i in range(8)]
    result = assemble(rank(items, context=CTX), budget=4000, fmt="text", count=o200k, zone="conservative")
    assert {c.source for c in result.chunks} == {"summary"} and len(result.chunks) == 5
    assert all(c.depth != "detailed" for c in result.chunks)
    assert {e.reason for e in result.trace if e.decision == "excluded"} == {"zone"}


def test_wrap_up_keeps_only_pinned_items_and_error_hints() -> None:
    items = [cand(1), cand(2, pinned=True), cand(3, source="error_hint", kind="error_hint", type="")]
    result = assemble(rank(items, context=CTX), budget=4000, fmt="text", count=o200k, zone="wrap_up")
    assert [(c.id, c.source) for c in result.chunks] == [(2, "item"), (3, "error_hint")]


def test_emergency_zone_gives_an_empty_context() -> None:
    result = assemble(rank([cand(1, pinned=True)], context=CTX), budget=4000, fmt="text", count=o200k, zone="emergency")
    assert result.chunks == () and result.total_tokens == 0


@pytest.mark.parametrize(
    ("preset", "full", "summary_to", "title_to"),
    [
        ("aggressive", 3, 10, 25),
        ("balanced", 5, 20, 50),
        ("context_rich", 10, 40, 100),
    ],
)
def test_messages_resolve_by_distance(preset: str, full: int, summary_to: int, title_to: int) -> None:
    resolution = PRESETS[preset]
    assert (resolution.full_context_distance, resolution.summary_distance, resolution.title_distance) == (
        full,
        summary_to,
        title_to,
    )
    messages = [
        cand(d + 1, LONG, kind="message", type="", role="user", distance=d, vector_rank=None)
        for d in (0, full, full + 1, summary_to + 1, title_to + 1)
    ]
    result = assemble(
        rank(messages, context=RankContext(now=NOW, resolution=resolution)),
        budget=100_000,
        fmt="text",
        count=o200k,
        resolution=resolution,
    )
    depth = {c.id: c.depth for c in result.chunks}
    assert depth == {1: "full", full + 1: "full", full + 2: "summary", summary_to + 2: "title"}
    hidden = [e for e in result.trace if e.id == title_to + 2]
    assert hidden[0].reason == "hidden_by_distance"


def test_retrieval_limits_cap_packages_and_count_the_overflow() -> None:
    packages = [cand(i, kind="package", type="", priority="high") for i in range(1, 11)]
    result = assemble(rank(packages, context=CTX), budget=4000, fmt="text", count=o200k, limits={"package": 3})
    assert len(result.chunks) == 3 and result.overflow_count == 7
    assert sum(1 for e in result.trace if e.reason == "over_limit") == 7


def test_package_ranking_uses_priority_group_and_agent_type() -> None:
    ctx = RankContext(now=NOW, group_id="g1", agent_type="qa")
    low = cand(1, kind="package", type="", priority="low", vector_rank=None)
    critical = cand(2, kind="package", type="", priority="critical", vector_rank=None)
    same_group = cand(3, kind="package", type="", priority="low", group_id="g1", vector_rank=None)
    for_qa = cand(4, kind="package", type="", priority="low", agent_types=("qa",), vector_rank=None)
    scores = {s.candidate.id: s for s in rank([low, critical, same_group, for_qa], context=ctx)}
    assert scores[2].score > scores[1].score and scores[3].score > scores[1].score
    assert scores[4].score > scores[1].score and scores[4].parts["agent_type"] == 1.0
    assert scores[3].parts["group"] == 1.0


def test_weights_come_from_overrides() -> None:
    old = cand(1, created_at=NOW - timedelta(days=300), vector_rank=1)
    middle = [cand(i, created_at=NOW - timedelta(days=300), vector_rank=i) for i in range(2, 10)]
    new = cand(10, created_at=NOW, vector_rank=10)
    assert rank([old, *middle, new], context=CTX)[0].candidate.id == 1
    recency_heavy = RankContext(now=NOW, weights=RankWeights.from_overrides({"recency": 5.0, "bogus": 1.0}))
    assert rank([old, *middle, new], context=recency_heavy)[0].candidate.id == 10


def test_a_registered_scorer_can_replace_the_default() -> None:
    old = cand(1, created_at=NOW - timedelta(days=300), vector_rank=1)
    new = cand(2, created_at=NOW, vector_rank=2)
    assert [s.candidate.id for s in rank([old, new], context=CTX, scorer=recency_score)] == [2, 1]


def test_templates_render_variables_and_bodies_by_type() -> None:
    template = Template(name="t", body="* {content} ({layer})", by_type={"decision": "DECIDED: {content}"})
    items = [cand(1, "We chose Postgres.", type="decision"), cand(2, "Sky is blue.", confidence=0.9)]
    result = assemble(rank(items, context=CTX), budget=500, fmt="text", count=o200k, template=template)
    assert set(result.context.split("\n\n")) == {"DECIDED: We chose Postgres.", "* Sky is blue. (s)"}
    detailed = assemble(
        rank(items[1:], context=CTX), budget=500, fmt="markdown", count=o200k, template=BUILTIN_TEMPLATES["detailed"]
    )
    assert "### Fact (0.90)" in detailed.context


@pytest.mark.parametrize("body", ["{content.__class__}", "{content!r}", "{content:>10}", "{secret}", "{0}", "{"])
def test_templates_refuse_anything_but_plain_variables(body: str) -> None:
    with pytest.raises(TemplateError):
        Template(name="bad", body=body)
