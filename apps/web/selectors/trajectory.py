"""A session's trajectory: its assemblies turn by turn, what each injected and what changed between them.

Tokens are split by item kind from each record's trace (a cache hit reads the trace of the answer it
came from; a record whose trace was not sampled counts as "unsampled"). Three queries whatever the
number of turns: the records, the originals of cache hits, and the titles of the items that moved.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from django.db.models import Q

from apps.assembly.models import AssemblyRecord
from apps.layers.models import Item, Layer
from apps.layers.selectors import layer_scope, layer_tree

MAX_TURNS = 200
UNSAMPLED = "unsampled"


@dataclass(frozen=True)
class Turn:
    """One assembly of the session, with what it injected and what moved since the turn before."""

    index: int
    trace_id: str
    created_at: datetime
    query: str
    tokens_used: int
    token_budget: int
    tokens_by_kind: dict[str, int]
    zone: str
    zone_changed: bool
    elapsed_ms: float
    cached: bool
    included: frozenset[tuple[str, int]]
    partial: bool = False  # the deadline passed: some sources are missing from this turn
    entered: tuple[tuple[str, int], ...] = ()
    left: tuple[tuple[str, int], ...] = ()
    entered_labels: tuple[str, ...] = ()
    left_labels: tuple[str, ...] = ()


@dataclass(frozen=True)
class Trajectory:
    """The turns in time order, every kind that appears, and a label for every item that moved."""

    turns: list[Turn]
    kinds: list[str]
    labels: dict[tuple[str, int], str] = field(default_factory=dict)
    truncated: bool = False  # more than MAX_TURNS assemblies: the newest are shown

    @property
    def max_tokens(self) -> int:
        return max([t.token_budget for t in self.turns] + [t.tokens_used for t in self.turns] + [1])

    @property
    def max_elapsed_ms(self) -> float:
        return max([t.elapsed_ms for t in self.turns] + [1.0])


def _included(trace: list[dict[str, Any]]) -> tuple[dict[str, int], frozenset[tuple[str, int]]]:
    tokens: dict[str, int] = defaultdict(int)
    keys = set()
    for entry in trace:
        if entry.get("decision") in ("included", "truncated"):
            tokens[str(entry.get("kind") or entry.get("source"))] += int(entry.get("tokens") or 0)
            keys.add((str(entry.get("source")), int(entry["id"])))
    return dict(tokens), frozenset(keys)


def session_records(*, layer: Layer) -> Q:
    """The assemblies of a session or conversation: made on it or below it, or naming it as their session."""
    _, own, descendants = layer_scope(tree=layer_tree(workspace_id=layer.workspace_id), layer_id=layer.pk)
    q = Q(layer_id__in=[*own, *descendants])
    if layer.external_id:
        q |= Q(session=layer.external_id)
    return Q(workspace_id=layer.workspace_id) & q


def session_trajectory(*, layer: Layer, limit: int = MAX_TURNS) -> Trajectory:
    """The layer's assemblies oldest first (the newest `limit`), with tokens by kind and item moves."""
    rows = list(
        AssemblyRecord.objects.filter(session_records(layer=layer))
        .order_by("-created_at", "-id")
        .values(
            "trace_id",
            "created_at",
            "request",
            "tokens_used",
            "token_budget",
            "elapsed_ms",
            "sampled",
            "partial",
            "trace",
        )[: limit + 1]
    )
    truncated = len(rows) > limit
    rows = rows[:limit][::-1]
    originals = {
        str(r["request"]["cached_from"])
        for r in rows
        if isinstance(r["request"], dict) and r["request"].get("cached_from")
    }
    original_rows = {
        str(trace_id): (request, trace)
        for trace_id, request, trace in AssemblyRecord.objects.filter(
            workspace_id=layer.workspace_id, trace_id__in=list(originals)
        ).values_list("trace_id", "request", "trace")
    }
    turns: list[Turn] = []
    previous: Turn | None = None
    for index, row in enumerate(rows):
        request = row["request"] if isinstance(row["request"], dict) else {}
        trace = row["trace"] or []
        cached_from = request.get("cached_from")
        if cached_from and str(cached_from) in original_rows:
            original_request, trace = original_rows[str(cached_from)]
            request = {**original_request, "query": request.get("query", "")}
        tokens, keys = _included(trace)
        if not trace and row["tokens_used"]:
            tokens = {UNSAMPLED: row["tokens_used"]}
        zone = str(request.get("zone") or "normal")
        turn = Turn(
            index=index + 1,
            trace_id=str(row["trace_id"]),
            created_at=row["created_at"],
            query=str(request.get("query") or ""),
            tokens_used=row["tokens_used"],
            token_budget=row["token_budget"],
            tokens_by_kind=tokens,
            zone=zone,
            zone_changed=previous is not None and previous.zone != zone,
            elapsed_ms=row["elapsed_ms"],
            cached=bool(cached_from),
            included=keys,
            partial=bool(row["partial"]),
            entered=tuple(sorted(keys - previous.included)) if previous is not None else tuple(sorted(keys)),
            left=tuple(sorted(previous.included - keys)) if previous is not None else (),
        )
        turns.append(turn)
        previous = turn
    kinds = sorted({kind for turn in turns for kind in turn.tokens_by_kind})
    labels = _labels(turns, workspace_id=layer.workspace_id)
    turns = [
        replace(
            turn,
            entered_labels=tuple(labels[key] for key in turn.entered),
            left_labels=tuple(labels[key] for key in turn.left),
        )
        for turn in turns
    ]
    return Trajectory(turns=turns, kinds=kinds, labels=labels, truncated=truncated)


def _labels(turns: list[Turn], *, workspace_id: int) -> dict[tuple[str, int], str]:
    """A short label for every item that entered or left (one query); summaries and hints by source."""
    moved = {key for turn in turns for key in (*turn.entered, *turn.left)}
    item_ids = [item_id for source, item_id in moved if source == "item"]
    labels: dict[tuple[str, int], str] = {}
    for item_id, kind, title, content in Item.objects.filter(workspace_id=workspace_id, pk__in=item_ids).values_list(
        "id", "kind", "title", "content"
    ):
        text = title or content
        labels[("item", item_id)] = f"{kind}: {text[:80]}{'…' if len(text) > 80 else ''}"
    for source, item_id in moved:
        labels.setdefault((source, item_id), f"{source.replace('_', ' ')} #{item_id}")
    return labels
