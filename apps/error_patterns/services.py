"""Writes for attempts and error patterns: capture fail → succeed, confidence feedback, hint bookkeeping, TTL.

Concurrency (agents report at once): every counter moves by an atomic `UPDATE... SET x = x + 1` or
an `INSERT ... ON CONFLICT DO UPDATE`; failed attempts and hint injections are claimed by an
`UPDATE ... RETURNING`, so two concurrent reports can never both count the same one. Whatever
PostgreSQL aborts (deadlock, serialization) is retried (`retry.py`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import connection, transaction
from django.db.models import F, Q
from django.utils import timezone

from apps.core.errors import InvalidInput
from apps.core.field_errors import INVALID_CONFIDENCE, INVALID_SOLUTION
from apps.core.versions import content_changed
from apps.error_patterns.models import Attempt, ErrorPattern, HintInjection, Outcome
from apps.error_patterns.retry import atomic_with_retry
from apps.error_patterns.signature import error_signature, excerpt
from apps.layers.models import Layer
from apps.metrics.registry import (
    ATTEMPTS_RECORDED,
    ERROR_HINTS_INJECTED,
    ERROR_PATTERNS_CAPTURED,
    ERROR_PATTERNS_EXPIRED,
)
from apps.redaction.services import label_redact, text_redact
from apps.workspaces import audit
from apps.workspaces.models import AuditTarget, Workspace


@dataclass(frozen=True)
class AttemptResult:
    attempt: Attempt
    captured: ErrorPattern | None  # the pattern this success captured or confirmed
    new_pattern: bool
    lowered: tuple[int, ...]  # patterns whose hint this failure counted against


def attempt_record(
    *,
    workspace: Workspace,
    layer: Layer,
    outcome: str,
    agent_type: str = "",
    group_id: str = "",
    iteration: int | None = None,
    error: str = "",
    solution: str = "",
    now: datetime | None = None,
) -> AttemptResult:
    """Record an attempt; a success after failures in the same session, agent type and group captures a pattern.

    Error, solution, group id and agent type are redacted before anything is written. A failure after
    a hint was injected into this session/agent/group lowers that pattern's confidence, once per injection.
    """
    now = now or timezone.now()
    error = text_redact(workspace_id=workspace.pk, text=error).text if error else ""
    solution = text_redact(workspace_id=workspace.pk, text=solution).text if solution else ""
    # Agents put anything in these labels (a ticket URL with a token, a key by mistake); the context
    # request redacts them the same way, so attempts and injections still match.
    group_id = label_redact(workspace_id=workspace.pk, text=group_id, max_length=200)
    agent_type = label_redact(workspace_id=workspace.pk, text=agent_type, max_length=100)
    signature = error_signature(error) if error.strip() else ""

    def write() -> AttemptResult:
        attempt = Attempt.objects.create(
            workspace=workspace,
            layer=layer,
            agent_type=agent_type,
            group_id=group_id,
            iteration=iteration,
            outcome=outcome,
            error=error,
            signature=signature,
            solution=solution,
            created_at=now,
        )
        lowered = _close_injections(attempt, failed=outcome == Outcome.FAILED)
        captured: ErrorPattern | None = None
        new = False
        if outcome == Outcome.SUCCEEDED:
            captured, new = _capture(attempt)
        elif signature:
            ErrorPattern.objects.filter(workspace=workspace, signature=signature, last_seen__lt=now).update(
                last_seen=now
            )
        content_changed(workspace.pk)  # hints depend on the last attempt and on confidences
        return AttemptResult(attempt=attempt, captured=captured, new_pattern=new, lowered=lowered)

    result = atomic_with_retry(write)
    ATTEMPTS_RECORDED.labels(outcome=outcome).inc()
    if result.captured is not None:
        ERROR_PATTERNS_CAPTURED.labels(kind="new" if result.new_pattern else "occurrence").inc()
    return result


def _scope(attempt: Attempt) -> Q:
    """Injections that belong to this attempt: same session; same agent type and group, or unnamed."""
    return (
        Q(workspace_id=attempt.workspace_id, layer_id=attempt.layer_id, resolved_at__isnull=True)
        & Q(agent_type__in=[attempt.agent_type, ""])
        & Q(group_id__in=[attempt.group_id, ""])
        & Q(created_at__lte=attempt.created_at)
    )


def _close_injections(attempt: Attempt, *, failed: bool) -> tuple[int, ...]:
    ids = list(HintInjection.objects.filter(_scope(attempt)).values_list("id", flat=True))
    if not ids:
        return ()
    with connection.cursor() as cursor:
        # Claim: of two concurrent reports, the second finds resolved_at set and claims nothing.
        cursor.execute(
            f"UPDATE {HintInjection._meta.db_table} SET resolved_at = %s, failed = %s "
            "WHERE id = ANY(%s) AND resolved_at IS NULL RETURNING pattern_id",
            [attempt.created_at, failed, ids],
        )
        pattern_ids = sorted({row[0] for row in cursor.fetchall()})
    if not failed or not pattern_ids:
        return ()
    penalty = settings.ERROR_PATTERN_FAILURE_PENALTY
    for pattern_id in pattern_ids:  # in id order, so concurrent writers lock rows in the same order
        ErrorPattern.objects.filter(pk=pattern_id).update(
            failures=F("failures") + 1, confidence=F("confidence") * (1 - penalty)
        )
    return tuple(pattern_ids)


def _capture(success: Attempt) -> tuple[ErrorPattern | None, bool]:
    """Claim the scope's unresolved failures; the latest one with an error becomes (or recurs as) a pattern."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {Attempt._meta.db_table} SET resolved = TRUE "
            "WHERE workspace_id = %s AND layer_id = %s AND agent_type = %s AND group_id = %s "
            "AND outcome = %s AND NOT resolved AND created_at <= %s "
            "RETURNING id, signature, error, created_at",
            [
                success.workspace_id,
                success.layer_id,
                success.agent_type,
                success.group_id,
                Outcome.FAILED,
                success.created_at,
            ],
        )
        failures = [row for row in cursor.fetchall() if row[1]]
    if not failures:
        return None, False
    _, signature, error, _ = max(failures, key=lambda row: (row[3], row[0]))
    pattern_id, inserted = _upsert_pattern(
        workspace_id=success.workspace_id,
        signature=signature,
        error=excerpt(error),
        solution=success.solution,
        now=success.created_at,
    )
    Attempt.objects.filter(pk=success.pk).update(pattern_id=pattern_id)
    success.pattern_id = pattern_id
    return ErrorPattern.objects.get(pk=pattern_id), inserted


def _upsert_pattern(*, workspace_id: int, signature: str, error: str, solution: str, now: datetime) -> tuple[int, bool]:
    """Insert the pattern, or count one more occurrence of it, in one statement (no lost increments)."""
    table = ErrorPattern._meta.db_table
    gain = settings.ERROR_PATTERN_OCCURRENCE_GAIN
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            INSERT INTO {table} AS p (workspace_id, signature, error_excerpt, solution, confidence,
                                      occurrences, failures, first_seen, last_seen)
            VALUES (%s, %s, %s, %s, %s, 1, 0, %s, %s)
            ON CONFLICT (workspace_id, signature) DO UPDATE SET
                occurrences = p.occurrences + 1,
                confidence = p.confidence + (1 - p.confidence) * %s,
                solution = CASE WHEN EXCLUDED.solution <> '' THEN EXCLUDED.solution ELSE p.solution END,
                error_excerpt = EXCLUDED.error_excerpt,
                last_seen = GREATEST(p.last_seen, EXCLUDED.last_seen)
            RETURNING id, (xmax = 0) AS inserted
            """,
            [workspace_id, signature, error, solution, settings.ERROR_PATTERN_INITIAL_CONFIDENCE, now, now, gain],
        )
        pattern_id, inserted = cursor.fetchone()
    return pattern_id, bool(inserted)


def pattern_update(*, pattern: ErrorPattern, solution: str, confidence: float) -> ErrorPattern:
    """An operator's correction of a captured pattern: its solution (redacted like an attempt's) and confidence."""
    if not solution.strip():
        raise InvalidInput("solution must not be empty", code=INVALID_SOLUTION)
    if not (math.isfinite(confidence) and 0.0 <= confidence <= 1.0):
        raise InvalidInput("confidence must be between 0 and 1", code=INVALID_CONFIDENCE)
    before = audit.fields_of(pattern, ["solution", "confidence"])
    pattern.solution = text_redact(workspace_id=pattern.workspace_id, text=solution).text
    pattern.confidence = confidence
    pattern.save(update_fields=["solution", "confidence"])
    audit.record(
        workspace_id=pattern.workspace_id,
        target_kind=AuditTarget.ERROR_PATTERN,
        action="update",
        target_id=pattern.pk,
        target_label=pattern.signature[:200],
        old=before,
        new=audit.fields_of(pattern, ["solution", "confidence"]),
    )
    return pattern


def pattern_delete(*, pattern: ErrorPattern) -> None:
    audit.record(
        workspace_id=pattern.workspace_id,
        target_kind=AuditTarget.ERROR_PATTERN,
        action="delete",
        target_id=pattern.pk,
        target_label=pattern.signature[:200],
        old=audit.fields_of(pattern, ["solution", "confidence"]),
    )
    pattern.delete()  # the post_delete signal bumps the workspace's content version


def hints_injected(
    *,
    workspace_id: int,
    layer_id: int,
    agent_type: str,
    group_id: str,
    pattern_ids: list[int],
    now: datetime | None = None,
) -> int:
    """Remember that these patterns' hints went into a context, unless an open injection says so already."""
    if not pattern_ids:
        return 0
    open_ = set(
        HintInjection.objects.filter(
            workspace_id=workspace_id,
            layer_id=layer_id,
            agent_type=agent_type,
            group_id=group_id,
            resolved_at__isnull=True,
            pattern_id__in=pattern_ids,
        ).values_list("pattern_id", flat=True)
    )
    existing = set(
        ErrorPattern.objects.filter(workspace_id=workspace_id, pk__in=pattern_ids).values_list("id", flat=True)
    )
    now = now or timezone.now()
    rows = [
        HintInjection(
            workspace_id=workspace_id,
            pattern_id=pattern_id,
            layer_id=layer_id,
            agent_type=agent_type,
            group_id=group_id,
            created_at=now,
        )
        for pattern_id in dict.fromkeys(pattern_ids)
        if pattern_id in existing and pattern_id not in open_
    ]
    with transaction.atomic():  # a savepoint: a failure here never poisons the caller's transaction
        HintInjection.objects.bulk_create(rows)
    ERROR_HINTS_INJECTED.inc(len(rows))  # the injections recorded, not the hints already open
    return len(rows)


def patterns_expire(*, now: datetime | None = None, ttl_days: int | None = None) -> int:
    """Delete every pattern not seen for the TTL (settings.ERROR_PATTERN_TTL_DAYS); returns how many."""
    now = now or timezone.now()
    cutoff = now - timedelta(days=settings.ERROR_PATTERN_TTL_DAYS if ttl_days is None else ttl_days)
    stale = ErrorPattern.objects.filter(last_seen__lt=cutoff)
    workspaces = set(stale.values_list("workspace_id", flat=True).distinct())
    _, by_model = stale.delete()
    count = by_model.get(ErrorPattern._meta.label, 0)
    HintInjection.objects.filter(created_at__lt=cutoff).delete()  # never followed by an attempt
    for workspace_id in workspaces:
        content_changed(workspace_id)
    ERROR_PATTERNS_EXPIRED.inc(count)
    return count
