"""The dashboard benchmark: seed N assembly records over 30 days in one statement (with N/20 hint
injections and a summary run every 5 minutes), roll them up, and time the dashboard (selector and
whole page) per range beside the same totals read from the raw records (the baseline the rollups
replace)."""

from __future__ import annotations

import statistics
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client
from django.utils import timezone

from apps.assembly.models import AssemblyRecord
from apps.assembly.rollup.services import rollup_catch_up
from apps.error_patterns.models import ErrorPattern, HintInjection
from apps.layers.models import Layer
from apps.layers.services import layer_create
from apps.summaries.models import SummaryRunCount
from apps.web.selectors.dashboard import RANGES, dashboard_figures
from apps.workspaces.models import Membership, Role, Workspace
from apps.workspaces.services import workspace_create


@dataclass(frozen=True)
class Seeded:
    workspace: Workspace
    records: int
    seed_seconds: float
    rollup_seconds: float


def bench_seed(*, records: int, days: int = 30) -> Seeded:
    """A throwaway workspace with `records` assembly records spread over `days` up to now."""
    workspace, _ = workspace_create(slug=f"bench-dashboard-{uuid.uuid4().hex[:8]}")
    root = Layer.objects.get(workspace=workspace, kind="company")
    project = layer_create(workspace=workspace, kind="project", name="Bench project", parent=root)
    started = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            INSERT INTO {AssemblyRecord._meta.db_table} (
                workspace_id, trace_id, layer_id, request, model, encoding, tokens_used, token_budget,
                items_included, candidates_considered, overflow_count, truncated_count, elapsed_ms,
                assembly_cache_hit, embedding_cache_hit, timings, warnings, partial, zone, chunk_tokens, sampled, trace,
                session, group_id, agent_type, iteration, injected_packages, used_packages,
                consumption_reported_at, created_at, context, origin)
            SELECT %(ws)s, gen_random_uuid(), %(project)s, '{{}}'::jsonb,
                   (ARRAY['gpt-4o', 'gpt-4o-mini', 'claude-sonnet'])[1 + g %% 3], 'o200k_base',
                   200 + g %% 1800, 4000, 3 + g %% 9, 20, g %% 4, (g %% 7 = 0)::int,
                   5 + (g %% 97) * (1 + g %% 5), g %% 5 = 0, CASE WHEN g %% 5 = 0 THEN NULL ELSE g %% 3 = 0 END,
                   '{{}}'::jsonb, '[]'::jsonb, false, (ARRAY['green', 'yellow', 'red'])[1 + (g %% 10) / 7],
                   jsonb_build_array(jsonb_build_array('memory', %(project)s, 100 + g %% 300),
                                     jsonb_build_array('spec', %(root)s, 50 + g %% 100)),
                   false, '[]'::jsonb, 's' || g %% 1000, '', (ARRAY['developer', 'qa', 'tech_lead'])[1 + g %% 3],
                   NULL, ARRAY[g, g + 1]::bigint[],
                   CASE WHEN g %% 4 = 0 THEN ARRAY[g]::bigint[] END,
                   CASE WHEN g %% 4 = 0 THEN now() - (%(span)s::float8 * g / %(n)s) * interval '1 second' END,
                   now() - (%(span)s::float8 * g / %(n)s) * interval '1 second', '', 'agent'
            FROM generate_series(1, %(n)s) AS g
            """,
            {"ws": workspace.pk, "project": project.pk, "root": root.pk, "n": records, "span": days * 86400},
        )
        cursor.execute(f"ANALYZE {AssemblyRecord._meta.db_table}")
    _seed_activity(workspace=workspace, layer=project, records=records, days=days)
    seeded = time.perf_counter() - started
    started = time.perf_counter()
    rollup_catch_up(batch=50_000)
    return Seeded(
        workspace=workspace, records=records, seed_seconds=seeded, rollup_seconds=time.perf_counter() - started
    )


def _seed_activity(*, workspace: Workspace, layer: Layer, records: int, days: int) -> None:
    """What the dashboard reads beside the records: a hint injection for one assembly in 20 (a third
    of them followed by a failure, a third by a success), and a summary run every 5 minutes."""
    now = timezone.now()
    pattern = ErrorPattern.objects.create(
        workspace=workspace,
        signature="bench: error",
        error_excerpt="error",
        solution="fix",
        first_seen=now,
        last_seen=now,
    )
    span = days * 86400
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            INSERT INTO {HintInjection._meta.db_table}
                (workspace_id, pattern_id, layer_id, agent_type, group_id, created_at, resolved_at, failed)
            SELECT %(ws)s, %(pattern)s, %(layer)s, 'developer', 'g' || g %% 50, at,
                   CASE WHEN g %% 3 < 2 THEN at + interval '2 minutes' END,
                   CASE g %% 3 WHEN 0 THEN true WHEN 1 THEN false END
            FROM (SELECT g, now() - (%(span)s::float8 * g / %(n)s) * interval '1 second' AS at
                  FROM generate_series(1, %(n)s) AS g) AS hints
            """,
            {"ws": workspace.pk, "pattern": pattern.pk, "layer": layer.pk, "span": span, "n": max(records // 20, 1)},
        )
        cursor.execute(
            f"""
            INSERT INTO {SummaryRunCount._meta.db_table}
                (workspace_id, minute, generated, skipped, empty, failed, marked_stale)
            SELECT %(ws)s, date_trunc('minute', now()) - g * interval '5 minutes', g %% 2, 1 + g %% 3, 0,
                   (g %% 11 = 0)::int, 3 * (g %% 11 = 0)::int
            FROM generate_series(0, %(n)s) AS g
            """,
            {"ws": workspace.pk, "n": span // 300},
        )
        cursor.execute(f"ANALYZE {HintInjection._meta.db_table}")
        cursor.execute(f"ANALYZE {SummaryRunCount._meta.db_table}")


def timed(run: Callable[[], object], *, repeat: int) -> tuple[float, float]:
    """Median and worst wall time of `repeat` runs after one warm-up, in ms."""
    run()
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        run()
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples), max(samples)


def raw_totals(*, workspace: Workspace, range_key: str) -> None:
    """The baseline: the range's count, tokens and p50/p95 read straight from the records."""
    since = timezone.now() - RANGES[range_key].length
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT count(*), sum(tokens_used), percentile_cont(ARRAY[0.5, 0.95]) WITHIN GROUP (ORDER BY elapsed_ms) "
            f"FROM {AssemblyRecord._meta.db_table} WHERE workspace_id = %s AND created_at >= %s",
            [workspace.pk, since],
        )
        cursor.fetchall()


def page_client(*, workspace: Workspace) -> Client:
    user = get_user_model().objects.create_user(username=f"bench-{uuid.uuid4().hex[:8]}")
    Membership.objects.create(workspace=workspace, user=user, role=Role.VIEWER)
    client = Client()
    client.force_login(user)
    return client


def bench_delete(*, workspace: Workspace) -> None:
    get_user_model().objects.filter(memberships__workspace=workspace, username__startswith="bench-").delete()
    workspace.delete()


__all__ = ["RANGES", "bench_delete", "bench_seed", "dashboard_figures", "page_client", "raw_totals", "timed"]
