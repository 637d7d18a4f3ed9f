"""The audit page's rows: each entry with its changed fields as text (secrets were masked when it was kept)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.core.paginator import Page, Paginator

from apps.workspaces.models import AuditEntry, AuditTarget, Workspace
from apps.workspaces.selectors import AuditFilters, audit_entries

PAGE_SIZE = 50
UNSET = "—"


@dataclass(frozen=True)
class Change:
    field: str
    old: str
    new: str


@dataclass(frozen=True)
class AuditRow:
    id: int
    created_at: datetime
    actor: str
    actor_kind: str
    kind: str
    kind_label: str
    target_id: str
    target_label: str
    action: str
    changes: tuple[Change, ...]


def shown(value: Any) -> str:
    """A kept value as the page shows it: text as is, anything else as compact JSON, unset as a dash."""
    if value is None:
        return UNSET
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


def _row(entry: AuditEntry) -> AuditRow:
    changes = entry.changes if isinstance(entry.changes, dict) else {}
    return AuditRow(
        id=entry.pk,
        created_at=entry.created_at,
        actor=entry.actor,
        actor_kind=entry.actor_kind,
        kind=entry.target_kind,
        kind_label=str(AuditTarget(entry.target_kind).label) if entry.target_kind in AuditTarget.values else "",
        target_id=entry.target_id,
        target_label=entry.target_label,
        action=entry.action,
        changes=tuple(
            Change(field=name, old=shown(pair[0]), new=shown(pair[1]))
            for name, pair in changes.items()
            if isinstance(pair, list) and len(pair) == 2
        ),
    )


@dataclass(frozen=True)
class AuditPage:
    rows: list[AuditRow]
    page: Page[AuditEntry]


def audit_page(*, workspace: Workspace, filters: AuditFilters, number: str | int) -> AuditPage:
    """One page of the workspace's filtered trail, newest first (two queries: the count and the rows)."""
    page = Paginator(audit_entries(workspace=workspace, filters=filters), PAGE_SIZE).get_page(number)
    return AuditPage(rows=[_row(entry) for entry in page.object_list], page=page)
