"""Writes for redaction and the one entry point every app uses to redact agent text before storing it."""

from __future__ import annotations

import re

from django.db import IntegrityError, transaction

from apps.core import cache
from apps.core.errors import Conflict, InvalidInput
from apps.metrics.registry import REDACTION_FINDINGS
from apps.redaction.models import AllowKind, AllowlistEntry
from apps.redaction.redactor import Redaction, redact
from apps.redaction.selectors import allow_cache_key, workspace_allow
from apps.workspaces.models import Workspace


def text_redact(*, workspace_id: int, text: str) -> Redaction:
    """`text` redacted with the workspace's allow-list; call it before storing anything an agent sent."""
    result = redact(text, allow=workspace_allow(workspace_id))
    for finding in result.findings:
        REDACTION_FINDINGS.labels(type=finding.type).inc()
    return result


def allowlist_entry_create(*, workspace: Workspace, kind: str, value: str, note: str = "") -> AllowlistEntry:
    """Add a false positive to keep. A pattern must compile and must not match everything."""
    if kind not in AllowKind.values:
        raise InvalidInput(f"kind must be one of {', '.join(AllowKind.values)}", code="invalid_kind")
    if not value.strip():
        raise InvalidInput("value must not be empty", code="invalid_value")
    if kind == AllowKind.PATTERN:
        try:
            compiled = re.compile(value)
        except re.error as exc:
            raise InvalidInput(f"value is not a valid regular expression: {exc}", code="invalid_pattern") from exc
        if compiled.fullmatch("") or compiled.fullmatch("x" * 40):
            raise InvalidInput("the pattern would allow any value; make it specific", code="invalid_pattern")
    try:
        with transaction.atomic():
            entry = AllowlistEntry.objects.create(workspace=workspace, kind=kind, value=value, note=note)
    except IntegrityError as exc:
        raise Conflict("this allow-list entry exists already", code="allowlist_entry_exists") from exc
    _forget(workspace.pk)
    return entry


def allowlist_entry_delete(*, entry: AllowlistEntry) -> None:
    workspace_id = entry.workspace_id
    entry.delete()
    _forget(workspace_id)


def _forget(workspace_id: int) -> None:
    cache.set_value(allow_cache_key(workspace_id), None, 1)
    transaction.on_commit(lambda: cache.set_value(allow_cache_key(workspace_id), None, 1))
