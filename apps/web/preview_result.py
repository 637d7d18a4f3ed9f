"""What the preview page shows of one assembled context: the token bar split by kind and by layer,
the what-if rows (each a link that switches the budget), pinned and hint markers, the overflow, and per
chunk the page of its source and what its actions need (views/preview_actions.py).

Built from the assembly service's preview answer in its wire shape (the API's Output), so the
page shows exactly what an agent would get.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from django.http import QueryDict

from apps.assembly.results import PreviewResult
from apps.assembly.serializers import preview_json
from apps.engine.types import Reason, Source
from apps.web.selectors.candidates import CandidateRow, source_url, trace_rows

# Overflow: what was left out for the budget or a package limit: "+N more available".
OVERFLOW_REASONS = ("over_budget", "over_limit")


@dataclass(frozen=True)
class Segment:
    """One part of a token bar: a kind or a layer, its tokens and its place in percent of the budget."""

    key: str
    label: str
    tokens: int
    x: float
    width: float
    colour: int  # which of the chart palette's colours (charts.css .layer-N)


@dataclass(frozen=True)
class WhatIfRow:
    token_budget: int
    tokens_used: int
    items_included: int
    truncated_count: int
    url: str
    current: bool


@dataclass(frozen=True)
class PreviewView:
    result: dict[str, Any]  # the API's answer: context, chunks, total_tokens, zone, warnings, trace_id, ...
    chunks: list[dict[str, Any]]  # the answer's chunks, with a marker and a layer label each
    by_kind: list[Segment]
    by_layer: list[Segment]
    what_if: list[WhatIfRow]
    overflow: list[CandidateRow]  # left out for the budget or a limit ("+N more available")
    left_out: list[CandidateRow]  # left out for any other reason (zone, distance, duplicate, ...)
    used_percent: float
    profile: str = ""  # the request's agent profile: the chunks' "exclude" acts on it
    query: str = ""  # the request's query string: the chunks' actions assemble it again

    @property
    def chunk_item_ids(self) -> set[int]:
        return {int(chunk["id"]) for chunk in self.chunks if chunk["is_item"]}

    @property
    def profile_excluded_ids(self) -> set[int]:
        """The items the profile left out (each offers "include again")."""
        return {row.id for row in self.left_out if row.source == Source.ITEM and row.reason == Reason.PROFILE_EXCLUDED}

    @property
    def free_tokens(self) -> int:
        return max(int(self.result.get("token_budget") or 0) - int(self.result.get("total_tokens") or 0), 0)

    @property
    def pinned_count(self) -> int:
        return sum(1 for chunk in self.chunks if chunk["pinned"])

    @property
    def hint_count(self) -> int:
        return sum(1 for chunk in self.chunks if chunk["source"] == "error_hint")


def preview_payload(preview: PreviewResult) -> tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]:
    """(answer, trace entries, what-if rows) of a preview, in the API's wire shape (PreviewOutput)."""
    body = preview_json(preview)
    trace, what_if = body.pop("trace"), body.pop("what_if")
    return body, trace, what_if


def _segments(totals: OrderedDict[str, tuple[str, int]], budget: int) -> list[Segment]:
    out, x = [], 0.0
    for index, (key, (label, tokens)) in enumerate(totals.items()):
        width = 100.0 * tokens / budget if budget else 0.0
        segment = Segment(key=key, label=label, tokens=tokens, x=round(x, 3), width=round(width, 3), colour=index % 6)
        out.append(segment)
        x += width
    return out


def _budget_url(query: QueryDict, budget: int) -> str:
    switched = query.copy()
    switched["token_budget"] = str(budget)
    return f"?{switched.urlencode()}"


def preview_view(
    *, workspace_id: int, preview: PreviewResult, query: QueryDict, layer_labels: dict[int, str], profile: str = ""
) -> PreviewView:
    """The page's view of a preview answer; `query` is the request's GET (the what-if links and the
    chunks' actions keep it), `profile` the agent profile it named."""
    answer, trace, what_if = preview_payload(preview)
    # Each candidate's importance as ranked (its score's part): "lower importance" says from what to what.
    importance = {(e["source"], e["id"]): (e.get("parts") or {}).get("importance") for e in trace}
    budget = int(answer.get("token_budget") or 0)
    by_kind: OrderedDict[str, tuple[str, int]] = OrderedDict()
    by_layer: OrderedDict[str, tuple[str, int]] = OrderedDict()
    chunks = []
    for chunk in answer["chunks"]:
        layer_label = layer_labels.get(chunk["layer"]) or chunk.get("layer_name") or f"layer {chunk['layer']}"
        kind = "hint" if chunk["source"] == "error_hint" else str(chunk["kind"])
        label, tokens = by_kind.get(kind, (kind.replace("_", " "), 0))
        by_kind[kind] = (label, tokens + int(chunk["tokens"]))
        key = str(chunk["layer"])
        label, tokens = by_layer.get(key, (layer_label, 0))
        by_layer[key] = (label, tokens + int(chunk["tokens"]))
        marker = "pinned" if chunk["pinned"] else ("known fix" if chunk["source"] == "error_hint" else "")
        chunks.append(
            {
                **chunk,
                "layer_label": layer_label,
                "marker": marker,
                "url": source_url(source=chunk["source"], id=chunk["id"], layer_id=chunk["layer"]),
                "is_item": chunk["source"] == Source.ITEM,
                "importance": importance.get((chunk["source"], chunk["id"])),
            }
        )
    rows = trace_rows(workspace_id=workspace_id, trace=trace)
    left = [row for row in rows if not row.included]
    used = int(answer.get("total_tokens") or 0)
    return PreviewView(
        result=answer,
        chunks=chunks,
        by_kind=_segments(by_kind, budget),
        by_layer=_segments(by_layer, budget),
        what_if=[
            WhatIfRow(
                token_budget=int(row["token_budget"]),
                tokens_used=int(row["tokens_used"]),
                items_included=int(row["items_included"]),
                truncated_count=int(row["truncated_count"]),
                url=_budget_url(query, int(row["token_budget"])),
                current=int(row["token_budget"]) == budget,
            )
            for row in what_if
        ],
        overflow=[row for row in left if row.reason in OVERFLOW_REASONS],
        left_out=[row for row in left if row.reason not in OVERFLOW_REASONS],
        used_percent=round(min(100.0, 100.0 * used / budget), 1) if budget else 0.0,
        profile=profile,
        query=query.urlencode(),
    )
