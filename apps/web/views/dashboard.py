"""The dashboard of the current workspace, over 1 hour, 24 hours, 7 days or 30 days."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse

from apps.core.htmx import render_page_or_partial
from apps.web.access import workspace_view
from apps.web.charts import Chart, Series
from apps.web.selectors.dashboard import DEFAULT_RANGE, RANGES, Dashboard, dashboard_figures, range_fitting_data
from apps.web.workspace_choice import WorkspaceAccess

HINTS_EMPTY = (
    "No hint was injected in this range. Hints come from error patterns: an agent reports a failed attempt "
    "then a success (POST /api/v1/attempts/), and later context requests carrying that error get the fix."
)
SUMMARIES_EMPTY = (
    "No summary ran in this range. Summaries run when a layer's change count or interval trigger fires "
    "(its config, on the layer's page), or when an operator presses “Regenerate now” there."
)


@workspace_view(replica=True)
def dashboard(request: HttpRequest, access: WorkspaceAccess) -> HttpResponse:
    """Figures and charts of the range in `?range=`, by default the shortest that holds the data (htmx
    swaps only #dashboard when it changes)."""
    assert access.current is not None
    key = request.GET.get("range") or range_fitting_data(workspace=access.current)
    key = key if key in RANGES else DEFAULT_RANGE
    figures = dashboard_figures(workspace=access.current, range_key=key)
    context = {
        "figures": figures,
        "totals": figures.totals,
        "charts": charts_of(figures),
        "ranges": RANGES.values(),
        "crumbs": [("Dashboard", None)],
    }
    return render_page_or_partial(request, "web/dashboard/page.html", "figures", context)


def charts_of(f: Dashboard) -> list[Chart]:
    """The dashboard's charts, in reading order."""
    per = f.range.step.total_seconds() / 60
    runs = f.summary_runs.series
    step = f"per {int(per)} min" if per < 60 else f"per {int(per // 60)} h"
    return [
        Chart("chart-rate", "Assemblies per minute", f.buckets, [Series("Assemblies / min", f.per_minute)]),
        Chart(
            "chart-latency",
            "Assembly latency",
            f.buckets,
            [Series("p50", f.p50_ms), Series("p95", f.p95_ms)],
            unit="ms",
        ),
        Chart(
            "chart-item-kind",
            f"Tokens injected by item kind ({step})",
            f.buckets,
            [Series(kind, values, stacked=True) for kind, values in f.tokens_by_item_kind.items()],
        ),
        Chart(
            "chart-layer-kind",
            f"Tokens injected by layer kind ({step})",
            f.buckets,
            [Series(kind, values, stacked=True) for kind, values in f.tokens_by_layer_kind.items()],
        ),
        Chart(
            "chart-cache",
            "Cache hit rates",
            f.buckets,
            [
                Series("Assembly cache", f.assembly_cache_rate),
                Series("Embedding cache", f.embedding_cache_rate),
            ],
            unit="%",
        ),
        Chart(
            "chart-overflow",
            f"Assemblies with overflow and truncation ({step})",
            f.buckets,
            [Series("Left candidates out", list(f.overflowed)), Series("Cut a chunk", list(f.truncated))],
        ),
        Chart(
            "chart-consumption",
            "Consumption ratio (packages used / injected)",
            f.buckets,
            [Series("Ratio", f.consumption_ratio)],
        ),
        Chart(
            "chart-hints",
            f"Error-pattern hints injected and failures after a hint ({step})",
            f.buckets,
            [Series("Hints injected", f.hints.injected), Series("Failures after a hint", f.hints.failed_after)],
            empty_text=HINTS_EMPTY,
        ),
        Chart(
            "chart-summaries",
            f"Summary runs by outcome ({step})",
            f.buckets,
            [
                Series("Generated", runs["generated"]),
                Series("Skipped (unchanged hash)", runs["skipped"]),
                Series("Failed", runs["failed"]),
                Series("Summaries marked stale", runs["marked_stale"]),
            ],
            empty_text=SUMMARIES_EMPTY,
        ),
    ]
