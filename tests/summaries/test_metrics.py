"""/metrics exposes the summary metrics with their labels after a generation and a read."""

from __future__ import annotations

from django.test import Client

from apps.summaries.selectors import layer_summaries_get
from apps.summaries.services import layer_summarize
from tests.summaries.helpers import TEAM_FACTS, facts, tree
from tests.support.tenants import Tenant


def test_the_summary_metrics_are_exposed(client: Client, tenant: Tenant) -> None:
    t = tree(tenant)
    facts(t.team, TEAM_FACTS)
    layer_summarize(layer=t.team)
    layer_summaries_get(layer_id=t.team.pk)
    body = client.get("/metrics").content.decode()
    assert "# TYPE context_architect_summary_generation_time_ms histogram" in body
    assert 'context_architect_summary_generation_time_ms_count{layer_kind="team",provider="extractive"}' in body
    assert (
        'context_architect_summary_generations_total{depth="detailed",layer_kind="team",provider="extractive"}' in body
    )
    for name in ("cache_hits", "cache_misses", "llm_retries", "llm_failure_alerts", "summary_skips"):
        assert f"# TYPE context_architect_{name}_total counter" in body, name
