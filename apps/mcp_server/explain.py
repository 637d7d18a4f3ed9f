"""A decision trace (GET /api/v1/traces/{id}/) told in a few lines an LLM can read."""

from __future__ import annotations

from collections import Counter
from typing import Any


def _entry_line(entry: dict[str, Any]) -> str:
    name = entry.get("external_id") or f"#{entry.get('id')}"
    kind = "/".join(x for x in (entry.get("kind"), entry.get("type")) if x)
    found = f" found by {entry['origin']}" if entry.get("origin") else ""  # vector, keyword, both, neighbour, ...
    return (
        f"- {name} ({kind}, layer {entry.get('layer')}, {entry.get('source')}{found}): score {entry.get('score')}, "
        f"{entry.get('tokens')} tokens at depth {entry.get('depth')}; {entry.get('reason')}"
    )


def trace_explain(trace: dict[str, Any], *, max_items: int = 10) -> str:
    """What was asked, what was spent, what got in (best first) and why the rest stayed out."""
    request = trace.get("request") or {}
    entries: list[dict[str, Any]] = list(trace.get("trace") or [])
    kept = [e for e in entries if e.get("decision") in ("included", "truncated")]
    left = [e for e in entries if e.get("decision") not in ("included", "truncated")]
    lines = [
        f"Trace {trace.get('trace_id')} ({trace.get('created_at')}), layer {trace.get('layer')}.",
        f"Query: {request.get('query')!r}." if request.get("query") else "No query text (vector only or cached).",
        f"Spent {trace.get('tokens_used')} of {trace.get('token_budget')} tokens ({trace.get('model')}, "
        f"{trace.get('encoding')}) on {trace.get('items_included')} items out of "
        f"{trace.get('candidates_considered')} candidates; {trace.get('truncated_count')} truncated, "
        f"{trace.get('overflow_count')} more did not fit; {trace.get('elapsed_ms')} ms"
        + (", served from the cache." if trace.get("assembly_cache_hit") else "."),
    ]
    lines += [f"Warning: {w}" for w in trace.get("warnings") or []]
    if not trace.get("sampled", True) or not entries:
        lines.append("No per-candidate decisions were stored for this assembly (sampled out or a cache hit).")
        return "\n".join(lines)
    kept.sort(key=lambda e: -float(e.get("score") or 0))
    lines.append(f"Included ({len(kept)}), best first:")
    lines += [_entry_line(e) for e in kept[:max_items]]
    if len(kept) > max_items:
        lines.append(f"- ... and {len(kept) - max_items} more")
    if left:
        reasons = Counter(str(e.get("reason")) for e in left)
        lines.append(f"Left out ({len(left)}): " + ", ".join(f"{n} {r}" for r, n in reasons.most_common()) + ".")
        left.sort(key=lambda e: -float(e.get("score") or 0))
        lines.append("Best scored of those left out:")
        lines += [_entry_line(e) for e in left[: min(3, max_items)]]
    consumption = trace.get("consumption") or {}
    if consumption.get("injected_packages"):
        used = consumption.get("used_packages")
        lines.append(
            f"Packages injected: {consumption['injected_packages']}; "
            + ("not reported yet (report_consumption)." if used is None else f"reported used: {used}.")
        )
    return "\n".join(lines)
