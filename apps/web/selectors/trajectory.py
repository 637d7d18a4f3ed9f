"""A session's trajectory: its assemblies turn by turn, what each injected and what changed between them.

Tokens are split by item kind from each record's trace (a cache hit reads the trace of the answer it
came from; a record whose trace was not sampled counts as "unsampled"). A long session is read a
window at a time: every turn's tokens for the overview, then the traces of the window's turns only.
Five queries whatever the number of turns: the layer tree, the overview, the window's records, the
originals of cache hits, and the titles of the items that moved.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from apps.assembly.recorded import request_decisions
from apps.assembly.selectors import records_requests, session_record_figures, session_records
from apps.layers.models import Layer
from apps.layers.selectors import item_texts, layer_scope, layer_tree

MAX_TURNS = 200  # the widest window
MAX_OVERVIEW = 5000  # turns in the overview strip (the newest)
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
    """A window of the turns in time order, every kind that appears in it, and a label for every item
    that moved; `total` turns in all, `overview` the (tokens used, budget) of each, oldest first."""

    turns: list[Turn]
    kinds: list[str]
    labels: dict[tuple[str, int], str] = field(default_factory=dict)
    total: int = 0
    start: int = 0  # the window is turns start + 1 .. start + len(turns) (1-based, oldest first)
    overview: list[tuple[int, int]] = field(default_factory=list)
    truncated: bool = False  # more than MAX_OVERVIEW assemblies: the overview holds the newest

    @property
    def end(self) -> int:
        return self.start + len(self.turns)

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


def session_trajectory(
    *,
    layer: Layer,
    end: int | None = None,
    span: int = MAX_TURNS,
    label_included: bool = False,
    page_runs: bool = False,
) -> Trajectory:
    """The window of `span` turns ending at turn `end` (1-based; the newest by default), oldest first,
    with tokens by kind and item moves (the first turn of the window compared with the one before it).
    `label_included` labels everything each turn injected, not only what moved. Page runs (previews,
    compares, replays) are left out unless `page_runs`."""
    # The assemblies of a session or conversation: made on it or below it, or naming it as their session.
    _, own, descendants = layer_scope(tree=layer_tree(workspace_id=layer.workspace_id), layer_id=layer.pk)
    layer_ids = [*own, *descendants]
    overview = session_record_figures(
        workspace_id=layer.workspace_id,
        layer_ids=layer_ids,
        session=layer.external_id,
        limit=MAX_OVERVIEW + 1,
        page_runs=page_runs,
    )
    truncated = len(overview) > MAX_OVERVIEW
    overview = overview[:MAX_OVERVIEW][::-1]
    total = len(overview)
    end = total if end is None else min(max(end, 1), total)
    span = min(max(span, 1), MAX_TURNS)
    start = max(end - span, 0)
    # newest first: skip the turns after the window, read the window and the turn before it
    rows = (
        session_records(
            workspace_id=layer.workspace_id,
            layer_ids=layer_ids,
            session=layer.external_id,
            offset=total - end,
            limit=end - start + 1,
            page_runs=page_runs,
        )
        if total
        else []
    )
    rows = rows[::-1]
    before = rows[0] if len(rows) > end - start else None
    window = rows[1:] if before is not None else rows
    originals = {
        str(r["request"]["cached_from"])
        for r in rows
        if isinstance(r["request"], dict) and r["request"].get("cached_from")
    }
    original_rows = records_requests(workspace_id=layer.workspace_id, trace_ids=originals)
    turns: list[Turn] = []
    previous = _turn(before, index=start, previous=None, originals=original_rows) if before is not None else None
    for offset, row in enumerate(window):
        turn = _turn(row, index=start + offset + 1, previous=previous, originals=original_rows)
        turns.append(turn)
        previous = turn
    kinds = sorted({kind for turn in turns for kind in turn.tokens_by_kind})
    labels = _labels(turns, workspace_id=layer.workspace_id, included=label_included)
    turns = [
        replace(
            turn,
            entered_labels=tuple(labels[key] for key in turn.entered),
            left_labels=tuple(labels[key] for key in turn.left),
        )
        for turn in turns
    ]
    return Trajectory(
        turns=turns, kinds=kinds, labels=labels, total=total, start=start, overview=overview, truncated=truncated
    )


def _turn(row: dict[str, Any], *, index: int, previous: Turn | None, originals: dict[str, tuple[Any, Any]]) -> Turn:
    request = row["request"] if isinstance(row["request"], dict) else {}
    trace = row["trace"] or []
    cached_from = request.get("cached_from")
    if cached_from and str(cached_from) in originals:
        original_request, trace = originals[str(cached_from)]
        request = {**original_request, "query": request.get("query", "")}
    tokens, keys = _included(trace)
    if not trace and row["tokens_used"]:
        tokens = {UNSAMPLED: row["tokens_used"]}
    zone = str(request_decisions(request).get("zone") or "normal")
    return Turn(
        index=index,
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


def _labels(turns: list[Turn], *, workspace_id: int, included: bool = False) -> dict[tuple[str, int], str]:
    """A short label for every item that entered or left, or was injected at all when `included`
    (one query); summaries and hints by source."""
    moved = {key for turn in turns for key in (*turn.entered, *turn.left, *(turn.included if included else ()))}
    item_ids = [item_id for source, item_id in moved if source == "item"]
    labels: dict[tuple[str, int], str] = {}
    for item_id, (kind, title, content) in item_texts(workspace_id=workspace_id, item_ids=item_ids).items():
        text = title or content
        labels[("item", item_id)] = f"{kind}: {text[:80]}{'…' if len(text) > 80 else ''}"
    for source, item_id in moved:
        labels.setdefault((source, item_id), f"{source.replace('_', ' ')} #{item_id}")
    return labels
