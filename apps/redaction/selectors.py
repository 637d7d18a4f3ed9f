"""Reads for redaction: a workspace's allow-list, as the redactor takes it."""

from __future__ import annotations

import functools
import re

from django.db.models import QuerySet

from apps.core import cache
from apps.core.errors import NotFound
from apps.redaction.allowpatterns import MAX_PATTERNS, AllowPattern, UnsupportedPattern, compile_pattern
from apps.redaction.errors import ALLOWLIST_ENTRY_NOT_FOUND
from apps.redaction.models import AllowKind, AllowlistEntry
from apps.redaction.redactor import NO_ALLOW, Allow
from apps.workspaces.models import Workspace

ALLOW_CACHE_SECONDS = 60


def allowlist_entries(*, workspace: Workspace) -> QuerySet[AllowlistEntry]:
    return AllowlistEntry.objects.filter(workspace=workspace).order_by("id")


def allowlist_entry_get(*, workspace: Workspace, entry_id: int) -> AllowlistEntry:
    entry = AllowlistEntry.objects.filter(workspace=workspace, pk=entry_id).first()
    if entry is None:
        raise NotFound(f"allow-list entry {entry_id} not found", code=ALLOWLIST_ENTRY_NOT_FOUND)
    return entry


def allow_cache_key(workspace_id: int) -> str:
    return f"redaction-allow:{workspace_id}"


def workspace_allow(workspace_id: int) -> Allow:
    """The workspace's allow-list, cached (the services drop the cache on every change)."""
    rows = cache.get_value(allow_cache_key(workspace_id))
    if not isinstance(rows, list):
        rows = list(AllowlistEntry.objects.filter(workspace_id=workspace_id).values_list("kind", "value"))
        cache.set_value(allow_cache_key(workspace_id), rows, ALLOW_CACHE_SECONDS)
    if not rows:
        return NO_ALLOW
    exact = frozenset(value for kind, value in rows if kind == AllowKind.EXACT)
    written = [value for kind, value in rows if kind == AllowKind.PATTERN][:MAX_PATTERNS]
    patterns = tuple(p for value in written if (p := _compiled(value)) is not None)
    return Allow(exact=exact, patterns=patterns)


@functools.lru_cache(maxsize=1024)
def _compiled(value: str) -> AllowPattern | None:
    """The entry's regex; one written around the API (admin, shell) that RE2 cannot compile allows nothing.

    Only the first MAX_PATTERNS of a workspace are read (the API refuses more), so a redaction runs
    at most that many, each in time linear in the value (apps/redaction/allowpatterns.py).
    """
    try:
        return compile_pattern(value)
    except (re.error, UnsupportedPattern):
        return None
