"""Every summary run is counted per workspace and minute by outcome, for the dashboard over time."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from django.test import override_settings

from apps.summaries.models import SummaryRunCount
from apps.summaries.run_counts import run_count_add
from apps.summaries.services import layer_summarize
from tests.summaries.helpers import TEAM_FACTS, Tree, facts, summary_llm, tree
from tests.support.fake_provider import FakeProvider
from tests.support.tenants import Tenant

# Runs are dated in the past, so that runs the change trigger starts in the background count elsewhere.
T0 = datetime(2024, 5, 6, 7, 8, 30, tzinfo=UTC)


def counted(tenant: Tenant, at: datetime) -> dict[str, int]:
    row = SummaryRunCount.objects.filter(workspace=tenant.workspace, minute=at.replace(second=0, microsecond=0)).values(
        "generated", "skipped", "empty", "failed", "marked_stale"
    )
    return dict(row.first() or {})


@pytest.fixture
def llm() -> Iterator[FakeProvider]:
    with summary_llm() as server, override_settings(SUMMARY_PROVIDER="llm", SUMMARY_LLM_BASE_URL=server.url):
        yield server


@pytest.fixture
def team(tenant: Tenant) -> Tree:
    t = tree(tenant)
    facts(t.team, TEAM_FACTS)
    return t


def test_it_counts_generated_skipped_and_empty_runs_in_their_minute(tenant: Tenant, team: Tree) -> None:
    assert layer_summarize(layer=team.team, now=T0, extractive=True).status == "generated"
    assert layer_summarize(layer=team.team, now=T0 + timedelta(seconds=10), trigger="interval").status == "skipped"
    assert layer_summarize(layer=team.project, now=T0 + timedelta(seconds=20)).reason == "no_content"
    assert counted(tenant, T0) == {"generated": 1, "skipped": 1, "empty": 1, "failed": 0, "marked_stale": 0}
    layer_summarize(layer=team.team, now=T0 + timedelta(minutes=1), force=True, extractive=True)
    assert counted(tenant, T0 + timedelta(minutes=1))["generated"] == 1
    assert counted(tenant, T0)["generated"] == 1  # the earlier minute is left alone


def test_a_run_whose_llm_fails_counts_as_failed_with_the_summaries_it_left_stale(
    llm: FakeProvider, tenant: Tenant, team: Tree
) -> None:
    layer_summarize(layer=team.team, now=T0)
    facts(team.team, ["The retry worker now uses a token bucket per processor."])
    llm.fail_next(4)
    result = layer_summarize(layer=team.team, now=T0 + timedelta(seconds=5), sleep=lambda _: None, trigger="changes")
    assert result.status == "degraded"
    assert counted(tenant, T0) == {"generated": 1, "skipped": 0, "empty": 0, "failed": 1, "marked_stale": 3}


def test_it_refuses_an_unknown_outcome(tenant: Tenant) -> None:
    with pytest.raises(ValueError, match="unknown summary run outcome"):
        run_count_add(workspace_id=tenant.workspace.pk, at=T0, outcome="exploded")
