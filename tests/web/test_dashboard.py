"""The dashboard: figures from the rollups plus the raw tail, in a constant number of queries."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.db.models import F
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from apps.assembly.models import AssemblyRecord, AssemblyRollup, AssemblyRollupCount, Span
from apps.assembly.rollup.services import rollup_catch_up
from apps.error_patterns.models import ErrorPattern, HintInjection
from apps.layers.models import Layer
from apps.layers.services import ItemInput, items_create, layer_create
from apps.proxy.models import ProxyCall
from apps.summaries.run_counts import run_count_add
from apps.summaries.services import layer_summarize
from apps.web.selectors.dashboard import dashboard_figures
from tests.error_patterns.attempts import ERROR, context, hints, make_session, pattern, report
from tests.support.tenants import Tenant
from tests.web.harness import PASSWORD
from tests.web.people import People
from tests.web.records_data import make_records


def test_it_counts_rolled_up_and_tail_records_once_each(tenant: Tenant) -> None:
    make_records(tenant, 40, minutes_ago=90)
    assert rollup_catch_up() == 40
    assert rollup_catch_up() == 0  # the watermark moved: nothing twice
    make_records(tenant, 8, minutes_ago=0)  # younger than the settle time: only in the tail
    assert rollup_catch_up() == 0

    figures = dashboard_figures(workspace=tenant.workspace, range_key="24h")
    assert figures.totals["assemblies"] == 48
    assert figures.totals["tokens"] == 4800
    assert sum(sum(v or 0 for v in values) for values in figures.tokens_by_item_kind.values()) == 48 * 100
    assert {kind: sum(v or 0 for v in values) for kind, values in figures.tokens_by_layer_kind.items()} == {
        "project": 48 * 60,
        "company": 48 * 40,
    }
    assert figures.totals["assembly_cache_rate"] == 25.0  # 12 of 48
    assert figures.totals["embedding_cache_rate"] == 33.3  # 12 of the 36 that looked one up
    assert dict(figures.agent_types) == {"agent-0": 24, "agent-1": 24}
    assert 10 * 0.88 <= figures.totals["p50_ms"] <= 15 * 1.12
    assert dashboard_figures(workspace=tenant.workspace, range_key="1h").totals["assemblies"] == 8
    assert AssemblyRollup.objects.filter(workspace=tenant.workspace, span=Span.HOUR).exists()


def test_it_keeps_workspaces_apart(tenant: Tenant, other_tenant: Tenant) -> None:
    make_records(tenant, 5, minutes_ago=10)
    rollup_catch_up()
    assert dashboard_figures(workspace=other_tenant.workspace, range_key="24h").totals["assemblies"] == 0


def test_it_answers_in_the_same_number_of_queries_however_many_records_and_keys(people: People, tenant: Tenant) -> None:
    client = Client()
    client.login(username="vera", password=PASSWORD)
    client.get("/")

    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert client.get("/?range=7d").status_code == 200
        return len(captured)

    make_records(tenant, 3, minutes_ago=200, agent_types=1)
    make_records(tenant, 2, minutes_ago=0, agent_types=1)
    few = queries()
    for hours in range(1, 30, 3):
        make_records(tenant, 30, minutes_ago=hours * 60, agent_types=7)
    rollup_catch_up()
    make_records(tenant, 25, minutes_ago=1, agent_types=5)
    for minutes in range(0, 600, 7):
        run_count_add(
            workspace_id=tenant.workspace.pk, at=timezone.now() - timedelta(minutes=minutes), outcome="skipped"
        )
    assert queries() == few
    # session, user, workspace; watermarks, rollup sums, rollup breakdowns, the records' tail and its
    # layer kinds, the hints' tail, the consumption tail, summary runs, stale/health in one (summaries'),
    # pending embeddings (layers'), the proxied calls by model (proxy's)
    assert few <= 14


def test_it_swaps_only_the_figures_when_htmx_changes_the_range(people: People) -> None:
    client = Client()
    client.login(username="vera", password=PASSWORD)
    response = client.get("/?range=30d", HTTP_HX_REQUEST="true")
    html = response.content.decode().strip()
    assert html.startswith('<section id="dashboard"')
    assert 'href="?range=30d"' in html and 'aria-current="true">30 days<' in html
    assert client.get("/?range=bogus").context["figures"].range.key == "24h"


@pytest.mark.parametrize("range_key", ["1h", "24h", "7d", "30d"])
def test_it_draws_every_chart_with_data(tenant: Tenant, range_key: str) -> None:
    make_records(tenant, 6, minutes_ago=2)
    figures = dashboard_figures(workspace=tenant.workspace, range_key=range_key)
    assert figures.totals["assemblies"] == 6
    assert len(figures.buckets) == len(figures.assemblies) == len(figures.p95_ms)


def test_it_reads_the_consumption_ratio_from_rollups_and_reports_after_them(tenant: Tenant) -> None:
    records = make_records(tenant, 4, minutes_ago=50)
    AssemblyRecord.objects.filter(pk__in=[r.pk for r in records]).update(
        injected_packages=[1, 2], used_packages=[1], consumption_reported_at=timezone.now() - timedelta(minutes=40)
    )
    rollup_catch_up()
    late = make_records(tenant, 2, minutes_ago=5)
    AssemblyRecord.objects.filter(pk__in=[r.pk for r in late]).update(
        injected_packages=[1, 2], used_packages=[1, 2], consumption_reported_at=timezone.now()
    )
    figures = dashboard_figures(workspace=tenant.workspace, range_key="24h")
    assert figures.totals["consumption_ratio"] == round((4 + 4) / (8 + 4), 3)


@pytest.fixture
def hinted_session(tenant: Tenant) -> Layer:
    """A session with one fact, where two known fixes are ready to be injected."""
    session = make_session(tenant)
    items_create(layer=session, items=[ItemInput(kind="memory", type="fact", content="Deploys run migrations first.")])
    pattern(tenant, confidence=0.95, solution="Run manage.py migrate.")
    return session


def test_it_charts_hints_injected_and_the_failures_that_followed_them_over_time(
    tenant: Tenant, hinted_session: Layer
) -> None:
    assert hints(context(tenant, hinted_session, error=ERROR))  # group g1
    report(tenant, hinted_session, "failed", error=ERROR)  # a failure after the hint
    assert hints(context(tenant, hinted_session, error=ERROR, group_id="g2", query="again"))
    report(tenant, hinted_session, "succeeded", group_id="g2", solution="Migrated.")  # a success after it
    assert hints(context(tenant, hinted_session, error=ERROR, group_id="g3", query="older"))
    older = HintInjection.objects.get(group_id="g3")
    HintInjection.objects.filter(pk=older.pk).update(created_at=timezone.now() - timedelta(hours=3))

    hour = dashboard_figures(workspace=tenant.workspace, range_key="1h")
    assert (sum(hour.hints.injected), sum(hour.hints.failed_after)) == (2, 1)
    assert hour.totals["failure_after_hint_rate"] == 50.0
    day = dashboard_figures(workspace=tenant.workspace, range_key="24h")
    assert sum(day.hints.injected) == 3 and day.hints.injected[-1] == 2  # the older one sits 3 hours back
    assert day.hints.injected[len(day.buckets) - 1 - 12] == 1
    assert day.hints.failed_after[-1] == 1
    assert dashboard_figures(workspace=tenant.workspace, range_key="30d").totals["failures_after_hint"] == 1


def test_it_charts_summary_runs_by_outcome_over_the_range(tenant: Tenant) -> None:
    layer = layer_create(workspace=tenant.workspace, kind="team", name="Payments", parent=tenant.root)
    items_create(layer=layer, items=[ItemInput(kind="memory", type="fact", content="Charges retry three times.")])
    now = timezone.now()
    layer_summarize(layer=layer, now=now - timedelta(hours=5), force=True, extractive=True)
    layer_summarize(layer=layer, now=now, trigger="interval")  # unchanged hash: skipped
    run_count_add(workspace_id=tenant.workspace.pk, at=now, outcome="failed", marked_stale=3)

    day = dashboard_figures(workspace=tenant.workspace, range_key="24h")
    runs = day.summary_runs
    assert runs.totals == {"generated": 1, "skipped": 1, "empty": 0, "failed": 1, "marked_stale": 3}
    assert runs.series["skipped"][-1] == 1 and runs.series["failed"][-1] == 1
    assert runs.series["generated"][len(day.buckets) - 1 - 20] == 1  # five hours of 15-minute steps back
    assert dashboard_figures(workspace=tenant.workspace, range_key="1h").summary_runs.totals["generated"] == 0


def test_it_says_how_to_get_hints_and_summary_runs_when_there_are_none(people: People) -> None:
    client = Client()
    client.login(username="vera", password=PASSWORD)
    html = client.get("/?range=7d").content.decode()
    assert 'id="chart-hints"' in html and 'id="chart-summaries"' in html
    assert "No hint was injected in this range" in html and "POST /api/v1/attempts/" in html
    assert "No summary ran in this range" in html and "Regenerate now" in html


def test_it_rolls_hints_up_once_and_keeps_them_after_their_pattern_is_deleted(
    tenant: Tenant, hinted_session: Layer
) -> None:
    assert hints(context(tenant, hinted_session, error=ERROR))
    report(tenant, hinted_session, "failed", error=ERROR)
    HintInjection.objects.update(
        created_at=F("created_at") - timedelta(hours=2), resolved_at=F("resolved_at") - timedelta(hours=2)
    )
    assert hints(context(tenant, hinted_session, error=ERROR, group_id="g2", query="later"))  # young: only in the tail
    rollup_catch_up()
    rollup_catch_up()  # the time watermarks moved: nothing twice
    day = dashboard_figures(workspace=tenant.workspace, range_key="24h")
    assert (sum(day.hints.injected), sum(day.hints.failed_after)) == (2, 1)
    assert AssemblyRollupCount.objects.filter(workspace=tenant.workspace, dimension="hints", span=Span.HOUR).exists()

    ErrorPattern.objects.filter(workspace=tenant.workspace).delete()  # takes its injections along
    assert not HintInjection.objects.exists()
    day = dashboard_figures(workspace=tenant.workspace, range_key="24h")
    assert (sum(day.hints.injected), sum(day.hints.failed_after)) == (1, 1)  # the rolled-up day stays


def test_the_default_range_is_the_shortest_that_holds_the_data(tenant: Tenant) -> None:
    from apps.web.selectors.dashboard import DEFAULT_RANGE, range_fitting_data

    assert range_fitting_data(workspace=tenant.workspace) == DEFAULT_RANGE  # nothing yet
    make_records(tenant, 3, minutes_ago=50)
    assert range_fitting_data(workspace=tenant.workspace) == "1h"
    make_records(tenant, 3, minutes_ago=60 * 30)
    assert range_fitting_data(workspace=tenant.workspace) == "7d"
    make_records(tenant, 3, minutes_ago=60 * 24 * 40)  # older than the longest range: left out
    assert range_fitting_data(workspace=tenant.workspace) == "7d"


def proxy_call(tenant: Tenant, model: str, ours: int, reported: int | None, **fields: object) -> ProxyCall:
    values: dict[str, object] = {"status": 200, "upstream_ms": 800.0, "first_byte_ms": 300.0, **fields}
    return ProxyCall.objects.create(
        workspace=tenant.workspace,
        kind="anthropic",
        model=model,
        prompt_tokens=ours,
        reported_prompt_tokens=reported,
        reported_completion_tokens=None if reported is None else 20,
        **values,
    )


def test_it_shows_proxied_calls_latency_tokens_and_our_counts_error_by_model(
    people: People, tenant: Tenant, other_tenant: Tenant
) -> None:
    for n in range(20):  # Claude reports 4 % to 23 % more than we counted: p50 13.5 %, p95 22.05 %
        proxy_call(tenant, "claude-opus-4-5", 1000, 1040 + 10 * n, upstream_ms=100.0 * (n + 1))
    proxy_call(tenant, "claude-opus-4-5", 1000, None, status=429, upstream_ms=None, first_byte_ms=None)
    proxy_call(tenant, "gpt-4o", 500, 500)
    old = proxy_call(tenant, "gpt-4o", 500, 900)
    ProxyCall.objects.filter(pk=old.pk).update(created_at=timezone.now() - timedelta(days=3))
    proxy_call(other_tenant, "gpt-4o", 500, 900)
    client = Client()
    client.login(username="vera", password=PASSWORD)
    figures = client.get("/?range=24h").context["figures"]
    claude, gpt = figures.proxied
    assert (claude.model, claude.calls, claude.failed, claude.counted) == ("claude-opus-4-5", 21, 1, 20)
    assert (claude.upstream_p50_ms, claude.upstream_p95_ms) == (1050.0, 1905.0)
    assert (claude.error_p50, claude.error_p95) == (0.135, 0.2205)
    assert (claude.prompt_tokens, claude.completion_tokens) == (sum(1040 + 10 * n for n in range(20)), 400)
    assert (gpt.calls, gpt.error_p50, gpt.error_p95) == (1, 0.0, 0.0)  # the older call is outside 24 h
    html = client.get("/?range=24h").content.decode()
    assert "LLM proxy calls by model" in html and "13.5 % / 22." in html and "over 20 calls" in html
    assert "1050 / 1905 ms" in html
    week = client.get("/?range=7d").context["figures"].proxied
    assert [(m.model, m.calls) for m in week] == [("claude-opus-4-5", 21), ("gpt-4o", 2)]
    ProxyCall.objects.all().delete()
    assert "No call went through the LLM proxy" in client.get("/?range=24h").content.decode()
