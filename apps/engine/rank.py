"""Ranking: every signal becomes a score part in [0, 1]; the score is their weighted mean.

Parts: fused retrieval relevance (the place in the order of scaled vector and keyword scores,
engine/fusion.py, with the raw similarity and keyword score kept for the trace), recency (half-life), importance,
confidence, priority level, same-group match, agent-type relevance, a strategy's helpfulness
(agents' feedback) and conversation distance.
A part that does not apply to a candidate (no priority on a memory, no distance on a document)
is left out of its mean rather than counted as zero. Pinned items and error hints go first
(pinned first, then packages by priority), then by score.

Custom scorers have the signature of `weighted_score` and are registered by name in settings.
"""

from __future__ import annotations

import bisect
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from datetime import datetime

from apps.core.fusion import KEYWORD_WEIGHT, VECTOR_WEIGHT
from apps.engine.dates import Period
from apps.engine.fusion import fusion_scores, layer_focus
from apps.engine.policy import Resolution
from apps.engine.types import Candidate, Scored, Source

RRF_K = 60
PRIORITY_VALUE = {"critical": 1.0, "high": 0.75, "medium": 0.5, "low": 0.25}


@dataclass(frozen=True)
class RankWeights:
    """How much each part counts; relevance dominates by default."""

    # Fusion of the two searches (engine/fusion.py), chosen on the LoCoMo development set.
    vector: float = VECTOR_WEIGHT
    keyword: float = KEYWORD_WEIGHT
    relevance: float = 0.8
    recency: float = 0.05  # a tie-breaker: old turns often hold the answer
    importance: float = 0.1
    confidence: float = 0.05
    # Packages: one priority level, the agent type or the group outweighs one
    # place in the retrieval list (0.05 relevance at weight 0.8).
    priority: float = 0.25
    group: float = 0.2
    agent_type: float = 0.2
    helpfulness: float = 0.2
    focus: float = 0.6
    distance: float = 0.2
    recency_half_life_days: float = 30.0

    @classmethod
    def from_overrides(cls, overrides: Mapping[str, float]) -> RankWeights:
        """Defaults with the given fields replaced; unknown keys are ignored (validated at the edge)."""
        known = {f.name for f in fields(cls)}
        return replace(cls(), **{k: float(v) for k, v in overrides.items() if k in known})


@dataclass(frozen=True)
class RankContext:
    """What a scorer may look at besides the candidate."""

    now: datetime
    weights: RankWeights = field(default_factory=RankWeights)
    relevance: Mapping[tuple[str, int], float] = field(default_factory=dict)  # filled by `rank`
    group_id: str = ""
    agent_type: str = ""
    resolution: Resolution = field(default_factory=Resolution)
    # layer id → the conversation (multi-session layer) it belongs to, for the focus part
    threads: Mapping[int, int] = field(default_factory=dict)
    focus: Mapping[int, float] = field(default_factory=dict)  # filled by `rank`
    period: Period | None = None  # the period the query names by its date (engine/dates.py)
    budget: int | None = None  # the context's token budget (None: not known)


Scorer = Callable[[Candidate, RankContext], Scored]


def _rrf(rank: int | None) -> float:
    return 0.0 if rank is None else 1.0 / (RRF_K + rank)


def fused(c: Candidate, weights: RankWeights) -> float:
    """Reciprocal-rank fusion of the candidate's vector and keyword ranks (0 when neither found it)."""
    return weights.vector * _rrf(c.vector_rank) + weights.keyword * _rrf(c.keyword_rank)


# Relevance falls linearly with the fused position over at least this many places, so a short
# result list does not make its last hit look irrelevant.
RELEVANCE_SPAN = 20
NEIGHBOUR_SHARE = 0.6
# A turn next to a hit that does not answer it (anything but the reply to a hit that asks) takes this
# share of NEIGHBOUR_SHARE: the reply to a question is the answer ("What did you name him?" ->
# "Biscuit."), the turns around a statement are mostly other talk. On the LoCoMo development set the
# reply to a question hit held evidence 5.5% of the time it was packed at 500 tokens, the other
# neighbours 0.3-2.6% (README, Benchmarks).
OTHER_NEIGHBOUR_SHARE = 0.5
# A hit's layer adds up to this share of the best possible fused score (engine/fusion.py
# layer_focus); chosen on the LoCoMo development set (see README, Benchmarks).
LAYER_FOCUS = 0.5
# A hit said in the period the query names by its date (engine/dates.py) adds this share of the best
# possible fused score, as a layer's lift does: "What did Dave open in May 2023?" is about May 2023.
# On the LoCoMo development set 0.5 paid more than 0.25 (README, Benchmarks).
DATE_LIFT = 0.5
# In a context of at most ASKING_BUDGET tokens (a dozen turns), a message hit that asks a question
# (`asks`) ranks with ASKING_SHARE of its fused score: it matches a question about its topic as well as
# the turn that answers it, but seldom holds the answer itself (on the LoCoMo development set a packed
# turn that asks held evidence 4.1% of the time at 500 tokens, one that states 10.8%). Its reply still
# takes the whole neighbour share of its unreduced score. In bigger contexts it paid nothing and cost
# multi-hop questions a little (README, Benchmarks), so there it ranks as any hit.
ASKING_SHARE = 0.65
ASKING_BUDGET = 500
_WORD = re.compile(r"\w")


def asks(text: str) -> bool:
    """Whether a turn ends with a question (a question mark, then nothing but spaces, quotes or emoji).

    In linear time: the last question mark, then no word character after it (a pattern such as
    `\\?\\W*$` searched over the text runs to the end from every question mark: 8.8 s on 40,000 of
    them followed by a letter)."""
    last = text.rfind("?")
    return last >= 0 and _WORD.search(text, last + 1) is None


def answers(c: Candidate, hit: Candidate | None) -> bool:
    """Whether `c`, a turn next to `hit`, is said after it and `hit` asks a question: its reply."""
    return hit is not None and asks(hit.content) and (c.created_at, c.id) > (hit.created_at, hit.id)


def relevance_by_position(
    candidates: list[Candidate], weights: RankWeights, period: Period | None = None, budget: int | None = None
) -> dict[tuple[str, int], float]:
    """Relevance in [0, 1] from each search hit's place in the fused list: 1 for the best hit.

    Fused values can be nearly flat, which would let recency or importance outvote retrieval;
    positions keep retrieval's order (engine/fusion.py) and give it the dynamic range it needs.
    Related items inherit a share of their neighbour's relevance (see retrieval.related_items).
    Hits with equal retrieval scores share a place: their order is only the database's tie-break,
    and must not outweigh a package's priority or agent type. A hit's layer lifts
    it by how well the layer's hits score together (engine/fusion.py layer_focus), and a hit said in
    the `period` the query names by its date by DATE_LIFT (its layer and neighbours with it). In a
    context of at most ASKING_BUDGET tokens (`budget`), a message hit that asks a question keeps
    ASKING_SHARE of its own score.
    """
    found = [c for c in candidates if c.vector_rank or c.keyword_rank]
    fused_score = fusion_scores(found, vector=weights.vector, keyword=weights.keyword)
    if period is not None:  # a hit said when the query's date names: its layer and neighbours share the lift
        dated = DATE_LIFT * (weights.vector + weights.keyword)
        fused_score = {
            c.key: fused_score[c.key] + (dated if period[0] <= c.created_at < period[1] else 0.0) for c in found
        }
    focus = layer_focus(found, fused_score)
    lift = LAYER_FOCUS * (weights.vector + weights.keyword)

    def company(c: Candidate) -> float:
        return lift * focus.get(c.layer_id, 0.0)

    small = budget is not None and budget <= ASKING_BUDGET

    def own(c: Candidate) -> float:  # in a small context, a turn that asks takes ASKING_SHARE of its score
        return fused_score[c.key] * (ASKING_SHARE if small and c.kind == "message" and asks(c.content) else 1.0)

    score = {c.key: own(c) + company(c) for c in found}
    hits = sorted(found, key=lambda c: (-score[c.key], -fused(c, weights)))  # ranks break ties
    span = max(len(hits), RELEVANCE_SPAN)
    out: dict[tuple[str, int], float] = {}
    place, previous = 0, None
    for index, c in enumerate(hits):
        scores = (c.vector_similarity, c.keyword_score, score[c.key])
        if scores != previous or scores[:2] == (None, None):
            place = index
        previous = scores
        out[c.key] = 1.0 - place / span
    ascending = sorted(score.values())
    _place_by_similarity(candidates, found, ascending, span, weights, company, out)
    hit_by_id = {c.id: c for c in found if c.source == Source.ITEM}
    for c in candidates:
        if c.neighbour_of is None and not c.inherited_relevance:
            continue
        inherited = c.inherited_relevance
        if c.neighbour_of is not None:
            # A turn next to a message hit takes the place a hit with a share of its hit's score (and
            # its layer's lift) would take: the whole share for the reply to a hit that asks.
            reply = answers(c, hit_by_id.get(c.neighbour_of))
            share = NEIGHBOUR_SHARE * (1.0 if reply else OTHER_NEIGHBOUR_SHARE)
            share = share * fused_score.get((c.source, c.neighbour_of), 0.0) + company(c)
            above = len(ascending) - bisect.bisect_right(ascending, share)
            inherited = max(inherited, (1.0 - above / span) if share > 0 else 0.0)
        if inherited > out.get(c.key, 0.0):
            out[c.key] = inherited
    return out


def _place_by_similarity(
    candidates: list[Candidate],
    hits: list[Candidate],
    ascending: list[float],
    span: int,
    weights: RankWeights,
    company: Callable[[Candidate], float],
    out: dict[tuple[str, int], float],
) -> None:
    """A candidate no search returned but whose similarity to the query is known (a layer or community
    summary) takes the place a hit of the vector search alone with that similarity, in its layer, would
    take among the hits (its similarity scaled as theirs, core/fusion.py, plus its layer's lift): it is
    ranked by relevance like an item."""
    sims = [c.vector_similarity for c in hits if c.vector_similarity is not None]
    if not sims:
        return
    low, high = min(sims), max(sims)
    for c in candidates:
        if c.searched or c.vector_similarity is None:
            continue
        scaled = (c.vector_similarity - low) / (high - low) if high > low else float(c.vector_similarity >= high)
        share = weights.vector * min(max(scaled, 0.0), 1.0) + company(c)
        above = len(ascending) - bisect.bisect_right(ascending, share)
        out[c.key] = max(out.get(c.key, 0.0), (1.0 - above / span) if share > 0 else 0.0)


FOCUS_TOP_HITS = 3


def thread_focus(
    candidates: list[Candidate], relevance: Mapping[tuple[str, int], float], threads: Mapping[int, int]
) -> dict[int, float]:
    """How strongly the search hits point at each conversation, in [0, 1] (1 for the strongest).

    A question asked above several conversations is nearly always about one of them, and its
    words also match turns of the others ("costs" in a renovation and in a budget). A
    conversation's weight is the sum of its best FOCUS_TOP_HITS hit relevances. Empty (no focus)
    unless the hits come from two conversations or more.
    """
    by_thread: dict[int, list[float]] = {}
    for c in candidates:
        thread = threads.get(c.layer_id)
        if thread is not None and (c.vector_rank or c.keyword_rank):
            by_thread.setdefault(thread, []).append(relevance.get(c.key, 0.0))
    if len(by_thread) < 2:
        return {}
    weight = {t: sum(sorted(values, reverse=True)[:FOCUS_TOP_HITS]) for t, values in by_thread.items()}
    top = max(weight.values())
    return {t: w / top for t, w in weight.items()} if top > 0 else {}


def fused_relevance(c: Candidate, weights: RankWeights) -> float:
    """Fused RRF scaled to [0, 1] for one candidate on its own (seeds for related expansion)."""
    fused_max = (weights.vector + weights.keyword) / (RRF_K + 1)
    return fused(c, weights) / fused_max if fused_max > 0 else 0.0


def score_parts(c: Candidate, ctx: RankContext) -> dict[str, float]:
    """Every applicable part of the candidate's score, each in [0, 1]."""
    w = ctx.weights
    age_days = max((ctx.now - c.created_at).total_seconds(), 0.0) / 86400.0
    parts = {
        "relevance": ctx.relevance.get(c.key, 0.0) if ctx.relevance else fused_relevance(c, w),
        "recency": math.pow(0.5, age_days / max(w.recency_half_life_days, 1e-6)),
        "importance": min(max(c.importance, 0.0), 1.0),
    }
    if c.confidence is not None:
        parts["confidence"] = min(max(c.confidence, 0.0), 1.0)
    if c.priority in PRIORITY_VALUE:
        parts["priority"] = PRIORITY_VALUE[c.priority]
    if ctx.group_id and c.group_id:
        parts["group"] = 1.0 if c.group_id == ctx.group_id else 0.0
    if ctx.agent_type and c.kind == "package":
        parts["agent_type"] = 1.0 if ctx.agent_type in c.agent_types else (0.5 if not c.agent_types else 0.0)
    if c.kind == "package" and c.type == "strategy":
        parts["helpfulness"] = min(max(c.helpfulness, 0.0), 1.0)
    thread = ctx.threads.get(c.layer_id)
    if thread is not None and ctx.focus:
        parts["focus"] = ctx.focus.get(thread, 0.0)
    if c.distance is not None:
        parts["distance"] = math.pow(0.5, c.distance / max(ctx.resolution.full_context_distance, 1))
    return parts


def weighted_score(c: Candidate, ctx: RankContext) -> Scored:
    """The default scorer: the weighted mean of the applicable parts."""
    parts = score_parts(c, ctx)
    w = ctx.weights
    weights = [getattr(w, name) for name in parts]
    total = sum(weights)
    products = [weight * value for weight, value in zip(weights, parts.values(), strict=True)]
    score = sum(products) / total if total > 0 else 0.0
    trace_parts = dict(parts)
    if c.vector_similarity is not None:
        trace_parts["vector_similarity"] = c.vector_similarity
    if c.vector_rank is not None:
        trace_parts["vector_rank"] = float(c.vector_rank)
    if c.keyword_score is not None:
        trace_parts["keyword_score"] = c.keyword_score
        trace_parts["keyword_rank"] = float(c.keyword_rank or 0)
    if c.pinned:
        trace_parts["pinned"] = 1.0
    return Scored(candidate=c, score=score, parts=trace_parts)


def recency_score(c: Candidate, ctx: RankContext) -> Scored:
    """A registered alternative: newest first, relevance only breaking ties."""
    base = weighted_score(c, ctx)
    score = 0.9 * base.parts["recency"] + 0.1 * base.parts["relevance"]
    return Scored(candidate=c, score=score, parts=base.parts)


def _group(c: Candidate) -> int:
    return 0 if c.pinned else (1 if c.source == "error_hint" else 2)


def rank(
    candidates: list[Candidate],
    *,
    context: RankContext,
    scorer: Scorer = weighted_score,
    failed: list[Candidate] | None = None,
) -> list[Scored]:
    """Pinned first, then error hints, then by score; ties by source and id for determinism.

    With a `failed` list, a candidate the scorer fails on is left out and appended to it (the
    caller warns); without one, the scorer's exception propagates."""
    relevance = relevance_by_position(candidates, context.weights, context.period, context.budget)
    context = replace(context, relevance=relevance, focus=thread_focus(candidates, relevance, context.threads))
    scored = []
    for c in candidates:
        try:
            scored.append(scorer(c, context))
        except Exception:
            if failed is None:
                raise
            failed.append(c)
    return sorted(scored, key=lambda s: (_group(s.candidate), -s.score, s.candidate.source, s.candidate.id))
