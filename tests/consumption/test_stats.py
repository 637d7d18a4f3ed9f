"""`GET /api/v1/stats/` for the dashboards: consumption beside the attempt figures."""

from __future__ import annotations

import pytest

from apps.error_patterns.models import Attempt, Outcome
from apps.error_patterns.selectors import attempt_stats
from apps.layers.models import Layer
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db


def attempt(t: Tenant, session: Layer, agent_type: str, group: str, iteration: int, failed_with: str = "") -> None:
    Attempt.objects.create(
        workspace=t.workspace,
        layer=session,
        agent_type=agent_type,
        group_id=group,
        iteration=iteration,
        outcome=Outcome.FAILED if failed_with else Outcome.SUCCEEDED,
        error=failed_with,
        signature=failed_with.lower(),
    )


def test_it_gives_iterations_per_group_and_same_error_recurrence(tenant: Tenant, other_tenant: Tenant) -> None:
    s1 = Layer.objects.create(workspace=tenant.workspace, kind="session", name="s1", parent=tenant.root)
    s2 = Layer.objects.create(workspace=tenant.workspace, kind="session", name="s2", parent=tenant.root)
    attempt(tenant, s1, "developer", "g1", 1, failed_with="KeyError: user_id")
    attempt(tenant, s1, "developer", "g1", 2, failed_with="KeyError: user_id")  # the same error again
    attempt(tenant, s1, "developer", "g1", 3)
    attempt(tenant, s2, "qa", "g2", 1, failed_with="AssertionError: totals differ")
    attempt(tenant, s2, "qa", "g2", 2)

    body = tenant.client.get("/api/v1/stats/").json()
    attempts = body["attempts"]
    assert attempts == attempt_stats(tenant.workspace.pk)
    assert attempts["iterations_per_group"]["mean"] == 2.5  # (3 + 2) / 2 groups
    assert attempts["same_error_recurrence"]["rate"] == 0.5  # 1 of 2 sessions saw an error twice
    assert set(body["consumption"]) >= {"ratio", "injected", "used", "by_agent_type"}

    qa = tenant.client.get("/api/v1/stats/", {"agent_type": "qa"}).json()["attempts"]
    assert qa == attempt_stats(tenant.workspace.pk, agent_type="qa")
    assert qa["iterations_per_group"]["mean"] == 2.0 and qa["same_error_recurrence"]["rate"] == 0.0

    theirs = other_tenant.client.get("/api/v1/stats/").json()["attempts"]
    assert theirs["iterations_per_group"]["count"] == 0 and theirs["same_error_recurrence"]["sessions"] == 0
