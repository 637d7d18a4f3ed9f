"""What assembly records, consumption reports and hints add up to per workspace, span and bucket."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from django.utils import timezone

from apps.assembly.models import Span
from apps.layers.selectors import layer_kinds

MINUTES_KEPT_HOURS = 2  # the dashboard reads minutes for the 1-hour range only
# Latency bins grow by 25 %: bin b holds [1.25**b, 1.25**(b+1)) ms, so a percentile read from
# the bins is within ~12 % of the true one. Below 1 ms is bin 0.
LATENCY_GROWTH = 1.25
# The record columns summed, in the order of the tuples `rollup_sums` takes.
FIELDS = (
    "id",
    "workspace_id",
    "created_at",
    "agent_type",
    "model",
    "zone",
    "elapsed_ms",
    "assembly_cache_hit",
    "embedding_cache_hit",
    "tokens_used",
    "token_budget",
    "overflow_count",
    "truncated_count",
    "chunk_tokens",
)
SUM_FIELDS = (
    "assemblies",
    "assembly_cache_hits",
    "embedding_lookups",
    "embedding_cache_hits",
    "tokens_used",
    "token_budget",
    "overflowed",
    "truncated",
    "elapsed_ms",
)
SPAN_SECONDS = {Span.MINUTE: 60, Span.QUARTER: 900, Span.HOUR: 3600, Span.SIX_HOURS: 21600}


def latency_bin(elapsed_ms: float) -> int:
    return 0 if elapsed_ms < 1 else int(math.log(elapsed_ms) / math.log(LATENCY_GROWTH))


def latency_of_bin(index: int) -> float:
    """The bin's geometric middle, in ms."""
    return float(LATENCY_GROWTH ** (index + 0.5))


@dataclass
class MinuteSums:
    """What one workspace's records of one bucket add up to."""

    values: dict[str, float] = field(default_factory=lambda: dict.fromkeys(SUM_FIELDS, 0))
    counts: dict[tuple[str, str], int] = field(default_factory=lambda: defaultdict(int))


Key = tuple[int, str, datetime]  # workspace id, span, bucket start


def bucket_of(moment: datetime, span: str) -> datetime:
    """The start of `moment`'s bucket of this span (aligned on the Unix epoch, in UTC)."""
    size = SPAN_SECONDS[Span(span)]
    return datetime.fromtimestamp(moment.timestamp() // size * size, tz=UTC)


def rollup_sums(
    rows: Sequence[tuple[Any, ...]], *, spans: Sequence[str] = tuple(SPAN_SECONDS)
) -> dict[Key, MinuteSums]:
    """Sum records (tuples in FIELDS order) per workspace, span and bucket. One query, for layer kinds."""
    minutes_from = timezone.now() - timedelta(hours=MINUTES_KEPT_HOURS)
    layer_ids = {chunk[1] for row in rows for chunk in row[13] or ()}
    kinds = layer_kinds(layer_ids=layer_ids) if layer_ids else {}
    out: dict[Key, MinuteSums] = defaultdict(MinuteSums)
    for (
        _id,
        workspace_id,
        created_at,
        agent_type,
        model,
        zone,
        elapsed,
        cache_hit,
        embed_hit,
        used,
        budget,
        overflow,
        truncated,
        chunks,
    ) in rows:
        for span in spans:
            if span == Span.MINUTE and created_at < minutes_from:
                continue  # minutes are read for the last hour only (and dropped after MINUTES_KEPT_HOURS)
            sums = out[(workspace_id, span, bucket_of(created_at, span))]
            v = sums.values
            v["assemblies"] += 1
            v["assembly_cache_hits"] += bool(cache_hit)
            v["embedding_lookups"] += embed_hit is not None
            v["embedding_cache_hits"] += bool(embed_hit)
            v["tokens_used"] += used
            v["token_budget"] += budget
            v["overflowed"] += overflow > 0
            v["truncated"] += truncated > 0
            v["elapsed_ms"] += elapsed
            c = sums.counts
            c[("latency_bin", str(latency_bin(elapsed)))] += 1
            c[("zone", zone or "unknown")] += 1
            c[("agent_type", agent_type or "(none)")] += 1
            c[("model", model or "(none)")] += 1
            for kind, layer_id, tokens in chunks or ():
                c[("item_kind", kind)] += tokens
                c[("layer_kind", kinds.get(layer_id, "deleted"))] += tokens
    return out


def consumption_sums(
    rows: Sequence[tuple[Any, ...]], *, spans: Sequence[str] = tuple(SPAN_SECONDS)
) -> dict[Key, MinuteSums]:
    """Used and injected packages per workspace, span and bucket of the report time."""
    minutes_from = timezone.now() - timedelta(hours=MINUTES_KEPT_HOURS)
    out: dict[Key, MinuteSums] = defaultdict(MinuteSums)
    for workspace_id, reported_at, used, injected in rows:
        for span in spans:
            if span == Span.MINUTE and reported_at < minutes_from:
                continue
            counts = out[(workspace_id, span, bucket_of(reported_at, span))].counts
            counts[("consumption", "used")] += used or 0
            counts[("consumption", "injected")] += injected or 0
    return out


def hint_sums(rows: Sequence[tuple[Any, ...]], *, spans: Sequence[str] = tuple(SPAN_SECONDS)) -> dict[Key, MinuteSums]:
    """Hints injected and failures after a hint per workspace, span and bucket."""
    minutes_from = timezone.now() - timedelta(hours=MINUTES_KEPT_HOURS)
    out: dict[Key, MinuteSums] = defaultdict(MinuteSums)
    for workspace_id, key, at in rows:
        for span in spans:
            if span == Span.MINUTE and at < minutes_from:
                continue
            out[(workspace_id, span, bucket_of(at, span))].counts[("hints", key)] += 1
    return out
