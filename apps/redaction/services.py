"""Writes for redaction and the one entry point every app uses to redact agent text before storing it."""

from __future__ import annotations

import re

from django.db import IntegrityError, transaction

from apps.core import cache
from apps.core.errors import Conflict, InvalidInput, TooLarge
from apps.core.field_errors import INVALID_KIND, INVALID_VALUE
from apps.metrics.registry import REDACTION_FINDINGS
from apps.redaction.allowpatterns import (
    MAX_PATTERN_LENGTH,
    MAX_PATTERNS,
    UnsupportedPattern,
    compile_pattern,
    matches_everything,
)
from apps.redaction.errors import (
    ALLOWLIST_ENTRY_EXISTS,
    INVALID_PATTERN,
    TEXT_TOO_COSTLY,
    TOO_MANY_PATTERNS,
    UNSUPPORTED_PATTERN,
)
from apps.redaction.models import AllowKind, AllowlistEntry
from apps.redaction.redactor import Allow, Redaction, RedactionTooCostly, redact
from apps.redaction.selectors import allow_cache_key, workspace_allow
from apps.workspaces.models import Workspace
from apps.workspaces.services import workspace_lock


def text_redact(*, workspace_id: int, text: str, allow: Allow | None = None) -> Redaction:
    """`text` redacted with the workspace's allow-list (or `allow`: NO_ALLOW redacts everything the
    redactor finds); call it before storing anything an agent sent.

    A text the redactor refuses (over its length, or over its time budget) is refused here with 413
    `text_too_costly`: nothing unredacted is returned or stored.
    """
    try:
        result = redact(text, allow=workspace_allow(workspace_id) if allow is None else allow)
    except RedactionTooCostly as exc:
        raise TooLarge(f"{exc}; send a shorter text", code=TEXT_TOO_COSTLY) from exc
    for finding in result.findings:
        REDACTION_FINDINGS.labels(type=finding.type).inc()
    return result


def label_redact(*, workspace_id: int, text: str, max_length: int, allow: Allow | None = None) -> str:
    """A short label (group id, agent type) redacted and cut back to its column's length: a marker
    can be longer than the secret it replaces."""
    return text_redact(workspace_id=workspace_id, text=text, allow=allow).text[:max_length] if text else ""


def allowlist_entry_create(*, workspace: Workspace, kind: str, value: str, note: str = "") -> AllowlistEntry:
    """Add a false positive to keep. A pattern must compile and must not match everything."""
    if kind not in AllowKind.values:
        raise InvalidInput(f"kind must be one of {', '.join(AllowKind.values)}", code=INVALID_KIND)
    if not value.strip():
        raise InvalidInput("value must not be empty", code=INVALID_VALUE)
    if kind == AllowKind.PATTERN:
        _validate_pattern(value)
    try:
        with transaction.atomic():
            if kind == AllowKind.PATTERN:
                _check_pattern_count(workspace)
            entry = AllowlistEntry.objects.create(workspace=workspace, kind=kind, value=value, note=note)
    except IntegrityError as exc:
        raise Conflict("this allow-list entry exists already", code=ALLOWLIST_ENTRY_EXISTS) from exc
    _forget(workspace.pk)
    return entry


def _validate_pattern(value: str) -> None:
    """A pattern must be short, compile with RE2 (linear-time matching), and not match everything."""
    if len(value) > MAX_PATTERN_LENGTH:
        raise InvalidInput(f"a pattern is at most {MAX_PATTERN_LENGTH} characters", code=INVALID_PATTERN)
    try:
        compiled = compile_pattern(value)
    except re.error as exc:
        raise InvalidInput(f"value is not a valid regular expression: {exc}", code=INVALID_PATTERN) from exc
    except UnsupportedPattern as exc:
        raise InvalidInput(
            f"patterns run on RE2, which has no lookarounds or backreferences (so matching stays linear): {exc}",
            code=UNSUPPORTED_PATTERN,
        ) from exc
    if matches_everything(compiled):
        raise InvalidInput("the pattern would allow any value; make it specific", code=INVALID_PATTERN)


def _check_pattern_count(workspace: Workspace) -> None:
    """At most MAX_PATTERNS patterns per workspace: each one runs on every finding of every redaction.

    The workspace row is locked so two concurrent additions cannot both pass the count.
    """
    workspace_lock(workspace_id=workspace.pk)
    count = AllowlistEntry.objects.filter(workspace=workspace, kind=AllowKind.PATTERN).count()
    if count >= MAX_PATTERNS:
        raise InvalidInput(
            f"a workspace keeps at most {MAX_PATTERNS} allow-list patterns; delete one first",
            code=TOO_MANY_PATTERNS,
            details={"limit": MAX_PATTERNS},
        )


def allowlist_entry_delete(*, entry: AllowlistEntry) -> None:
    workspace_id = entry.workspace_id
    entry.delete()
    _forget(workspace_id)


def _forget(workspace_id: int) -> None:
    cache.set_value(allow_cache_key(workspace_id), None, 1)
    transaction.on_commit(lambda: cache.set_value(allow_cache_key(workspace_id), None, 1))
