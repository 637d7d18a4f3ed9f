"""Erasure of stored idempotent answers and of the audit trail's copies (apps/core/erasure.py).

Audit entries keep their who, what and when: an entry about an erased item, or one whose label or
old and new values hold an erased text or name, has those values replaced by the marker.

An answer is kept sealed under its sender's key secret, which the server never holds, so nobody can
read it to look for the erased text; a replay would hand it back. Every finished answer of the
workspace's keys is deleted (a request under way keeps its claim): a client that repeats a key after
the erasure gets its request done again instead of the first answer.
"""

from __future__ import annotations

import json
from typing import Any

from apps.core.erasure import ANSWERS, MARKER, RECORDS, ErasureRun, contains, eraser, scrub_all
from apps.workspaces.models import AuditEntry, AuditTarget, IdempotencyKey


def idempotent_answers_erase(run: ErasureRun) -> None:
    answers = IdempotencyKey.objects.filter(api_key__workspace_id=run.workspace_id, status_code__isnull=False)
    found = answers.count()
    run.count("idempotent_answers", found=found)
    if run.dry_run:
        return
    removed, _ = answers.delete()
    run.count("idempotent_answers", removed=removed)


def _scrubbed(value: Any, texts: list[str]) -> Any:
    if isinstance(value, str):
        return scrub_all(value, texts)
    if isinstance(value, list):
        return [_scrubbed(v, texts) for v in value]
    if isinstance(value, dict):
        return {k: _scrubbed(v, texts) for k, v in value.items()}
    return value


def audit_erase(run: ErasureRun) -> None:
    """Read in batches of the workspace's entries (an erasure is rare; the trail is the workspace's)."""
    texts = run.texts()
    items = {str(i) for i in run.item_ids}
    hits: list[AuditEntry] = []
    for entry in AuditEntry.objects.filter(workspace_id=run.workspace_id).iterator(chunk_size=2000):
        about_item = entry.target_kind == AuditTarget.ITEM and entry.target_id in items
        if about_item or any(contains(entry.target_label, t) or contains(json.dumps(entry.changes), t) for t in texts):
            hits.append(entry)
    run.count("audit_entries", found=len(hits))
    if run.dry_run:
        return
    for entry in hits:
        if entry.target_kind == AuditTarget.ITEM and entry.target_id in items:
            entry.target_label = MARKER
            entry.changes = {field: [MARKER, MARKER] for field in entry.changes}
        else:
            entry.target_label = scrub_all(entry.target_label, texts)
            entry.changes = _scrubbed(entry.changes, texts)
    AuditEntry.objects.bulk_update(hits, ["target_label", "changes"], batch_size=500)
    run.count("audit_entries", rewritten=len(hits))


def register() -> None:
    eraser(ANSWERS, "workspaces.idempotent_answers", idempotent_answers_erase)
    eraser(RECORDS, "workspaces.audit", audit_erase)
