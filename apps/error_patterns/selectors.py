"""Reads for attempts and error patterns, always scoped to one workspace."""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from django.db import connection
from django.db.models import Count, Max, Q, QuerySet

from apps.core.errors import NotFound
from apps.error_patterns.errors import ERROR_PATTERN_NOT_FOUND
from apps.error_patterns.matching import rank_matches
from apps.error_patterns.models import Attempt, ErrorPattern, HintInjection, Outcome
from apps.error_patterns.signature import error_signature
from apps.workspaces.models import Workspace


def pattern_get(*, workspace: Workspace, pattern_id: int) -> ErrorPattern:
    """The workspace's pattern, or NotFound (also for another workspace's id)."""
    pattern = ErrorPattern.objects.filter(workspace=workspace, pk=pattern_id).first()
    if pattern is None:
        raise NotFound(f"error pattern {pattern_id} not found", code=ERROR_PATTERN_NOT_FOUND)
    return pattern


def patterns_list(
    *,
    workspace: Workspace,
    signature: str = "",
    min_confidence: float | None = None,
    max_confidence: float | None = None,
) -> QuerySet[ErrorPattern]:
    """The workspace's patterns, most confident first; `signature` filters by substring (or by an error's signature)."""
    patterns = ErrorPattern.objects.filter(workspace=workspace)
    if signature:  # a piece of a signature, or an error message whose signature it is
        normalized = error_signature(signature)
        patterns = patterns.filter(
            Q(signature__icontains=signature) | Q(signature__icontains=normalized) | Q(signature=normalized)
        )
    if min_confidence is not None:
        patterns = patterns.filter(confidence__gte=min_confidence)
    if max_confidence is not None:
        patterns = patterns.filter(confidence__lte=max_confidence)
    return patterns.order_by("-confidence", "-last_seen", "id")


def attempts_list(
    *, workspace: Workspace, layer_id: int | None = None, group_id: str | None = None, agent_type: str | None = None
) -> QuerySet[Attempt]:
    attempts = Attempt.objects.filter(workspace=workspace)
    if layer_id is not None:
        attempts = attempts.filter(layer_id=layer_id)
    if group_id is not None:
        attempts = attempts.filter(group_id=group_id)
    if agent_type is not None:
        attempts = attempts.filter(agent_type=agent_type)
    return attempts.order_by("-created_at", "-id")


def attempt_stats(workspace_id: int, *, agent_type: str | None = None) -> dict[str, Any]:
    """The success figures (iterations per task group, same-error recurrence) from the attempts reported in a workspace.

    Iterations per task group: a group is (session layer, group_id); its iterations are the
    larger of its attempt count and the highest `iteration` reported in it. `by_group` is keyed
    "<layer id>:<group id>".
    Same-error recurrence within a session: of the sessions with a failed attempt, the share
    in which one error signature failed twice or more (`rate` = recurring / sessions). `failures`
    and `repeats` (failures whose signature already failed earlier in the session) give the finer view.
    Two aggregate queries whatever the number of attempts.
    """
    attempts = Attempt.objects.filter(workspace_id=workspace_id)
    if agent_type is not None:
        attempts = attempts.filter(agent_type=agent_type)
    groups = attempts.values("layer_id", "group_id").annotate(n=Count("id"), top=Max("iteration"))
    by_group = {f"{g['layer_id']}:{g['group_id']}": max(g["n"], g["top"] or 0) for g in groups}
    values = sorted(by_group.values())
    iterations = {
        "count": len(values),
        "mean": round(statistics.fmean(values), 3) if values else 0.0,
        "p50": float(statistics.median(values)) if values else 0.0,
        "max": values[-1] if values else 0,
        "by_group": by_group,
    }
    failed = (
        attempts.filter(outcome=Outcome.FAILED)
        .exclude(signature="")
        .values("layer_id", "signature")
        .annotate(n=Count("id"))
    )
    sessions: set[int] = set()
    recurring: set[int] = set()
    failures = repeats = 0
    for row in failed:
        sessions.add(row["layer_id"])
        failures += row["n"]
        if row["n"] > 1:
            recurring.add(row["layer_id"])
            repeats += row["n"] - 1
    recurrence = {
        "sessions": len(sessions),
        "recurring": len(recurring),
        "rate": round(len(recurring) / len(sessions), 4) if sessions else 0.0,
        "failures": failures,
        "repeats": repeats,
    }
    return {"iterations_per_group": iterations, "same_error_recurrence": recurrence}


MATCH_CANDIDATES = 500  # newest patterns compared by similarity; the exact signature is always looked up


def patterns_match(
    *,
    workspace_id: int,
    signature: str,
    min_confidence: float | None = None,
    threshold: float = 0.3,
    limit: int = 10,
    with_solution: bool = False,
) -> list[tuple[float, ErrorPattern]]:
    """(similarity, pattern) nearest to `signature`: the exact signature first, then by similarity.

    Two queries whatever the workspace holds, and only `limit` full rows: (id, signature,
    confidence) of the exact signature (unique index) and of the newest MATCH_CANDIDATES patterns
    above `min_confidence`, in one UNION; then the winners' full rows (solution, excerpt), which
    can be long, by primary key. This runs on every context request that carries an error.
    """
    if not signature or limit <= 0:
        return []
    patterns = ErrorPattern.objects.filter(workspace_id=workspace_id)
    if min_confidence is not None:
        patterns = patterns.filter(confidence__gt=min_confidence)
    if with_solution:
        patterns = patterns.exclude(solution="")
    light = patterns.values_list("id", "signature", "confidence")
    exact_rows = light.filter(signature=signature).order_by()[:1]
    nearby_rows = light.exclude(signature=signature).order_by("-last_seen")[:MATCH_CANDIDATES]
    rows = list(exact_rows.union(nearby_rows, all=True))
    exact = next((row for row in rows if row[1] == signature), None)
    nearby = [row for row in rows if row[1] != signature]
    ranked = rank_matches(signature, ((row[1], row) for row in nearby), threshold=threshold, limit=limit)
    ranked.sort(key=lambda pair: (-round(pair[0], 6), -pair[1][2]))
    chosen = ([(1.0, exact)] if exact else []) + ranked[: limit - (1 if exact else 0)]
    if not chosen:
        return []
    full = ErrorPattern.objects.in_bulk([row[0] for _, row in chosen])
    return [(score, full[row[0]]) for score, row in chosen if row[0] in full]


def last_failed_error(
    *, workspace_id: int, layer_ids: tuple[int, ...], agent_type: str = "", group_id: str = ""
) -> str:
    """The redacted error of the session's last attempt when that attempt failed, else "".

    `layer_ids`: the request's layer and its conversation window (the session named by conversation_id).
    """
    attempts = Attempt.objects.filter(workspace_id=workspace_id, layer_id__in=layer_ids)
    if agent_type:
        attempts = attempts.filter(agent_type=agent_type)
    if group_id:
        attempts = attempts.filter(group_id=group_id)
    last = attempts.order_by("-created_at", "-id").values_list("outcome", "error").first()
    return last[1] if last and last[0] == Outcome.FAILED else ""


def hint_events(
    *,
    injected_after: datetime | None,
    failed_after: datetime | None,
    until: datetime | None = None,
    since: datetime | None = None,
    workspace_id: int | None = None,
) -> list[tuple[Any, ...]]:
    """(workspace id, "injected" | "failed_after", time) of the hints injected after `injected_after`
    and the failures after a hint reported after `failed_after`, up to `until`, from `since` (one
    query: range scans of the time indexes `hint_created` and of the partial `hint_failed_at`); the
    dashboard's rollup counts them (apps/assembly/rollup)."""
    table = HintInjection._meta.db_table
    selects, params = [], []
    for key, column, after, only in (
        ("injected", "created_at", injected_after, ""),
        ("failed_after", "resolved_at", failed_after, " AND failed"),
    ):
        where, args = [f"{column} IS NOT NULL{only}"], []
        for condition, value in (
            ("workspace_id = %s", workspace_id),
            (f"{column} > %s", after),
            (f"{column} <= %s", until),
            (f"{column} >= %s", since),
        ):
            if value is not None:
                where.append(condition)
                args.append(value)
        selects.append(f"SELECT workspace_id, '{key}', {column} FROM {table} WHERE {' AND '.join(where)}")
        params += args
    with connection.cursor() as cursor:
        cursor.execute(" UNION ALL ".join(selects), params)
        return list(cursor.fetchall())


def pattern_texts(*, workspace_id: int, pattern_ids: Iterable[int]) -> dict[int, tuple[str, str]]:
    """(signature, solution) of each of these patterns of the workspace that still exists, by id (one query)."""
    rows = ErrorPattern.objects.filter(workspace_id=workspace_id, pk__in=list(pattern_ids)).values_list(
        "id", "signature", "solution"
    )
    return {pattern_id: (signature, solution) for pattern_id, signature, solution in rows}
