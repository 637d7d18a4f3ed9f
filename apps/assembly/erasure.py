"""Erasure in assembly records and the assembly cache (apps/core/erasure.py).

A record keeps its figures (tokens, budget, timings, decisions, scores, chunk kinds): what goes is
text. A record whose trace names an erased item, or a summary or community of a touched layer, has
its context replaced by the marker (any chunk of it may be the erased text, cut or whole) and those
entries' external ids too. A text match, and the external id of a deleted layer (a user's proxy
session), is replaced by the marker in every string of the record: the query and the rest of the
request, the context, the trace, the warnings, the session and group.
Queued records are written first, so none arrives after the erasure with the text. Cached contexts
of the workspace are dropped (a content version moves on as well, so none would be served again).
"""

from __future__ import annotations

from typing import Any

from django.db import connection, transaction

from apps.assembly.models import AssemblyRecord
from apps.assembly.services.cache import cached_drop
from apps.assembly.services.record_writer import records_flush
from apps.core.erasure import ANSWERS, MARKER, RECORDS, ErasureRun, eraser, like_pattern, scrub_all

_NAMED_SQL = """
SELECT r.id FROM assembly_assemblyrecord r
WHERE r.workspace_id = %(workspace)s AND (
    EXISTS (
        SELECT 1 FROM jsonb_array_elements(CASE WHEN jsonb_typeof(r.trace) = 'array' THEN r.trace ELSE '[]' END) e
        WHERE (e->>'source' = 'item' AND e->>'id' = ANY(%(items)s))
           OR (e->>'source' IN ('summary', 'community') AND e->>'layer' = ANY(%(layers)s))
    )
    OR (cardinality(%(patterns)s::text[]) > 0 AND (
        r.request::text ILIKE ANY(%(patterns)s) OR r.context ILIKE ANY(%(patterns)s)
        OR r.trace::text ILIKE ANY(%(patterns)s) OR r.warnings::text ILIKE ANY(%(patterns)s)
        OR r.session ILIKE ANY(%(patterns)s) OR r.group_id ILIKE ANY(%(patterns)s)
        OR r.agent_type ILIKE ANY(%(patterns)s)
    ))
)
ORDER BY r.id
"""


def _scrubbed(value: Any, texts: list[str]) -> Any:
    """Every string in a JSON value (keys too) with the texts replaced by the marker."""
    if isinstance(value, str):
        return scrub_all(value, texts)
    if isinstance(value, list):
        return [_scrubbed(v, texts) for v in value]
    if isinstance(value, dict):
        return {scrub_all(k, texts): _scrubbed(v, texts) for k, v in value.items()}
    return value


def _names_erased(record: AssemblyRecord, items: set[int], layers: set[int]) -> bool:
    for entry in record.trace if isinstance(record.trace, list) else []:
        if not isinstance(entry, dict):
            continue
        if entry.get("source") == "item" and entry.get("id") in items:
            return True
        if entry.get("source") in ("summary", "community") and entry.get("layer") in layers:
            return True
    return False


def _text_fields(record: AssemblyRecord) -> tuple[Any, ...]:
    return (
        record.request,
        record.context,
        record.trace,
        record.warnings,
        record.session,
        record.group_id,
        record.agent_type,
    )


def _rewrite(record: AssemblyRecord, run: ErasureRun) -> bool:
    """Rewrite the record in place; whether anything changed."""
    texts = run.texts()
    before = _text_fields(record)
    if _names_erased(record, run.item_ids, run.touched_layers):
        record.context = MARKER if record.context else ""
        record.trace = [
            {**e, "external_id": MARKER}
            if isinstance(e, dict)
            and e.get("source") == "item"
            and e.get("id") in run.item_ids
            and e.get("external_id")
            else e
            for e in record.trace
        ]
    if texts:
        record.request = _scrubbed(record.request, texts)
        record.context = scrub_all(record.context, texts)
        record.trace = _scrubbed(record.trace, texts)
        record.warnings = _scrubbed(record.warnings, texts)
        record.session = scrub_all(record.session, texts)
        record.group_id = scrub_all(record.group_id, texts)
        record.agent_type = scrub_all(record.agent_type, texts)
    return before != _text_fields(record)


def records_erase(run: ErasureRun) -> None:
    records_flush()
    params: dict[str, Any] = {
        "workspace": run.workspace_id,
        "items": [str(i) for i in run.item_ids],
        "layers": [str(i) for i in run.touched_layers],
        "patterns": [like_pattern(t) for t in run.texts()],
    }
    with connection.cursor() as cur:
        cur.execute(_NAMED_SQL, params)
        ids = [row[0] for row in cur.fetchall()]
    run.count("assembly_records", found=len(ids))
    if run.dry_run:
        return
    rewritten = 0
    fields = ["request", "context", "trace", "warnings", "session", "group_id", "agent_type"]
    for start in range(0, len(ids), 500):
        with transaction.atomic():
            batch = list(AssemblyRecord.objects.select_for_update().filter(pk__in=ids[start : start + 500]))
            changed = [record for record in batch if _rewrite(record, run)]
            AssemblyRecord.objects.bulk_update(changed, fields)
            rewritten += len(changed)
    run.count("assembly_records", rewritten=rewritten)


def cache_erase(run: ErasureRun) -> None:
    if run.dry_run:
        run.count("cached_contexts")
        return
    dropped = cached_drop(workspace_id=run.workspace_id)
    run.count("cached_contexts", found=dropped, removed=dropped)


def register() -> None:
    eraser(RECORDS, "assembly.records", records_erase)
    eraser(ANSWERS, "assembly.cache", cache_erase)
