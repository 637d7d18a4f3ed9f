"""Decision-trace entries made readable: every candidate with its text, layer, origin, score parts and decision.

A trace keeps, per candidate, ids and numbers only; the text comes from the rows themselves
(items, layer summaries, error patterns, communities), one query per source whatever the
number of candidates. Used by the preview (what was left out) and the console's trace page.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from django.urls import reverse

from apps.conversations.selectors import community_texts
from apps.engine.types import Reason, Source
from apps.error_patterns.selectors import pattern_texts
from apps.layers.selectors import item_texts, layer_names
from apps.summaries.selectors import summary_texts

EXCERPT_CHARS = 220
# The parts of a score in the order the table shows them (engine/rank.py); the others follow by name.
PART_ORDER = (
    "relevance",
    "vector_similarity",
    "vector_rank",
    "keyword_score",
    "keyword_rank",
    "recency",
    "importance",
    "confidence",
    "priority",
    "group",
    "agent_type",
    "helpfulness",
    "focus",
    "distance",
    "pinned",
)
RANK_PARTS = frozenset({"vector_rank", "keyword_rank"})
# Every reason of the engine's vocabulary (engine/types.py Reason) in words.
REASONS: dict[str, str] = {
    Reason.OVER_BUDGET: "did not fit the token budget",
    Reason.OVER_LIMIT: "over its kind's package limit",
    Reason.ZONE: "the token zone allows no more",
    Reason.DUPLICATE: "a duplicate of a candidate above",
    Reason.DUPLICATE_TEXT: "every sentence of it is already in the context",
    Reason.DEADLINE: "the deadline passed before its turn",
    Reason.FAILED: "it could not be ranked or rendered",
    Reason.HIDDEN_BY_DISTANCE: "too far back in the conversation",
    Reason.FILTERED: "outside the named conversation",
    Reason.KIND_FILTER: "not of the requested kinds or types",
    Reason.OTHER_BRANCH: "on another branch of the conversation",
    Reason.IN_COMMUNITY: "its community's summary stands in for it",
    Reason.SUPERSEDED: "superseded by a newer item",
    Reason.IN_PROMPT: "the caller's prompt carries it already",
    Reason.PROFILE_EXCLUDED: "the agent profile excludes it",
    Reason.BELOW_FLOOR: "less similar to the query than its best hits",
}


def reason_text(reason: str, superseded_by: int | None = None) -> str:
    """A left-out candidate's reason in words ("superseded by #12" names the item that replaced it)."""
    if reason == Reason.SUPERSEDED and superseded_by is not None:
        return f"superseded by #{superseded_by}"
    return REASONS.get(reason, reason.replace("_", " "))


def source_url(*, source: str, id: int, layer_id: int) -> str:
    """The page that shows a chunk's or candidate's source: an item's row in its layer, a layer summary's
    layer, a known fix's pattern, a community's session (its graph); "" when there is none."""
    if source == Source.ITEM:
        return reverse("web:layer-item", args=[layer_id, id])
    if source == Source.SUMMARY:
        return reverse("web:layer", args=[id])  # a layer summary's id is its layer's
    if source == Source.ERROR_HINT:
        return reverse("web:pattern", args=[id])
    if source == Source.COMMUNITY and layer_id:
        return reverse("web:session", args=[layer_id]) + "#graph"
    return ""


@dataclass(frozen=True)
class CandidateRow:
    """One candidate as the trace table shows it."""

    rank: int
    source: str
    id: int
    origin: str  # engine/candidates.py ORIGINS: vector | keyword | both | pinned | hint | summary | ...
    kind: str
    type: str
    layer_id: int
    layer_name: str
    excerpt: str
    score: float
    parts: tuple[tuple[str, str], ...]  # (name, formatted value)
    decision: str  # included | truncated | excluded
    depth: str
    reason: str
    tokens: int
    external_id: str | None = None
    superseded_by: int | None = None

    @property
    def url(self) -> str:
        return source_url(source=self.source, id=self.id, layer_id=self.layer_id)

    @property
    def included(self) -> bool:
        return self.decision in ("included", "truncated")

    @property
    def pinned(self) -> bool:
        """Pinned by an operator, whatever search also found it (its origin then says which)."""
        return any(name == "pinned" and value != "0" for name, value in self.parts)

    @property
    def decision_text(self) -> str:
        if self.decision == "included":
            return f"included at {self.depth}"
        if self.decision == "truncated":
            return f"included at {self.depth}, {self.reason}"
        return f"left out: {reason_text(self.reason, self.superseded_by)}"


def origin_of(entry: dict[str, Any]) -> str:
    """Where a candidate came from: the engine's `origin` (engine/candidates.py ORIGINS), or for a
    trace recorded before it kept one, the best guess from its source and score parts."""
    if entry.get("origin"):
        return str(entry["origin"])
    source, parts = entry.get("source"), entry.get("parts") or {}
    if source == "error_hint":
        return "hint"
    if source in ("summary", "community"):
        return str(source)
    searches = [name for name in ("vector", "keyword") if f"{name}_rank" in parts]
    if searches:
        return "both" if len(searches) == 2 else searches[0]
    if parts.get("pinned"):
        return "pinned"
    if entry.get("kind") == "message":  # the conversation window or a turn next to a message hit
        return "conversation"
    return "related"


def _format_part(name: str, value: float) -> str:
    return str(int(value)) if name in RANK_PARTS or name == "pinned" else f"{value:.3f}"


def _parts(parts: dict[str, float]) -> tuple[tuple[str, str], ...]:
    names = [n for n in PART_ORDER if n in parts] + sorted(n for n in parts if n not in PART_ORDER)
    return tuple((name, _format_part(name, float(parts[name]))) for name in names)


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= EXCERPT_CHARS else text[: EXCERPT_CHARS - 1] + "…"


def candidate_texts(*, workspace_id: int, keys: set[tuple[str, int]]) -> dict[tuple[str, int], str]:
    """An excerpt for each (source, id): items, layer summaries, error-pattern hints, communities."""
    wanted: dict[str, list[int]] = defaultdict(list)
    for source, key_id in keys:
        wanted[source].append(key_id)
    out: dict[tuple[str, int], str] = {}
    if wanted.get("item"):
        for item_id, (_kind, title, content) in item_texts(workspace_id=workspace_id, item_ids=wanted["item"]).items():
            out[("item", item_id)] = _clip(f"{title}: {content}" if title else content)
    if wanted.get("summary"):
        order = {"detailed": 0, "paragraph": 1, "sentence": 2}
        for layer_id, rows in summary_texts(workspace_id=workspace_id, layer_ids=wanted["summary"]).items():
            _depth, text = min(rows, key=lambda row: order.get(row[0], 9))
            out[("summary", layer_id)] = _clip(text)
    if wanted.get("error_hint"):
        hints = pattern_texts(workspace_id=workspace_id, pattern_ids=wanted["error_hint"])
        for pattern_id, (signature, solution) in hints.items():
            out[("error_hint", pattern_id)] = _clip(f"{signature} → {solution}")
    if wanted.get("community"):
        found = community_texts(workspace_id=workspace_id, community_ids=wanted["community"])
        for community_id, (title, summary) in found.items():
            out[("community", community_id)] = _clip(f"{title}: {summary}")
    return out


def trace_rows(*, workspace_id: int, trace: list[dict[str, Any]]) -> list[CandidateRow]:
    """Every trace entry as a row, in the engine's order (packing order: pinned, hints, then score)."""
    keys = {(str(entry["source"]), int(entry["id"])) for entry in trace}
    texts = candidate_texts(workspace_id=workspace_id, keys=keys)
    layer_ids = {int(entry["layer"]) for entry in trace if entry.get("layer") is not None}
    names = layer_names(workspace_id=workspace_id, layer_ids=layer_ids)
    rows = []
    for index, entry in enumerate(trace, start=1):
        key = (str(entry["source"]), int(entry["id"]))
        layer_id = int(entry.get("layer") or 0)
        rows.append(
            CandidateRow(
                rank=index,
                source=key[0],
                id=key[1],
                origin=origin_of(entry),
                kind=str(entry.get("kind") or ""),
                type=str(entry.get("type") or ""),
                layer_id=layer_id,
                layer_name=names.get(layer_id, f"layer {layer_id} (deleted)"),
                excerpt=texts.get(key, "(no longer stored)"),
                score=float(entry.get("score") or 0.0),
                parts=_parts(entry.get("parts") or {}),
                decision=str(entry.get("decision") or ""),
                depth=str(entry.get("depth") or ""),
                reason=str(entry.get("reason") or ""),
                tokens=int(entry.get("tokens") or 0),
                external_id=entry.get("external_id"),
                superseded_by=entry.get("superseded_by"),
            )
        )
    return rows


def included_rows(*, workspace_id: int, trace: list[dict[str, Any]]) -> dict[tuple[str, int], CandidateRow]:
    """The rows of the candidates that went into the context, by (source, id) (the first of duplicates)."""
    rows: dict[tuple[str, int], CandidateRow] = {}
    for row in trace_rows(workspace_id=workspace_id, trace=trace):
        if row.included:
            rows.setdefault((row.source, row.id), row)
    return rows
