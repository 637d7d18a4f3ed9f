"""A known error pattern shared by the tests that need one: a missing table, fixed by migrating."""

from __future__ import annotations

from django.utils import timezone

from apps.error_patterns.models import ErrorPattern
from apps.workspaces.models import Workspace

MISSING_TABLE_SIGNATURE = "psycopg.errors.undefinedtable: relation # does not exist"
MIGRATE_FIX = "Run manage.py migrate before the tests."


def missing_table_pattern(workspace: Workspace) -> ErrorPattern:
    """A confident pattern (0.9) for `relation "…" does not exist`, seen just now."""
    now = timezone.now()
    return ErrorPattern.objects.create(
        workspace=workspace,
        signature=MISSING_TABLE_SIGNATURE,
        error_excerpt='relation "users" does not exist',
        solution=MIGRATE_FIX,
        confidence=0.9,
        first_seen=now,
        last_seen=now,
    )
